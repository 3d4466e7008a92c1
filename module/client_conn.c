// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: a connection slot's life.
 *
 * A slot is one hardware queue.  Its socket comes from dst_rconn_open():
 * connect, HELLO/WELCOME, and for keyed nodes the authenticated exchange
 * that derives the session keys.  dst_rconn_up() puts it in service and
 * dst_rconn_down() takes it out when it dies -- reset, FIN, protocol
 * error, or no answer to keepalive PINGs -- leaving its requests as
 * orphans.  The slot is then reconnected with capped exponential backoff;
 * the server fences the old connection during the new handshake, and only
 * then are the orphans resent.  The node's link state (up, degraded,
 * reconnecting, failed), the fail timer and keepalive live here too
 * (docs/resilience.md has the diagrams).
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

/* --- handshake ----------------------------------------------------- */

/*
 * The authenticated part of a keyed handshake (docs/protocol.md): the
 * server's challenge must prove the key before this side proves it in
 * turn.  @hello is our HELLO frame as sent.  On success the session's
 * keys are set up in *@cryptop and the welcome is the next frame.
 */
static int dst_rconn_auth(struct dst_remote *rem,
			  const struct sockaddr_storage *peer,
			  struct dst_crypto_buf *cbuf,
			  struct socket *sock, const void *hello,
			  size_t hello_len, const u8 *cnonce,
			  struct dst_crypto **cryptop)
{
	const struct dst_crypto_cfg *cfg = &rem->node->cfg.crypto;
	struct dst_node *node = rem->node;
	struct {
		struct dst_wire_hdr hdr;
		union {
			struct dst_wire_challenge ch;
			struct dst_wire_proof pr;
		};
		u8 sproof[DST_PROOF_LEN];
		u8 cproof[DST_PROOF_LEN];
	} *b;
	struct dst_crypto *c;
	struct dst_msg m;
	int err;

	b = kzalloc(sizeof(*b), GFP_NOIO);
	if (!b)
		return -ENOMEM;
	err = dst_sock_recv(sock, &b->ch, DST_CHALLENGE_SIZE);
	if (err)
		goto out;
	err = dst_crypto_proofs(cfg, hello, hello_len, b->ch.nonce, b->sproof,
				b->cproof);
	if (err) {
		pr_err("%s: cannot compute the handshake proofs: %d\n",
		       node->name, err);
		goto out;
	}
	if (!dst_crypto_proof_ok(b->sproof, b->ch.proof)) {
		pr_err("%s: %pISpc cannot prove the shared key (a different key on one side?); closing\n",
		       node->name, peer);
		err = -EKEYREJECTED;
		goto out;
	}
	c = dst_crypto_session(cfg, false, cnonce, b->ch.nonce,
			       dst_node_get_param(node, DST_P_MAX_PAGES) *
			       PAGE_SIZE, cbuf);
	if (IS_ERR(c)) {
		err = PTR_ERR(c);
		pr_err("%s: cannot set up %s%s%s: %d\n", node->name,
		       dst_crypto_hash_name(cfg), cfg->cipher[0] ? " + " : "",
		       cfg->cipher, err);
		goto out;
	}
	m = (struct dst_msg){ .cmd = DST_CMD_AUTH | DST_CMD_REPLY,
			      .len = DST_PROOF_SIZE };
	dst_msg_encode(&b->hdr, &m);
	memcpy(b->pr.proof, b->cproof, DST_PROOF_LEN);
	err = dst_sock_send(sock, b, DST_HDR_SIZE + DST_PROOF_SIZE, 0);
	if (err) {
		dst_crypto_free(c);
		goto out;
	}
	*cryptop = c;
out:
	kfree_sensitive(b);
	return err;
}

/* The handshake's frames, one at a time. */
struct dst_hs_buf {
	struct dst_wire_hdr hdr;
	union {
		struct {
			struct dst_wire_hello hello;
			struct dst_wire_hello_auth auth;
		};
		struct dst_wire_welcome welcome;
	};
};

/*
 * Say @hello; under a key, answer the server's challenge, which gives
 * the session keys (*@cryptop, the caller's to free).  Leaves the
 * header of the server's answer to HELLO in @buf->hdr.
 */
static int dst_rconn_hello(struct dst_remote *rem,
			   const struct sockaddr_storage *peer,
			   struct dst_crypto_buf *cbuf,
			   struct socket *sock, struct dst_hs_buf *buf,
			   const struct dst_hello *hello,
			   struct dst_crypto **cryptop)
{
	struct dst_node *node = rem->node;
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	struct dst_msg m = {
		.cmd = DST_CMD_HELLO,
		.len = DST_HELLO_SIZE,
	};
	u8 cnonce[DST_NONCE_LEN];
	bool keyed = cfg->key_len;
	int err;

	if (keyed) {
		m.len += DST_HELLO_AUTH_SIZE;
		dst_crypto_nonce(cnonce);
		dst_hello_auth_encode(&buf->auth, cnonce,
				      dst_crypto_hash_name(cfg), cfg->cipher);
	}
	dst_msg_encode(&buf->hdr, &m);
	dst_hello_encode(&buf->hello, hello);

	err = dst_sock_send(sock, buf, DST_HDR_SIZE + m.len, 0);
	if (!err && keyed) {
		err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
		if (!err && !dst_msg_decode(&buf->hdr, &m) &&
		    m.cmd == DST_CMD_AUTH && m.len == DST_CHALLENGE_SIZE &&
		    !m.id && !m.offset && !m.status) {
			/* The HELLO as sent is what both proofs cover. */
			dst_msg_encode(&buf->hdr, &(struct dst_msg){
				.cmd = DST_CMD_HELLO,
				.len = DST_HELLO_SIZE + DST_HELLO_AUTH_SIZE });
			dst_hello_encode(&buf->hello, hello);
			err = dst_rconn_auth(rem, peer, cbuf, sock, buf,
					     DST_HDR_SIZE + DST_HELLO_SIZE +
					     DST_HELLO_AUTH_SIZE, cnonce, cryptop);
			if (err)
				goto out;
			err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
		} else if (!err && !dst_msg_decode(&buf->hdr, &m) &&
			   m.cmd == (DST_CMD_HELLO | DST_CMD_REPLY) &&
			   m.status == DST_ST_OK) {
			pr_err("%s: %pISpc did not authenticate (the export has no key?); closing\n",
			       node->name, peer);
			err = -EKEYREJECTED;
			goto out;
		}
		/* Else a refusal: read by the caller like any other. */
	} else if (!err) {
		err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
	}
	if (err)
		pr_err("%s: handshake with %pISpc failed: %d\n", node->name,
		       peer, err);
out:
	memzero_explicit(cnonce, sizeof(cnonce));
	return err;
}

/*
 * The server's answer to @hello, whose header is in @buf->hdr: a
 * refusal, or a welcome (checked with session keys @c, if any) that
 * describes an export this client can use, into @geo.
 */
static int dst_rconn_welcome(struct dst_remote *rem,
			     const struct sockaddr_storage *peer,
			     struct socket *sock,
			     struct dst_hs_buf *buf, struct dst_crypto *c,
			     const struct dst_hello *hello,
			     struct dst_geometry *geo)
{
	struct dst_node *node = rem->node;
	struct dst_msg m;
	int err;

	err = dst_msg_decode(&buf->hdr, &m);
	if (err || m.cmd != (DST_CMD_HELLO | DST_CMD_REPLY) || m.id) {
		pr_err("%s: %pISpc does not speak DST v%d\n", node->name,
		       peer, DST_PROTO_VERSION);
		return -EPROTO;
	}
	if (m.status != DST_ST_OK) {
		err = dst_status_to_errno(m.status);
		pr_err("%s: %pISpc refused export '%s': status %u (%d)%s\n",
		       node->name, peer, hello->export, m.status,
		       err, m.status == DST_ST_AUTH ?
		       ": key, hash or cipher differ from the export's" : "");
		return err;
	}
	if (m.len != DST_WELCOME_SIZE) {
		pr_err("%s: welcome of %u bytes from %pISpc\n", node->name,
		       m.len, peer);
		return -EPROTO;
	}
	err = dst_sock_recv(sock, &buf->welcome, DST_WELCOME_SIZE);
	if (!err && c) {
		/* The welcome is the server's first protected frame. */
		struct scatterlist *sg = dst_crypto_sg(c, false, 1);

		sg_set_buf(sg, &buf->welcome, DST_WELCOME_SIZE);
		err = dst_sock_recv(sock, dst_crypto_rx_tag(c),
				    dst_crypto_tag_len(c));
		if (!err && dst_crypto_open(c, &buf->hdr, 1, DST_WELCOME_SIZE)) {
			pr_err("%s: the welcome from %pISpc fails its integrity check; closing\n",
			       node->name, peer);
			err = -EBADMSG;
		}
	}
	if (err)
		return err;
	err = dst_welcome_decode(&buf->welcome, geo);
	if (!err && (geo->version < hello->version_min ||
		     geo->version > hello->version_max ||
		     geo->features & ~(hello->features | DST_FEAT_READ_ONLY) ||
		     geo->max_io > hello->max_io))
		err = -EPROTO;
	if (err)
		pr_err("%s: %pISpc describes an export this client cannot use\n",
		       node->name, peer);
	return err;
}

/*
 * HELLO and its answer on a new connection to @peer, for slot @slot (-1:
 * a probe, with no session, which fences nothing): the export it
 * describes into @geo, and under a key the session keys into *@cryptop.
 */
static noinline __noclone int
dst_rconn_handshake(struct dst_remote *rem, int slot,
		    const struct sockaddr_storage *peer,
		    struct socket *sock, struct dst_geometry *geo,
		    struct dst_crypto **cryptop)
{
	struct dst_node *node = rem->node;
	struct dst_hello hello = {
		.version_min = DST_PROTO_VERSION_MIN,
		.version_max = DST_PROTO_VERSION,
		.features = DST_FEAT_ALL | DST_FEAT_RESIZE | DST_FEAT_UUID,
		.max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE,
		.session = slot < 0 ? 0 : rem->session,
		.slot = slot < 0 ? 0 : slot,
		.nr_queues = rem->nr_conns,
		.queue_depth = dst_node_get_param(node, DST_P_QUEUE_DEPTH),
	};
	struct dst_crypto *c = NULL;
	struct dst_hs_buf *buf;
	int err;

	*cryptop = NULL;
	buf = kzalloc(sizeof(*buf), GFP_NOIO);
	if (!buf)
		return -ENOMEM;
	if (!dst_node_get_param(node, DST_P_READ_ONLY))
		hello.features &= ~DST_FEAT_READ_ONLY;
	if (node->cfg.crypto.key_len)
		hello.features |= DST_FEAT_AUTH;
	strscpy(hello.export, node->cfg.export, sizeof(hello.export));
	/* A probe's keys are its own: the slot's buffers are in use. */
	err = dst_rconn_hello(rem, peer, slot < 0 ? NULL : rem->conns[slot].cbuf,
			      sock, buf, &hello, &c);
	if (!err)
		err = dst_rconn_welcome(rem, peer, sock, buf, c, &hello, geo);
	kfree(buf);
	if (err)
		dst_crypto_free(c);
	else
		*cryptop = c;
	return err;
}

/* make check-debug fails it (fail_function): attach and reconnect unwind. */
ALLOW_ERROR_INJECTION(dst_rconn_handshake, ERRNO);

/*
 * The same export: field by field, as the structure has padding, and
 * with @identity its uuid.  Not the size, which may have grown
 * (dst_remote_grow()), nor RESIZE or UUID, which a server upgraded or
 * downgraded meanwhile may grant or not: RESIZE is a connection's
 * (conn->resize), and dst_rconn_identity() checks UUID where it counts.
 */
static bool dst_geometry_same(const struct dst_geometry *a,
			      const struct dst_geometry *b, bool identity)
{
	const u32 optional = DST_FEAT_RESIZE | DST_FEAT_UUID;

	return a->version == b->version &&
	       !((a->features ^ b->features) & ~optional) &&
	       a->lbs == b->lbs && a->pbs == b->pbs &&
	       a->max_io == b->max_io && a->max_discard == b->max_discard &&
	       a->max_write_zeroes == b->max_write_zeroes &&
	       (!identity || !memcmp(a->uuid, b->uuid, sizeof(a->uuid)));
}

/*
 * The export's identity counts with several paths, which must all reach
 * the same export, and when the administrator named it (the remote's
 * uuid): then every welcome must carry it (feature UUID).  A single
 * path with no uuid set is checked as before identities existed, by
 * geometry alone, so a server whose derived identity changed (another
 * host name) is still the same disk to it.  Returns 0, or the errno and
 * the log line for a server that cannot be this export.
 */
static int dst_rconn_identity(struct dst_remote *rem,
			      const struct sockaddr_storage *peer,
			      const struct dst_geometry *geo)
{
	struct dst_node *node = rem->node;
	const uuid_t *want = &node->cfg.uuid;

	if (rem->nr_paths < 2 && uuid_is_null(want))
		return 0;
	if (!(geo->features & DST_FEAT_UUID)) {
		pr_err("%s: %pISpc does not say which export it is (feature UUID): several addresses or a uuid need it\n",
		       node->name, peer);
		return -EOPNOTSUPP;
	}
	if (!uuid_is_null(want) && memcmp(geo->uuid, want, sizeof(*want))) {
		pr_err("%s: %pISpc is export %pUb, not %pUb\n", node->name,
		       peer, geo->uuid, want);
		return -ESTALE;
	}
	return 0;
}

/*
 * Connect slot @conn over path @p and shake hands.  The first connection
 * of an attach fixes the geometry; every later one, and every
 * reconnection, must see the same export.  Returns the socket, ready for
 * the receive loop; -ESTALE for a server that is not this export.
 */
static struct socket *dst_rconn_try(struct dst_remote *rem,
				    struct dst_rconn *conn, int p, bool first,
				    int timeout_ms,
				    struct dst_crypto **cryptop)
{
	const struct sockaddr_storage *peer = &rem->paths[p].addr;
	struct dst_node *node = rem->node;
	struct dst_geometry geo;
	struct socket *sock;
	bool identity;
	int err;

	WRITE_ONCE(conn->path, p);
	sock = dst_sock_connect(rem->net, peer, timeout_ms);
	if (IS_ERR(sock)) {
		pr_err("%s: cannot connect to %pISpc: %ld\n", node->name,
		       peer, PTR_ERR(sock));
		return sock;
	}
	err = dst_rconn_handshake(rem, conn->idx, peer, sock, &geo, cryptop);
	if (err)
		goto fail;

	conn->resize = geo.features & DST_FEAT_RESIZE;
	identity = rem->nr_paths > 1 || !uuid_is_null(&node->cfg.uuid);
	err = dst_rconn_identity(rem, peer, &geo);
	if (!err && first) {
		rem->geo = geo;
	} else if (!err && (!dst_geometry_same(&geo, &rem->geo, identity) ||
			    dst_remote_grow(rem, geo.size))) {
		pr_err("%s: connection %d to %pISpc found a different export (another identity, it shrank, or its blocks or features changed)\n",
		       node->name, conn->idx, peer);
		err = -ESTALE;
	}
	if (err) {
		dst_crypto_free(*cryptop);
		*cryptop = NULL;
		goto fail;
	}
	dst_sock_set_timeout(sock, 0);
	/*
	 * Under session keys every reply is checked by the receive loop
	 * and a request held for the server's ACK waits for that too:
	 * measured, keyed 4k reads at QD32 lost a third with Nagle on.
	 */
	if (*cryptop)
		dst_sock_nodelay(sock);
	return sock;
fail:
	sock_release(sock);
	return ERR_PTR(err);
}

/* The network failed us (try another path), not the server. */
static bool dst_err_is_network(long err)
{
	switch (err) {
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -EHOSTDOWN:
	case -ENETUNREACH:
	case -ENETDOWN:
	case -EADDRNOTAVAIL:
	case -EPIPE:
		return true;
	}
	return false;
}

/**
 * dst_rconn_open - connect slot @conn, over one of the server's paths
 * @rem: the remote
 * @conn: the slot, not live
 * @first: the attach's first connection, which fixes the geometry
 * @timeout_ms: for each connect and handshake
 * @cryptop: the session keys, if keyed
 *
 * Its own path first -- at attach, when path_work sends it back, when it
 * was away, after a round in which no path answered (a server restart:
 * every slot goes back where it belongs) -- else, when its own path has
 * just failed, the others first and that one last.  At attach a server
 * that refuses or is another export ends the attempt: a wrong address is
 * the administrator's to fix, not to route around.
 */
struct socket *dst_rconn_open(struct dst_remote *rem,
			      struct dst_rconn *conn, bool first,
			      int timeout_ms,
			      struct dst_crypto **cryptop)
{
	/* Set by dst_remote_run(), after every slot's first open. */
	bool attach = !READ_ONCE(rem->running);
	bool go_home = READ_ONCE(conn->go_home), was_lost = conn->lost_all;
	int k, p = conn->home, from = conn->path, start;
	struct socket *sock = ERR_PTR(-ENOTCONN);

	WRITE_ONCE(conn->go_home, false);
	start = attach || go_home || conn->lost_all || from != conn->home ?
		conn->home : conn->home + 1;
	for (k = 0; k < rem->nr_paths; k++) {
		if (k && READ_ONCE(rem->stopping))
			break;
		p = (start + k) % rem->nr_paths;
		sock = dst_rconn_try(rem, conn, p, first, timeout_ms, cryptop);
		if (!IS_ERR(sock))
			break;
		WRITE_ONCE(rem->paths[p].down, true);
		atomic64_inc(&rem->paths[p].failures);
		if (attach && !dst_err_is_network(PTR_ERR(sock)))
			return sock;
	}
	conn->lost_all = IS_ERR(sock);
	if (IS_ERR(sock))
		return sock;
	WRITE_ONCE(rem->paths[p].down, false);
	if (attach)
		return sock;
	if (p != conn->home && go_home) {
		/* Sent home and not taken there: wait longer next time. */
		conn->home_fails = min(conn->home_fails + 1, 5U);
		WRITE_ONCE(conn->home_retry, jiffies +
			   msecs_to_jiffies(DST_PATH_PROBE_MS << conn->home_fails));
	} else if (p == conn->home) {
		conn->home_fails = 0;
	}
	if (p != from && !was_lost) {
		if (!go_home)
			atomic64_inc(&rem->paths[from].failovers);
		pr_info("%s: connection %d moved from %pISpc to %pISpc\n",
			dst_rem_name(rem), conn->idx, &rem->paths[from].addr,
			&rem->paths[p].addr);
	}
	return sock;
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
 * bring it back.  Losing the last connection quiesces the queue (I/O is
 * held) and starts the fail_timeout_s clock.
 */
void dst_rconn_down(struct dst_rconn *conn, int err)
{
	struct dst_remote *rem = conn->rem;
	unsigned int orphans;
	bool stopping;

	dst_rconn_kill(conn);
	mutex_lock(&conn->tx_lock);
	WRITE_ONCE(conn->down_since, jiffies);
	WRITE_ONCE(conn->live, false);
	mutex_unlock(&conn->tx_lock);
	/*
	 * With another connection live the disk has not lost its server:
	 * even requests that asked for no retry (REQ_FAILFAST_*) are resent
	 * there after the fence, rather than failed.
	 */
	orphans = dst_trans_orphan(&rem->set, conn->idx,
				   READ_ONCE(rem->nr_live) <= 1);
	trace_dst_conn_down(dst_rem_name(rem), conn->idx, READ_ONCE(conn->epoch),
			    err, orphans);

	mutex_lock(&rem->state_lock);
	rem->nr_live--;
	atomic_dec(&rem->paths[conn->path].conns);
	stopping = rem->stopping;
	if (!stopping && !rem->nr_live && !rem->failfast) {
		blk_mq_quiesce_queue_nowait(rem->disk->queue);
		rem->quiesced = true;
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
	 * none left quiesces the queue and starts the fail clock), so it
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
	if (rem->quiesced) {
		rem->quiesced = false;
		blk_mq_unquiesce_queue(rem->disk->queue);
	}
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
	if (rem->quiesced && s < 0) {
		cancel_delayed_work(&rem->fail_work);
	} else if (rem->quiesced) {
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
	if (rem->quiesced) {
		rem->quiesced = false;
		blk_mq_unquiesce_queue(rem->disk->queue);
	}
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
		int err;

		if (!READ_ONCE(conn->live))
			continue;
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
			dst_rconn_kill(conn);
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
		if (conn->live && sk_stream_is_writeable(conn->sock->sk)) {
			err = dst_rconn_send_ctl(conn, DST_CMD_PING,
						 MSG_DONTWAIT, &spent);
			if (spent)
				pr_warn("%s: PING on connection %d failed half-way: %d; dropping it\n",
					dst_rem_name(rem), i, err);
		}
		mutex_unlock(&conn->tx_lock);
		if (spent)
			dst_rconn_kill(conn);
	}
	memalloc_noio_restore(noio);
	queue_delayed_work(rem->ctl_wq, &rem->ka_work, max(ka / 2, 1UL));
}

/*
 * Does path @p reach this export now?  A whole handshake without a
 * session, which fences nothing on the server, then the same checks a
 * reconnection makes: a path that takes TCP connections but refuses us,
 * or leads to another export, is no way home.
 */
static bool dst_path_probe(struct dst_remote *rem, int p)
{
	const struct sockaddr_storage *peer = &rem->paths[p].addr;
	bool identity = rem->nr_paths > 1 ||
			!uuid_is_null(&rem->node->cfg.uuid);
	struct dst_crypto *c = NULL;
	struct dst_geometry geo;
	struct socket *sock;
	bool ok;

	sock = dst_sock_connect(rem->net, peer, DST_PATH_PROBE_TIMEOUT_MS);
	if (IS_ERR(sock))
		return false;
	ok = !dst_rconn_handshake(rem, -1, peer, sock, &geo, &c) &&
	     !dst_rconn_identity(rem, peer, &geo) &&
	     dst_geometry_same(&geo, &rem->geo, identity);
	dst_crypto_free(c);
	sock_release(sock);
	return ok;
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
		/* The connection probed is still the one to move. */
		mutex_lock(&conn->tx_lock);
		go = conn->live && conn->epoch == epoch &&
		     !READ_ONCE(rem->stopping);
		if (go)
			WRITE_ONCE(conn->go_home, true);
		mutex_unlock(&conn->tx_lock);
		if (!go)
			continue;
		pr_info("%s: %pISpc reaches the export again: connection %d goes back to it\n",
			dst_rem_name(rem), &rem->paths[home].addr, i);
		dst_rconn_kill(conn);
		break;
	}
	memalloc_noio_restore(noio);
	if (!READ_ONCE(rem->stopping))
		queue_delayed_work(rem->ctl_wq, &rem->path_work,
				   msecs_to_jiffies(DST_PATH_PROBE_MS));
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
