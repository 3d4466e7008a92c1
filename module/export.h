/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The export node's own state, shared by the five files that run it:
 *
 *   export.c        the node: backing device, listener, enable/disable,
 *                   statistics and debugfs listings
 *   export_conn.c   a client connection: admission, handshake and
 *                   authentication, fencing, its receive loop
 *   export_io.c     a request: read, check, publish, execute as a bio,
 *                   and detect resends
 *   export_reply.c  replies: batching, plain and sealed sends, the send
 *                   watchdog
 *   export_pages.c  data pages kept for reuse, and their shrinker
 */
#ifndef DST_EXPORT_H
#define DST_EXPORT_H

#include <linux/bio.h>
#include <linux/hashtable.h>
#include <linux/mempool.h>
#include <linux/shrinker.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "dst.h"

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

struct dst_sconn;

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
	bool welcomed;			/* ... and the welcome sent */
	bool closing;			/* in dst_sconn_close() */
	/*
	 * The RESIZE notice (export_reply.c), one per connection, under
	 * lock: idle, queued among the replies, or being sent -- and then
	 * @notice_again if the export grew once more meanwhile.  It says
	 * geo.size as it is when it is sent, so queued notices merge.
	 */
	enum { DST_NOTICE_IDLE, DST_NOTICE_QUEUED, DST_NOTICE_SENDING }
		notice_state;
	bool notice_again;
	struct dst_io notice;
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

/* export_conn.c: a client connection */
void dst_export_add_conn(struct dst_export *exp, struct socket *sock);
void dst_sconn_kill(struct dst_sconn *conn);
const char *dst_sconn_state(const struct dst_sconn *conn);

/* export_io.c: requests */
int dst_sconn_recv_request(struct dst_sconn *conn);
void dst_sconn_wait_budget(struct dst_sconn *conn);
void dst_queue_reply(struct dst_io *io);
void dst_io_free(struct dst_io *io);

/* export_reply.c: replies */
void dst_sconn_before_read(struct dst_sconn *conn, u32 bytes);
bool dst_sconn_replies_pending(struct dst_sconn *conn);
void dst_sconn_flush_replies(struct dst_sconn *conn);
void dst_send_work(struct work_struct *work);
void dst_sconn_tx_watchdog(struct work_struct *work);
void dst_sconn_notice_init(struct dst_sconn *conn);
void dst_sconn_notify_size(struct dst_sconn *conn);
void dst_notice_done(struct dst_sconn *conn);

/* export_pages.c: spare pages */
struct page *dst_spare_get(struct dst_sconn *conn, unsigned int order);
void dst_spare_put(struct dst_sconn *conn, struct page *page);
void dst_spares_free(struct dst_sconn *conn);
int dst_export_spares_init(struct dst_export *exp);
void dst_export_spares_exit(struct dst_export *exp);

#endif /* DST_EXPORT_H */
