// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: a connection slot's life.
 *
 * A slot is one hardware queue.  Its socket comes from dst_rconn_open()
 * (client_hs.c: a path, the handshake, the export's identity).
 * dst_rconn_up() puts it in service and
 * dst_rconn_down() takes it out when it dies -- reset, FIN, protocol
 * error, or no answer to keepalive PINGs -- leaving its requests as
 * orphans.  The slot is then reconnected with capped exponential backoff;
 * the server fences the old connection during the new handshake, and only
 * then are the orphans resent.  The node's link state (up, degraded,
 * reconnecting, failed), the fail timer, keepalive, and the moves of
 * slots back to their own paths live here too (docs/resilience.md has
 * the diagrams).
 *
 * A slot's state is `live` and its `epoch`, changed only here: once the
 * node runs, under the slot's tx_lock (a sender sees both or neither)
 * and, for the count of live slots, the node's state_lock:
 *
 *   dst_rconn_attach() ----> live (epoch 0) <---- dst_rconn_up(): live,
 *                              |                  epoch + 1, orphans
 *             dst_rconn_down() |                  resent
 *                              v                        ^
 *                     down: orphans held  --------------+
 *                     dst_reconnect_work(): a new socket, fenced
 *
 * The receive loop is the only one to take a slot down, once it has
 * read the end of its stream: so a slot is never taken down twice, and
 * nothing arrives on a slot that is down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/error-injection.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "client.h"
#include "trace.h"

/*
 * Take a connection out of service: its socket is shut down, so sends
 * fail, and the watch runs the receive loop, which reads the end of the
 * stream and does the rest (see dst_rconn_down()).  Any context that may
 * sleep; idempotent.
 */
void dst_rconn_kill(struct dst_rconn *conn)
{
	mutex_lock(&conn->sock_lock);
	if (conn->sock)
		kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	mutex_unlock(&conn->sock_lock);
}

/**
 * dst_rconn_kill_epoch - end slot @conn's connection if it is still @epoch's
 * @conn: the slot
 * @epoch: the incarnation the caller judged (conn->epoch, read then)
 *
 * A verdict on one connection -- its send failed, a request on it
 * expired, keepalive found it silent, its own path is back -- must not
 * end the fresh connection that replaced it meanwhile: that one would
 * be reconnected, and its requests resent, for nothing.  Without
 * tx_lock, which a sender stuck on the dead link may hold until this
 * very shutdown frees it.  Under sock_lock the socket cannot change;
 * a new one is installed only in a slot that is down, and published
 * live with its new epoch after (dst_rconn_up()), so a slot seen live
 * at @epoch holds @epoch's socket.
 */
void dst_rconn_kill_epoch(struct dst_rconn *conn, u32 epoch)
{
	mutex_lock(&conn->sock_lock);
	/* Acquire: pairs with dst_rconn_up()'s release of live. */
	if (conn->sock && smp_load_acquire(&conn->live) &&
	    READ_ONCE(conn->epoch) == epoch)
		kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	mutex_unlock(&conn->sock_lock);
}

static void dst_remote_set_link(struct dst_remote *rem)
{
	int link;

	lockdep_assert_held(&rem->state_lock);
	if (rem->nr_live == rem->nr_conns)
		link = DST_LINK_UP;
	else if (rem->nr_live)
		link = DST_LINK_DEGRADED;
	else if (rem->failfast)
		link = DST_LINK_FAILED;
	else
		link = DST_LINK_RECONNECTING;
	WRITE_ONCE(rem->node->link, link);
	wake_up_all(&rem->node->scan_wait);
}

/* --- the link: connections going down and coming back --------------- */

/* Slot @conn's first socket, at attach: live before anything runs. */
void dst_rconn_attach(struct dst_rconn *conn, struct socket *sock)
{
	conn->sock = sock;
	conn->last_rx = jiffies;
	conn->live = true;
	atomic_inc(&conn->rem->paths[conn->path].conns);
}

/*
 * The receive loop of @conn has ended: nothing more can arrive on it.
 * Stop sending on it, orphan what it carried, and let the reconnect work
 * bring it back.  Losing the last connection holds new I/O (I/O is
 * held) and starts the fail_timeout_s clock.
 */
void dst_rconn_down(struct dst_rconn *conn, int err)
{
	struct dst_remote *rem = conn->rem;
	unsigned int orphans, failed;
	bool stopping, lost_all;

	dst_rconn_kill(conn);
	mutex_lock(&conn->tx_lock);
	WRITE_ONCE(conn->down_since, jiffies);
	WRITE_ONCE(conn->live, false);
	mutex_unlock(&conn->tx_lock);
	/*
	 * With another connection live the disk has not lost its server:
	 * even requests that asked for no retry (REQ_FAILFAST_*) wait to be
	 * resent after the fence, rather than failed (but see lost_all).
	 */
	orphans = dst_trans_orphan(&rem->set, conn->idx);
	trace_dst_conn_down(dst_rem_name(rem), conn->idx, READ_ONCE(conn->epoch),
			    err, orphans);

	mutex_lock(&rem->state_lock);
	rem->nr_live--;
	atomic_dec(&rem->paths[conn->path].conns);
	stopping = rem->stopping;
	/* (reshaping is cleared with the first slot back: defensive.) */
	lost_all = !stopping && !rem->nr_live && !rem->reshaping;
	if (!stopping && !rem->nr_live && !rem->failfast) {
		dst_hold_io(rem);
		if (rem->fail_s >= 0)
			queue_delayed_work(rem->ctl_wq, &rem->fail_work,
					   rem->fail_s * HZ);
	}
	dst_remote_set_link(rem);
	/* Now: not after a backoff another slot may be waiting out. */
	if (!stopping)
		mod_delayed_work(rem->ctl_wq, &rem->reconnect_work, 0);
	mutex_unlock(&rem->state_lock);

	if (stopping || READ_ONCE(rem->failfast)) {
		dst_trans_fail_orphans(&rem->set, conn->idx);
		return;
	}
	pr_warn("%s: connection %d to %pISpc lost (%d) with %u request%s in flight; reconnecting\n",
		dst_rem_name(rem), conn->idx, dst_rconn_addr(conn), err,
		orphans, orphans == 1 ? "" : "s");
	/*
	 * The last connection is gone: requests that asked for no retry
	 * fail now, this slot's and those orphaned by a connection lost
	 * while this one still worked (waiting for their slot's fence).
	 * Two slots that go down at once may both have seen the other
	 * live; whichever counts last gets here.  (Not while reshaping:
	 * the new connections are coming, and queue_rq holds such
	 * requests too.)
	 */
	if (lost_all) {
		failed = dst_trans_fail_noretry(&rem->set);
		if (failed)
			pr_warn_ratelimited("%s: no connection left: %u request%s that asked not to be retried (REQ_FAILFAST) failed\n",
					    dst_rem_name(rem), failed,
					    failed == 1 ? "" : "s");
	}
}

/* Put a fresh, fenced socket in slot @conn and resend its orphans. */
void dst_rconn_up(struct dst_rconn *conn, struct socket *sock,
		  struct dst_crypto *crypto)
{
	struct dst_remote *rem = conn->rem;
	struct dst_crypto *old_crypto;
	struct socket *old;
	unsigned int n;

	mutex_lock(&conn->sock_lock);
	old = conn->sock;
	old_crypto = conn->crypto;
	conn->sock = sock;
	conn->crypto = crypto;
	mutex_unlock(&conn->sock_lock);
	if (old) {
		dst_sock_unwatch(old, &conn->watch);
		sock_release(old);
	}
	dst_crypto_free(old_crypto);

	WRITE_ONCE(conn->last_rx, jiffies);
	dst_sock_watch(sock, &conn->watch, rem->wq, &conn->recv_work,
		       dst_rconn_rx_fast);

	/*
	 * One transition under state_lock: the slot is counted in nr_live
	 * before it is published live.  From then on its receive loop may
	 * find the socket dead at once and take the slot down again
	 * (dst_rconn_down() decrements nr_live under state_lock, and with
	 * none left holds new I/O and starts the fail clock), so it
	 * must find the count that includes it.
	 */
	mutex_lock(&rem->state_lock);
	rem->nr_live++;
	atomic_inc(&rem->paths[conn->path].conns);
	rem->failfast = false;
	cancel_delayed_work(&rem->fail_work);
	mutex_lock(&conn->tx_lock);
	WRITE_ONCE(conn->epoch, conn->epoch + 1);
	/* A stale run of the receive loop that sees live sees this sock. */
	smp_store_release(&conn->live, true);
	mutex_unlock(&conn->tx_lock);
	WRITE_ONCE(rem->reshaping, false);
	if (rem->holding)
		dst_release_held(rem);
	dst_remote_set_link(rem);
	mutex_unlock(&rem->state_lock);
	queue_work(rem->wq, &conn->recv_work);

	n = dst_trans_resend_orphans(&rem->set, conn->idx);
	trace_dst_conn_up(dst_rem_name(rem), conn->idx, READ_ONCE(conn->epoch),
			  0, n);
	atomic64_add(n, &rem->resends);
	atomic64_inc(&rem->reconnects);
	pr_info("%s: connection %d to %pISpc is back; %u request%s resent\n",
		dst_rem_name(rem), conn->idx, dst_rconn_addr(conn), n,
		n == 1 ? "" : "s");
}

/* Capped exponential backoff from reconnect_delay_ms. */
static unsigned long dst_reconnect_delay(struct dst_remote *rem)
{
	unsigned int base = READ_ONCE(rem->reconnect_ms);	/* live */
	unsigned int shift = min(rem->attempt, 16U);
	u64 ms = (u64)base << shift;

	ms = min_t(u64, ms, max(base, DST_RECONNECT_MAX_MS));
	return msecs_to_jiffies(ms);
}

void dst_reconnect_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote,
					      reconnect_work);
	unsigned int noio = memalloc_noio_save();
	bool again = false;
	int i;

	for (i = 0; i < rem->nr_conns && !READ_ONCE(rem->stopping); i++) {
		struct dst_rconn *conn = &rem->conns[i];
		struct dst_crypto *crypto;
		struct socket *sock;

		if (READ_ONCE(conn->live))
			continue;
		/* Its old receive loop must be quite finished. */
		flush_work(&conn->recv_work);
		rem->attempt++;
		pr_info("%s: reconnect attempt %u to %pISpc (connection %d)\n",
			dst_rem_name(rem), rem->attempt, dst_rconn_addr(conn),
			i);
		sock = dst_rconn_open(rem, conn, false,
				      DST_RECONNECT_TIMEOUT_MS, &crypto);
		trace_dst_reconnect(dst_rem_name(rem), i, rem->attempt,
				    PTR_ERR_OR_ZERO(sock));
		if (IS_ERR(sock)) {
			again = true;
			continue;
		}
		dst_rconn_up(conn, sock, crypto);
	}
	if (again && !READ_ONCE(rem->stopping))
		queue_delayed_work(rem->ctl_wq, &rem->reconnect_work,
				   dst_reconnect_delay(rem));
	else if (!again)
		rem->attempt = 0;
	memalloc_noio_restore(noio);
}

/*
 * fail_timeout_s changed while attached: @s from now on, and if no
 * connection is left and I/O is held, counted from when the last one
 * went down -- already over, I/O fails at once; -1, it is held until
 * the server is back.
 */
void dst_remote_set_fail_timeout(struct dst_remote *rem, int s)
{
	unsigned long since = jiffies, left = 0;
	int i;

	mutex_lock(&rem->state_lock);
	WRITE_ONCE(rem->fail_s, s);
	if (rem->holding && s < 0) {
		cancel_delayed_work(&rem->fail_work);
	} else if (rem->holding) {
		for (i = 0; i < rem->nr_conns; i++) {
			unsigned long t = READ_ONCE(rem->conns[i].down_since);

			if (i == 0 || time_after(t, since))
				since = t;
		}
		if (time_before(jiffies, since + (unsigned long)s * HZ))
			left = since + (unsigned long)s * HZ - jiffies;
		mod_delayed_work(rem->ctl_wq, &rem->fail_work, left);
	}
	mutex_unlock(&rem->state_lock);
}

/* fail_timeout_s without any connection: stop holding I/O. */
void dst_fail_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, fail_work);

	mutex_lock(&rem->state_lock);
	/* A connection is back, or fail_timeout_s went to -1 meanwhile. */
	if (rem->nr_live || rem->failfast || rem->fail_s < 0) {
		mutex_unlock(&rem->state_lock);
		return;
	}
	rem->failfast = true;
	if (rem->holding)
		dst_release_held(rem);
	dst_remote_set_link(rem);
	mutex_unlock(&rem->state_lock);

	pr_err("%s: no connection to %pISpc%s for %d s; failing I/O until it is back\n",
	       dst_rem_name(rem), &rem->paths[0].addr,
	       rem->nr_paths > 1 ? " or its other addresses" : "",
	       READ_ONCE(rem->fail_s));
	dst_trans_fail_orphans(&rem->set, -1);
}

/*
 * Keepalive: a connection silent for keepalive_ms gets a PING; one silent
 * for twice that is dead, whatever TCP thinks.  A busy connection is
 * never silent: every reply counts, and so does any byte TCP receives or
 * gets acknowledged, so a frame crawling over a bad link is not mistaken
 * for a dead peer.
 */
void dst_ka_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, ka_work);
	unsigned int ka_ms = READ_ONCE(rem->ka_ms);	/* live */
	unsigned long ka = msecs_to_jiffies(ka_ms);
	unsigned int noio;
	int i;

	/* Switched off while this was queued. */
	if (!ka_ms)
		return;
	noio = memalloc_noio_save();

	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];
		unsigned long idle;
		bool spent = false;
		u32 epoch;
		int err;

		/* Acquire, as dst_rconn_kill_epoch() reads them. */
		if (!smp_load_acquire(&conn->live))
			continue;
		epoch = READ_ONCE(conn->epoch);
		/*
		 * Bytes moving either way count, not only whole frames.
		 * Sampled without tx_lock, which a sender holds for as
		 * long as a slow link takes to drain its frame: TCP's
		 * sequence numbers are read locklessly, and sock_lock only
		 * keeps the socket from being replaced meanwhile.
		 */
		mutex_lock(&conn->sock_lock);
		if (conn->sock) {
			u64 p = dst_sock_progress(conn->sock);

			if (p != conn->ka_progress) {
				conn->ka_progress = p;
				WRITE_ONCE(conn->last_rx, jiffies);
			}
		}
		mutex_unlock(&conn->sock_lock);
		idle = jiffies - READ_ONCE(conn->last_rx);
		if (idle >= 2 * ka) {
			pr_warn("%s: connection %d to %pISpc silent for %u ms despite keepalive; dropping it\n",
				dst_rem_name(rem), i, dst_rconn_addr(conn),
				jiffies_to_msecs(idle));
			dst_rconn_kill_epoch(conn, epoch);
			continue;
		}
		/*
		 * A connection busy sending is not idle: no PING then.  Nor
		 * does the PING wait for socket memory, which would hold up
		 * every other connection's keepalive: one that the socket
		 * does not take at once, whole, is skipped, unless part of
		 * it (or its seal) is spent, which ends the connection.
		 */
		if (idle < ka || !mutex_trylock(&conn->tx_lock))
			continue;
		/* The slot may have reconnected since: this epoch's socket. */
		epoch = conn->epoch;
		if (conn->live && sk_stream_is_writeable(conn->sock->sk)) {
			err = dst_rconn_send_ctl(conn, DST_CMD_PING,
						 MSG_DONTWAIT, &spent);
			if (spent)
				pr_warn("%s: PING on connection %d failed half-way: %d; dropping it\n",
					dst_rem_name(rem), i, err);
		}
		mutex_unlock(&conn->tx_lock);
		if (spent)
			dst_rconn_kill_epoch(conn, epoch);
	}
	memalloc_noio_restore(noio);
	queue_delayed_work(rem->ctl_wq, &rem->ka_work, max(ka / 2, 1UL));
}

/*
 * Several paths: a slot that left its own path for another goes back
 * once a probe shows that path reaches the export again, so a path that
 * comes back carries I/O again.  The move is a reconnection like any
 * other: the slot's requests are resent once the server has fenced the
 * connection they went out on (docs/resilience.md), so nothing fails.
 * One slot a run, never the last live one (the move must not hold I/O),
 * and a slot whose move did not take waits longer (dst_rconn_open()).
 */
void dst_path_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, path_work);
	unsigned int noio = memalloc_noio_save();
	int reach[DST_MAX_PATHS] = {};	/* 1 answers, -1 not, 0 not tried */
	int i;

	for (i = 0; i < rem->nr_conns && !READ_ONCE(rem->stopping); i++) {
		struct dst_rconn *conn = &rem->conns[i];
		int home = conn->home;
		bool go;
		u32 epoch;

		if (!READ_ONCE(conn->live) || READ_ONCE(conn->path) == home ||
		    time_before(jiffies, READ_ONCE(conn->home_retry)))
			continue;
		if (READ_ONCE(rem->nr_live) < 2)
			break;
		epoch = READ_ONCE(conn->epoch);
		if (!reach[home]) {
			reach[home] = dst_path_probe(rem, home) ? 1 : -1;
			WRITE_ONCE(rem->paths[home].down, reach[home] < 0);
		}
		if (reach[home] < 0)
			continue;
		/*
		 * The connection probed is still the one to move, and (the
		 * probe took a while) still not the last live one: under
		 * state_lock no other slot is counted down until this one
		 * is shut.  A sender in tx_lock may wait on a slow link;
		 * not under state_lock: then the move waits for a later run.
		 */
		mutex_lock(&rem->state_lock);
		if (!mutex_trylock(&conn->tx_lock)) {
			mutex_unlock(&rem->state_lock);
			continue;
		}
		go = conn->live && conn->epoch == epoch && rem->nr_live >= 2 &&
		     !rem->stopping;
		if (go)
			WRITE_ONCE(conn->go_home, true);
		mutex_unlock(&conn->tx_lock);
		if (go)
			dst_rconn_kill_epoch(conn, epoch);
		mutex_unlock(&rem->state_lock);
		if (!go)
			continue;
		pr_info("%s: %pISpc reaches the export again: connection %d goes back to it\n",
			dst_rem_name(rem), &rem->paths[home].addr, i);
		break;
	}
	memalloc_noio_restore(noio);
	if (!READ_ONCE(rem->stopping))
		queue_delayed_work(rem->ctl_wq, &rem->path_work,
				   msecs_to_jiffies(DST_PATH_PROBE_MS));
}

/*
 * Close every connection of @rem, with BYE where it still works, and
 * wait for their receive loops: with stopping set (and the reconnect
 * work cancelled, which nothing can queue again meanwhile), the slots go
 * down without reconnecting, holding or failing anything.
 */
static void dst_remote_close_all(struct dst_remote *rem)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_bye(&rem->conns[i]);
	/* The shutdown's state_change queues each loop: flush finds it. */
	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_kill(&rem->conns[i]);
	for (i = 0; i < rem->nr_conns; i++)
		flush_work(&rem->conns[i].recv_work);
	cancel_delayed_work_sync(&rem->fail_work);
	WARN_ON_ONCE(READ_ONCE(rem->nr_live));
}

/* Slot @conn is out of use: its last socket, keys and buffers go. */
static void dst_rconn_retire(struct dst_rconn *conn)
{
	struct dst_crypto *crypto;
	struct socket *sock;

	mutex_lock(&conn->sock_lock);
	sock = conn->sock;
	crypto = conn->crypto;
	conn->sock = NULL;
	conn->crypto = NULL;
	mutex_unlock(&conn->sock_lock);
	if (sock) {
		dst_sock_unwatch(sock, &conn->watch);
		sock_release(sock);
	}
	dst_crypto_free(crypto);
	dst_crypto_buf_free(conn->cbuf);
	conn->cbuf = NULL;
}

/*
 * With the queue frozen: stop every connection for the change, unless
 * one is down or I/O already failing.  Returns false, with the link as
 * it was, if so.
 */
static bool dst_remote_stop_for_reshape(struct dst_remote *rem)
{
	bool up;

	mutex_lock(&rem->state_lock);
	up = rem->nr_live == rem->nr_conns && !rem->failfast;
	if (up)
		WRITE_ONCE(rem->stopping, true);
	mutex_unlock(&rem->state_lock);
	if (!up)
		return false;
	/* No work revives or probes a slot from here; none is queued again. */
	cancel_delayed_work_sync(&rem->reconnect_work);
	cancel_delayed_work_sync(&rem->path_work);
	cancel_delayed_work_sync(&rem->ka_work);
	dst_remote_close_all(rem);
	return true;
}

/*
 * After the change: no connection is live, and the reconnect work opens
 * them all, each on its own path, as after a loss -- with new I/O held
 * and the fail clock running, as dst_rconn_down() leaves it -- so the
 * queue need not stay frozen while they connect.
 */
static void dst_remote_restart(struct dst_remote *rem)
{
	int i;

	mutex_lock(&rem->state_lock);
	WRITE_ONCE(rem->stopping, false);
	for (i = 0; i < rem->nr_conns; i++)
		WRITE_ONCE(rem->conns[i].go_home, true);
	rem->attempt = 0;
	WRITE_ONCE(rem->reshaping, true);
	if (!rem->holding)
		dst_hold_io(rem);
	/*
	 * The administrator closed the connections, the link did not fail:
	 * even with fail_timeout_s 0 the new ones get the time a first
	 * attempt on each address and a second on one may take (a connect
	 * and each handshake read are bounded by DST_RECONNECT_TIMEOUT_MS)
	 * before held I/O fails.
	 */
	if (rem->fail_s >= 0) {
		unsigned int ms = 2 * (rem->nr_paths + 1) *
				  DST_RECONNECT_TIMEOUT_MS;

		mod_delayed_work(rem->ctl_wq, &rem->fail_work,
				 max_t(unsigned long, rem->fail_s * HZ,
				       msecs_to_jiffies(ms)));
	}
	dst_remote_set_link(rem);
	mod_delayed_work(rem->ctl_wq, &rem->reconnect_work, 0);
	mutex_unlock(&rem->state_lock);
	if (READ_ONCE(rem->ka_ms))
		queue_delayed_work(rem->ctl_wq, &rem->ka_work,
				   msecs_to_jiffies(rem->ka_ms / 2));
	if (rem->nr_paths > 1)
		queue_delayed_work(rem->ctl_wq, &rem->path_work,
				   msecs_to_jiffies(DST_PATH_PROBE_MS));
	/* A RESIZE that came while the slots were stopping: apply it. */
	queue_work(system_wq, &rem->resize_work);
}

/**
 * dst_remote_set_connections - change the number of connections live
 * @node: the remote, locked and enabled
 * @n: the new number, in range
 *
 * Every connection tells the server in its HELLO how many queues the
 * client has, and the server checks each request's id against it, so
 * the change is made with nothing in flight: the queue is frozen (what
 * is in flight has DST_RESHAPE_DRAIN_MS to finish; new I/O waits), every
 * connection closed with BYE, blk-mq's hardware queues set to @n (at
 * most one per CPU, as at attach), and the reconnect work opens the @n
 * connections, each fencing its slot's last one on the server.  No I/O
 * fails unless reconnecting takes longer than fail_timeout_s (and than
 * dst_remote_restart()'s floor).
 *
 * Returns 0; -EINVAL for fewer connections than addresses; -EBUSY
 * unless every connection is up; -ETIMEDOUT if I/O did not drain (and
 * nothing changed); -ENOMEM.
 */
int dst_remote_set_connections(struct dst_node *node, int n)
{
	struct dst_remote *rem = node->rem;
	struct request_queue *q = rem->disk->queue;
	u32 max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE;
	int old = rem->nr_conns, i, err = 0;
	unsigned long drain;
	unsigned int noio;

	lockdep_assert_held(&node->lock);
	if (n == old)
		return 0;
	if (n < rem->nr_paths) {
		pr_err("%s: %d addresses need at least as many connections, not %d\n",
		       node->name, rem->nr_paths, n);
		return -EINVAL;
	}
	/*
	 * Checked again once the queue is frozen; asked here first because
	 * with a connection down I/O may be waiting for it, and the freeze
	 * would then wait out DST_RESHAPE_DRAIN_MS for nothing.
	 */
	if (READ_ONCE(rem->nr_live) != old) {
		pr_err("%s: connections can change only while all %d are up\n",
		       node->name, old);
		return -EBUSY;
	}
	/* The new slots' crypto buffers, before anything changes. */
	for (i = old; i < n && node->cfg.crypto.key_len; i++) {
		if (rem->conns[i].cbuf)
			continue;
		rem->conns[i].cbuf =
			dst_crypto_buf_alloc(max_io, node->cfg.crypto.cipher[0]);
		if (!rem->conns[i].cbuf)
			return -ENOMEM;
	}

	/* Frozen, this disk cannot take reclaim's writeback: no I/O here. */
	noio = memalloc_noio_save();
	blk_freeze_queue_start(q);
	drain = msecs_to_jiffies(DST_RESHAPE_DRAIN_MS);
	if (blk_mq_freeze_queue_wait_timeout(q, drain) <= 0) {
		pr_err("%s: I/O did not drain in %d ms; still %d connections\n",
		       node->name, DST_RESHAPE_DRAIN_MS, old);
		err = -ETIMEDOUT;
	} else if (!dst_remote_stop_for_reshape(rem)) {
		pr_err("%s: connections can change only while all %d are up\n",
		       node->name, old);
		err = -EBUSY;
	}
	if (err) {
		blk_mq_unfreeze_queue(q);
		memalloc_noio_restore(noio);
		return err;
	}
	for (i = n; i < old; i++)
		dst_rconn_retire(&rem->conns[i]);

	/* debugfs walks the tags: not while blk-mq replaces them. */
	down_write(&rem->tags_rwsem);
	blk_mq_update_nr_hw_queues(&rem->set, n + rem->nr_poll);
	up_write(&rem->tags_rwsem);
	WRITE_ONCE(rem->nr_conns, n);
	/* Ids name hardware queues: announce every queue blk-mq has. */
	rem->nr_queues = max_t(int, n + rem->nr_poll, rem->set.nr_hw_queues);
	dst_remote_restart(rem);
	blk_mq_unfreeze_queue(q);
	memalloc_noio_restore(noio);
	pr_info("%s: %d connection%s, was %d; reconnecting them\n",
		node->name, n, n > 1 ? "s" : "", old);
	return 0;
}

/* Tell the server we are going, where the connection still works. */
void dst_rconn_bye(struct dst_rconn *conn)
{
	bool spent;

	/* The connection closes right after: a BYE cut short is harmless. */
	mutex_lock(&conn->tx_lock);
	if (conn->live)
		dst_rconn_send_ctl(conn, DST_CMD_BYE, MSG_DONTWAIT, &spent);
	mutex_unlock(&conn->tx_lock);
}
