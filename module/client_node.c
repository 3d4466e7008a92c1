// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: an export attached as /dev/dstN.
 *
 * Enabling a remote opens `connections` TCP connections to the server,
 * shakes hands on each (all must describe the same export), and adds a
 * blk-mq disk with one hardware queue per connection (client.c).  The
 * slots then live on their own (client_conn.c): the network is allowed to
 * fail, and docs/resilience.md has the state machines.  With no
 * connection at all I/O is held, not failed (but for requests that ask
 * to fail fast), until fail_timeout_s passes (-1: forever), after which
 * it fails fast until a reconnection succeeds.
 *
 * Disabling deletes the disk while the connections still work, so dirty
 * data is written back and requests in flight finish; requests issued
 * after that fail with EIO.  If the server stops answering, a watchdog
 * shuts the connections down after DST_DETACH_GRACE_MS without a single
 * completion, which fails what is left: detaching never hangs.
 *
 * This file owns the node's life (attach, detach, the watchdog), the
 * disk's size (what the server says at attach, and an export that grows
 * while attached: RESIZE notices and reconnections), and what the node
 * shows (stats, the link state, debugfs listings).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/idr.h>
#include <linux/nsproxy.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "client.h"
#include "trace.h"

#define DST_MAX_DISKS		(1 << (MINORBITS - DST_PART_SHIFT))

static DEFINE_IDA(dst_index_ida);

/* --- detach watchdog ----------------------------------------------- */

static void dst_watchdog(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, watchdog);
	long now = atomic_long_read(&rem->completions);
	int i;

	if (now != rem->seen) {
		rem->seen = now;
		queue_delayed_work(rem->ctl_wq, &rem->watchdog,
				   msecs_to_jiffies(DST_DETACH_GRACE_MS));
		return;
	}
	pr_warn("%s: server silent for %d ms while detaching; failing I/O in flight\n",
		dst_rem_name(rem), DST_DETACH_GRACE_MS);
	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_kill(&rem->conns[i]);
}

/* --- the disk's size ----------------------------------------------- */

/* Size the disk: the server's, or a smaller one the administrator set. */
int dst_remote_size(struct dst_remote *rem, u64 *size)
{
	struct dst_node *node = rem->node;
	u64 want = dst_node_get_param(node, DST_P_SIZE);

	*size = rem->geo.size;
	if (!want)
		return 0;
	if (want > rem->geo.size || want % rem->geo.lbs) {
		pr_err("%s: size %llu does not fit export '%s' (%llu bytes, %u-byte blocks)\n",
		       node->name, want, node->cfg.export, rem->geo.size,
		       rem->geo.lbs);
		return -EINVAL;
	}
	*size = want;
	return 0;
}

/**
 * dst_remote_grow - the server says the export is @size bytes now
 * @rem: the remote
 * @size: from a reconnection's welcome, or a RESIZE notice
 *
 * An export may grow while attached (dst_export_resize()), never shrink:
 * blocks would vanish from under the file system.  Returns 0, or -ESTALE
 * for a smaller export, which is not the one this disk was.
 */
int dst_remote_grow(struct dst_remote *rem, u64 size)
{
	bool grew = false;

	spin_lock(&rem->size_lock);
	if (size < rem->geo.size) {
		spin_unlock(&rem->size_lock);
		return -ESTALE;
	}
	if (size > rem->geo.size) {
		rem->geo.size = size;
		grew = true;
	}
	spin_unlock(&rem->size_lock);
	/*
	 * Before the receive loops run, the disk is still to be sized;
	 * while it goes, it keeps its size.  Not on the node's reclaim
	 * workqueues: the change uevent allocates as it likes.
	 */
	if (grew && smp_load_acquire(&rem->running) &&
	    !READ_ONCE(rem->stopping))
		queue_work(system_wq, &rem->resize_work);
	return 0;
}

/*
 * The export grew: so does the disk, with a change uevent (RESIZE=1),
 * and a mounted file system can grow online (resize2fs).  Not a disk the
 * administrator sized: it keeps its size.  Not under node->lock, which
 * dst_remote_stop() holds while it cancels this work.
 */
void dst_remote_resize_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(work, struct dst_remote,
					      resize_work);
	struct dst_node *node = rem->node;
	u64 old = get_capacity(rem->disk) << SECTOR_SHIFT;
	u64 want = dst_node_get_param(node, DST_P_SIZE);
	u64 size;

	spin_lock(&rem->size_lock);
	size = rem->geo.size;
	spin_unlock(&rem->size_lock);
	if (READ_ONCE(rem->stopping) || size <= old)
		return;
	if (want) {
		pr_info("%s: export '%s' grew to %llu bytes; the disk keeps the %llu set in size\n",
			node->name, node->cfg.export, size, want);
		return;
	}
	set_capacity_and_notify(rem->disk, size >> SECTOR_SHIFT);
	WRITE_ONCE(node->eff_size, size);
	pr_info("%s: export '%s' grew to %llu bytes, from %llu\n", node->name,
		node->cfg.export, size, old);
	trace_dst_resize(node->name, old, size);
}

/* --- attach and detach --------------------------------------------- */

static void dst_remote_free(struct dst_remote *rem)
{
	int i;

	for (i = 0; i < DST_MAX_CONNS; i++) {
		struct dst_rconn *conn = &rem->conns[i];

		if (conn->sock) {
			dst_sock_unwatch(conn->sock, &conn->watch);
			sock_release(conn->sock);
		}
		dst_crypto_free(conn->crypto);
		dst_crypto_buf_free(conn->cbuf);
	}
	if (rem->tx_wq)
		destroy_workqueue(rem->tx_wq);
	if (rem->ctl_wq)
		destroy_workqueue(rem->ctl_wq);
	if (rem->wq)
		destroy_workqueue(rem->wq);
	free_percpu(rem->stats);
	dst_trans_gens_free(rem->gens);
	if (rem->index >= 0)
		ida_free(&dst_index_ida, rem->index);
	put_net(rem->net);
	kfree(rem);
}

/* Stop the receive loops; what they leave behind fails. */
static void dst_remote_close(struct dst_remote *rem, int started)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_kill(&rem->conns[i]);
	for (i = 0; i < started; i++)
		flush_work(&rem->conns[i].recv_work);
	/* The fast path must not look at requests once the tag set goes. */
	for (i = 0; i < rem->nr_conns; i++)
		if (rem->conns[i].sock)
			dst_sock_unwatch(rem->conns[i].sock,
					 &rem->conns[i].watch);
}

static void dst_remote_cancel_works(struct dst_remote *rem)
{
	cancel_delayed_work_sync(&rem->reconnect_work);
	cancel_delayed_work_sync(&rem->fail_work);
	cancel_delayed_work_sync(&rem->ka_work);
	cancel_delayed_work_sync(&rem->path_work);
}

/*
 * Read the partition table of a disk just attached, by opening it: the
 * first open scans (GD_NEED_PART_SCAN).  A work item of its own, on a
 * workqueue that is not the node's: held I/O (fail_timeout_s=-1) may
 * keep it waiting until the server is back or the disk is detached, and
 * the node's WQ_MEM_RECLAIM rescuer must never be the one waiting.
 * dst_remote_stop() fails what is held, then waits for it.
 */
static void dst_remote_scan_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(work, struct dst_remote,
					      scan_work);
	struct dst_node *node = rem->node;
	struct block_device *bdev;

	bdev = blkdev_get_by_dev(disk_devt(rem->disk), FMODE_READ, NULL);
	if (!IS_ERR(bdev))
		blkdev_put(bdev, FMODE_READ);
	WRITE_ONCE(node->scanning, false);
	wake_up_all(&node->scan_wait);
}

static struct dst_remote *dst_remote_alloc(struct dst_node *node, int n)
{
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	u32 max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE;
	struct dst_remote *rem;
	int i;

	/* Every slot there may be: connections may change while attached. */
	rem = kzalloc(struct_size(rem, conns, DST_MAX_CONNS), GFP_KERNEL);
	if (!rem)
		return NULL;
	rem->node = node;
	rem->nr_conns = n;
	rem->nr_poll = dst_node_get_param(node, DST_P_POLL_QUEUES);
	rem->nr_queues = n + rem->nr_poll;
	init_rwsem(&rem->tags_rwsem);
	rem->index = -1;
	rem->net = get_net(current->nsproxy->net_ns);
	/* Never 0: that is "no session" to the server. */
	rem->session = get_random_u64() | 1;
	rem->max_retries = dst_node_get_param(node, DST_P_TRANS_MAX_RETRIES);
	rem->ka_ms = dst_node_get_param(node, DST_P_KEEPALIVE_MS);
	rem->reconnect_ms = dst_node_get_param(node, DST_P_RECONNECT_DELAY_MS);
	rem->fail_s = dst_node_get_param(node, DST_P_FAIL_TIMEOUT_S);
	mutex_init(&rem->state_lock);
	spin_lock_init(&rem->held_lock);
	INIT_LIST_HEAD(&rem->held);
	spin_lock_init(&rem->size_lock);
	INIT_WORK(&rem->resize_work, dst_remote_resize_work);
	atomic_long_set(&rem->completions, 0);
	INIT_DELAYED_WORK(&rem->watchdog, dst_watchdog);
	init_llist_head(&rem->polled_done);
	INIT_DELAYED_WORK(&rem->polled_work, dst_polled_work);
	INIT_DELAYED_WORK(&rem->reconnect_work, dst_reconnect_work);
	INIT_DELAYED_WORK(&rem->fail_work, dst_fail_work);
	INIT_DELAYED_WORK(&rem->ka_work, dst_ka_work);
	INIT_DELAYED_WORK(&rem->path_work, dst_path_work);
	rem->nr_paths = node->cfg.nr_addrs;
	for (i = 0; i < rem->nr_paths; i++) {
		rem->paths[i].addr = node->cfg.addrs[i];
		atomic_set(&rem->paths[i].conns, 0);
		atomic64_set(&rem->paths[i].failures, 0);
		atomic64_set(&rem->paths[i].failovers, 0);
	}
	INIT_WORK(&rem->scan_work, dst_remote_scan_work);
	atomic64_set(&rem->reconnects, 0);
	atomic64_set(&rem->resends, 0);
	atomic64_set(&rem->timeouts, 0);
	atomic64_set(&rem->polled_ops, 0);
	for (i = 0; i < DST_MAX_CONNS; i++) {
		rem->conns[i].rem = rem;
		rem->conns[i].idx = i;
		/* Slots spread over the paths, each with a home. */
		rem->conns[i].home = i % rem->nr_paths;
		rem->conns[i].path = rem->conns[i].home;
		mutex_init(&rem->conns[i].tx_lock);
		mutex_init(&rem->conns[i].sock_lock);
		INIT_WORK(&rem->conns[i].recv_work, dst_recv_work);
		INIT_WORK(&rem->conns[i].tx_work, dst_tx_work);
		init_completion(&rem->conns[i].tx_done);
	}
	/* Now, not when a reconnection needs them under memory pressure. */
	for (i = 0; i < n && cfg->key_len; i++) {
		rem->conns[i].cbuf = dst_crypto_buf_alloc(max_io,
							  cfg->cipher[0]);
		if (!rem->conns[i].cbuf) {
			dst_remote_free(rem);
			return NULL;
		}
	}
	return rem;
}

/*
 * Open every connection of @rem, which must all describe the same
 * export: its size into *@size.
 */
static int dst_remote_connect(struct dst_remote *rem, u64 *size)
{
	struct dst_node *node = rem->node;
	int i, err;

	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];
		struct socket *sock = dst_rconn_open(rem, conn, !i,
						     DST_CONNECT_TIMEOUT_MS,
						     &conn->crypto);

		if (IS_ERR(sock))
			return PTR_ERR(sock);
		dst_rconn_attach(conn, sock);
	}
	rem->nr_live = rem->nr_conns;
	err = dst_remote_size(rem, size);
	if (err)
		return err;
	rem->read_only = dst_node_get_param(node, DST_P_READ_ONLY) ||
			 (rem->geo.features & DST_FEAT_READ_ONLY);
	return 0;
}

/* What the I/O path needs, and the disk's index. */
static int dst_remote_alloc_io(struct dst_remote *rem)
{
	struct dst_node *node = rem->node;
	int index;

	rem->stats = dst_stats_alloc();
	rem->gens = dst_trans_gens_alloc(DST_MAX_CONNS + DST_MAX_POLL_QUEUES,
					 dst_node_get_param(node,
							    DST_P_QUEUE_DEPTH));
	if (!rem->stats || !rem->gens)
		return -ENOMEM;
	/* Per-CPU: a receive loop runs where its socket's bytes arrive. */
	rem->wq = alloc_workqueue("dst-%s", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0,
				  node->name);
	rem->ctl_wq = alloc_workqueue("dst-%s-ctl", WQ_MEM_RECLAIM, 0,
				      node->name);
	rem->tx_wq = alloc_workqueue("dst-%s-send", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				     0, node->name);
	if (!rem->wq || !rem->ctl_wq || !rem->tx_wq)
		return -ENOMEM;
	index = ida_alloc_max(&dst_index_ida, DST_MAX_DISKS - 1, GFP_KERNEL);
	if (index < 0)
		return index;
	rem->index = index;
	return 0;
}

/*
 * Start the receive loops, before the disk is added: udev may read it
 * the moment it appears.  And keepalive.
 */
static void dst_remote_run(struct dst_remote *rem)
{
	struct dst_node *node = rem->node;
	int i;

	node->rem = rem;
	WRITE_ONCE(node->link, DST_LINK_UP);
	/* From now on a larger export resizes the disk (dst_remote_grow()). */
	smp_store_release(&rem->running, true);
	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];

		dst_sock_watch(conn->sock, &conn->watch, rem->wq,
			       &conn->recv_work, dst_rconn_rx_fast);
		queue_work(rem->wq, &conn->recv_work);
		trace_dst_conn_up(node->name, i, 0, 0, 0);
	}
	if (rem->ka_ms)
		queue_delayed_work(rem->ctl_wq, &rem->ka_work,
				   msecs_to_jiffies(rem->ka_ms / 2));
	if (rem->nr_paths > 1)
		queue_delayed_work(rem->ctl_wq, &rem->path_work,
				   msecs_to_jiffies(DST_PATH_PROBE_MS));
}

/**
 * dst_remote_start - attach a remote node's export as /dev/dstN
 * @node: the node, locked, with its configuration
 *
 * Returns 0, or the errno the administrator's "echo 1 > enable" sees:
 * -EDESTADDRREQ without an address, what connect() said (ECONNREFUSED,
 * ETIMEDOUT, ...), the server's refusal (ENOENT: no such export, ...),
 * -EPROTO for a peer that does not speak DST, -EINVAL for a size that
 * does not fit.  Attaching does not retry: only a working attachment
 * reconnects.
 */
int dst_remote_start(struct dst_node *node)
{
	int n = dst_node_get_param(node, DST_P_CONNECTIONS);
	struct dst_remote *rem;
	u64 size;
	int err;

	lockdep_assert_held(&node->lock);
	if (!node->cfg.nr_addrs) {
		pr_err("%s: set addr before enabling\n", node->name);
		return -EDESTADDRREQ;
	}
	/* Every path is proven to reach the export when it attaches. */
	if (n < node->cfg.nr_addrs) {
		pr_err("%s: %d addresses need at least as many connections, not %d\n",
		       node->name, node->cfg.nr_addrs, n);
		return -EINVAL;
	}

	rem = dst_remote_alloc(node, n);
	if (!rem)
		return -ENOMEM;
	err = dst_remote_connect(rem, &size);
	if (!err)
		err = dst_remote_alloc_io(rem);
	if (!err)
		err = dst_remote_alloc_disk(rem, size);
	if (err)
		goto out_free;

	/*
	 * The disk is a child of the node's bus device, so udev rules can
	 * match ATTRS{name}.  Its size first: from here a RESIZE may grow it.
	 */
	WRITE_ONCE(node->eff_size, size);
	dst_remote_run(rem);
	/*
	 * Not the partition scan, though: it would run here, under
	 * node->lock, and a connection lost during it with
	 * fail_timeout_s=-1 would hold the lock -- and disable, rmdir and
	 * stats with it -- until the server came back.  The first open
	 * scans instead: udev's, as for nbd, or dst_remote_scan_work()'s.
	 */
	set_bit(GD_SUPPRESS_PART_SCAN, &rem->disk->state);
	err = device_add_disk(&node->dev, rem->disk, NULL);
	if (err)
		goto out_close;
	clear_bit(GD_SUPPRESS_PART_SCAN, &rem->disk->state);
	set_bit(GD_NEED_PART_SCAN, &rem->disk->state);
	node->scanning = true;
	queue_work(system_long_wq, &rem->scan_work);

	pr_info("%s: attached export '%s' at %pISpc%s as %s: %llu bytes, %d connection%s%s\n",
		node->name, node->cfg.export, &rem->paths[0].addr,
		rem->nr_paths > 1 ? " (and its other addresses)" : "",
		rem->disk->disk_name, size, n, n > 1 ? "s" : "",
		rem->read_only ? ", read-only" : "");
	return 0;

out_close:
	mutex_lock(&rem->state_lock);
	rem->stopping = true;
	mutex_unlock(&rem->state_lock);
	dst_remote_close(rem, n);
	dst_remote_cancel_works(rem);
	cancel_work_sync(&rem->resize_work);
	dst_remote_free_disk(rem);
out_free:
	node->rem = NULL;
	node->eff_size = 0;
	dst_remote_free(rem);
	return err;
}

/**
 * dst_remote_scan_wait - let "echo 1 > enable" return with partitions
 * @node: the remote node, just enabled, not locked
 *
 * Waits for the partition scan to end, but not for a server that went
 * away meanwhile (no connection left: the scan goes on in the
 * background, and partitions appear when it can end), and not past a
 * fatal signal.  configfs holds the attribute's lock while the store
 * waits here, which rmdir waits for: that wait must stay short.
 */
void dst_remote_scan_wait(struct dst_node *node)
{
	int err;

	err = wait_event_killable(node->scan_wait,
				  !READ_ONCE(node->scanning) ||
				  READ_ONCE(node->link) == DST_LINK_RECONNECTING ||
				  READ_ONCE(node->link) == DST_LINK_FAILED);
	if (!err && READ_ONCE(node->scanning))
		pr_warn("%s: the server went away during the partition scan; partitions appear when it is back\n",
			node->name);
}

/**
 * dst_remote_stop - detach: remove the disk and close the connections
 * @node: the node, locked
 *
 * No reconnection is tried any more; with no connection left, held and
 * new I/O fail at once, so the disk can go.
 */
void dst_remote_stop(struct dst_node *node)
{
	struct dst_remote *rem = node->rem;
	int i;

	lockdep_assert_held(&node->lock);
	mutex_lock(&rem->state_lock);
	WRITE_ONCE(rem->stopping, true);
	if (!rem->nr_live) {
		rem->failfast = true;
		if (rem->holding)
			dst_release_held(rem);
	}
	mutex_unlock(&rem->state_lock);
	/* No capacity change while the disk goes (dst_remote_grow()). */
	cancel_work_sync(&rem->resize_work);
	/* Nor a planned move of a connection while it writes back. */
	cancel_delayed_work_sync(&rem->path_work);
	/* Orphans wait for a reconnection that will not come now. */
	dst_trans_fail_orphans(&rem->set, -1);
	cancel_delayed_work_sync(&rem->reconnect_work);

	rem->seen = atomic_long_read(&rem->completions);
	queue_delayed_work(rem->ctl_wq, &rem->watchdog,
			   msecs_to_jiffies(DST_DETACH_GRACE_MS));
	/* A scan still waiting ends with its I/O, failed above or by then. */
	cancel_work_sync(&rem->scan_work);
	WRITE_ONCE(node->scanning, false);
	wake_up_all(&node->scan_wait);
	/* Writes back, fails new I/O, waits for what is in flight. */
	del_gendisk(rem->disk);
	cancel_delayed_work_sync(&rem->watchdog);
	dst_remote_cancel_works(rem);

	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_bye(&rem->conns[i]);
	dst_remote_close(rem, rem->nr_conns);
	/* The receive loops and reconnections, which queue it, are done. */
	cancel_work_sync(&rem->resize_work);

	pr_info("%s: detached %s\n", node->name, rem->disk->disk_name);
	dst_remote_free_disk(rem);
	node->rem = NULL;
	node->eff_size = 0;
	dst_remote_free(rem);
}

/**
 * dst_remote_set_param - a parameter changed while attached
 * @node: the node, locked and enabled
 * @p: which one: those docs/configfs.md marks live
 * @val: its new value, in range
 *
 * Each takes effect at once: trans_scan_timeout for requests sent from
 * now on, trans_max_retries at a request's next timeout, keepalive_ms at
 * the next check (0 stops it), reconnect_delay_ms for a reconnection
 * that is waiting, fail_timeout_s for I/O held right now too.
 */
void dst_remote_set_param(struct dst_node *node, enum dst_param p, s64 val)
{
	struct dst_remote *rem = node->rem;
	int i;

	lockdep_assert_held(&node->lock);
	switch (p) {
	case DST_P_TRANS_SCAN_TIMEOUT:
		blk_queue_rq_timeout(rem->disk->queue, msecs_to_jiffies(val));
		break;
	case DST_P_TRANS_MAX_RETRIES:
		WRITE_ONCE(rem->max_retries, val);
		break;
	case DST_P_KEEPALIVE_MS:
		/*
		 * Silence is measured from now: a connection idle under the
		 * old setting gets its PING before it can count as dead.
		 */
		for (i = 0; i < rem->nr_conns; i++)
			WRITE_ONCE(rem->conns[i].last_rx, jiffies);
		WRITE_ONCE(rem->ka_ms, val);
		if (val)
			mod_delayed_work(rem->ctl_wq, &rem->ka_work,
					 msecs_to_jiffies(val / 2));
		else
			cancel_delayed_work_sync(&rem->ka_work);
		break;
	case DST_P_RECONNECT_DELAY_MS:
		WRITE_ONCE(rem->reconnect_ms, val);
		if (delayed_work_pending(&rem->reconnect_work))
			mod_delayed_work(rem->ctl_wq, &rem->reconnect_work,
					 msecs_to_jiffies(val));
		break;
	case DST_P_FAIL_TIMEOUT_S:
		dst_remote_set_fail_timeout(rem, val);
		break;
	default:
		WARN_ONCE(1, "dst: parameter %d is not live\n", p);
	}
}

ssize_t dst_remote_show_device(struct dst_node *node, char *buf)
{
	struct dst_remote *rem;
	ssize_t ret;

	mutex_lock(&node->lock);
	rem = node->enabled ? node->rem : NULL;
	if (rem)
		ret = sysfs_emit(buf, "%s %d:%d\n", rem->disk->disk_name,
				 rem->disk->major, rem->disk->first_minor);
	else
		ret = sysfs_emit(buf, "\n");
	mutex_unlock(&node->lock);
	return ret;
}

const char *dst_remote_link_state(struct dst_node *node)
{
	static const char *const names[] = {
		[DST_LINK_UP]		= "running",
		[DST_LINK_DEGRADED]	= "degraded",
		[DST_LINK_RECONNECTING]	= "reconnecting",
		[DST_LINK_FAILED]	= "failed",
	};
	int link = READ_ONCE(node->link);

	return link >= 0 && link < ARRAY_SIZE(names) ? names[link] : "?";
}

/*
 * Per path, with several: pathN its address, pathN_state (up: a slot
 * lives on it; down: its last connect or handshake failed; idle),
 * pathN_connections, pathN_failures, pathN_failovers (slots that left
 * it for another path).
 */
static ssize_t dst_remote_emit_paths(struct dst_remote *rem, char *buf,
				     ssize_t len)
{
	int i;

	for (i = 0; rem->nr_paths > 1 && i < rem->nr_paths; i++) {
		struct dst_path *p = &rem->paths[i];
		int conns = atomic_read(&p->conns);

		len += sysfs_emit_at(buf, len,
				     "path%d %pISpc\npath%d_state %s\npath%d_connections %d\npath%d_failures %lld\npath%d_failovers %lld\n",
				     i, &p->addr, i,
				     conns ? "up" : READ_ONCE(p->down) ? "down" :
				     "idle", i, conns, i,
				     atomic64_read(&p->failures), i,
				     atomic64_read(&p->failovers));
	}
	return len;
}

/* "key value" lines: see docs/configfs.md. */
ssize_t dst_remote_show_stats(struct dst_node *node, char *buf)
{
	struct dst_remote *rem;
	ssize_t len;

	mutex_lock(&node->lock);
	rem = node->enabled ? node->rem : NULL;
	if (!rem) {
		len = sysfs_emit(buf, "state disabled\n");
		goto out;
	}
	len = sysfs_emit(buf, "state %s\nconnections %d/%d\n",
			 dst_remote_link_state(node), READ_ONCE(rem->nr_live),
			 rem->nr_conns);
	len += sysfs_emit_at(buf, len,
			     "reconnects %lld\nresends %lld\ntimeouts %lld\ninflight %u\npolled_ops %lld\n",
			     atomic64_read(&rem->reconnects),
			     atomic64_read(&rem->resends),
			     atomic64_read(&rem->timeouts),
			     dst_trans_count(&rem->set),
			     atomic64_read(&rem->polled_ops));
	len = dst_remote_emit_paths(rem, buf, len);
	len = dst_stats_emit(rem->stats, buf, len);
out:
	mutex_unlock(&node->lock);
	return len;
}

/*
 * debugfs (debugfs.c): the files exist only while node->rem does, and
 * their removal waits for a reader, so neither takes node->lock.
 */
void dst_remote_show_inflight(struct dst_node *node, struct seq_file *m)
{
	struct dst_remote *rem = node->rem;

	down_read(&rem->tags_rwsem);
	dst_trans_show(m, &rem->set);
	up_read(&rem->tags_rwsem);
}

void dst_remote_show_conns(struct dst_node *node, struct seq_file *m)
{
	struct dst_remote *rem = node->rem;
	int i;

	seq_printf(m, "link %s live %d/%d reconnect_attempt %u\n",
		   dst_remote_link_state(node), READ_ONCE(rem->nr_live),
		   rem->nr_conns, READ_ONCE(rem->attempt));
	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];
		u32 unacked = 0, inq = 0;

		mutex_lock(&conn->sock_lock);
		if (conn->sock) {
			unacked = dst_sock_unacked(conn->sock);
			inq = dst_sk_inq(conn->sock->sk);
		}
		mutex_unlock(&conn->sock_lock);
		seq_printf(m, "conn %d %s epoch %u unacked_bytes %u unread_bytes %u last_rx_ms %u size %llu\n",
			   i, READ_ONCE(conn->live) ? "live" : "down",
			   READ_ONCE(conn->epoch), unacked, inq,
			   jiffies_to_msecs(jiffies - READ_ONCE(conn->last_rx)),
			   READ_ONCE(conn->size));
	}
}
