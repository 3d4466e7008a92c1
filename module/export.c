// SPDX-License-Identifier: GPL-2.0
/*
 * DST export node: serve a local block device to remote nodes.
 *
 * Enabling an export opens its backing device exclusively and listens.
 * The listening socket's sk_data_ready callback queues the accept work;
 * every accepted connection gets a receive loop (a work item on the
 * export's receive workqueue) that shakes hands, then reads requests,
 * validates them against what was negotiated and turns each into a bio
 * for the backing device.  The bio's completion queues the reply; a send
 * work item per connection (on a second workqueue, so replies never wait
 * behind receive loops) sends replies in batches, data pages without a
 * copy.
 *
 * Memory: per-request state comes from a mempool, bios from a bio_set,
 * data pages from the page allocator with a mempool of pages as the
 * reserve that guarantees progress, taken one request at a time so that
 * two requests can never each hold half of it.  Reserve pages are sent
 * with a copy because they return to the pool, not to the page allocator,
 * when the request is done.
 *
 * Disabling stops accepting, stops reading requests, answers what is in
 * flight (draining the backing device), then closes every connection and
 * releases the device.
 *
 * Resent transactions (docs/resilience.md).  A client that timed out
 * resends a request on the same connection with the same id; the
 * connection remembers the ids it saw and never executes one twice.
 * A client that reconnects
 * names its session and slot in HELLO, and the server "fences" the
 * connection it replaces -- shuts it down and waits for all its I/O to
 * finish -- before the welcome, so no stale copy of a resent write can
 * reach the disk after the client saw it complete.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/error-injection.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mempool.h>
#include <linux/nsproxy.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "dst.h"
#include "trace.h"

#define DST_SRV_MAX_IO		(BIO_MAX_VECS * PAGE_SIZE)	/* 1 MiB */
#define DST_SRV_MAX_PAGES	(DST_SRV_MAX_IO / PAGE_SIZE)
#define DST_SRV_SEG_ORDER	get_order(SZ_64K)	/* pages per segment */
#define DST_SRV_MAX_RANGE	SZ_1G	/* discard, write zeroes */
#define DST_SRV_MAX_INFLIGHT	1024	/* per connection */
#define DST_SRV_REPLY_BATCH	32	/* requests read before replies go */
#define DST_SRV_REPLY_BYTES	SZ_64K	/* ... or read data held back */
#define DST_SRV_MAX_CONNS	200	/* established, per export */
/*
 * Connections still in the handshake: a bounded number, a few per
 * source address, fewer still for addresses the access list refuses
 * (they are only told so), each with DST_SRV_HELLO_MS for the whole
 * handshake.  None of them counts against DST_SRV_MAX_CONNS.
 */
#define DST_SRV_MAX_HANDSHAKES	128
/* Two remotes of 16 connections each reconnecting at once from one host. */
#define DST_SRV_MAX_HANDSHAKES_SRC 32
#define DST_SRV_MAX_REFUSING	4
/*
 * Request data a connection, and an export in all, may hold at once:
 * pages stay pinned until their reply is sent, and a client that reads
 * its socket slowly would otherwise pin up to DST_SRV_MAX_INFLIGHT MiB.
 */
#define DST_SRV_CONN_BYTES	SZ_16M
#define DST_SRV_EXPORT_BYTES	SZ_256M
#define DST_SRV_RESERVE_IOS	16
/* Segments a dst_io holds itself: up to 16 KiB even in single pages. */
#define DST_SRV_INLINE_SEGS	4
/*
 * Data pages kept for reuse, per connection and size: enough to cover
 * what TCP holds of a connection's replies (sndbuf autotunes to 4 MiB);
 * and per export in all.
 */
#define DST_SRV_SPARES		128
#define DST_SRV_SPARE_PAGES	(32 * DST_SRV_MAX_PAGES)	/* 32 MiB */
#define DST_SRV_SPARE_TRIES	4	/* in flight still: next one */
#define DST_SRV_HELLO_MS	10000	/* a client must say HELLO by then */
#define DST_SRV_SEND_MS		30000	/* a client must read replies */
#define DST_SRV_FENCE_MS	30000	/* a replaced connection must drain */
#define DST_SRV_DRAIN_MS	30000	/* disable: clients take replies */
#define DST_SRV_TX_BUDGET	16	/* keyed replies a send work run */
#define DST_SRV_KA_IDLE_S	20	/* TCP keepalive: a vanished client */
#define DST_SRV_KA_INTVL_S	5
#define DST_SRV_KA_CNT		4
#define DST_SRV_PENDING_BITS	8	/* hash of in-flight tags */
#define DST_SRV_MAX_TAGS	SZ_64K	/* a client's queues x depth */

struct dst_export {
	struct dst_node *node;
	struct net *net;
	struct block_device *bdev;
	fmode_t mode;
	struct dst_geometry geo;	/* what every client is offered */

	struct socket *lsock;
	void (*saved_data_ready)(struct sock *sk);
	struct work_struct accept_work;

	struct workqueue_struct *recv_wq;	/* one loop per connection */
	struct workqueue_struct *send_wq;	/* replies, accept */
	/* Keyed exports: replies are sealed and sent here, crypto_threads wide. */
	struct workqueue_struct *crypto_wq;

	struct bio_set bs;
	mempool_t *io_pool;
	mempool_t *bvec_pool;		/* segment tables of large requests */
	mempool_t *page_pool;
	struct mutex reserve_lock;	/* one request at a time in the reserve */
	atomic_t spare_pages;		/* held in the connections' spares */
	struct shrinker spare_shrinker;	/* gives them back under pressure */

	struct mutex conns_lock;	/* conns, nr_*, stopping */
	struct list_head conns;
	int nr_conns;			/* all, in the handshake or not */
	int nr_handshakes;		/* ... of which in the handshake */
	int nr_refusing;		/* ... of which the list refuses */
	unsigned int nr_gone;		/* connections freed, ever */
	bool stopping;
	wait_queue_head_t wait;		/* a connection is gone */
	atomic_long_t pinned;		/* request data held, all conns */
	wait_queue_head_t mem_wait;	/* ... went below the budget */

	struct dst_io_stats __percpu *stats;
	atomic64_t fenced;		/* connections replaced by a reconnect */
	atomic64_t merged;		/* resends answered by the first copy */
};

struct dst_sconn {
	struct dst_export *exp;
	struct list_head entry;		/* exp->conns */
	struct socket *sock;
	struct sockaddr_storage peer;
	struct dst_geometry geo;	/* negotiated on this connection */
	struct work_struct recv_work;
	struct dst_sock_watch watch;	/* queues recv_work (conn.c) */
	struct work_struct send_work;
	struct mutex send_lock;		/* one sender: the work or the rx loop */
	/* The rx loop while it submits: completions inside it need no work. */
	struct task_struct *submitter;
	u32 held_bytes;			/* its read data not sent yet */

	spinlock_t lock;		/* replies; taken from bio completion */
	struct list_head replies;
	atomic_t inflight;		/* requests read and not yet freed */
	atomic_t pinned;		/* their data, bytes */
	wait_queue_head_t wait;
	bool dead;			/* sending failed: drop replies */

	/*
	 * Data pages of finished requests, for the next ones: single
	 * pages and DST_SRV_SEG_ORDER segments.  See dst_spare_get().
	 */
	spinlock_t spare_lock;
	struct dst_spares {
		unsigned int head, nr;	/* a ring, oldest first */
		struct page *page[DST_SRV_SPARES];
	} spares[2];

	/* Session keys once the handshake authenticated the client, or NULL. */
	struct dst_crypto *crypto;
	/* Keyed: the reply being sent, without blocking (send_lock). */
	struct dst_io *tx_io;
	size_t tx_off;			/* bytes of its frame sent */
	struct dst_wire_hdr tx_hdr;
	const u8 *tx_tag;
	unsigned long tx_progress;	/* jiffies: replies last went out */
	struct delayed_work tx_watchdog;

	u64 session;			/* from HELLO; 0: none */
	u16 slot;
	/* Last generation seen per tag of the client's tag space, or NULL. */
	u32 *seen;
	u16 nr_queues, queue_depth;
	bool fenced;			/* replaced by a newer connection */
	bool established;		/* handshake done (rx loop reruns) */
	bool refusing;			/* the list refused it at accept */
	/* Ends a handshake that takes longer than DST_SRV_HELLO_MS. */
	struct delayed_work hs_timeout;
	/*
	 * Requests read and not yet answered, by tag: resends, under lock.
	 * The client chooses the ids: hashed with a secret seed, so it
	 * cannot pile them into one bucket, walked with interrupts off.
	 */
	DECLARE_HASHTABLE(pending, DST_SRV_PENDING_BITS);
	u32 hash_seed;
};

/* One request, from its header until its reply is sent. */
struct dst_io {
	struct dst_sconn *conn;
	struct list_head entry;
	struct dst_msg m;		/* becomes the reply */
	struct hlist_node hnode;	/* conn->pending, while hashed */
	bool hashed;
	unsigned long start;		/* jiffies: read (debugfs's age) */
	struct bio *bio;
	/*
	 * The data: up to 64 KiB of contiguous pages a segment, fewer
	 * where memory is fragmented, single pages from the reserve.
	 */
	unsigned int nr_segs;
	unsigned int nr_normal;		/* bvecs[0..nr_normal) not reserve */
	u32 pinned;			/* bytes counted in conn and export */
	/*
	 * inline_bvecs, or for a request that may need more segments a
	 * table of DST_SRV_MAX_PAGES from bvec_pool.  Kept out of the
	 * dst_io itself because the kernel zeroes every allocation
	 * (init_on_alloc, on in Debian's kernel): a 4 KiB table in each
	 * dst_io was an 8 KiB memset per 4 KiB request.
	 */
	struct bio_vec *bvecs;
	struct bio_vec inline_bvecs[DST_SRV_INLINE_SEGS];
};

/* --- requests ------------------------------------------------------ */

/*
 * Debian's kernel zeroes every page it hands out (init_on_alloc), and a
 * request's pages are then overwritten whole by the disk or the client:
 * for 1 MiB reads clearing them was a third of the server's CPU time.
 * A connection therefore keeps the pages of its finished requests and
 * gives them to the next ones.  They only ever held this connection's
 * data, which is all they can show again.
 *
 * A page sent with sendpage is still referenced by the socket buffers
 * until the peer has it, so a spare is reused only once its count is
 * down to our own reference: nobody else can write to it or read it.
 * Spares are bounded per connection and per export, and a shrinker
 * gives them back when the kernel runs short of memory.
 */
static struct dst_spares *dst_spares_of(struct dst_sconn *conn,
					unsigned int order)
{
	if (order == 0)
		return &conn->spares[0];
	if (order == DST_SRV_SEG_ORDER)
		return &conn->spares[1];
	return NULL;
}

/* The ring's ends; under spare_lock. */
static void dst_spares_push(struct dst_spares *sp, struct page *page)
{
	sp->page[(sp->head + sp->nr++) % DST_SRV_SPARES] = page;
}

static struct page *dst_spares_pop(struct dst_spares *sp)
{
	struct page *page = sp->page[sp->head];

	sp->head = (sp->head + 1) % DST_SRV_SPARES;
	sp->nr--;
	return page;
}

static struct page *dst_spare_get(struct dst_sconn *conn, unsigned int order)
{
	struct dst_spares *sp = dst_spares_of(conn, order);
	struct page *page = NULL;
	unsigned int i;

	if (!sp || !READ_ONCE(sp->nr))
		return NULL;
	spin_lock(&conn->spare_lock);
	/*
	 * The oldest spare is the likeliest to be out of the socket
	 * buffers; one still in them goes to the back of the ring, so a
	 * page held long (a slow peer, retransmissions) blocks nothing.
	 */
	for (i = 0; i < min(sp->nr, DST_SRV_SPARE_TRIES); i++) {
		struct page *p = dst_spares_pop(sp);

		if (page_count(p) == 1) {
			page = p;
			break;
		}
		dst_spares_push(sp, p);
	}
	spin_unlock(&conn->spare_lock);
	if (page)
		atomic_sub(1 << order, &conn->exp->spare_pages);
	return page;
}

static void dst_spare_put(struct dst_sconn *conn, struct page *page)
{
	unsigned int n = 1 << compound_order(page);
	struct dst_spares *sp = dst_spares_of(conn, compound_order(page));
	atomic_t *budget = &conn->exp->spare_pages;

	if (sp) {
		spin_lock(&conn->spare_lock);
		if (sp->nr < DST_SRV_SPARES) {
			if (atomic_add_return(n, budget) <= DST_SRV_SPARE_PAGES) {
				dst_spares_push(sp, page);
				page = NULL;
			} else {
				atomic_sub(n, budget);
			}
		}
		spin_unlock(&conn->spare_lock);
	}
	if (page)
		put_page(page);
}

/*
 * Give back up to @max pages of @conn's spares, oldest first; returns
 * how many.  A page still in a socket buffer is freed when TCP lets go.
 */
static unsigned long dst_spares_drop(struct dst_sconn *conn,
				     unsigned long max)
{
	unsigned long done = 0;
	unsigned int i;

	spin_lock(&conn->spare_lock);
	for (i = 0; i < ARRAY_SIZE(conn->spares); i++) {
		struct dst_spares *sp = &conn->spares[i];

		while (sp->nr && done < max) {
			struct page *page = dst_spares_pop(sp);
			unsigned int n = 1 << compound_order(page);

			atomic_sub(n, &conn->exp->spare_pages);
			put_page(page);
			done += n;
		}
	}
	spin_unlock(&conn->spare_lock);
	return done;
}

/* The connection is gone: its spares go back to the page allocator. */
static void dst_spares_free(struct dst_sconn *conn)
{
	dst_spares_drop(conn, ULONG_MAX);
}

static unsigned long dst_spares_count(struct shrinker *sh,
				      struct shrink_control *sc)
{
	struct dst_export *exp = container_of(sh, struct dst_export,
					      spare_shrinker);

	return atomic_read(&exp->spare_pages) ?: SHRINK_EMPTY;
}

static unsigned long dst_spares_scan(struct shrinker *sh,
				     struct shrink_control *sc)
{
	struct dst_export *exp = container_of(sh, struct dst_export,
					      spare_shrinker);
	unsigned long done = 0;
	struct dst_sconn *conn;

	/*
	 * Reclaim may run on behalf of whoever holds conns_lock (it
	 * allocates with GFP_KERNEL): never wait for it here.
	 */
	if (!mutex_trylock(&exp->conns_lock))
		return SHRINK_STOP;
	list_for_each_entry(conn, &exp->conns, entry) {
		if (done >= sc->nr_to_scan)
			break;
		done += dst_spares_drop(conn, sc->nr_to_scan - done);
	}
	mutex_unlock(&exp->conns_lock);
	return done;
}

static void dst_io_free(struct dst_io *io)
{
	struct dst_sconn *conn = io->conn;
	struct dst_export *exp = conn->exp;
	unsigned int i;

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

static void dst_sconn_flush_replies(struct dst_sconn *conn);

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
static void dst_queue_reply(struct dst_io *io)
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

/* --- replies ------------------------------------------------------- */

static bool dst_reply_has_data(const struct dst_io *io)
{
	return io->m.cmd == (DST_CMD_READ | DST_CMD_REPLY) &&
	       io->m.status == DST_ST_OK;
}

/* @io's reply is all with TCP. */
static void dst_trace_reply(struct dst_sconn *conn, const struct dst_io *io)
{
	trace_dst_srv_reply(conn->exp->node->name, &conn->peer, conn->slot,
			    io->m.id, io->m.cmd & ~DST_CMD_REPLY, io->m.offset,
			    io->m.len, io->m.status);
}

/* A connection whose sends fail: replies are dropped from now on. */
static void dst_sconn_kill(struct dst_sconn *conn)
{
	conn->dead = true;
	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
}

static int dst_send_reply(struct dst_sconn *conn, struct dst_io *io,
			  bool more)
{
	bool data = dst_reply_has_data(io);
	struct dst_wire_hdr hdr;
	unsigned int i;
	int err;

	dst_msg_encode(&hdr, &io->m);
	err = dst_sock_send(conn->sock, &hdr, sizeof(hdr),
			    data || more ? MSG_MORE : 0);
	for (i = 0; data && !err && i < io->nr_segs; i++) {
		bool last = i + 1 == io->nr_segs;

		/* A normal page lives on in the socket buffer after put_page. */
		err = dst_sock_send_bvec(conn->sock, &io->bvecs[i],
					 i < io->nr_normal,
					 last && !more ? 0 : MSG_MORE);
	}
	return err;
}

/*
 * Send every queued reply, in batches (MSG_MORE until the last).  Called
 * with send_lock held.
 */
static void dst_send_plain_locked(struct dst_sconn *conn)
{
	struct dst_io *io, *next;
	LIST_HEAD(batch);
	int err;

	for (;;) {
		spin_lock_irq(&conn->lock);
		list_splice_init(&conn->replies, &batch);
		spin_unlock_irq(&conn->lock);
		if (list_empty(&batch))
			break;

		list_for_each_entry_safe(io, next, &batch, entry) {
			list_del(&io->entry);
			err = conn->dead ? -EPIPE :
			      dst_send_reply(conn, io, !list_empty(&batch));
			if (!err)
				dst_trace_reply(conn, io);
			else if (!conn->dead)
				dst_sconn_kill(conn);
			dst_io_free(io);
		}
		WRITE_ONCE(conn->tx_progress, jiffies);
	}
}

/*
 * Keyed replies are sealed and sent from the crypto workqueue, whose
 * crypto_threads workers serve every connection of the export: a
 * blocking send to a client that reads slowly would hold one of them,
 * and with it every other client.  They are sent without blocking
 * instead, as nvmet-tcp does: a reply that does not fit in the socket
 * stays in conn->tx_io with how much of it went (tx_off), and the
 * socket's write_space queues the send work again when there is room
 * (dst_sock_watch_tx()).  tx_watchdog bounds how long a reply may make
 * no progress at all, as DST_SRV_SEND_MS bounds a blocking send.
 */
static int dst_seal_reply(struct dst_sconn *conn, struct dst_io *io)
{
	bool data = dst_reply_has_data(io);
	struct dst_crypto *c = conn->crypto;
	unsigned int nents = data ? io->nr_segs : 0;
	struct scatterlist *sg = dst_crypto_sg(c, true, nents);
	const u8 *tag;
	unsigned int i;

	/* The pages are this server's own: sealed where they are. */
	dst_msg_encode(&conn->tx_hdr, &io->m);
	for (i = 0; i < nents; i++)
		sg_set_page(&sg[i], io->bvecs[i].bv_page, io->bvecs[i].bv_len,
			    0);
	tag = dst_crypto_seal(c, &conn->tx_hdr, nents, data ? io->m.len : 0,
			      true);
	if (IS_ERR(tag))
		return PTR_ERR(tag);
	conn->tx_tag = tag;	/* valid until the next seal */
	conn->tx_off = 0;
	return 0;
}

/*
 * Send what is left of the sealed frame: its header, its data, its tag.
 * Returns 0 when all of it went, -EAGAIN when the socket is full, or an
 * error.
 */
static int dst_send_sealed(struct dst_sconn *conn, bool more)
{
	struct dst_io *io = conn->tx_io;
	unsigned int nr = dst_reply_has_data(io) ? io->nr_segs : 0;
	size_t pos = 0, skip, len;
	unsigned int i;
	int ret, flags;

	/* Piece 0 is the header, 1..nr the data, nr + 1 the tag. */
	for (i = 0; i <= nr + 1; i++, pos += len) {
		len = !i ? sizeof(conn->tx_hdr) : i <= nr ?
		      io->bvecs[i - 1].bv_len :
		      dst_crypto_tag_len(conn->crypto);
		flags = i == nr + 1 && !more ? 0 : MSG_MORE;
		for (skip = conn->tx_off - min(conn->tx_off, pos); skip < len;
		     skip += ret, conn->tx_off += ret) {
			if (!i)
				ret = dst_sock_send_nowait(conn->sock,
							   &conn->tx_hdr, NULL,
							   skip, len, false,
							   flags);
			else if (i <= nr)
				ret = dst_sock_send_nowait(conn->sock, NULL,
							   &io->bvecs[i - 1],
							   skip, 0,
							   i - 1 < io->nr_normal,
							   flags);
			else
				ret = dst_sock_send_nowait(conn->sock,
							   conn->tx_tag, NULL,
							   skip, len, false,
							   flags);
			if (ret < 0)
				return ret;
			WRITE_ONCE(conn->tx_progress, jiffies);
		}
	}
	return 0;
}

static void dst_send_sealed_locked(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;
	unsigned int budget = DST_SRV_TX_BUDGET;
	struct dst_io *io;
	bool more;
	int err;

	for (;;) {
		/* Fair to the other connections sharing crypto_threads. */
		if (!budget--) {
			queue_work(exp->crypto_wq, &conn->send_work);
			return;
		}
		io = NULL;
		spin_lock_irq(&conn->lock);
		if (!conn->tx_io) {
			io = list_first_entry_or_null(&conn->replies,
						      struct dst_io, entry);
			if (io)
				list_del_init(&io->entry);
		}
		more = !list_empty(&conn->replies);
		spin_unlock_irq(&conn->lock);
		if (io) {
			err = conn->dead ? -EPIPE : dst_seal_reply(conn, io);
			if (err) {
				if (!conn->dead)
					dst_sconn_kill(conn);
				dst_io_free(io);
				continue;
			}
			WRITE_ONCE(conn->tx_io, io);
			WRITE_ONCE(conn->tx_progress, jiffies);
		}
		if (!conn->tx_io)
			break;
		err = conn->dead ? -EPIPE : dst_send_sealed(conn, more);
		if (err == -EAGAIN) {
			/* write_space brings us back; the watchdog, if not. */
			queue_delayed_work(exp->send_wq, &conn->tx_watchdog,
					   msecs_to_jiffies(DST_SRV_SEND_MS));
			return;
		}
		if (err && !conn->dead)
			dst_sconn_kill(conn);
		else if (!err)
			dst_trace_reply(conn, conn->tx_io);
		WRITE_ONCE(conn->tx_progress, jiffies);
		dst_io_free(conn->tx_io);
		WRITE_ONCE(conn->tx_io, NULL);
	}
}

/*
 * A keyed reply waits for room in the socket: if it made no progress
 * for DST_SRV_SEND_MS, end the connection (its sender then sees the
 * socket fail and frees what it holds); else look again later.
 */
static void dst_sconn_tx_watchdog(struct work_struct *work)
{
	struct dst_sconn *conn = container_of(to_delayed_work(work),
					      struct dst_sconn, tx_watchdog);
	unsigned long timeout = msecs_to_jiffies(DST_SRV_SEND_MS);
	unsigned long idle = jiffies - READ_ONCE(conn->tx_progress);

	if (!READ_ONCE(conn->tx_io))
		return;
	if (idle < timeout)
		queue_delayed_work(conn->exp->send_wq, &conn->tx_watchdog,
				   timeout - idle);
	else
		kernel_sock_shutdown(conn->sock, SHUT_RDWR);
}

static void dst_send_replies_locked(struct dst_sconn *conn)
{
	unsigned int noio = memalloc_noio_save();

	lockdep_assert_held(&conn->send_lock);
	if (conn->crypto)
		dst_send_sealed_locked(conn);
	else
		dst_send_plain_locked(conn);
	memalloc_noio_restore(noio);
}

static void dst_send_work(struct work_struct *work)
{
	struct dst_sconn *conn = container_of(work, struct dst_sconn,
					      send_work);

	mutex_lock(&conn->send_lock);
	dst_send_replies_locked(conn);
	mutex_unlock(&conn->send_lock);
}

static bool dst_sconn_replies_pending(struct dst_sconn *conn)
{
	return !list_empty_careful(&conn->replies);
}

/*
 * The rx loop wants its replies out.  Plain ones go from the rx loop
 * itself, which saves waking a thread per batch -- unless a large read
 * is among them: sending a MiB can block until the client has copied
 * most of it, and meanwhile the loop could read, and the backing device
 * fill, the next one.  Those go to the send work, which runs beside the
 * loop, as does any batch while the send work is still sending (it looks
 * at the list again before it finishes).  Sealed replies are always sent
 * by the send work on the crypto workqueue, so crypto_threads bounds how
 * many connections seal at once.
 */
static void dst_sconn_flush_replies(struct dst_sconn *conn)
{
	bool big = conn->held_bytes >= DST_SRV_REPLY_BYTES;

	conn->held_bytes = 0;
	if (conn->crypto) {
		queue_work(conn->exp->crypto_wq, &conn->send_work);
	} else if (big || !mutex_trylock(&conn->send_lock)) {
		queue_work(conn->exp->send_wq, &conn->send_work);
	} else {
		dst_send_replies_locked(conn);
		mutex_unlock(&conn->send_lock);
	}
}

/*
 * The rx loop sends the replies that completed in its own context when
 * it is about to wait for the client (dst_queue_reply()).  "About to
 * wait" is any read of bytes not all received yet -- the next header,
 * or the rest of a payload -- and not just an empty socket: on a lossy
 * link a frame often sits half-received while TCP waits for a
 * retransmission, and the client is waiting for these very replies.
 */
static void dst_sconn_before_read(struct dst_sconn *conn, u32 bytes)
{
	if (dst_sconn_replies_pending(conn) &&
	    !dst_sock_has_input(conn->sock,
				bytes + dst_crypto_tag_len(conn->crypto)))
		dst_sconn_flush_replies(conn);
}

/* --- a connection -------------------------------------------------- */

static int dst_sconn_reply_hello(struct dst_sconn *conn, u32 status)
{
	struct dst_crypto *c = conn->crypto;
	struct {
		struct dst_wire_hdr hdr;
		struct dst_wire_welcome welcome;
	} *buf;
	struct dst_msg m = {
		.cmd = DST_CMD_HELLO | DST_CMD_REPLY,
		.status = status,
		.len = status ? 0 : DST_WELCOME_SIZE,
	};
	const u8 *tag;
	int err;

	/* On the heap: a scatterlist may point at the welcome. */
	buf = kzalloc(sizeof(*buf), GFP_NOIO);
	if (!buf)
		return -ENOMEM;
	dst_msg_encode(&buf->hdr, &m);
	if (status) {
		/* Refusals are never sealed: the client may have no keys. */
		err = dst_sock_send(conn->sock, &buf->hdr, DST_HDR_SIZE, 0);
		goto out;
	}
	dst_welcome_encode(&buf->welcome, &conn->geo);
	if (!c) {
		err = dst_sock_send(conn->sock, buf, sizeof(*buf), 0);
		goto out;
	}
	/* The welcome is the first protected frame. */
	sg_set_buf(dst_crypto_sg(c, true, 1), &buf->welcome, DST_WELCOME_SIZE);
	tag = dst_crypto_seal(c, &buf->hdr, 1, DST_WELCOME_SIZE, true);
	err = IS_ERR(tag) ? PTR_ERR(tag) :
	      dst_sock_send(conn->sock, buf, sizeof(*buf), MSG_MORE);
	if (!err)
		err = dst_sock_send(conn->sock, tag, dst_crypto_tag_len(c), 0);
out:
	kfree(buf);
	return err;
}

/*
 * A keyed client's challenge and response (docs/protocol.md): prove the
 * key, check the client's proof, and set up the session's keys.  @hello
 * is the client's HELLO frame as received.  Returns 0, -EKEYREJECTED for
 * a client that cannot prove the key, or another error.
 */
static int dst_sconn_auth(struct dst_sconn *conn, const void *hello,
			  size_t hello_len, const u8 *cnonce)
{
	struct dst_node *node = conn->exp->node;
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	struct {
		struct dst_wire_hdr hdr;
		union {
			struct dst_wire_challenge ch;
			struct dst_wire_proof pr;
		};
		u8 cproof[DST_PROOF_LEN];
	} *b;
	struct dst_msg m = { .cmd = DST_CMD_AUTH, .len = DST_CHALLENGE_SIZE };
	struct dst_crypto *c;
	u8 snonce[DST_NONCE_LEN];
	int err;

	b = kzalloc(sizeof(*b), GFP_NOIO);
	if (!b)
		return -ENOMEM;
	dst_crypto_nonce(snonce);
	memcpy(b->ch.nonce, snonce, DST_NONCE_LEN);
	err = dst_crypto_proofs(cfg, hello, hello_len, snonce, b->ch.proof,
				b->cproof);
	if (err)
		goto out;
	dst_msg_encode(&b->hdr, &m);
	err = dst_sock_send(conn->sock, b, DST_HDR_SIZE + DST_CHALLENGE_SIZE, 0);
	if (!err)
		err = dst_sock_recv(conn->sock, &b->hdr, DST_HDR_SIZE);
	if (err)
		goto out;
	if (dst_msg_decode(&b->hdr, &m) ||
	    m.cmd != (DST_CMD_AUTH | DST_CMD_REPLY) ||
	    m.len != DST_PROOF_SIZE || m.id || m.offset || m.status) {
		pr_err_ratelimited("%s: %pISpc: not an AUTH reply; closing\n", node->name,
				   &conn->peer);
		err = -EPROTO;
		goto out;
	}
	err = dst_sock_recv(conn->sock, &b->pr, DST_PROOF_SIZE);
	if (err)
		goto out;
	if (!dst_crypto_proof_ok(b->pr.proof, b->cproof)) {
		pr_warn_ratelimited("%s: %pISpc: refused: the client cannot prove the shared key\n",
				    node->name, &conn->peer);
		err = -EKEYREJECTED;
		goto out;
	}
	c = dst_crypto_session(cfg, true, cnonce, snonce, conn->geo.max_io,
			       NULL);
	if (IS_ERR(c)) {
		err = PTR_ERR(c);
		pr_err_ratelimited("%s: %pISpc: cannot set up the session keys: %d\n",
				   node->name, &conn->peer, err);
		goto out;
	}
	conn->crypto = c;
out:
	memzero_explicit(snonce, sizeof(snonce));
	kfree_sensitive(b);
	return err;
}

static bool dst_export_slot_taken(struct dst_export *exp,
				  struct dst_sconn *conn)
{
	struct dst_sconn *c;
	bool taken = false;

	mutex_lock(&exp->conns_lock);
	list_for_each_entry(c, &exp->conns, entry)
		if (c != conn && c->session == conn->session &&
		    c->slot == conn->slot)
			taken = true;
	mutex_unlock(&exp->conns_lock);
	return taken;
}

/*
 * A client reconnecting (@session, @slot) replaces the connection it had
 * in that slot, which this server may not have noticed is gone.  Shut the
 * old one down and wait until it has finished every request it read:
 * only then may the client resend them, here or on any connection.
 * Returns false if the old connection did not drain in time.
 */
static bool dst_sconn_fence(struct dst_sconn *conn, u64 session, u16 slot)
{
	struct dst_export *exp = conn->exp;
	struct dst_sconn *old;
	unsigned long deadline;
	bool drained = false;
	int n = 0;

	mutex_lock(&exp->conns_lock);
	conn->session = session;
	conn->slot = slot;
	list_for_each_entry(old, &exp->conns, entry) {
		if (old == conn || old->session != session ||
		    old->slot != slot)
			continue;
		if (!old->fenced) {
			WRITE_ONCE(old->fenced, true);
			kernel_sock_shutdown(old->sock, SHUT_RDWR);
			wake_up(&old->wait);
			wake_up_all(&exp->mem_wait);
			/* It may itself be fencing, waiting here. */
			wake_up_all(&exp->wait);
		}
		n++;
	}
	mutex_unlock(&exp->conns_lock);
	if (!n)
		return true;

	atomic64_add(n, &exp->fenced);
	pr_info("%s: %pISpc: reconnected slot %u; draining the connection it replaces\n",
		exp->node->name, &conn->peer, slot);
	/*
	 * Wait for a connection to go, then look (under conns_lock, which
	 * a wait_event condition may not take: it would sleep while not
	 * TASK_RUNNING) whether it was the old one.
	 */
	deadline = jiffies + msecs_to_jiffies(DST_SRV_FENCE_MS);
	for (;;) {
		unsigned int gone = READ_ONCE(exp->nr_gone);
		long left;

		if (!dst_export_slot_taken(exp, conn)) {
			drained = true;
			break;
		}
		/* A newer reconnection of the slot fenced this one. */
		if (READ_ONCE(conn->fenced))
			break;
		left = (long)(deadline - jiffies);
		if (left <= 0 ||
		    !wait_event_timeout(exp->wait,
					READ_ONCE(exp->nr_gone) != gone ||
					READ_ONCE(conn->fenced), left))
			break;
	}
	trace_dst_fence(exp->node->name, &conn->peer, slot, session, n,
			drained);
	return drained;
}

/* The handshake is over, either way: its slot is free.  conns_lock. */
static void dst_export_end_handshake(struct dst_export *exp,
				     struct dst_sconn *conn)
{
	lockdep_assert_held(&exp->conns_lock);
	exp->nr_handshakes--;
	if (conn->refusing)
		exp->nr_refusing--;
}

/*
 * After the handshake: established, unless the export already has all
 * the clients it takes.  Returns false for the latter.
 */
static bool dst_sconn_establish(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;
	bool ok;

	mutex_lock(&exp->conns_lock);
	/* Established ones: all but those in the handshake, this one too. */
	ok = exp->nr_conns - exp->nr_handshakes < DST_SRV_MAX_CONNS &&
	     !exp->stopping;
	if (ok) {
		dst_export_end_handshake(exp, conn);
		conn->established = true;
	}
	mutex_unlock(&exp->conns_lock);
	return ok;
}

/*
 * The first frame must be a well-formed HELLO for this export; the
 * answer is the welcome with what this connection may do, or a status
 * that tells the client why not.  Returns 0 when the client is in.
 */
static noinline __noclone int dst_sconn_handshake(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;
	struct dst_node *node = exp->node;
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	/* The HELLO as received, for the proofs of a keyed handshake. */
	struct {
		struct dst_wire_hdr hdr;
		struct dst_wire_hello w;
		struct dst_wire_hello_auth auth;
	} f;
	struct dst_geometry *g = &conn->geo;
	char hash[DST_NAMELEN], cipher[DST_NAMELEN];
	u8 cnonce[DST_NONCE_LEN];
	struct dst_hello h;
	struct dst_msg m;
	u32 status = DST_ST_OK;
	bool ro = false, keyed;
	int err;

	err = dst_sock_recv(conn->sock, &f.hdr, sizeof(f.hdr));
	if (err)
		return err;
	if (dst_msg_decode(&f.hdr, &m) || m.cmd != DST_CMD_HELLO ||
	    (m.len != DST_HELLO_SIZE &&
	     m.len != DST_HELLO_SIZE + DST_HELLO_AUTH_SIZE) ||
	    m.id || m.offset || m.status) {
		pr_err_ratelimited("%s: %pISpc: not a DST v%d HELLO; closing\n",
				   node->name, &conn->peer, DST_PROTO_VERSION);
		return -EPROTO;
	}
	err = dst_sock_recv(conn->sock, &f.w, m.len);
	if (err)
		return err;
	keyed = m.len > DST_HELLO_SIZE;
	if (dst_hello_decode(&f.w, &h) ||
	    !(h.features & DST_FEAT_AUTH) != !keyed ||
	    (keyed && dst_hello_auth_decode(&f.auth, cnonce, hash, cipher))) {
		pr_err_ratelimited("%s: %pISpc: malformed HELLO; closing\n", node->name,
				   &conn->peer);
		return -EPROTO;
	}

	*g = exp->geo;
	g->version = DST_PROTO_VERSION;
	if (h.version_min > DST_PROTO_VERSION ||
	    h.version_max < DST_PROTO_VERSION_MIN)
		status = DST_ST_VERSION;
	/* A client the list refuses learns nothing, not even the name. */
	else if (dst_acl_check(node, &conn->peer, &ro))
		status = DST_ST_ACCESS;
	else if (strcmp(h.export, node->name))
		status = DST_ST_NOENT;
	else if (READ_ONCE(exp->stopping))
		status = DST_ST_BUSY;
	else if (h.max_io < PAGE_SIZE)
		status = DST_ST_INVAL;
	else if (h.session &&
		 (!h.nr_queues || !h.queue_depth ||
		  (u32)h.nr_queues * h.queue_depth > DST_SRV_MAX_TAGS))
		status = DST_ST_INVAL;
	/* A key on one side only, or other algorithms: never a silent downgrade. */
	else if (!keyed != !cfg->key_len) {
		pr_warn_ratelimited("%s: %pISpc: refused: %s\n", node->name,
				    &conn->peer, keyed ?
				    "the client has a key and this export none" :
				    "the client has no key and this export needs one");
		status = DST_ST_AUTH;
	} else if (keyed && (strcmp(hash, dst_crypto_hash_name(cfg)) ||
			     strcmp(cipher, cfg->cipher))) {
		pr_warn_ratelimited("%s: %pISpc: refused: the client uses hash '%*pE' cipher '%*pE', this export '%s' '%s'\n",
				    node->name, &conn->peer,
				    (int)strnlen(hash, sizeof(hash)), hash,
				    (int)strnlen(cipher, sizeof(cipher)), cipher,
				    dst_crypto_hash_name(cfg), cfg->cipher);
		status = DST_ST_AUTH;
	}
	if (status == DST_ST_ACCESS) {
		pr_warn_ratelimited("%s: %pISpc: refused: no access rule allows this address\n",
				    node->name, &conn->peer);
		dst_sconn_reply_hello(conn, status);
		return -EPERM;
	}
	if (status) {
		if (status != DST_ST_AUTH)
			pr_warn_ratelimited("%s: %pISpc: refused (export '%*pE'): status %u\n",
					    node->name, &conn->peer,
					    (int)strnlen(h.export, sizeof(h.export)),
					    h.export, status);
		dst_sconn_reply_hello(conn, status);
		return -EPERM;
	}

	/* Grant what both sides can do; read-only if either side says so. */
	g->features &= h.features | DST_FEAT_READ_ONLY;
	g->features |= h.features & DST_FEAT_READ_ONLY;
	/* The server enforces a ro rule itself: the client just knows. */
	if (ro)
		g->features |= DST_FEAT_READ_ONLY;
	g->max_io = min_t(u32, g->max_io, rounddown(h.max_io, PAGE_SIZE));
	if (!(g->features & DST_FEAT_DISCARD))
		g->max_discard = 0;
	if (!(g->features & DST_FEAT_WRITE_ZEROES))
		g->max_write_zeroes = 0;
	/* Only an authenticated client may fence a slot or cost memory. */
	if (keyed) {
		err = dst_sconn_auth(conn, &f, DST_HDR_SIZE + m.len, cnonce);
		memzero_explicit(cnonce, sizeof(cnonce));
		if (err == -EKEYREJECTED)
			dst_sconn_reply_hello(conn, DST_ST_AUTH);
		if (err)
			return err == -EKEYREJECTED ? -EPERM : err;
	}
	if (h.session) {
		conn->seen = kvcalloc((u32)h.nr_queues * h.queue_depth,
				      sizeof(*conn->seen), GFP_KERNEL);
		if (!conn->seen)
			return -ENOMEM;
		conn->nr_queues = h.nr_queues;
		conn->queue_depth = h.queue_depth;
	}
	/*
	 * The client has said all it had to say, and proved it holds the
	 * key if there is one: waiting for a replaced connection to drain
	 * may take longer than a handshake is given to read.
	 */
	cancel_delayed_work_sync(&conn->hs_timeout);
	if (h.session && !dst_sconn_fence(conn, h.session, h.slot)) {
		pr_warn_ratelimited("%s: %pISpc: the connection slot %u replaces did not drain in %d ms; refused\n",
				    node->name, &conn->peer, h.slot, DST_SRV_FENCE_MS);
		dst_sconn_reply_hello(conn, DST_ST_BUSY);
		return -EPERM;
	}
	if (!dst_sconn_establish(conn)) {
		pr_warn_ratelimited("%s: %pISpc: export stopping or already %d clients; refused\n",
				    node->name, &conn->peer,
				    DST_SRV_MAX_CONNS);
		dst_sconn_reply_hello(conn, DST_ST_BUSY);
		return -EPERM;
	}
	err = dst_sconn_reply_hello(conn, DST_ST_OK);
	if (err)
		return err;
	pr_info("%s: client %pISpc attached%s%s\n", node->name, &conn->peer,
		g->features & DST_FEAT_READ_ONLY ? " read-only" : "",
		conn->crypto ? ", authenticated" : "");
	return 0;
}

/* make check-debug fails it (fail_function): a half-made client unwinds. */
ALLOW_ERROR_INJECTION(dst_sconn_handshake, ERRNO);

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
 * Read one request and start it.  Returns 0 to go on, 1 for an orderly
 * goodbye, or an error that ends the connection.
 */
static int __dst_sconn_recv_request(struct dst_sconn *conn,
				    const struct dst_wire_hdr *hdr)
{
	struct dst_node *node = conn->exp->node;
	const char *why = NULL;
	struct dst_io *io;
	struct dst_msg m;
	int ret;

	if (dst_msg_decode(hdr, &m)) {
		why = "bad magic or version";
		ret = -EPROTO;
	} else {
		ret = dst_check_request(&m, &conn->geo, &why);
	}
	if (ret < 0) {
		pr_err_ratelimited("%s: %pISpc: protocol error: %s (cmd %u, %u bytes at %llu); closing\n",
				   node->name, &conn->peer, why, m.cmd, m.len, m.offset);
		return ret;
	}
	/* Under session keys nothing is done with a frame before its tag. */
	if (conn->crypto) {
		int err;

		io = dst_io_alloc(conn, &m);
		err = dst_sconn_open_request(conn, hdr, &m, io);
		if (err || m.cmd == DST_CMD_BYE) {
			dst_io_free(io);
			return err ?: 1;
		}
	} else {
		io = NULL;
		if (m.cmd == DST_CMD_BYE)
			return 1;
	}
	/* Status: what it is refused with, if it is (its reply says so). */
	trace_dst_srv_request(node->name, &conn->peer, conn->slot, m.id, m.cmd,
			      m.offset, m.len, ret);
	if (!ret && m.cmd != DST_CMD_PING) {
		ret = dst_sconn_resend(conn, &m, io);
		if (ret) {
			if (io)
				dst_io_free(io);
			return ret < 0 ? ret : 0;
		}
	}

	if (!io)
		io = dst_io_alloc(conn, &m);
	if (ret > 0) {
		/* Well formed but refused: skip its data, say why. */
		io->m.status = ret;
		if (!conn->crypto) {
			dst_sconn_before_read(conn, dst_request_payload(&m));
			ret = dst_sock_discard(conn->sock,
					       dst_request_payload(&m));
			if (ret) {
				dst_io_free(io);
				return ret;
			}
		}
		dst_queue_reply(io);
		return 0;
	}

	switch (m.cmd) {
	case DST_CMD_PING:
		dst_queue_reply(io);
		return 0;
	case DST_CMD_READ:
		dst_io_alloc_pages(io, m.len);
		break;
	case DST_CMD_WRITE:
		if (conn->crypto)
			break;		/* read and checked already */
		dst_io_alloc_pages(io, m.len);
		dst_sconn_before_read(conn, m.len);
		ret = dst_sock_recv_bvecs(conn->sock, io->bvecs, io->nr_segs,
					  m.len, 0);
		if (ret) {
			dst_io_free(io);
			return ret;
		}
		break;
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

static int dst_sconn_recv_request(struct dst_sconn *conn)
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
static void dst_sconn_wait_budget(struct dst_sconn *conn)
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

/* The same host: the same IPv4 address, or the same IPv6 /64. */
static bool dst_same_host(const struct sockaddr_storage *a,
			  const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	/* One host of IPv6 has a /64 to choose its addresses from. */
	return ipv6_prefix_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				 &((const struct sockaddr_in6 *)b)->sin6_addr,
				 64);
}

/*
 * Admit a new connection to the handshake, under conns_lock: the
 * handshakes in progress are bounded in all, per source address, and
 * tighter for addresses the access list refuses (which are only told
 * so), so neither a flood nor a refused host can keep clients out.
 */
static const char *dst_export_admit(struct dst_export *exp,
				    struct dst_sconn *conn)
{
	struct dst_sconn *c;
	int same = 0;

	lockdep_assert_held(&exp->conns_lock);
	if (exp->stopping)
		return "export stopping";
	if (exp->nr_handshakes >= DST_SRV_MAX_HANDSHAKES)
		return "too many handshakes in progress";
	if (conn->refusing && exp->nr_refusing >= DST_SRV_MAX_REFUSING)
		return "too many refused clients in the handshake";
	list_for_each_entry(c, &exp->conns, entry)
		if (!c->established && dst_same_host(&c->peer, &conn->peer))
			same++;
	if (same >= DST_SRV_MAX_HANDSHAKES_SRC)
		return "too many handshakes from this address";
	return NULL;
}

/*
 * DST_SRV_HELLO_MS for the whole handshake, not for each read: a
 * client trickling a byte at a time would otherwise hold its slot for
 * as long as it likes.  Past it, the socket is shut down and the
 * handshake's read fails.
 */
static void dst_sconn_hs_timeout(struct work_struct *work)
{
	struct dst_sconn *conn = container_of(to_delayed_work(work),
					      struct dst_sconn, hs_timeout);

	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
}

/*
 * A connection's whole life, after accept.  Once the handshake is done,
 * the loop returns whenever the client has sent everything it had and
 * the watch queues it again where the client's next frame arrives
 * (conn.c), as nvmet-tcp runs its io_work: a request, its bio and, for a
 * device that completes inline, its reply then stay on one CPU.  The
 * last run, which finds the connection closed, frees it.
 */
static void dst_sconn_recv_work(struct work_struct *work)
{
	struct dst_sconn *conn = container_of(work, struct dst_sconn,
					      recv_work);
	struct dst_export *exp = conn->exp;
	struct dst_node *node = exp->node;
	unsigned int noio = memalloc_noio_save();
	unsigned int batch = 0, frames = 0;
	bool more;
	int err = 0;

	if (!conn->established) {
		dst_sock_set_timeout(conn->sock, DST_SRV_HELLO_MS);
		err = dst_sconn_handshake(conn);
		/* The timeout's work uses the socket: done before it goes. */
		cancel_delayed_work_sync(&conn->hs_timeout);
		if (!err) {
			dst_sock_set_timeout(conn->sock, 0);
			lock_sock(conn->sock->sk);
			conn->sock->sk->sk_sndtimeo =
				msecs_to_jiffies(DST_SRV_SEND_MS);
			release_sock(conn->sock->sk);
			dst_sock_watch(conn->sock, &conn->watch, exp->recv_wq,
				       &conn->recv_work, NULL);
			if (conn->crypto)
				dst_sock_watch_tx(conn->sock, &conn->watch,
						  exp->crypto_wq,
						  &conn->send_work);
		}
	}
	/* Queued for bytes an earlier run already read: wait for more. */
	if (!err && dst_sock_idle(conn->sock)) {
		memalloc_noio_restore(noio);
		return;
	}
	while (!err) {
		dst_sconn_wait_budget(conn);
		err = dst_sconn_recv_request(conn);
		frames++;
		/*
		 * Answer what completed inline once the client has sent all
		 * it had, so replies to a burst of requests go out together
		 * -- or after a batch, so a client that never pauses still
		 * hears back, or once DST_SRV_REPLY_BYTES of read data wait,
		 * so the client copies one large read while we do the next.
		 */
		if (err)
			continue;
		more = dst_sock_has_input(conn->sock, DST_HDR_SIZE);
		if (more && ++batch < DST_SRV_REPLY_BATCH &&
		    conn->held_bytes < DST_SRV_REPLY_BYTES)
			continue;
		batch = 0;
		if (dst_sconn_replies_pending(conn))
			dst_sconn_flush_replies(conn);
		/* All read: the watch brings the loop back for the next. */
		if (!more && dst_sock_idle(conn->sock)) {
			/*
			 * Requests left in the backing device: no reply is
			 * coming soon to carry the ACK the client's next
			 * request waits for (Nagle, dst_sock_setup()).
			 */
			if (atomic_read(&conn->inflight))
				dst_sock_ack_now(conn->sock);
			dst_sock_watch_ran(&conn->watch, frames);
			memalloc_noio_restore(noio);
			return;
		}
	}
	/*
	 * The loop is done reading; its sender is not: a keyed one waiting
	 * for room must still hear of it (write_space, state changes) until
	 * every reply is out.
	 */
	dst_sock_unwatch_rx(conn->sock, &conn->watch);
	dst_sconn_flush_replies(conn);
	if (err < 0 && err != -ECONNRESET && err != -EPERM &&
	    !READ_ONCE(exp->stopping) && !READ_ONCE(conn->fenced))
		pr_warn_ratelimited("%s: client %pISpc: connection error %d\n",
				    node->name, &conn->peer, err);

	/* Answer what was read (unless sending failed), then close. */
	wait_event(conn->wait, !atomic_read(&conn->inflight));
	dst_sock_unwatch(conn->sock, &conn->watch);
	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	flush_work(&conn->send_work);
	/* The watchdog may queue the send work: both done before the free. */
	cancel_delayed_work_sync(&conn->tx_watchdog);
	flush_work(&conn->send_work);
	memalloc_noio_restore(noio);

	mutex_lock(&exp->conns_lock);
	list_del(&conn->entry);
	exp->nr_conns--;
	WRITE_ONCE(exp->nr_gone, exp->nr_gone + 1);
	if (!conn->established)
		dst_export_end_handshake(exp, conn);
	mutex_unlock(&exp->conns_lock);
	wake_up(&exp->wait);

	pr_info("%s: client %pISpc detached\n", node->name, &conn->peer);
	/* The watch may have queued this loop again before it went. */
	cancel_work(&conn->recv_work);
	sock_release(conn->sock);
	dst_spares_free(conn);
	dst_crypto_free(conn->crypto);
	kvfree(conn->seen);
	kfree(conn);
}

static void dst_export_add_conn(struct dst_export *exp, struct socket *sock)
{
	struct dst_node *node = exp->node;
	struct dst_sconn *conn;
	const char *why;
	bool ro;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn) {
		sock_release(sock);
		return;
	}
	conn->exp = exp;
	conn->sock = sock;
	spin_lock_init(&conn->lock);
	spin_lock_init(&conn->spare_lock);
	INIT_LIST_HEAD(&conn->replies);
	atomic_set(&conn->inflight, 0);
	init_waitqueue_head(&conn->wait);
	INIT_WORK(&conn->recv_work, dst_sconn_recv_work);
	INIT_WORK(&conn->send_work, dst_send_work);
	INIT_DELAYED_WORK(&conn->hs_timeout, dst_sconn_hs_timeout);
	INIT_DELAYED_WORK(&conn->tx_watchdog, dst_sconn_tx_watchdog);
	conn->tx_progress = jiffies;
	mutex_init(&conn->send_lock);

	/*
	 * A child socket is born with its listener's callbacks: give it
	 * back the stock sk_data_ready, which wakes the receive loop.
	 */
	write_lock_bh(&sock->sk->sk_callback_lock);
	sock->sk->sk_data_ready = exp->saved_data_ready;
	sock->sk->sk_user_data = NULL;
	write_unlock_bh(&sock->sk->sk_callback_lock);
	dst_sock_setup(sock, false);
	dst_sock_keepalive(sock, DST_SRV_KA_IDLE_S, DST_SRV_KA_INTVL_S,
			   DST_SRV_KA_CNT);
	dst_sock_peer(sock, &conn->peer);
	hash_init(conn->pending);
	conn->hash_seed = get_random_u32();
	/* Checked again in the handshake: rules may change meanwhile. */
	conn->refusing = dst_acl_check(node, &conn->peer, &ro) != 0;

	mutex_lock(&exp->conns_lock);
	why = dst_export_admit(exp, conn);
	if (why) {
		mutex_unlock(&exp->conns_lock);
		pr_warn_ratelimited("%s: %pISpc: %s; connection refused\n",
				    node->name, &conn->peer, why);
		sock_release(sock);
		kfree(conn);
		return;
	}
	list_add_tail(&conn->entry, &exp->conns);
	exp->nr_conns++;
	exp->nr_handshakes++;
	if (conn->refusing)
		exp->nr_refusing++;
	mutex_unlock(&exp->conns_lock);
	queue_delayed_work(exp->send_wq, &conn->hs_timeout,
			   msecs_to_jiffies(DST_SRV_HELLO_MS));
	queue_work(exp->recv_wq, &conn->recv_work);
}

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

	exp->lsock = dst_sock_listen(exp->net, &node->cfg.addr);
	if (IS_ERR(exp->lsock)) {
		int err = PTR_ERR(exp->lsock);

		exp->lsock = NULL;
		pr_err("%s: cannot listen on %pISpc: %d\n", node->name,
		       &node->cfg.addr, err);
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
	/* A no-op if it was never registered. */
	unregister_shrinker(&exp->spare_shrinker);
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
	if (!node->cfg.addr_set) {
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
	exp->spare_shrinker.count_objects = dst_spares_count;
	exp->spare_shrinker.scan_objects = dst_spares_scan;
	exp->spare_shrinker.seeks = DEFAULT_SEEKS;
	err = register_shrinker(&exp->spare_shrinker, "dst-%s", node->name);
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
		&node->cfg.addr);
	if (dst_acl_empty(node))
		pr_warn("%s: the access list is empty: every client is refused until a rule under acl/ allows it (0.0.0.0/0 and ::/0 allow all)\n",
			node->name);
	return 0;
out:
	dst_export_free(exp);
	return err;
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

/*
 * debugfs (debugfs.c): the files exist only while node->exp does, and
 * their removal waits for a reader, so neither takes node->lock.
 * conns_lock keeps each connection (and its socket) while it is shown.
 */
static const char *dst_sconn_state(const struct dst_sconn *conn)
{
	if (READ_ONCE(conn->fenced))
		return "fenced";
	if (READ_ONCE(conn->dead))
		return "dead";
	return READ_ONCE(conn->established) ? "established" : "handshake";
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
