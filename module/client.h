/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The remote node's own state, shared by the five files that run it:
 *
 *   client_node.c  the node: attach and detach, the disk's size, the
 *                  link it reports, the detach watchdog, statistics and
 *                  debugfs listings
 *   client.c       the disk: blk-mq's queue_rq, sending frames, the
 *                  request timeout, completion, the tag set and gendisk
 *   client_hs.c    a new connection: its path, the handshake, the
 *                  export's identity
 *   client_conn.c  a connection slot's life: up and down, reconnection
 *                  with backoff, keepalive, fail timer, moves home
 *   client_rx.c    replies: the softirq fast path and the receive loop
 *
 * trans.c owns the transactions these files carry (docs/architecture.md
 * walks one request through them).
 */
#ifndef DST_CLIENT_H
#define DST_CLIENT_H

#include <linux/blk-mq.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/workqueue.h>

#include "dst.h"

#define DST_CONNECT_TIMEOUT_MS	10000	/* connect and handshake at enable */
#define DST_RECONNECT_TIMEOUT_MS 5000	/* ... and for each reconnect attempt */
#define DST_RECONNECT_MAX_MS	10000	/* backoff cap, unless the delay is more */
#define DST_DETACH_GRACE_MS	5000	/* without progress, while detaching */
#define DST_PATH_PROBE_MS	2000	/* a slot off its path: is it back? */
#define DST_PATH_PROBE_TIMEOUT_MS 2000	/* ... connect and handshake that long */
#define DST_RESHAPE_DRAIN_MS	30000	/* connections changing: I/O drains */

struct dst_remote;

/*
 * One of the server's addresses (multipath, docs/configfs.md): slot i
 * belongs on path i % nr_paths, moves to another when its own fails,
 * and back when path_work finds it reachable again.
 */
struct dst_path {
	struct sockaddr_storage addr;
	atomic_t conns;			/* live slots on it */
	atomic64_t failures;		/* connects and handshakes that failed */
	atomic64_t failovers;		/* slots that left it for another */
	bool down;			/* its last attempt failed */
};

/*
 * A frame on its way out: what it takes to send it, or the rest of it,
 * from any context (see dst_rconn_send_rest()).  Sealed once, when it
 * is set up; the tag and a cipher's pages are the session's until the
 * next frame is sealed, which cannot happen before this one is out.
 */
struct dst_frame {
	struct dst_wire_hdr hdr;
	struct request *rq;	/* a WRITE's data: the request's pages */
	u32 len;		/* data bytes */
	const u8 *tag;		/* under session keys: sent after the data */
	bool bounce;		/* a cipher's: data from the session's pages */
	int last;		/* MSG_MORE: more frames follow */
	int flags;		/* for every part: MSG_DONTWAIT */
};

/*
 * One connection slot = one hardware queue.  The slot outlives its
 * sockets: each reconnection installs a new one and bumps the epoch.
 */
struct dst_rconn {
	struct dst_remote *rem;
	int idx;
	struct mutex tx_lock;	/* one frame at a time; live, epoch, tx */
	bool live;		/* frames may be sent; cleared by the rx loop */
	bool resize;		/* its server sends RESIZE (granted) */
	u64 size;		/* the export's, as this connection last heard */
	int path;		/* the path its socket uses ... */
	int home;		/* ... and the one it belongs on */
	bool go_home;		/* path_work: reconnect there first */
	bool lost_all;		/* its last open found no path */
	unsigned int home_fails;	/* moves home that did not take */
	unsigned long home_retry;	/* jiffies: path_work may try again */
	/* The rest of a frame a signal interrupted, sent by tx_work. */
	struct dst_frame tx;
	u32 tx_skip;		/* bytes of it already sent */
	int tx_err;
	struct work_struct tx_work;
	struct completion tx_done;
	bool corked;		/* the last frame went with MSG_MORE */
	u32 epoch;		/* incarnation, for orphans and resends */
	struct mutex sock_lock;	/* sock pointer vs. shutdown */
	struct socket *sock;
	/* The socket's session keys, or NULL; they come and go with it. */
	struct dst_crypto *crypto;
	/* ... and what each session of this slot borrows (keyed only). */
	struct dst_crypto_buf *cbuf;
	unsigned long last_rx;	/* jiffies of the last sign of life */
	unsigned long down_since;	/* jiffies: it went down (not live) */
	u64 ka_progress;	/* TCP progress seen by the keepalive */
	/* Runs while the socket has input, where it arrives (conn.c). */
	struct work_struct recv_work;
	struct dst_sock_watch watch;
};

struct dst_remote {
	struct dst_node *node;
	struct net *net;		/* where the sockets live */
	struct dst_geometry geo;	/* as the server described it */
	spinlock_t size_lock;		/* geo.size: it may grow */
	struct work_struct resize_work;	/* ... and the disk with it (system_wq) */
	bool running;			/* receive loops started */
	bool read_only;
	int index;			/* dstN */
	u64 session;			/* names us to the server's fence */
	/*
	 * Three workqueues, all WQ_MEM_RECLAIM, so that no work item ever
	 * waits for another on its own workqueue: under memory pressure a
	 * workqueue may be down to its one rescuer thread.  The reconnect
	 * work flushes a slot's receive loop; a receive loop and the
	 * reconnect and keepalive works take a slot's tx_lock, which a
	 * submitter may hold while it waits for the slot's tx_work.
	 */
	struct workqueue_struct *wq;	/* rx loops, per CPU */
	struct workqueue_struct *ctl_wq; /* reconnect, fail, keepalive, watchdog */
	struct workqueue_struct *tx_wq;	/* the rest of an interrupted frame */
	struct blk_mq_tag_set set;
	struct dst_trans_gens *gens;	/* per tag, see trans.c */
	struct work_struct scan_work;	/* the partition table, at attach */
	struct gendisk *disk;

	/*
	 * Configuration that may change while enabled (node->lock held):
	 * read with READ_ONCE; fail_s is written under state_lock too.
	 */
	unsigned int max_retries;
	unsigned int ka_ms, reconnect_ms;
	int fail_s;

	/* The link (docs/resilience.md), under state_lock. */
	struct mutex state_lock;
	int nr_live;
	bool failfast;			/* none for fail_s: I/O fails */
	bool stopping;			/* also read lockless */
	bool reshaping;			/* down by dst_remote_set_connections() */

	/*
	 * With no connection live, queue_rq holds new I/O here rather than
	 * the queue being quiesced, so that it still sees requests that ask
	 * not to wait (REQ_FAILFAST_*, md's --failfast) and fails them at
	 * once.  holding is written under state_lock and held_lock both.
	 */
	spinlock_t held_lock;
	struct list_head held;
	bool holding;

	struct delayed_work reconnect_work;
	unsigned int attempt;		/* since the link last went down */
	struct delayed_work fail_work;
	struct delayed_work ka_work;
	struct delayed_work path_work;	/* slots back to their paths */

	atomic_long_t completions;	/* progress, for the watchdog */
	long seen;
	struct delayed_work watchdog;

	struct dst_io_stats __percpu *stats;
	atomic64_t reconnects, resends, timeouts;
	atomic64_t polled_ops;		/* through a poll queue */

	struct dst_path paths[DST_MAX_PATHS];	/* node->cfg.addrs */
	int nr_paths;

	int nr_conns;			/* in use, of DST_MAX_CONNS */
	int nr_queues;			/* ids name hw queues 0..nr_queues-1 */
	/*
	 * Poll queues, the hardware queues after the connections' (fixed
	 * while attached); per hardware queue the polled requests ended
	 * since a poll last reported them; and the polled requests answered
	 * where they could not end (dst_complete_rq()), which a poller or,
	 * should none come, polled_work ends.
	 */
	int nr_poll;
	atomic_t polled[DST_MAX_CONNS + DST_MAX_POLL_QUEUES];
	struct llist_head polled_done;
	struct delayed_work polled_work;	/* on wq */
	/* Against a tag walk from debugfs while blk-mq replaces the tags. */
	struct rw_semaphore tags_rwsem;
	struct dst_rconn conns[];
};

static inline const char *dst_rem_name(struct dst_remote *rem)
{
	return rem->node->name;
}

/* The server address @conn's socket uses (or last used, or will). */
static inline const struct sockaddr_storage *
dst_rconn_addr(const struct dst_rconn *conn)
{
	return &conn->rem->paths[READ_ONCE(conn->path)].addr;
}

/* client_tx.c: frames out */
int dst_frame_prepare(struct dst_rconn *conn, struct dst_frame *f,
		      struct request *rq, const struct dst_msg *m, int last,
		      int flags);
int dst_frame_send(struct dst_rconn *conn, const struct dst_frame *f, u32 skip);
int dst_rconn_send_rest(struct dst_rconn *conn, u32 skip);
int dst_rconn_send_ctl(struct dst_rconn *conn, u8 op, int flags, bool *spent);
void dst_tx_work(struct work_struct *work);

/* A signal cut a send short: the submitter had one pending. */
static inline bool dst_send_interrupted(int err)
{
	return err == -ERESTARTSYS || err == -EINTR;
}

/* client.c: the disk */
void dst_polled_work(struct work_struct *work);
void dst_hold_io(struct dst_remote *rem);
void dst_release_held(struct dst_remote *rem);
int dst_remote_alloc_disk(struct dst_remote *rem, u64 size);
void dst_remote_free_disk(struct dst_remote *rem);

/* client_node.c: the disk's size */
int dst_remote_size(struct dst_remote *rem, u64 *size);
int dst_remote_grow(struct dst_remote *rem, u64 size);
void dst_remote_resize_work(struct work_struct *work);

/* client_hs.c: a new connection */
struct socket *dst_rconn_open(struct dst_remote *rem, struct dst_rconn *conn,
			      bool first, int timeout_ms,
			      struct dst_crypto **cryptop);
bool dst_path_probe(struct dst_remote *rem, int p);

/* client_conn.c: connection slots */
void dst_rconn_kill(struct dst_rconn *conn);
void dst_rconn_kill_epoch(struct dst_rconn *conn, u32 epoch);
void dst_rconn_attach(struct dst_rconn *conn, struct socket *sock);
void dst_rconn_up(struct dst_rconn *conn, struct socket *sock,
		  struct dst_crypto *crypto);
void dst_rconn_down(struct dst_rconn *conn, int err);
void dst_rconn_bye(struct dst_rconn *conn);
void dst_reconnect_work(struct work_struct *work);
void dst_fail_work(struct work_struct *work);
void dst_remote_set_fail_timeout(struct dst_remote *rem, int s);
void dst_ka_work(struct work_struct *work);
void dst_path_work(struct work_struct *work);

/* client_rx.c: replies */
bool dst_rconn_rx_fast(struct dst_sock_watch *w, struct sock *sk);
void dst_recv_work(struct work_struct *work);

#endif /* DST_CLIENT_H */
