// SPDX-License-Identifier: GPL-2.0
/*
 * DST export node: a request, from its header to its bio's completion.
 *
 * The receive loop reads a request's header and checks it against what
 * the connection negotiated, reads its data into pages (spares, the page
 * allocator, then the reserve, taken one request at a time so that two
 * requests can never each hold half of it), and only then publishes it in
 * the connection's pending hash and submits its bio.  The bio's
 * completion puts it on the reply list (export_reply.c).
 *
 * Resent transactions.  A client that timed out resends a request on the
 * same connection with the same id; the connection remembers the
 * generation it last saw per tag and never executes one twice: a resend
 * of a request still pending is merged with it, one already answered is
 * answered again.  Pinned data is budgeted per connection and per export:
 * a client that reads its replies slowly cannot pin the machine's memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/error-injection.h>
#include <linux/jhash.h>
#include <linux/mempool.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <net/sock.h>

#include "export.h"
#include "trace.h"

void dst_io_free(struct dst_io *io)
{
	struct dst_sconn *conn = io->conn;
	struct dst_export *exp = conn->exp;
	unsigned int i;

	/* The connection's own RESIZE notice, not the pool's. */
	if (io == &conn->notice) {
		dst_notice_done(conn);
		return;
	}
	/* Only dst_queue_reply() unhashes: a hashed dst_io is a bug. */
	if (WARN_ON_ONCE(io->hashed)) {
		spin_lock_irq(&conn->lock);
		hash_del(&io->hnode);
		spin_unlock_irq(&conn->lock);
	}
	if (io->bio)
		bio_put(io->bio);
	for (i = 0; i < io->nr_segs; i++) {
		if (i < io->nr_normal)
			dst_spare_put(conn, io->bvecs[i].bv_page);
		else
			mempool_free(io->bvecs[i].bv_page, exp->page_pool);
	}
	if (io->bvecs != io->inline_bvecs)
		mempool_free(io->bvecs, exp->bvec_pool);
	if (io->pinned) {
		atomic_sub(io->pinned, &conn->pinned);
		atomic_long_sub(io->pinned, &exp->pinned);
		if (wq_has_sleeper(&exp->mem_wait))
			wake_up(&exp->mem_wait);
	}
	mempool_free(io, exp->io_pool);
	atomic_dec(&conn->inflight);
	wake_up(&conn->wait);
}

/*
 * The rx loop is about to wait for memory that only finished requests
 * give back.  Replies it holds (queued in its own context, not sent
 * yet) are such requests, some perhaps with reserve pages: send them
 * first, or two loops may each wait for what the other holds.
 */
static void dst_sconn_before_sleep(struct dst_sconn *conn)
{
	if (READ_ONCE(conn->submitter) == current &&
	    !list_empty_careful(&conn->replies))
		dst_sconn_flush_replies(conn);
}

static struct dst_io *dst_io_alloc(struct dst_sconn *conn,
				   const struct dst_msg *m)
{
	struct dst_io *io = mempool_alloc(conn->exp->io_pool, GFP_NOWAIT);

	if (!io) {
		dst_sconn_before_sleep(conn);
		io = mempool_alloc(conn->exp->io_pool, GFP_NOIO);
	}

	atomic_inc(&conn->inflight);
	io->conn = conn;
	INIT_LIST_HEAD(&io->entry);
	io->m = *m;
	io->m.cmd |= DST_CMD_REPLY;
	io->m.status = DST_ST_OK;
	io->hashed = false;
	io->start = jiffies;
	io->bio = NULL;
	io->nr_segs = 0;
	io->nr_normal = 0;
	io->pinned = 0;
	io->bvecs = io->inline_bvecs;
	return io;
}

/*
 * Pages for @len bytes of data: from the page allocator while it gives
 * them without a fight, then from the reserve, which waits for other
 * requests to give pages back and so cannot fail.
 *
 * The allocator is asked for up to DST_SRV_SEG_ORDER pages at once, but
 * only for what it has free: no reclaim or compaction for the sake of
 * contiguity.  A 1 MiB request then is 16 segments, not 256: 16 calls to
 * send it and 16 fragments in the socket buffers instead of a page each,
 * which is most of what sending a large read costs.
 */
static void dst_io_alloc_pages(struct dst_io *io, u32 len)
{
	struct dst_export *exp = io->conn->exp;
	unsigned int order = DST_SRV_SEG_ORDER;
	u32 left = len;

	/*
	 * A table for the worst case, single pages throughout.  Taken
	 * before any page and given back with the dst_io, so a request
	 * that holds one always completes: the reserve cannot deadlock.
	 */
	if (DIV_ROUND_UP(len, PAGE_SIZE) > DST_SRV_INLINE_SEGS) {
		io->bvecs = mempool_alloc(exp->bvec_pool, GFP_NOWAIT);
		if (!io->bvecs) {
			dst_sconn_before_sleep(io->conn);
			io->bvecs = mempool_alloc(exp->bvec_pool, GFP_NOIO);
		}
	}
	io->pinned = len;
	atomic_add(len, &io->conn->pinned);
	atomic_long_add(len, &exp->pinned);

	while (left) {
		unsigned int want = ilog2(DIV_ROUND_UP(left, PAGE_SIZE));
		unsigned int o = min(order, want);
		gfp_t gfp = GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN;
		struct page *page;
		u32 size;

		if (o)
			gfp = (gfp | __GFP_COMP) & ~__GFP_DIRECT_RECLAIM;
		page = dst_spare_get(io->conn, o) ?: alloc_pages(gfp, o);
		if (!page) {
			if (!o)
				break;
			order = o - 1;	/* none that large: smaller ones */
			continue;
		}
		size = min_t(u32, left, PAGE_SIZE << o);
		bvec_set_page(&io->bvecs[io->nr_segs++], page, size, 0);
		left -= size;
	}
	io->nr_normal = io->nr_segs;
	if (!left)
		return;

	dst_sconn_before_sleep(io->conn);
	mutex_lock(&exp->reserve_lock);
	while (left) {
		u32 size = min_t(u32, left, PAGE_SIZE);

		bvec_set_page(&io->bvecs[io->nr_segs++],
			      mempool_alloc(exp->page_pool, GFP_NOIO), size, 0);
		left -= size;
	}
	mutex_unlock(&exp->reserve_lock);
}

static u32 dst_bio_status(blk_status_t st)
{
	switch (st) {
	case BLK_STS_OK:	return DST_ST_OK;
	case BLK_STS_NOSPC:	return DST_ST_NOSPC;
	case BLK_STS_NOTSUPP:	return DST_ST_NOTSUPP;
	default:		return DST_ST_IO;
	}
}

/* The tag of a transaction id: what a resend has in common with it. */
static u32 dst_io_key(u64 id)
{
	return lower_32_bits(id);
}

/*
 * Publish @io's reply.  Everything is decided and done under conn->lock:
 * the moment the lock is dropped the send work may take the reply, send
 * it and free @io, and with the last request gone the receive loop may
 * free the connection itself, so neither is touched afterwards.
 */
void dst_queue_reply(struct dst_io *io)
{
	struct dst_sconn *conn = io->conn;
	struct dst_export *exp = conn->exp;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	/* From here on the reply's id is fixed: no resend may adopt it. */
	if (io->hashed) {
		hash_del(&io->hnode);
		io->hashed = false;
	}
	list_add_tail(&io->entry, &conn->replies);
	/*
	 * A bio that completed inside submit_bio() (brd, a cache hit) or a
	 * reply the rx loop queued itself is sent by the rx loop, without
	 * waking another thread; anything else wakes the send work.  Only
	 * task context can be the loop: an interrupt that completes a bio
	 * runs on whatever task it interrupted, which may be the loop
	 * about to sleep in recvmsg with the reply unseen.
	 */
	if (conn->crypto)
		queue_work(exp->crypto_wq, &conn->send_work);
	else if (!in_task() || READ_ONCE(conn->submitter) != current)
		queue_work(exp->send_wq, &conn->send_work);
	else if (io->m.cmd == (DST_CMD_READ | DST_CMD_REPLY) &&
		 io->m.status == DST_ST_OK)
		conn->held_bytes += io->m.len;
	spin_unlock_irqrestore(&conn->lock, flags);
}

/* May run in interrupt context: only note the status and queue. */
static void dst_bio_end_io(struct bio *bio)
{
	struct dst_io *io = bio->bi_private;
	u8 op = io->m.cmd & ~DST_CMD_REPLY;
	enum dst_dir dir = op == DST_CMD_READ ? DST_DIR_READ :
			   op == DST_CMD_WRITE ? DST_DIR_WRITE : DST_DIR_OTHER;

	io->m.status = dst_bio_status(bio->bi_status);
	dst_stats_account(io->conn->exp->stats, dir, io->m.len,
			  io->m.status != DST_ST_OK);
	/*
	 * Nothing needs the bio any more (the data is in io->bvecs): give
	 * it back to the bio_set now, not when the reply is sent, or a
	 * loop holding replies could wait on that mempool for itself.
	 */
	io->bio = NULL;
	bio_put(bio);
	dst_queue_reply(io);
}

static blk_opf_t dst_io_opf(const struct dst_msg *m)
{
	blk_opf_t fua = m->flags & DST_F_FUA ? REQ_FUA : 0;

	/* m is already the reply: look at the request's code. */
	switch (m->cmd & ~DST_CMD_REPLY) {
	case DST_CMD_READ:
		return REQ_OP_READ;
	case DST_CMD_WRITE:
		return REQ_OP_WRITE | fua;
	case DST_CMD_FLUSH:
		return REQ_OP_WRITE | REQ_PREFLUSH;
	case DST_CMD_DISCARD:
		return REQ_OP_DISCARD;
	default:
		return REQ_OP_WRITE_ZEROES | fua |
		       (m->flags & DST_F_NO_UNMAP ? REQ_NOUNMAP : 0);
	}
}

/* Hand a validated request to the backing device. */
static void dst_io_submit(struct dst_io *io)
{
	struct dst_export *exp = io->conn->exp;
	const struct dst_msg *m = &io->m;
	struct bio *bio;
	unsigned int i;

	bio = bio_alloc_bioset(exp->bdev, io->nr_segs, dst_io_opf(m),
			       GFP_NOIO, &exp->bs);
	bio->bi_iter.bi_sector = m->offset >> SECTOR_SHIFT;
	bio->bi_private = io;
	bio->bi_end_io = dst_bio_end_io;
	for (i = 0; i < io->nr_segs; i++)
		__bio_add_page(bio, io->bvecs[i].bv_page, io->bvecs[i].bv_len,
			       0);
	if (!io->nr_segs && m->cmd != (DST_CMD_FLUSH | DST_CMD_REPLY))
		bio->bi_iter.bi_size = m->len;	/* discard, write zeroes */
	io->bio = bio;
	submit_bio(bio);
}

static struct dst_io *dst_sconn_pending(struct dst_sconn *conn, u32 key)
{
	struct dst_io *io;

	lockdep_assert_held(&conn->lock);
	hash_for_each_possible(conn->pending, io, hnode,
			       jhash_1word(key, conn->hash_seed))
		if (dst_io_key(io->m.id) == key)
			return io;
	return NULL;
}

static bool dst_sconn_tag_free(struct dst_sconn *conn, u32 key)
{
	bool free;

	spin_lock_irq(&conn->lock);
	free = !dst_sconn_pending(conn, key);
	spin_unlock_irq(&conn->lock);
	return free;
}

static void dst_sconn_hash(struct dst_sconn *conn, struct dst_io *io)
{
	spin_lock_irq(&conn->lock);
	hash_add(conn->pending, &io->hnode,
		 jhash_1word(dst_io_key(io->m.id), conn->hash_seed));
	io->hashed = true;
	spin_unlock_irq(&conn->lock);
}

/*
 * The client resends a transaction it got no answer for on the same
 * connection with the same id (docs/resilience.md).  This connection
 * remembers the last generation it saw for every tag of the client's
 * tag space, so a resend -- an id seen before -- is never executed a
 * second time: the first copy is still running and will answer, or has
 * answered already and its reply is on its way in this same stream.
 * A new generation under a tag still running here is a new request after
 * the client gave up on the old one: it waits until the old one is done.
 * Returns 1 when @m was such a resend (its payload skipped, unless
 * @payload_read: it was read to check its tag), 0 to serve
 * it, or an error that ends the connection.
 */
static int dst_sconn_resend(struct dst_sconn *conn, const struct dst_msg *m,
			    bool payload_read)
{
	struct dst_node *node = conn->exp->node;
	u32 gen, *seen = NULL;
	u32 key = dst_trans_key(m->id, &gen);
	u16 queue, tag;

	queue = key >> 16;
	tag = key & 0xffff;
	if (conn->seen) {
		if (queue >= conn->nr_queues || tag >= conn->queue_depth) {
			pr_err_ratelimited("%s: %pISpc: protocol error: id %#llx outside the tag space the client declared; closing\n",
					   node->name, &conn->peer, m->id);
			return -EPROTO;
		}
		seen = &conn->seen[queue * conn->queue_depth + tag];
		if (gen && *seen == gen) {
			atomic64_inc(&conn->exp->merged);
			if (payload_read)
				return 1;
			dst_sconn_before_read(conn, dst_request_payload(m));
			return dst_sock_discard(conn->sock,
						dst_request_payload(m)) ?: 1;
		}
		*seen = gen;
	}
	if (!dst_sconn_tag_free(conn, key)) {
		dst_sconn_flush_replies(conn);
		wait_event(conn->wait, dst_sconn_tag_free(conn, key));
	}
	return 0;
}

/*
 * Under session keys: read the rest of the frame -- a WRITE's data into
 * @io's pages, then the tag -- and check it before anything is done
 * with the request.  A frame that fails ends the connection.
 */
static int dst_sconn_open_request(struct dst_sconn *conn,
				  const struct dst_wire_hdr *hdr,
				  const struct dst_msg *m, struct dst_io *io)
{
	struct dst_crypto *c = conn->crypto;
	u32 len = dst_request_payload(m);
	struct scatterlist *sg;
	unsigned int i;
	int err;

	dst_sconn_before_read(conn, len);
	if (len) {
		dst_io_alloc_pages(io, len);
		err = dst_sock_recv_bvecs(conn->sock, io->bvecs, io->nr_segs,
					  len, 0);
		if (err)
			return err;
	}
	err = dst_sock_recv(conn->sock, dst_crypto_rx_tag(c),
			    dst_crypto_tag_len(c));
	if (err)
		return err;
	sg = dst_crypto_sg(c, false, io->nr_segs);
	for (i = 0; i < io->nr_segs; i++)
		sg_set_page(&sg[i], io->bvecs[i].bv_page, io->bvecs[i].bv_len,
			    0);
	err = dst_crypto_open(c, hdr, io->nr_segs, len);
	if (err)
		pr_err_ratelimited("%s: %pISpc: frame fails its integrity check (modified, replayed or out of order); closing\n",
				   conn->exp->node->name, &conn->peer);
	return err;
}

/*
 * Decode and check the header of a request.  Returns -EPROTO for a
 * frame no correct client sends (logged; the connection ends), else 0,
 * with *@status the DST_ST_* a well-formed request is refused with, or
 * DST_ST_OK.
 */
static int dst_sconn_decode(struct dst_sconn *conn,
			    const struct dst_wire_hdr *hdr, struct dst_msg *m,
			    u32 *status)
{
	const char *why = NULL;
	int ret;

	*status = DST_ST_OK;
	if (dst_msg_decode(hdr, m)) {
		why = "bad magic or version";
		ret = -EPROTO;
	} else {
		ret = dst_check_request(m, &conn->geo, &why);
	}
	if (ret < 0) {
		pr_err_ratelimited("%s: %pISpc: protocol error: %s (cmd %u, %u bytes at %llu); closing\n",
				   conn->exp->node->name, &conn->peer, why,
				   m->cmd, m->len, m->offset);
		return ret;
	}
	*status = ret;
	return 0;
}

/* Refuse @io with @status: skip its data (if not read yet), say why. */
static int dst_sconn_refuse_request(struct dst_sconn *conn, struct dst_io *io,
				    const struct dst_msg *m, u32 status)
{
	int err;

	io->m.status = status;
	if (!conn->crypto) {
		dst_sconn_before_read(conn, dst_request_payload(m));
		err = dst_sock_discard(conn->sock, dst_request_payload(m));
		if (err) {
			dst_io_free(io);
			return err;
		}
	}
	dst_queue_reply(io);
	return 0;
}

/*
 * Pages for the data of @io, and a WRITE's data read into them (a keyed
 * one was read and checked with its frame).
 */
static int dst_sconn_read_data(struct dst_sconn *conn, struct dst_io *io,
			       const struct dst_msg *m)
{
	switch (m->cmd) {
	case DST_CMD_READ:
		dst_io_alloc_pages(io, m->len);
		break;
	case DST_CMD_WRITE:
		if (conn->crypto)
			break;		/* read and checked already */
		dst_io_alloc_pages(io, m->len);
		dst_sconn_before_read(conn, m->len);
		return dst_sock_recv_bvecs(conn->sock, io->bvecs, io->nr_segs,
					   m->len, 0);
	}
	return 0;
}

/*
 * Read one request and start it.  Returns 0 to go on, 1 for an orderly
 * goodbye, or an error that ends the connection.
 */
static int __dst_sconn_recv_request(struct dst_sconn *conn,
				    const struct dst_wire_hdr *hdr)
{
	struct dst_io *io = NULL;
	struct dst_msg m;
	u32 status;
	int err;

	err = dst_sconn_decode(conn, hdr, &m, &status);
	if (err)
		return err;
	/* Under session keys nothing is done with a frame before its tag. */
	if (conn->crypto) {
		io = dst_io_alloc(conn, &m);
		err = dst_sconn_open_request(conn, hdr, &m, io);
		if (err || m.cmd == DST_CMD_BYE) {
			dst_io_free(io);
			return err ?: 1;
		}
	} else if (m.cmd == DST_CMD_BYE) {
		return 1;
	}
	/* Status: what it is refused with, if it is (its reply says so). */
	trace_dst_srv_request(conn->exp->node->name, &conn->peer, conn->slot,
			      m.id, m.cmd, m.offset, m.len, status);
	if (status == DST_ST_OK && m.cmd != DST_CMD_PING) {
		int resent = dst_sconn_resend(conn, &m, io);

		if (resent) {
			if (io)
				dst_io_free(io);
			return resent < 0 ? resent : 0;
		}
	}

	if (!io)
		io = dst_io_alloc(conn, &m);
	if (status != DST_ST_OK)
		return dst_sconn_refuse_request(conn, io, &m, status);
	if (m.cmd == DST_CMD_PING) {
		dst_queue_reply(io);
		return 0;
	}
	err = dst_sconn_read_data(conn, io, &m);
	if (err) {
		dst_io_free(io);
		return err;
	}
	/*
	 * Read, checked, now published: the request is hashed (a resend
	 * of its id finds it) only once nothing can fail before its bio,
	 * keyed or not, so no error path ever frees a hashed dst_io.
	 */
	dst_sconn_hash(conn, io);
	dst_io_submit(io);
	return 0;
}

int dst_sconn_recv_request(struct dst_sconn *conn)
{
	struct dst_wire_hdr hdr;
	int ret;

	ret = dst_sock_recv(conn->sock, &hdr, sizeof(hdr));
	if (ret)
		return ret;
	/*
	 * From the header on, the rx loop is busy and will look at the
	 * reply list when it is done: replies queued meanwhile in its own
	 * context (inline bio completions, refusals, PING) wake nobody.
	 */
	WRITE_ONCE(conn->submitter, current);
	ret = __dst_sconn_recv_request(conn, &hdr);
	WRITE_ONCE(conn->submitter, NULL);
	return ret;
}

static bool dst_sconn_may_read(struct dst_sconn *conn)
{
	return (atomic_read(&conn->inflight) < DST_SRV_MAX_INFLIGHT &&
		atomic_read(&conn->pinned) < DST_SRV_CONN_BYTES) ||
	       READ_ONCE(conn->exp->stopping) || READ_ONCE(conn->fenced);
}

/*
 * Under the export's budget; or this connection holds less than one
 * largest request, so that clients reading slowly, which may exhaust
 * the budget, cannot stop every other client: each may still have one.
 */
static bool dst_export_may_pin(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;

	return atomic_long_read(&exp->pinned) < DST_SRV_EXPORT_BYTES ||
	       atomic_read(&conn->pinned) < DST_SRV_MAX_IO ||
	       READ_ONCE(exp->stopping) || READ_ONCE(conn->fenced);
}

/*
 * Back-pressure before the next request: a client may not queue
 * unbounded work, nor pin unbounded memory, here or in all.  The
 * budgets are checked before a header is read, so each may be passed
 * by one request (1 MiB at most).
 */
void dst_sconn_wait_budget(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;

	if (!dst_sconn_may_read(conn)) {
		dst_sconn_flush_replies(conn);
		wait_event(conn->wait, dst_sconn_may_read(conn));
	}
	if (!dst_export_may_pin(conn)) {
		dst_sconn_flush_replies(conn);
		wait_event(exp->mem_wait, dst_export_may_pin(conn));
	}
}
