// SPDX-License-Identifier: GPL-2.0
/*
 * DST transactions: the remote node's I/O in flight.
 *
 * Every request sent to the server is a transaction named by a 64-bit id
 * the server only echoes:
 *
 *	bits  0..15  blk-mq tag
 *	bits 16..31  hardware queue (blk_mq_unique_tag())
 *	bits 32..63  generation, bumped each time the request is started
 *
 * so a reply finds its request in O(1) through the tag set, and a late
 * reply for a tag that has been reused since is recognised and dropped.
 * The generation is 32 bits wide because the server remembers, on each
 * connection, the last generation it saw for each tag, to drop resends:
 * a request moved to another connection while its own is down leaves
 * its generation there, and with 16 bits the tag came back to it after
 * 65535 sends -- seconds of I/O -- to be taken for a resend and dropped.
 * 2^32 sends of one tag take days at any rate a network allows.
 *
 * A transaction is in one of these states (docs/resilience.md):
 *
 *	idle      not sent yet, or requeued to be sent again
 *	INFLIGHT  sent on connection cmd->conn, its reply awaited
 *	ORPHAN    sent on a connection that died; held until the server has
 *	          fenced that connection (the client reconnected its slot),
 *	          then requeued -- or failed, when the node gives up
 *	RESENDING timed out, requeued to be sent again on the same connection
 *	          with the same id; a reply that comes meanwhile still
 *	          counts (ANSWERED): the server will drop the copy
 *	EXPIRED   (with INFLIGHT or ORPHAN) out of retries: its connection
 *	          is dropped and the request fails once the reconnection
 *	          has fenced it, as the server may still execute the copy
 *
 * Whoever clears INFLIGHT or ORPHAN (a reply, the timeout handler, the
 * loss of a connection, a reconnection, fail_timeout_s) owns the request
 * and either completes it or requeues it to be sent again.  cmd->lock is
 * a spinlock, taken with bottom halves off: a reply may be taken in
 * softirq (client_rx.c's fast path), which copies its data under the lock.
 * The receive loop, which may sleep in the middle of a reply's data,
 * marks the request RECEIVING instead, and nobody completes a request
 * whose pages are still being written.
 */
#include <linux/blk-mq.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "dst.h"

#define DST_ID_GEN_SHIFT	32

/*
 * cmd->flags, the state above, changed only here, and under cmd->lock
 * but for dst_trans_init(): the rest of the driver calls the transitions
 * below.  (A stale reply may look at a request being initialised; what
 * it finds there, 0 or EXPIRED, is never awaited.)
 */
#define DST_CMD_INFLIGHT	0	/* sent, reply awaited; owner completes */
#define DST_CMD_ORPHAN		1	/* its connection died; awaits the fence */
#define DST_CMD_RESENDING	2	/* timed out, requeued to be sent again */
#define DST_CMD_ANSWERED	3	/* ... and its reply came meanwhile */
#define DST_CMD_SENDING		4	/* queue_rq is still reading its pages */
#define DST_CMD_RECEIVING	5	/* its reply's data is being written */
#define DST_CMD_EXPIRED		6	/* out of retries: fails once fenced */

#define DST_F(bit)		BIT(DST_CMD_##bit)

/*
 * Each transition states the bits it expects set and clear.  Any other
 * state means the ownership rules are broken -- a request could be
 * completed twice, or while its pages are in use -- so it warns (a
 * failed test, under make check's splat check) and carries on.
 */
static void dst_trans_expect(struct dst_cmd *cmd, unsigned long set,
			     unsigned long clear, const char *what)
{
	lockdep_assert_held(&cmd->lock);
	WARN_ONCE((cmd->flags & set) != set || (cmd->flags & clear),
		  "dst: %s: transaction in state %#lx\n", what, cmd->flags);
}

/*
 * Generations belong to the tag, not to the request: blk-mq's flush
 * machinery sends a request of its own under the tag of the request it
 * flushes for, and two requests must never show the server the same
 * (tag, generation).
 */
struct dst_trans_gens {
	unsigned int depth;
	u32 gen[];
};

struct dst_trans_gens *dst_trans_gens_alloc(unsigned int nr_hw_queues,
					    unsigned int depth)
{
	struct dst_trans_gens *g;

	g = kvzalloc(struct_size(g, gen, nr_hw_queues * depth), GFP_KERNEL);
	if (g)
		g->depth = depth;
	return g;
}

void dst_trans_gens_free(struct dst_trans_gens *g)
{
	kvfree(g);
}

/*
 * Start a transaction for @rq: returns its wire id.  A @resend on the
 * connection that has the first copy keeps the id, so the server can
 * tell it is the same transaction; anything else is a new generation.
 */
static u64 dst_trans_start(struct dst_trans_gens *g, struct request *rq,
			   bool resend)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	u32 *gen = &g->gen[rq->mq_hctx->queue_num * g->depth + rq->tag];

	/*
	 * Generation 0 is never used: an id without one is no transaction.
	 * Nor is any whose low 16 bits are 0: a server of the 16-bit kind
	 * reads only those, and would not recognise its resend.
	 */
	if (!resend) {
		do {
			++*gen;
		} while (!(u16)*gen);
		cmd->gen = *gen;
	}
	cmd->status = BLK_STS_OK;
	return ((u64)cmd->gen << DST_ID_GEN_SHIFT) | blk_mq_unique_tag(rq);
}

/*
 * A request blk-mq dispatches for the first time: no history yet.  A
 * requeued one keeps RQF_DONTPREP, and its state goes on.
 */
void dst_trans_init(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	cmd->flags = 0;
	cmd->conn = -1;
	cmd->retries = 0;
	cmd->start = jiffies;
}

/*
 * queue_rq is about to send a copy of @rq on connection @to->conn, its
 * frame ending at TCP sequence @to->seq: the transaction goes INFLIGHT
 * and SENDING, under a new id unless it is a @resend on the connection
 * that has the first copy.  @was keeps where the last copy went, for
 * dst_trans_send_end().  Returns the id.  Called with cmd->lock held.
 */
u64 dst_trans_send_begin(struct dst_trans_gens *g, struct request *rq,
			 bool resend, const struct dst_trans_copy *to,
			 struct dst_trans_copy *was)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, 0, DST_F(INFLIGHT) | DST_F(ORPHAN) |
			 DST_F(SENDING) | DST_F(ANSWERED) | DST_F(EXPIRED),
			 "send");
	was->id = cmd->id;
	was->gen = cmd->gen;
	was->conn = cmd->conn;
	was->epoch = cmd->epoch;
	was->seq = cmd->seq;
	clear_bit(DST_CMD_RESENDING, &cmd->flags);
	cmd->id = dst_trans_start(g, rq, resend);
	cmd->conn = to->conn;
	cmd->epoch = to->epoch;
	cmd->seq = to->seq;
	set_bit(DST_CMD_INFLIGHT, &cmd->flags);
	set_bit(DST_CMD_SENDING, &cmd->flags);
	return cmd->id;
}

/*
 * The send is over: @rq's pages are no longer read.  A reply that came
 * meanwhile (ANSWERED) makes the caller its owner: true, and the caller
 * completes it with dst_trans_complete() once cmd->lock is dropped.
 * Otherwise, if nothing of the frame went out (@unsent: a signal), the
 * transaction is as it was before dst_trans_send_begin(), and blk-mq
 * sends it again later.  Called with cmd->lock held.
 */
bool dst_trans_send_end(struct request *rq, bool unsent, bool resend,
			const struct dst_trans_copy *was)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, DST_F(SENDING), DST_F(ORPHAN), "end of send");
	clear_bit(DST_CMD_SENDING, &cmd->flags);
	if (test_and_clear_bit(DST_CMD_ANSWERED, &cmd->flags))
		return true;
	if (unsent) {
		dst_trans_expect(cmd, DST_F(INFLIGHT), 0, "unsent");
		clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
		cmd->id = was->id;
		cmd->gen = was->gen;
		cmd->conn = was->conn;
		cmd->epoch = was->epoch;
		cmd->seq = was->seq;
		/* An earlier copy on this connection may still answer. */
		if (resend)
			set_bit(DST_CMD_RESENDING, &cmd->flags);
	}
	return false;
}

/* The tag part of an id (unique tag: hardware queue, tag) and its generation. */
u32 dst_trans_key(u64 id, u32 *gen)
{
	*gen = DST_ID_GEN(id);
	return lower_32_bits(id);
}

/**
 * dst_trans_find - the request a reply is for
 * @set: the remote's tag set
 * @id: the id from the reply
 * @why: reason, when there is none
 *
 * Returns the request that holds @id's tag, or NULL if no request ever
 * could (@why says so: a protocol error).  Whether the reply is the one
 * that request awaits, rather than a stale one for an earlier user of
 * the tag, only dst_trans_awaited() can tell, under cmd->lock.
 */
struct request *dst_trans_find(struct blk_mq_tag_set *set, u64 id,
			       const char **why)
{
	u32 unique = lower_32_bits(id);
	u16 hwq = blk_mq_unique_tag_to_hwq(unique);
	u16 tag = blk_mq_unique_tag_to_tag(unique);

	*why = NULL;
	/*
	 * A queue no CPU maps to has no tags (blk_mq_map_swqueue() frees
	 * them): with poll queues blk-mq makes queues beyond the CPUs.
	 */
	if (hwq >= set->nr_hw_queues || tag >= set->queue_depth ||
	    !READ_ONCE(set->tags[hwq])) {
		*why = "reply for an id never sent";
		return NULL;
	}
	/*
	 * The pointer is always one of the tag set's preallocated requests
	 * (no I/O scheduler), or the flush request borrowing the tag, so it
	 * is safe to look at and to lock.
	 */
	return blk_mq_tag_to_rq(set->tags[hwq], tag);
}

/*
 * Whether @rq awaits the reply with @id: the same generation, and
 * INFLIGHT, or RESENDING with no answer yet (a server that repeats a
 * reply must not have its data written into a request being completed).
 * Not
 * blk_mq_request_started(): a request the timeout handler has requeued
 * to be resent is idle to blk-mq until queue_rq starts it again, yet the
 * reply to its first copy is the only one the server will ever send (it
 * drops the copy).  Called with cmd->lock held.
 */
bool dst_trans_awaited(struct request *rq, u64 id)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	return cmd->gen == DST_ID_GEN(id) &&
	       (test_bit(DST_CMD_INFLIGHT, &cmd->flags) ||
		(test_bit(DST_CMD_RESENDING, &cmd->flags) &&
		 !test_bit(DST_CMD_ANSWERED, &cmd->flags)));
}

/*
 * Hand a request its owner took out of INFLIGHT or ORPHAN back to blk-mq
 * to be sent again (the completion handler requeues it).  Called with
 * cmd->lock held.
 */
static void dst_trans_requeue(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	cmd->requeue = true;
	blk_mq_complete_request(rq);
}

/*
 * Take a transaction that is still in flight, to finish it with @status:
 * the caller then owns it and completes it with dst_trans_complete()
 * once it has dropped cmd->lock.  Returns false when someone else took
 * it first.  Called with cmd->lock held.
 */
static bool dst_trans_take(struct request *rq, blk_status_t status)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	if (!test_and_clear_bit(DST_CMD_INFLIGHT, &cmd->flags))
		return false;
	cmd->status = status;
	return true;
}

/*
 * @rq has its reply, data and all, with @status.  Returns true if the
 * caller now owns it and must complete it (dst_trans_complete(), after
 * dropping cmd->lock).  A request requeued to be resent, or one whose
 * copy is being sent, is only marked ANSWERED: queue_rq finishes it
 * once it no longer needs it.  Called with cmd->lock held.
 */
bool dst_trans_answer(struct request *rq, blk_status_t status)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, 0, DST_F(RECEIVING) | DST_F(ANSWERED), "answer");
	if (test_bit(DST_CMD_RESENDING, &cmd->flags) ||
	    test_bit(DST_CMD_SENDING, &cmd->flags)) {
		clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
		cmd->status = status;
		set_bit(DST_CMD_ANSWERED, &cmd->flags);
		return false;
	}
	return dst_trans_take(rq, status);
}

/*
 * queue_rq, before it sends: if a reply came while @rq waited to be
 * sent again (ANSWERED), the request is finished instead.  Returns true
 * if so.  Called with cmd->lock held.
 */
bool dst_trans_take_answer(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	if (!test_bit(DST_CMD_ANSWERED, &cmd->flags))
		return false;
	dst_trans_expect(cmd, 0, DST_F(INFLIGHT) | DST_F(SENDING) |
			 DST_F(RECEIVING), "take answer");
	clear_bit(DST_CMD_ANSWERED, &cmd->flags);
	clear_bit(DST_CMD_RESENDING, &cmd->flags);
	blk_mq_complete_request(rq);
	return true;
}

/*
 * queue_rq found @rq's last copy on a connection that is down and not
 * replaced yet: no other copy may go out before the server has fenced
 * that one.  Hold it as an orphan, which dst_trans_resend_orphans()
 * sends again; or, if the node gives up (@fail), return false for the
 * caller to fail it.  Called with cmd->lock held.
 */
bool dst_trans_hold_orphan(struct request *rq, bool fail)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, 0, DST_F(INFLIGHT) | DST_F(ORPHAN) |
			 DST_F(SENDING) | DST_F(ANSWERED), "hold");
	clear_bit(DST_CMD_RESENDING, &cmd->flags);
	if (fail)
		return false;
	set_bit(DST_CMD_ORPHAN, &cmd->flags);
	return true;
}

/*
 * @rq's last copy went on a connection since replaced, whose server
 * side was fenced: no reply can come for it any more.
 */
void dst_trans_copy_fenced(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	spin_lock_bh(&cmd->lock);
	clear_bit(DST_CMD_RESENDING, &cmd->flags);
	spin_unlock_bh(&cmd->lock);
}

/*
 * The receive loop reads a reply's data into @rq's pages, and may sleep
 * doing so: RECEIVING keeps anyone from completing it meanwhile.  Called
 * with cmd->lock held, for a request that awaits this reply.
 */
void dst_trans_receive_begin(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, 0, DST_F(RECEIVING) | DST_F(ANSWERED), "receive");
	set_bit(DST_CMD_RECEIVING, &cmd->flags);
}

void dst_trans_receive_end(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, DST_F(RECEIVING), 0, "end of receive");
	clear_bit(DST_CMD_RECEIVING, &cmd->flags);
}

/* Whether the receive loop is filling @rq's pages.  cmd->lock held. */
bool dst_trans_receiving(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	return test_bit(DST_CMD_RECEIVING, &cmd->flags);
}

/* For the timeout handler: where @rq stands.  cmd->lock held. */
enum dst_trans_state dst_trans_state(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	if (test_bit(DST_CMD_SENDING, &cmd->flags) ||
	    test_bit(DST_CMD_RECEIVING, &cmd->flags))
		return DST_TS_BUSY;
	if (test_bit(DST_CMD_INFLIGHT, &cmd->flags))
		return DST_TS_INFLIGHT;
	if (test_bit(DST_CMD_ORPHAN, &cmd->flags))
		return DST_TS_ORPHAN;
	return DST_TS_IDLE;
}

/* Out of retries, and waiting for its connection's fence to fail. */
bool dst_trans_expired(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	return test_bit(DST_CMD_EXPIRED, &cmd->flags);
}

/*
 * Timed out in flight: requeue @rq to be sent again on the same
 * connection with the same id (RESENDING; a reply to the first copy
 * still counts).  Returns the retries so far.  cmd->lock held.
 */
unsigned int dst_trans_resend(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned int tries;

	dst_trans_expect(cmd, DST_F(INFLIGHT), DST_F(SENDING) |
			 DST_F(RECEIVING) | DST_F(EXPIRED) | DST_F(ORPHAN),
			 "resend");
	clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
	set_bit(DST_CMD_RESENDING, &cmd->flags);
	/* Counted before blk-mq may have it sent again, on another CPU. */
	tries = ++cmd->retries;
	dst_trans_requeue(rq);
	return tries;
}

/*
 * Out of retries, in flight (the caller drops the connection) or an
 * orphan: the request fails once its connection has been fenced by the
 * slot's reconnection (dst_trans_resend_orphans()), or when the node
 * gives up.  A reply before that still completes it.
 */
void dst_trans_expire(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, 0, DST_F(EXPIRED) | DST_F(SENDING) |
			 DST_F(RECEIVING), "expire");
	WARN_ONCE(!(cmd->flags & (DST_F(INFLIGHT) | DST_F(ORPHAN))),
		  "dst: expire: transaction in state %#lx\n", cmd->flags);
	set_bit(DST_CMD_EXPIRED, &cmd->flags);
}

/* End an orphan with @status: the node gave up, or it ran out of time. */
void dst_trans_fail_orphan(struct request *rq, blk_status_t status)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	dst_trans_expect(cmd, DST_F(ORPHAN), DST_F(INFLIGHT) |
			 DST_F(SENDING) | DST_F(RECEIVING), "fail");
	clear_bit(DST_CMD_ORPHAN, &cmd->flags);
	cmd->status = status;
	blk_mq_complete_request(rq);
}

/*
 * Complete a request its caller owns (dst_trans_answer(), or a reply
 * that came while queue_rq was still sending): from the receive loop or
 * queue_rq, or the receive fast path in softirq.  In process context
 * blk_mq_complete_request() would hand a one-queue
 * disk's completions to BLOCK_SOFTIRQ, and raised outside an interrupt
 * that means waking ksoftirqd: a context switch per request (traced:
 * one ksoftirqd wakeup per I/O at QD1 with one connection, none with
 * two).  Here the request completes at once, where its reply came in.
 * A disk with more queues (of the request's kind: default or poll)
 * still goes through blk-mq, which completes on the submitting CPU where
 * that is cheaper than here.
 */
void dst_trans_complete(struct request *rq)
{
	struct blk_mq_tag_set *set = rq->q->tag_set;

	/*
	 * Poll queues' requests complete here: never through blk-mq's IPI,
	 * which a polled one skips anyway and blk-mq's flush request would
	 * take to the submitting CPU's interrupt.
	 */
	if (rq->mq_hctx->type != HCTX_TYPE_POLL &&
	    set->map[rq->mq_hctx->type].nr_queues > 1) {
		blk_mq_complete_request(rq);
		return;
	}
	blk_mq_complete_request_direct(rq, rq->q->mq_ops->complete);
}

struct dst_iter_ctx {
	int conn;		/* -1: every connection */
	enum { DST_IT_ORPHAN, DST_IT_RESEND, DST_IT_FAIL, DST_IT_NORETRY,
	       DST_IT_COUNT } what;
	unsigned int n;
};

static bool dst_trans_iter_one(struct request *rq, void *data)
{
	struct dst_iter_ctx *ctx = data;
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	if (ctx->what == DST_IT_COUNT) {
		ctx->n++;
		return true;
	}
	spin_lock_bh(&cmd->lock);
	if (ctx->conn >= 0 && cmd->conn != ctx->conn)
		goto out;
	switch (ctx->what) {
	case DST_IT_ORPHAN:
		if (test_and_clear_bit(DST_CMD_INFLIGHT, &cmd->flags)) {
			dst_trans_expect(cmd, 0, DST_F(SENDING) | DST_F(RECEIVING),
					 "orphan");
			set_bit(DST_CMD_ORPHAN, &cmd->flags);
			ctx->n++;
		}
		break;
	case DST_IT_RESEND:
		if (!test_and_clear_bit(DST_CMD_ORPHAN, &cmd->flags))
			break;
		/*
		 * Out of retries: its connection was dropped only so that
		 * this fence would come before the request fails.
		 */
		if (test_bit(DST_CMD_EXPIRED, &cmd->flags)) {
			cmd->status = BLK_STS_TIMEOUT;
			blk_mq_complete_request(rq);
			break;
		}
		dst_trans_requeue(rq);
		ctx->n++;
		break;
	case DST_IT_NORETRY:
		if (!blk_noretry_request(rq) ||
		    !test_bit(DST_CMD_ORPHAN, &cmd->flags))
			break;
		dst_trans_fail_orphan(rq, BLK_STS_TRANSPORT);
		ctx->n++;
		break;
	default:
		if (test_and_clear_bit(DST_CMD_ORPHAN, &cmd->flags)) {
			cmd->status = BLK_STS_IOERR;
			blk_mq_complete_request(rq);
			ctx->n++;
		}
		break;
	}
out:
	spin_unlock_bh(&cmd->lock);
	return true;
}

static unsigned int dst_trans_iter(struct blk_mq_tag_set *set, int conn,
				   int what)
{
	struct dst_iter_ctx ctx = { .conn = conn, .what = what };

	blk_mq_tagset_busy_iter(set, dst_trans_iter_one, &ctx);
	return ctx.n;
}

/*
 * Connection @conn is gone and its receive loop has stopped: what it had
 * in flight becomes orphans, to be resent after the slot's fence, or
 * failed if the node gives up (or, for those that asked for no retry,
 * when no connection is left: dst_trans_fail_noretry()).  The caller
 * made sure no request is being sent on it any more.  Returns how many
 * orphans.
 */
unsigned int dst_trans_orphan(struct blk_mq_tag_set *set, int conn)
{
	return dst_trans_iter(set, conn, DST_IT_ORPHAN);
}

/*
 * The server fenced @conn's old incarnation: resend its orphans, and
 * fail those that had expired.  Returns how many were resent.
 */
unsigned int dst_trans_resend_orphans(struct blk_mq_tag_set *set, int conn)
{
	return dst_trans_iter(set, conn, DST_IT_RESEND);
}

/* Give up on the orphans of @conn (-1: all) with an I/O error. */
unsigned int dst_trans_fail_orphans(struct blk_mq_tag_set *set, int conn)
{
	return dst_trans_iter(set, conn, DST_IT_FAIL);
}

/*
 * No connection is left: the orphans of every slot that asked for no
 * retry (REQ_FAILFAST_*: md's --failfast, dm-multipath) fail with
 * BLK_STS_TRANSPORT now, those of the slot lost last as well as those
 * orphaned earlier while another connection still worked, rather than
 * after a reconnection.  Their copies may still run on the server, as
 * with any request failed before its fence (docs/replication.md).
 * Returns how many failed.
 */
unsigned int dst_trans_fail_noretry(struct blk_mq_tag_set *set)
{
	return dst_trans_iter(set, -1, DST_IT_NORETRY);
}

/* Requests blk-mq has started and not finished: sent, held or orphaned. */
unsigned int dst_trans_count(struct blk_mq_tag_set *set)
{
	return dst_trans_iter(set, -1, DST_IT_COUNT);
}

/* The DST_CMD_* bits, by number, as debugfs shows them. */
static const char *const dst_cmd_state_names[] = {
	"inflight", "orphan", "resending", "answered", "sending",
	"receiving", "expired",
};

static bool dst_trans_show_one(struct request *rq, void *data)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct seq_file *m = data;
	unsigned long flags, start;
	unsigned int retries, i;
	u32 epoch;
	bool sep = false;
	int conn;
	u64 id;
	u8 op;

	spin_lock_bh(&cmd->lock);
	flags = cmd->flags;
	start = cmd->start;
	retries = cmd->retries;
	conn = cmd->conn;
	epoch = cmd->epoch;
	id = cmd->id;
	op = cmd->op;
	spin_unlock_bh(&cmd->lock);

	seq_printf(m, "queue %u tag %u id %#llx op %s offset %llu len %u conn %d epoch %u retries %u age_ms %u state ",
		   blk_mq_unique_tag_to_hwq(blk_mq_unique_tag(rq)), rq->tag,
		   conn < 0 ? 0 : id,
		   conn < 0 ? "-" : dst_cmd_name(op),
		   (u64)blk_rq_pos(rq) << SECTOR_SHIFT, blk_rq_bytes(rq), conn,
		   conn < 0 ? 0 : epoch, retries,
		   jiffies_to_msecs(jiffies - start));
	for (i = 0; i < ARRAY_SIZE(dst_cmd_state_names); i++) {
		if (!(flags & BIT(i)))
			continue;
		seq_printf(m, "%s%s", sep ? "," : "", dst_cmd_state_names[i]);
		sep = true;
	}
	/* Started, and not (or no longer) on any connection. */
	seq_puts(m, sep ? "\n" : "queued\n");
	/* seq_read() calls again with a larger buffer: no use going on. */
	return !seq_has_overflowed(m);
}

/*
 * debugfs's "inflight": one line per request blk-mq has started and not
 * ended, with where it was sent, how long ago the driver first had it,
 * and its state bits.  Requests blk-mq holds (requeued for a resend) are
 * not started, and not listed; those the driver holds while there is no
 * connection are, as "queued".  Only a snapshot: each request is read
 * under its lock.
 */
void dst_trans_show(struct seq_file *m, struct blk_mq_tag_set *set)
{
	blk_mq_tagset_busy_iter(set, dst_trans_show_one, m);
}
