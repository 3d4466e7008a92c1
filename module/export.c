// SPDX-License-Identifier: GPL-2.0
/*
 * DST export node: serve a local block device to remote nodes.
 *
 * Enabling an export opens its backing device exclusively and listens.
 * The listening socket's sk_data_ready callback queues the accept work;
 * every accepted connection gets a receive loop (export_conn.c) that
 * shakes hands, then reads requests (export_io.c) and turns each into a
 * bio for the backing device; replies go back from export_reply.c.
 *
 * Memory: per-request state comes from a mempool, bios from a bio_set,
 * data pages from the page allocator (and the connection's spares,
 * export_pages.c) with a mempool of pages as the reserve that guarantees
 * progress.
 *
 * Disabling stops accepting, stops reading requests, answers what is in
 * flight (draining the backing device), then closes every connection and
 * releases the device.  This file owns that life, the listener, and what
 * the export shows (stats, clients, debugfs listings).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/sha2.h>
#include <linux/blkdev.h>
#include <linux/mempool.h>
#include <linux/nsproxy.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "export.h"
#include "trace.h"

/* --- listening ----------------------------------------------------- */

static void dst_accept_work(struct work_struct *work)
{
	struct dst_export *exp = container_of(work, struct dst_export,
					      accept_work);
	struct socket *sock;
	int err;

	for (;;) {
		err = kernel_accept(exp->lsock, &sock, O_NONBLOCK);
		if (err) {
			if (err != -EAGAIN)
				pr_warn("%s: accept failed: %d\n",
					exp->node->name, err);
			return;
		}
		dst_export_add_conn(exp, sock);
	}
}

static void dst_listen_data_ready(struct sock *sk)
{
	struct dst_export *exp;

	read_lock_bh(&sk->sk_callback_lock);
	exp = sk->sk_user_data;
	if (exp && sk->sk_state == TCP_LISTEN)
		queue_work(exp->send_wq, &exp->accept_work);
	read_unlock_bh(&sk->sk_callback_lock);
}

static int dst_export_listen(struct dst_export *exp)
{
	struct dst_node *node = exp->node;
	struct sock *sk;

	exp->lsock = dst_sock_listen(exp->net, &node->cfg.addrs[0]);
	if (IS_ERR(exp->lsock)) {
		int err = PTR_ERR(exp->lsock);

		exp->lsock = NULL;
		pr_err("%s: cannot listen on %pISpc: %d\n", node->name,
		       &node->cfg.addrs[0], err);
		return err;
	}
	sk = exp->lsock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = exp;
	exp->saved_data_ready = sk->sk_data_ready;
	sk->sk_data_ready = dst_listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	/* Clients may have connected before the callback was in place. */
	queue_work(exp->send_wq, &exp->accept_work);
	return 0;
}

static void dst_export_unlisten(struct dst_export *exp)
{
	struct sock *sk = exp->lsock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = exp->saved_data_ready;
	sk->sk_user_data = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_work_sync(&exp->accept_work);
	sock_release(exp->lsock);
	exp->lsock = NULL;
}

/* --- the backing device -------------------------------------------- */

/* Bytes of discard or write zeroes offered for a device limit in sectors. */
static u32 dst_range_limit(unsigned int sectors, u32 lbs)
{
	u64 bytes = min_t(u64, DST_SRV_MAX_RANGE, (u64)sectors << SECTOR_SHIFT);

	return round_down(bytes, lbs);
}

/*
 * The export's identity, which every address it is reached by shows the
 * same (a client with several paths checks it): the uuid set, or one
 * derived from what names this export on this machine -- host name,
 * node name, device path -- so it is stable across a reload or a
 * reboot, and differs from another machine's export of the same name.
 */
static void dst_export_identity(struct dst_node *node, u8 *out)
{
	static const char tag[] = "dst export identity";
	u8 digest[SHA256_DIGEST_SIZE];
	struct sha256_state st;

	if (!uuid_is_null(&node->cfg.uuid)) {
		memcpy(out, &node->cfg.uuid, sizeof(node->cfg.uuid));
		return;
	}
	sha256_init(&st);
	sha256_update(&st, tag, sizeof(tag));
	/* The machine's, not a container's the enabling task may be in. */
	sha256_update(&st, init_utsname()->nodename,
		      strlen(init_utsname()->nodename) + 1);
	sha256_update(&st, node->name, strlen(node->name) + 1);
	sha256_update(&st, node->cfg.device, strlen(node->cfg.device) + 1);
	sha256_final(&st, digest);
	memcpy(out, digest, sizeof(uuid_t));
	/* RFC 9562 version 8 (custom): SHA-256 bits, the variant's. */
	out[6] = (out[6] & 0x0f) | 0x80;
	out[8] = (out[8] & 0x3f) | 0x80;
}

/* The identity in use, while enabled (node->lock held). */
void dst_export_get_uuid(struct dst_node *node, u8 *out)
{
	lockdep_assert_held(&node->lock);
	memcpy(out, node->exp->geo.uuid, sizeof(node->exp->geo.uuid));
}

static int dst_export_open_bdev(struct dst_export *exp)
{
	struct dst_node *node = exp->node;
	bool ro = dst_node_get_param(node, DST_P_READ_ONLY);
	struct dst_geometry *g = &exp->geo;
	u64 want = dst_node_get_param(node, DST_P_SIZE);
	struct block_device *bdev;
	u64 have;

	if (!node->cfg.device[0]) {
		pr_err("%s: set device before enabling\n", node->name);
		return -EINVAL;
	}
	exp->mode = FMODE_READ | FMODE_EXCL | (ro ? 0 : FMODE_WRITE);
	bdev = blkdev_get_by_path(node->cfg.device, exp->mode, exp);
	if (IS_ERR(bdev)) {
		pr_err("%s: cannot open %s: %ld\n", node->name,
		       node->cfg.device, PTR_ERR(bdev));
		return PTR_ERR(bdev);
	}
	exp->bdev = bdev;

	memset(g, 0, sizeof(*g));
	g->lbs = bdev_logical_block_size(bdev);
	g->pbs = min_t(u32, bdev_physical_block_size(bdev), SZ_64K);
	have = round_down(bdev_nr_bytes(bdev), g->lbs);
	if (want > have || want % g->lbs) {
		pr_err("%s: size %llu does not fit %s (%llu bytes, %u-byte blocks)\n",
		       node->name, want, node->cfg.device, have, g->lbs);
		goto inval;
	}
	g->size = want ? want : have;
	if (!g->size) {
		pr_err("%s: %s is empty\n", node->name, node->cfg.device);
		goto inval;
	}
	g->max_io = DST_SRV_MAX_IO;
	/*
	 * Granted to clients that offer them: they hear when the export
	 * grows, and learn its identity.
	 */
	g->features |= DST_FEAT_RESIZE | DST_FEAT_UUID;
	dst_export_identity(node, g->uuid);
	if (ro || bdev_read_only(bdev))
		g->features |= DST_FEAT_READ_ONLY;
	if (bdev_write_cache(bdev))
		g->features |= DST_FEAT_FLUSH | DST_FEAT_FUA;
	g->max_discard = dst_range_limit(bdev_max_discard_sectors(bdev),
					 g->lbs);
	if (g->max_discard)
		g->features |= DST_FEAT_DISCARD;
	g->max_write_zeroes = dst_range_limit(bdev_write_zeroes_sectors(bdev),
					      g->lbs);
	if (g->max_write_zeroes)
		g->features |= DST_FEAT_WRITE_ZEROES;
	return 0;

inval:
	blkdev_put(bdev, exp->mode);
	exp->bdev = NULL;
	return -EINVAL;
}

/* --- enable and disable -------------------------------------------- */

static void dst_export_free(struct dst_export *exp)
{
	dst_export_spares_exit(exp);
	if (exp->crypto_wq)
		destroy_workqueue(exp->crypto_wq);
	if (exp->send_wq)
		destroy_workqueue(exp->send_wq);
	if (exp->recv_wq)
		destroy_workqueue(exp->recv_wq);
	/* Every connection gave its spares back as it went. */
	WARN_ON_ONCE(atomic_read(&exp->spare_pages));
	mempool_destroy(exp->page_pool);
	mempool_destroy(exp->bvec_pool);
	mempool_destroy(exp->io_pool);
	free_percpu(exp->stats);
	bioset_exit(&exp->bs);
	if (exp->bdev)
		blkdev_put(exp->bdev, exp->mode);
	put_net(exp->net);
	kfree(exp);
}

/**
 * dst_export_start - open the backing device and listen
 * @node: the node, locked, with its configuration
 *
 * Returns 0, or the errno the administrator's "echo 1 > enable" sees:
 * -EINVAL without a device or with a size that does not fit it,
 * -EDESTADDRREQ without an address, what opening the device said
 * (-ENOENT, -ENOTBLK, -EBUSY when someone else holds it exclusively,
 * -EACCES/-EROFS for a read-only device opened for writing), what bind
 * said (-EADDRINUSE, -EADDRNOTAVAIL).
 */
int dst_export_start(struct dst_node *node)
{
	struct dst_export *exp;
	int err;

	lockdep_assert_held(&node->lock);
	if (!node->cfg.nr_addrs) {
		pr_err("%s: set addr before enabling\n", node->name);
		return -EDESTADDRREQ;
	}
	exp = kzalloc(sizeof(*exp), GFP_KERNEL);
	if (!exp)
		return -ENOMEM;
	exp->node = node;
	exp->net = get_net(current->nsproxy->net_ns);
	INIT_WORK(&exp->accept_work, dst_accept_work);
	mutex_init(&exp->reserve_lock);
	mutex_init(&exp->conns_lock);
	INIT_LIST_HEAD(&exp->conns);
	init_waitqueue_head(&exp->wait);
	init_waitqueue_head(&exp->mem_wait);

	err = dst_export_open_bdev(exp);
	if (err)
		goto out;

	err = -ENOMEM;
	if (bioset_init(&exp->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS))
		goto out;
	exp->io_pool = mempool_create_kmalloc_pool(DST_SRV_RESERVE_IOS,
						   sizeof(struct dst_io));
	exp->bvec_pool = mempool_create_kmalloc_pool(DST_SRV_RESERVE_IOS,
						     sizeof(struct bio_vec) *
						     DST_SRV_MAX_PAGES);
	exp->page_pool = mempool_create_page_pool(DST_SRV_MAX_PAGES, 0);
	/*
	 * Per-CPU, so an rx loop runs where its client's frames arrive
	 * (conn.c); high priority, since it also sends replies.
	 */
	exp->recv_wq = alloc_workqueue("dst-%s-rx", WQ_MEM_RECLAIM |
				       WQ_HIGHPRI, 0, node->name);
	exp->send_wq = alloc_workqueue("dst-%s-tx", WQ_MEM_RECLAIM |
				       WQ_UNBOUND | WQ_HIGHPRI, 0, node->name);
	exp->stats = dst_stats_alloc();
	if (!exp->io_pool || !exp->bvec_pool || !exp->page_pool ||
	    !exp->recv_wq || !exp->send_wq || !exp->stats)
		goto out;
	err = dst_export_spares_init(exp);
	if (err)
		goto out;
	err = -ENOMEM;
	if (node->cfg.crypto.key_len) {
		int threads = dst_node_get_param(node, DST_P_CRYPTO_THREADS);

		exp->crypto_wq = alloc_workqueue("dst-%s-crypto",
						 WQ_MEM_RECLAIM | WQ_UNBOUND |
						 WQ_HIGHPRI, threads,
						 node->name);
		if (!exp->crypto_wq)
			goto out;
	}

	node->exp = exp;
	err = dst_export_listen(exp);
	if (err) {
		node->exp = NULL;
		goto out;
	}
	node->eff_size = exp->geo.size;
	pr_info("%s: exporting %s (%llu bytes%s) on %pISpc\n", node->name,
		node->cfg.device, exp->geo.size,
		exp->geo.features & DST_FEAT_READ_ONLY ? ", read-only" : "",
		&node->cfg.addrs[0]);
	if (dst_acl_empty(node))
		pr_warn("%s: the access list is empty: every client is refused until a rule under acl/ allows it (0.0.0.0/0 and ::/0 allow all)\n",
			node->name);
	return 0;
out:
	dst_export_free(exp);
	return err;
}

/**
 * dst_export_resize - change the size of a running export
 * @node: the node, locked and enabled
 * @want: bytes, or 0 for the whole backing device as it is now (after
 *	it grew: lvextend, a larger file behind a loop device)
 *
 * Growing is for everyone at once: requests up to the new size are
 * accepted from now on, and every client that understands it is told
 * (DST_CMD_RESIZE); a client that reconnects is welcomed with the new
 * size.  Shrinking would pull blocks from under the clients attached,
 * so it is refused while there are any.
 *
 * Returns 0, -EINVAL for a size that is not a multiple of the block size
 * or larger than the backing device, -EBUSY for a shrink with clients.
 */
int dst_export_resize(struct dst_node *node, u64 want)
{
	struct dst_export *exp = node->exp;
	struct dst_sconn *conn;
	u32 lbs = exp->geo.lbs;
	u64 have, size, old;
	int clients = 0;

	lockdep_assert_held(&node->lock);
	have = round_down(bdev_nr_bytes(exp->bdev), lbs);
	size = want ? want : have;
	if (want > have || want % lbs || !size) {
		pr_err("%s: size %llu does not fit %s (%llu bytes, %u-byte blocks)\n",
		       node->name, want, node->cfg.device, have, lbs);
		return -EINVAL;
	}

	mutex_lock(&exp->conns_lock);
	old = exp->geo.size;
	/*
	 * Any connection may be a client's, even one in its handshake (a
	 * reconnection waiting on its fence): none may see blocks vanish.
	 */
	if (size < old) {
		list_for_each_entry(conn, &exp->conns, entry)
			clients += !conn->closing;
		if (clients) {
			mutex_unlock(&exp->conns_lock);
			pr_err("%s: cannot shrink to %llu bytes: %d client connection%s use%s %llu\n",
			       node->name, size, clients, clients > 1 ? "s" : "",
			       clients > 1 ? "" : "s", old);
			return -EBUSY;
		}
	}
	/*
	 * Every connection takes requests up to the new size before any
	 * client hears of it: a client with several connections may use
	 * the new blocks on any of them as soon as one has told it.  The
	 * others are told by dst_sconn_welcomed().
	 */
	WRITE_ONCE(exp->geo.size, size);
	list_for_each_entry(conn, &exp->conns, entry)
		if (conn->welcomed && !conn->fenced && !conn->closing)
			WRITE_ONCE(conn->geo.size, size);
	list_for_each_entry(conn, &exp->conns, entry)
		if (size > old && conn->welcomed && !conn->fenced &&
		    !conn->closing && (conn->geo.features & DST_FEAT_RESIZE))
			dst_sconn_notify_size(conn);
	mutex_unlock(&exp->conns_lock);

	node->eff_size = size;
	if (size != old) {
		pr_info("%s: size %llu bytes, was %llu\n", node->name, size,
			old);
		trace_dst_resize(node->name, old, size);
	}
	return 0;
}

/* crypto_threads changed while enabled: the crypto workqueue's width. */
void dst_export_set_crypto_threads(struct dst_node *node, int n)
{
	lockdep_assert_held(&node->lock);
	if (node->exp && node->exp->crypto_wq)
		workqueue_set_max_active(node->exp->crypto_wq, n);
}

/**
 * dst_export_stop - stop serving: drain, close the clients, release
 * @node: the node, locked
 */
void dst_export_stop(struct dst_node *node)
{
	struct dst_export *exp = node->exp;
	struct dst_sconn *conn;

	lockdep_assert_held(&node->lock);
	dst_export_unlisten(exp);

	/*
	 * Stop reading requests; every receive loop then answers what it
	 * read, closes and frees its connection.
	 */
	mutex_lock(&exp->conns_lock);
	WRITE_ONCE(exp->stopping, true);
	list_for_each_entry(conn, &exp->conns, entry) {
		kernel_sock_shutdown(conn->sock, SHUT_RD);
		wake_up(&conn->wait);
	}
	mutex_unlock(&exp->conns_lock);
	wake_up_all(&exp->mem_wait);
	/*
	 * Clients get DST_SRV_DRAIN_MS to take their replies.  One that
	 * acknowledges slowly would hold this (and node->lock, and so
	 * rmdir, stats and the connector) for as long as it likes: past
	 * the deadline every connection is closed, the replies left are
	 * dropped (the client resends them elsewhere or after a
	 * reconnect), and only the backing device's completions are
	 * waited for.
	 */
	if (!wait_event_timeout(exp->wait, !READ_ONCE(exp->nr_conns),
				msecs_to_jiffies(DST_SRV_DRAIN_MS))) {
		mutex_lock(&exp->conns_lock);
		pr_warn("%s: %d client(s) did not take their replies in %d ms; closing them\n",
			node->name, exp->nr_conns, DST_SRV_DRAIN_MS);
		/* A keyed sender waiting for room is kicked by the state change. */
		list_for_each_entry(conn, &exp->conns, entry)
			kernel_sock_shutdown(conn->sock, SHUT_RDWR);
		mutex_unlock(&exp->conns_lock);
		wait_event(exp->wait, !READ_ONCE(exp->nr_conns));
	}

	pr_info("%s: stopped exporting %s\n", node->name, node->cfg.device);
	node->exp = NULL;
	node->eff_size = 0;
	dst_export_free(exp);
}

ssize_t dst_export_show_clients(struct dst_node *node, char *buf)
{
	struct dst_export *exp;
	struct dst_sconn *conn;
	ssize_t len = 0;

	mutex_lock(&node->lock);
	exp = node->enabled ? node->exp : NULL;
	if (exp) {
		mutex_lock(&exp->conns_lock);
		list_for_each_entry(conn, &exp->conns, entry)
			len += sysfs_emit_at(buf, len, "%pISpc%s\n",
					     &conn->peer,
					     conn->geo.features &
					     DST_FEAT_READ_ONLY ? " ro" : "");
		mutex_unlock(&exp->conns_lock);
	}
	mutex_unlock(&node->lock);
	return len;
}

/* "key value" lines: see docs/configfs.md. */
ssize_t dst_export_show_stats(struct dst_node *node, char *buf)
{
	struct dst_export *exp;
	ssize_t len;

	mutex_lock(&node->lock);
	exp = node->enabled ? node->exp : NULL;
	len = sysfs_emit(buf, "state %s\n", exp ? "running" : "disabled");
	if (exp) {
		mutex_lock(&exp->conns_lock);
		len += sysfs_emit_at(buf, len, "connections %d\nhandshakes %d\n",
				     exp->nr_conns, exp->nr_handshakes);
		mutex_unlock(&exp->conns_lock);
		len = dst_stats_emit(exp->stats, buf, len);
		len += sysfs_emit_at(buf, len, "fenced %lld\nmerged_resends %lld\n",
				     atomic64_read(&exp->fenced),
				     atomic64_read(&exp->merged));
		len += sysfs_emit_at(buf, len, "spare_pages %d\npinned_bytes %ld\n",
				     atomic_read(&exp->spare_pages),
				     atomic_long_read(&exp->pinned));
	}
	mutex_unlock(&node->lock);
	return len;
}

void dst_export_show_conns(struct dst_node *node, struct seq_file *m)
{
	struct dst_export *exp = node->exp;
	struct dst_sconn *conn;

	mutex_lock(&exp->conns_lock);
	seq_printf(m, "connections %d handshakes %d pinned_bytes %ld%s\n",
		   exp->nr_conns, exp->nr_handshakes,
		   atomic_long_read(&exp->pinned),
		   exp->stopping ? " stopping" : "");
	list_for_each_entry(conn, &exp->conns, entry) {
		unsigned int replies = 0;
		struct dst_io *io;

		spin_lock_irq(&conn->lock);
		list_for_each_entry(io, &conn->replies, entry)
			replies++;
		spin_unlock_irq(&conn->lock);
		seq_printf(m, "peer %pISpc slot %u session %#llx %s inflight %d pinned_bytes %d replies_queued %u unacked_bytes %u last_tx_ms %u\n",
			   &conn->peer, conn->slot, conn->session,
			   dst_sconn_state(conn), atomic_read(&conn->inflight),
			   atomic_read(&conn->pinned), replies,
			   dst_sock_unacked(conn->sock),
			   jiffies_to_msecs(jiffies -
					    READ_ONCE(conn->tx_progress)));
	}
	mutex_unlock(&exp->conns_lock);
}

static void dst_show_io(struct seq_file *m, const struct dst_sconn *conn,
			const struct dst_io *io, const char *state)
{
	seq_printf(m, "peer %pISpc slot %u id %#llx op %s offset %llu len %u age_ms %u state %s\n",
		   &conn->peer, conn->slot, io->m.id, dst_cmd_name(io->m.cmd),
		   io->m.offset, io->m.len,
		   jiffies_to_msecs(jiffies - io->start), state);
}

/*
 * Requests read and not answered: with the backing device ("submitted",
 * the pending hash) or their reply waiting to be sent ("replying").  A
 * WRITE whose data is still being read, and a reply being sent, are in
 * neither.
 */
void dst_export_show_inflight(struct dst_node *node, struct seq_file *m)
{
	struct dst_export *exp = node->exp;
	struct dst_sconn *conn;
	struct dst_io *io;
	unsigned int bkt;

	/*
	 * Formatted with interrupts off (conn->lock is the completions'):
	 * stop at the first line that does not fit -- seq_read() calls
	 * again with a buffer twice as large -- rather than format them all.
	 */
	mutex_lock(&exp->conns_lock);
	list_for_each_entry(conn, &exp->conns, entry) {
		spin_lock_irq(&conn->lock);
		hash_for_each(conn->pending, bkt, io, hnode) {
			dst_show_io(m, conn, io, "submitted");
			if (seq_has_overflowed(m))
				break;
		}
		list_for_each_entry(io, &conn->replies, entry) {
			if (seq_has_overflowed(m))
				break;
			dst_show_io(m, conn, io, "replying");
		}
		spin_unlock_irq(&conn->lock);
		if (seq_has_overflowed(m))
			break;
	}
	mutex_unlock(&exp->conns_lock);
}
