// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: the disk and its requests.
 *
 * queue_rq sends a request in the submitter's context (BLK_MQ_F_BLOCKING:
 * sending may sleep) on its hardware queue's connection, or on a surviving
 * one, as a frame client_tx.c builds and sends.  An unanswered
 * request is resent after trans_scan_timeout ms, up to trans_max_retries
 * times, by blk-mq's timeout handler.  trans.c names the transactions and
 * decides who owns each one; client_rx.c reads the replies.
 *
 * This file also sets up the tag set (with poll queues, if asked) and the
 * gendisk with the limits the server described; client_node.c sizes the
 * disk and grows it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "client.h"
#include "trace.h"

/* The portable operation for a block request; 0 if there is none. */
static u8 dst_rq_op(struct request *rq, u16 *flags)
{
	*flags = 0;
	switch (req_op(rq)) {
	case REQ_OP_READ:
		return DST_CMD_READ;
	case REQ_OP_WRITE:
		if (rq->cmd_flags & REQ_FUA)
			*flags |= DST_F_FUA;
		return DST_CMD_WRITE;
	case REQ_OP_FLUSH:
		return DST_CMD_FLUSH;
	case REQ_OP_DISCARD:
		return DST_CMD_DISCARD;
	case REQ_OP_WRITE_ZEROES:
		if (rq->cmd_flags & REQ_FUA)
			*flags |= DST_F_FUA;
		if (rq->cmd_flags & REQ_NOUNMAP)
			*flags |= DST_F_NO_UNMAP;
		return DST_CMD_WRITE_ZEROES;
	default:
		return 0;
	}
}

/*
 * A live connection for a request of queue @idx, with its tx_lock held:
 * the queue's own, else the next survivor.  NULL if there is none.
 */
static struct dst_rconn *dst_pick_conn(struct dst_remote *rem, int idx)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *c = &rem->conns[(idx + i) % rem->nr_conns];

		mutex_lock(&c->tx_lock);
		if (c->live)
			return c;
		mutex_unlock(&c->tx_lock);
	}
	return NULL;
}

/*
 * The batch blk-mq was dispatching ended (early, or with a request that
 * was not sent on this queue's connection): push what is corked.
 */
static void dst_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct dst_rconn *conn = hctx->driver_data;

	/*
	 * Whoever corked ends its own batch with a push, so a stale "not
	 * corked" here loses nothing; it saves a lock per request at QD1.
	 */
	if (!READ_ONCE(conn->corked))
		return;
	mutex_lock(&conn->tx_lock);
	if (conn->live && conn->corked)
		dst_sock_push(conn->sock);
	WRITE_ONCE(conn->corked, false);
	mutex_unlock(&conn->tx_lock);
}

/*
 * The frame @rq becomes, and its place in the transaction's history.
 * Returns true when queue_rq is done with it, *@ret for blk-mq: the
 * operation cannot be sent, or a reply came while it waited to be sent
 * again.
 */
static bool dst_rq_prepare(struct dst_remote *rem, struct request *rq,
			   struct dst_msg *m, blk_status_t *ret)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	bool answered;

	m->cmd = dst_rq_op(rq, &m->flags);
	*ret = BLK_STS_NOTSUPP;
	if (!m->cmd)
		return true;
	*ret = BLK_STS_IOERR;	/* the server would refuse it too */
	if (rem->read_only && op_is_write(req_op(rq)))
		return true;
	if (m->cmd != DST_CMD_FLUSH) {
		m->offset = blk_rq_pos(rq) << SECTOR_SHIFT;
		m->len = blk_rq_bytes(rq);
	}
	*ret = BLK_STS_OK;
	/* A requeued request keeps RQF_DONTPREP: its history goes on. */
	if (!(rq->rq_flags & RQF_DONTPREP)) {
		dst_trans_init(rq);
		rq->rq_flags |= RQF_DONTPREP;
		blk_mq_start_request(rq);
		return false;
	}
	/* Requeued: its reply may have come meanwhile. */
	blk_mq_start_request(rq);
	spin_lock_bh(&cmd->lock);
	answered = dst_trans_take_answer(rq);
	spin_unlock_bh(&cmd->lock);
	return answered;
}

/*
 * A copy sent before on a connection that has not been replaced since
 * may still be executed by the server: this one goes on the same
 * connection with the same id (the server executes a transaction once
 * per connection and answers it once), or, if that died, is held as an
 * orphan until the reconnection has fenced it.  Returns true when
 * queue_rq is done with @rq (*@ret for blk-mq); else *@connp is the
 * connection to resend on, its tx_lock held, or NULL: any will do.
 */
static bool dst_rq_resend_conn(struct dst_remote *rem, struct request *rq,
			       struct dst_rconn **connp, blk_status_t *ret)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_rconn *conn;
	bool fail;

	*connp = NULL;
	if (cmd->conn < 0)
		return false;
	conn = &rem->conns[cmd->conn];
	mutex_lock(&conn->tx_lock);
	if (conn->epoch != cmd->epoch) {
		mutex_unlock(&conn->tx_lock);
		return false;
	}
	if (conn->live) {
		*connp = conn;
		return false;
	}
	*ret = BLK_STS_OK;
	spin_lock_bh(&cmd->lock);
	/*
	 * The node's giving up is read under cmd->lock, which whoever sets
	 * it then takes to fail each orphan: that walk finds this one held
	 * if it was not failed here -- or, if it missed the request just
	 * started, the timeout handler fails it one period later.
	 */
	if (!dst_trans_take_answer(rq)) {
		fail = READ_ONCE(rem->failfast) || READ_ONCE(rem->stopping);
		if (!dst_trans_hold_orphan(rq, fail))
			*ret = BLK_STS_IOERR;
	}
	spin_unlock_bh(&cmd->lock);
	mutex_unlock(&conn->tx_lock);
	return true;
}

/*
 * Send a copy of @rq as frame @m on @conn, whose tx_lock the caller
 * holds and which is released here; @resend: with the id of the copy
 * before.
 */
static blk_status_t dst_send_copy(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd,
				  struct dst_rconn *conn, struct dst_msg *m,
				  bool resend)
{
	struct dst_remote *rem = conn->rem;
	struct request *rq = bd->rq;
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	bool requeue = false, answered, more;
	struct dst_trans_copy to, was;
	u32 start;
	int err;

	spin_lock_bh(&cmd->lock);
	if (dst_trans_take_answer(rq)) {
		spin_unlock_bh(&cmd->lock);
		mutex_unlock(&conn->tx_lock);
		return BLK_STS_OK;
	}
	to.conn = conn->idx;
	to.epoch = conn->epoch;
	/* Where this frame will end in the byte stream (tx_lock is ours). */
	start = dst_sock_queued_seq(conn->sock);
	to.seq = start + DST_HDR_SIZE + (m->cmd == DST_CMD_WRITE ? m->len : 0) +
		 dst_crypto_tag_len(conn->crypto);
	m->id = dst_trans_send_begin(rem->gens, rq, resend, &to, &was);
	cmd->op = m->cmd;
	spin_unlock_bh(&cmd->lock);

	/*
	 * From here on a reply may come at any moment: the reply to an
	 * earlier copy of a resend, before this copy is even written out.
	 * SENDING keeps rq (and the bio whose pages are being sent) ours
	 * until the send is done: a reply meanwhile is only noted, and
	 * completed here.  If the send fails, rq stays in flight on this
	 * connection: killing it makes the receive loop orphan rq with the
	 * rest, to be resent after the reconnection.
	 */
	/* Cork only the queue's own connection: commit_rqs pushes that one. */
	more = !bd->last && conn == hctx->driver_data;
	WRITE_ONCE(conn->corked, more);
	/* Before the frame: its reply may be traced before the send returns. */
	trace_dst_send(dst_rem_name(rem), conn->idx, m->id, m->cmd, m->offset,
		       m->len, cmd->retries, was.conn >= 0);
	err = dst_frame_prepare(conn, &conn->tx, rq, m, more ? MSG_MORE : 0,
				0);
	if (!err)
		err = dst_frame_send(conn, &conn->tx, 0);
	/*
	 * A signal: a frame not begun (and not sealed) is given back to
	 * blk-mq, which sends it again from its own worker; one begun is
	 * finished, since the stream must not carry half of it.
	 */
	if (dst_send_interrupted(err)) {
		u32 sent = dst_sock_queued_seq(conn->sock) - start;

		if (sent || conn->tx.tag)
			err = dst_rconn_send_rest(conn, sent);
		else
			requeue = true;
	}
	spin_lock_bh(&cmd->lock);
	answered = dst_trans_send_end(rq, requeue, resend, &was);
	spin_unlock_bh(&cmd->lock);
	mutex_unlock(&conn->tx_lock);
	/* Answered while it was being sent (a fast server): ours to end. */
	if (answered)
		dst_trans_complete(rq);
	else if (requeue)
		return BLK_STS_RESOURCE;
	/* Not the connection that replaced this one meanwhile. */
	if (err) {
		if (!READ_ONCE(rem->stopping))
			pr_warn_ratelimited("%s: send on connection %d failed: %d\n",
					    dst_rem_name(rem), conn->idx, err);
		dst_rconn_kill_epoch(conn, to.epoch);
	}
	return BLK_STS_OK;
}

/*
 * No connection is live for @rq, started and with no copy that could
 * still be answered.  Once the node gave up (fail_timeout_s, detach) it
 * fails.  A request that asks not to be retried (REQ_FAILFAST_*: md's
 * --failfast members, dm-multipath) fails at once too, unless the
 * connections are down only because the administrator is changing
 * their number: md fails the member and goes on with the others
 * (docs/replication.md).  The rest is held here until a connection is
 * back or the node gives up (dst_release_held()); or, in the moment
 * before the loss of the last connection is recorded, given back to
 * blk-mq to try again shortly.
 */
static blk_status_t dst_rq_no_conn(struct dst_remote *rem,
				   struct request *rq, u8 op)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	blk_status_t ret = BLK_STS_RESOURCE;

	if (READ_ONCE(rem->failfast) || READ_ONCE(rem->stopping))
		return BLK_STS_IOERR;
	if (blk_noretry_request(rq) && !READ_ONCE(rem->reshaping)) {
		pr_warn_ratelimited("%s: no connection: failing %s of %u bytes at %llu at once, as it asks (REQ_FAILFAST)\n",
				    dst_rem_name(rem), dst_cmd_name(op),
				    blk_rq_bytes(rq),
				    (u64)blk_rq_pos(rq) << SECTOR_SHIFT);
		return BLK_STS_TRANSPORT;
	}
	spin_lock(&rem->held_lock);
	if (rem->holding) {
		list_add_tail(&cmd->held, &rem->held);
		ret = BLK_STS_OK;
	}
	spin_unlock(&rem->held_lock);
	return ret;
}

/*
 * Hold new I/O from now on: no connection is live.  Called with
 * state_lock held.
 */
void dst_hold_io(struct dst_remote *rem)
{
	lockdep_assert_held(&rem->state_lock);
	spin_lock(&rem->held_lock);
	rem->holding = true;
	spin_unlock(&rem->held_lock);
}

/*
 * Stop holding I/O, and give what was held back to blk-mq, which
 * dispatches it again: on the connection that is back, or to fail at
 * once when the node gave up.  Called with state_lock held.
 */
void dst_release_held(struct dst_remote *rem)
{
	struct dst_cmd *cmd, *next;
	LIST_HEAD(list);

	lockdep_assert_held(&rem->state_lock);
	spin_lock(&rem->held_lock);
	rem->holding = false;
	list_splice_init(&rem->held, &list);
	spin_unlock(&rem->held_lock);
	if (list_empty(&list))
		return;
	/*
	 * Each goes to the head of blk-mq's requeue list: the newest
	 * first, so that the oldest is sent first again.
	 */
	list_for_each_entry_safe_reverse(cmd, next, &list, held) {
		list_del_init(&cmd->held);
		blk_mq_requeue_request(blk_mq_rq_from_pdu(cmd), false);
	}
	blk_mq_kick_requeue_list(rem->disk->queue);
}

static blk_status_t __dst_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct dst_rconn *home = hctx->driver_data, *conn;
	struct dst_remote *rem = home->rem;
	struct request *rq = bd->rq;
	struct dst_msg m = { };
	blk_status_t ret;

	if (dst_rq_prepare(rem, rq, &m, &ret))
		return ret;
	if (dst_rq_resend_conn(rem, rq, &conn, &ret))
		return ret;
	if (conn)
		return dst_send_copy(hctx, bd, conn, &m, true);
	/* The queue's own connection first (a poll queue shares one). */
	conn = dst_pick_conn(rem, home->idx);
	if (!conn) {
		/* Any copy is fenced: no reply can come for it any more. */
		dst_trans_copy_fenced(rq);
		return dst_rq_no_conn(rem, rq, m.cmd);
	}
	return dst_send_copy(hctx, bd, conn, &m, false);
}

static blk_status_t dst_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	blk_status_t ret = __dst_queue_rq(hctx, bd);

	if (bd->last)
		dst_commit_rqs(hctx);
	return ret;
}

/*
 * The export's device refused a WRITE_ZEROES it had offered (a loop
 * device over a tmpfs file does: loop offers what fallocate may not
 * do).  Stop offering it on this disk, as dm and sd do, so that the
 * block layer writes the zeroes as data from now on rather than fail
 * first each time.  Until the disk is made again at the next enable.
 */
static void dst_write_zeroes_refused(struct dst_remote *rem)
{
	struct request_queue *q = rem->disk->queue;
	unsigned int old = READ_ONCE(q->limits.max_write_zeroes_sectors);

	if (!old || cmpxchg(&q->limits.max_write_zeroes_sectors, old, 0) != old)
		return;
	pr_warn("%s: export '%s' refused WRITE_ZEROES (EOPNOTSUPP from its device); zeroes are written as data from now on\n",
		rem->node->name, rem->node->cfg.export);
}

/* End @rq with its status, counted; its poller, if any, is told. */
static void dst_end_rq(struct dst_remote *rem, struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned int queue = rq->mq_hctx->queue_num;
	bool poll_q = rq->mq_hctx->type == HCTX_TYPE_POLL;
	bool polled = rq->cmd_flags & REQ_POLLED;
	enum dst_dir dir;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		dir = DST_DIR_READ;
		break;
	case REQ_OP_WRITE:
		dir = DST_DIR_WRITE;
		break;
	default:
		dir = DST_DIR_OTHER;
		break;
	}
	if (unlikely(cmd->status == BLK_STS_NOTSUPP) &&
	    req_op(rq) == REQ_OP_WRITE_ZEROES)
		dst_write_zeroes_refused(rem);
	dst_stats_account(rem->stats, dir, blk_rq_bytes(rq),
			  cmd->status != BLK_STS_OK);
	atomic_long_inc(&rem->completions);
	blk_mq_end_request(rq, cmd->status);
	if (polled)
		atomic64_inc(&rem->polled_ops);
	if (poll_q) {
		/*
		 * The request's end before the count: a poller that sees
		 * the count (dst_poll()) finds its request done.
		 */
		smp_mb__before_atomic();
		atomic_inc(&rem->polled[queue]);
	}
}

/*
 * The polled requests dst_complete_rq() could not end, ended here, in a
 * task: the oldest first.  Returns how many.
 */
static int dst_end_polled(struct dst_remote *rem)
{
	struct llist_node *list = llist_del_all(&rem->polled_done);
	struct dst_cmd *cmd, *next;
	int n = 0;

	llist_for_each_entry_safe(cmd, next, llist_reverse_order(list),
				  polled_node) {
		dst_end_rq(rem, blk_mq_rq_from_pdu(cmd));
		n++;
	}
	return n;
}

/* The poller stopped before it found them: end them anyway. */
void dst_polled_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, polled_work);

	dst_end_polled(rem);
}

static void dst_complete_rq(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_remote *rem = rq->q->queuedata;

	if (cmd->requeue) {
		cmd->requeue = false;
		blk_mq_requeue_request(rq, true);
		return;
	}
	/*
	 * A polled request's bio may come from a per-CPU cache that only a
	 * task may give it back to (bio_put()).  Answered in softirq (the
	 * fast path) or under a spin_lock_bh() (a reply that came while
	 * queue_rq still sent, an orphan failed), it ends in its poller's
	 * dst_poll(), or, should the poller have stopped, in polled_work a
	 * tick later.  So does anything else on a poll queue: blk-mq's
	 * flush request ends the polled write it flushes for (a FUA write
	 * to an export without FUA).
	 */
	if (rq->mq_hctx->type == HCTX_TYPE_POLL && in_interrupt()) {
		/* The first on an empty list arms the work for all. */
		if (llist_add(&cmd->polled_node, &rem->polled_done))
			queue_delayed_work(rem->wq, &rem->polled_work, 1);
		return;
	}
	dst_end_rq(rem, rq);
}

/* What the timeout handler does with a request. */
enum dst_verdict {
	DST_TO_HOLD,		/* wait on: not ours, or not all sent yet */
	DST_TO_RESEND,		/* send again, same connection, same id */
	DST_TO_EXPIRE,		/* drop the connection, fail once fenced */
	DST_TO_EXPIRE_ORPHAN,	/* an orphan out of retries: fail once fenced */
	DST_TO_FAIL,		/* the node gave up: I/O error */
	DST_TO_FAIL_SLOT,	/* ... on its slot: I/O error */
};

/*
 * The slot @cmd's copy went on has been down for fail_timeout_s, not
 * replaced, while other connections work: its orphans fail with EIO as
 * the node's all do when none works, so a slot the server refuses for
 * good does not hold them forever.  Lockless: a decision one timeout
 * late is no harm.
 */
static bool dst_slot_given_up(struct dst_remote *rem,
			      const struct dst_cmd *cmd)
{
	struct dst_rconn *conn = &rem->conns[cmd->conn];

	int fail_s = READ_ONCE(rem->fail_s);	/* may change live */

	if (fail_s < 0 || READ_ONCE(conn->live) ||
	    READ_ONCE(conn->epoch) != cmd->epoch)
		return false;
	return time_after_eq(jiffies, READ_ONCE(conn->down_since) +
				      (unsigned long)fail_s * HZ);
}

/* What becomes of @rq, which timed out, as it stands.  cmd->lock held. */
static enum dst_verdict dst_timeout_verdict(struct dst_remote *rem,
					    struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	bool expired = dst_trans_expired(rq);

	switch (dst_trans_state(rq)) {
	case DST_TS_INFLIGHT:
		/*
		 * The server has not even received all of it: the network
		 * is slow, and a copy queued behind it would only be slower.
		 * Keepalive finds out if the connection is dead.  (While
		 * INFLIGHT is set under cmd->lock, the socket stays.)
		 * Expired: its connection is on its way down.
		 */
		if (expired ||
		    !dst_sock_acked(rem->conns[cmd->conn].sock, cmd->seq))
			return DST_TO_HOLD;
		/* REQ_FAILFAST_*: no resend; it fails when orphaned. */
		return cmd->retries < READ_ONCE(rem->max_retries) &&
		       !blk_noretry_request(rq) ? DST_TO_RESEND : DST_TO_EXPIRE;
	case DST_TS_ORPHAN:
		if (READ_ONCE(rem->failfast) || READ_ONCE(rem->stopping))
			return DST_TO_FAIL;
		if (dst_slot_given_up(rem, cmd))
			return DST_TO_FAIL_SLOT;
		/*
		 * Other connections work, and still its slot has not come
		 * back: count the wait as a retry.  Out of them it expires,
		 * and fails when its slot's reconnection has fenced the
		 * copy the server may still have -- never before.
		 */
		if (!expired && READ_ONCE(rem->nr_live) &&
		    cmd->retries++ >= READ_ONCE(rem->max_retries))
			return DST_TO_EXPIRE_ORPHAN;
		return DST_TO_HOLD;
	case DST_TS_BUSY:
		/* Its pages are being sent or filled: not ours to touch. */
	case DST_TS_IDLE:
	default:
		return DST_TO_HOLD;
	}
}

/* What dst_timeout() reports of a request, copied under its lock. */
struct dst_timeout_copy {
	u64 id, pos;
	unsigned int bytes, tries;
	u32 epoch;
	int conn;
	u8 op;
};

/*
 * Count, trace and log what dst_timeout() decided, from @c: the request
 * may be on its way again or finished by now.
 */
static enum blk_eh_timer_return
dst_timeout_report(struct dst_remote *rem, enum dst_verdict what,
		   const struct dst_timeout_copy *c)
{
	const char *op = dst_cmd_name(c->op);

	switch (what) {
	case DST_TO_HOLD:
		return BLK_EH_RESET_TIMER;
	case DST_TO_EXPIRE:
		atomic64_inc(&rem->timeouts);
		trace_dst_timeout(dst_rem_name(rem), c->conn, c->id, c->op,
				  c->pos, c->bytes, c->tries, true);
		pr_err_ratelimited("%s: %s of %u bytes at %llu timed out after %u resends; dropping connection %d, to fail it once the server has fenced it\n",
				   dst_rem_name(rem), op, c->bytes, c->pos,
				   READ_ONCE(rem->max_retries), c->conn);
		dst_rconn_kill_epoch(&rem->conns[c->conn], c->epoch);
		return BLK_EH_RESET_TIMER;
	case DST_TO_RESEND:
		atomic64_inc(&rem->resends);
		trace_dst_resend(dst_rem_name(rem), c->conn, c->id, c->op,
				 c->pos, c->bytes, c->tries, 0);
		pr_warn_ratelimited("%s: %s of %u bytes at %llu unanswered; resending (%u of %u)\n",
				    dst_rem_name(rem), op, c->bytes, c->pos,
				    c->tries, READ_ONCE(rem->max_retries));
		break;
	case DST_TO_EXPIRE_ORPHAN:
		atomic64_inc(&rem->timeouts);
		trace_dst_timeout(dst_rem_name(rem), c->conn, c->id, c->op,
				  c->pos, c->bytes, c->tries, false);
		pr_err_ratelimited("%s: %s of %u bytes at %llu timed out after %u resends; it fails once connection %d is back and the server has fenced its copy\n",
				   dst_rem_name(rem), op, c->bytes, c->pos,
				   READ_ONCE(rem->max_retries), c->conn);
		return BLK_EH_RESET_TIMER;
	case DST_TO_FAIL_SLOT:
		pr_err_ratelimited("%s: %s of %u bytes at %llu failed: connection %d has been down for %d s\n",
				   dst_rem_name(rem), op, c->bytes, c->pos,
				   c->conn, READ_ONCE(rem->fail_s));
		break;
	case DST_TO_FAIL:
		break;
	}
	return BLK_EH_DONE;
}

/*
 * No reply within trans_scan_timeout.  Sent on a live connection: resend
 * it there (the server answers once for both copies), up to
 * trans_max_retries times.  Then it expires: it must fail, but the
 * server may still execute the copy it has, and would then write stale
 * data over whatever is written to the same sectors after the failure.
 * So, as nbd and nvme-tcp do, the connection goes first: the request
 * is orphaned with the rest, and fails with a timeout only when the
 * reconnection has fenced the old connection (the server drained it),
 * or when the node gives up (fail_timeout_s, detach).  A reply that
 * comes before the connection is gone still completes it.  Orphaned:
 * hold it while the node has no connection at all (fail_timeout_s
 * decides), else count the wait as a retry too; out of retries it
 * expires the same way, failing at its fence.
 */
static enum blk_eh_timer_return dst_timeout(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_remote *rem = rq->q->queuedata;
	struct dst_timeout_copy c = {
		.pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT,
		.bytes = blk_rq_bytes(rq),
	};
	enum dst_verdict what;

	spin_lock_bh(&cmd->lock);
	/*
	 * Restarted since blk-mq found it expired (a held request given
	 * back, or one requeued, dispatched again before this ran): its
	 * new copy is on its own clock.
	 */
	if (time_before(jiffies, READ_ONCE(rq->deadline))) {
		spin_unlock_bh(&cmd->lock);
		return BLK_EH_RESET_TIMER;
	}
	c.tries = cmd->retries;
	c.id = cmd->id;
	c.op = cmd->op;
	c.conn = cmd->conn;
	c.epoch = cmd->epoch;
	what = dst_timeout_verdict(rem, rq);
	switch (what) {
	case DST_TO_HOLD:
		break;
	case DST_TO_RESEND:
		c.tries = dst_trans_resend(rq);
		break;
	case DST_TO_EXPIRE:
	case DST_TO_EXPIRE_ORPHAN:
		dst_trans_expire(rq);
		break;
	case DST_TO_FAIL:
	case DST_TO_FAIL_SLOT:
		dst_trans_fail_orphan(rq, BLK_STS_IOERR);
		break;
	}
	spin_unlock_bh(&cmd->lock);
	return dst_timeout_report(rem, what, &c);
}

/*
 * Hardware queue @idx sends on connection @idx; poll queues come after
 * the connections' and share them in turn.  Called again for every queue
 * when connections change, with the set's new count.
 */
static int dst_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int idx)
{
	struct dst_remote *rem = data;
	unsigned int n = rem->set.nr_hw_queues - rem->nr_poll;

	hctx->driver_data = &rem->conns[idx < n ? idx : (idx - n) % n];
	return 0;
}

/*
 * Without poll queues blk-mq's own map (one queue per CPU at most);
 * with them, reads and writes share the connections' queues, as in
 * nvme-tcp without separate read queues, and polled I/O has its own.
 */
static void dst_map_queues(struct blk_mq_tag_set *set)
{
	struct dst_remote *rem = set->driver_data;
	unsigned int n = set->nr_hw_queues - rem->nr_poll;
	int i;

	if (set->nr_maps == 1) {
		blk_mq_map_queues(&set->map[HCTX_TYPE_DEFAULT]);
		return;
	}
	for (i = HCTX_TYPE_DEFAULT; i <= HCTX_TYPE_READ; i++) {
		set->map[i].nr_queues = n;
		set->map[i].queue_offset = 0;
		blk_mq_map_queues(&set->map[i]);
	}
	set->map[HCTX_TYPE_POLL].nr_queues = rem->nr_poll;
	set->map[HCTX_TYPE_POLL].queue_offset = n;
	blk_mq_map_queues(&set->map[HCTX_TYPE_POLL]);
}

/*
 * A poll queue's poll (io_uring with IORING_SETUP_IOPOLL).  Replies are
 * taken where they arrive, polled or not: in the softirq that received
 * them (the fast path) or in the receive loop.  What the poller does,
 * spinning in its task instead of sleeping, is end the polled requests
 * answered in softirq (dst_complete_rq() leaves them here), and learn
 * from the count dst_end_rq() keeps for its queue that a request of that
 * queue is done; io_uring then finds which by its own flag, and calls
 * again for the rest (in 6.1 blk-mq returns to it after one call while
 * the poller runs).  Sockets are not busy-polled.
 */
static int dst_poll(struct blk_mq_hw_ctx *hctx, struct io_comp_batch *iob)
{
	struct dst_rconn *conn = hctx->driver_data;
	struct dst_remote *rem = conn->rem;
	atomic_t *polled = &rem->polled[hctx->queue_num];

	if (!llist_empty(&rem->polled_done))
		dst_end_polled(rem);
	return atomic_read(polled) ? atomic_xchg(polled, 0) : 0;
}

static int dst_init_request(struct blk_mq_tag_set *set, struct request *rq,
			    unsigned int hctx_idx, unsigned int numa_node)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	spin_lock_init(&cmd->lock);
	INIT_LIST_HEAD(&cmd->held);
	cmd->conn = -1;
	return 0;
}

static void dst_remote_set_limits(struct dst_remote *rem)
{
	struct request_queue *q = rem->disk->queue;
	const struct dst_geometry *g = &rem->geo;
	bool flush = g->features & DST_FEAT_FLUSH;

	blk_queue_logical_block_size(q, g->lbs);
	blk_queue_physical_block_size(q, g->pbs);
	blk_queue_io_min(q, g->pbs);
	blk_queue_max_hw_sectors(q, g->max_io >> SECTOR_SHIFT);
	/* Sealing maps a request to a scatterlist of the session's size. */
	blk_queue_max_segments(q, rem->node->cfg.crypto.key_len ?
			       dst_node_get_param(rem->node, DST_P_MAX_PAGES) :
			       USHRT_MAX);
	blk_queue_max_segment_size(q, UINT_MAX);
	blk_queue_write_cache(q, flush, flush && (g->features & DST_FEAT_FUA));
	if (g->max_discard) {
		q->limits.discard_granularity = g->pbs;
		blk_queue_max_discard_sectors(q, g->max_discard >> SECTOR_SHIFT);
	}
	blk_queue_max_write_zeroes_sectors(q, g->max_write_zeroes >>
					   SECTOR_SHIFT);
	/*
	 * A tag covers what the page held when it was sealed: the page
	 * cache must not change a page under writeback (stable pages), or
	 * the server would see a frame that fails its check.
	 */
	if (rem->node->cfg.crypto.key_len)
		blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, q);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
}

static const struct blk_mq_ops dst_mq_ops = {
	.queue_rq	= dst_queue_rq,
	.commit_rqs	= dst_commit_rqs,
	.complete	= dst_complete_rq,
	.timeout	= dst_timeout,
	.init_hctx	= dst_init_hctx,
	.init_request	= dst_init_request,
	.map_queues	= dst_map_queues,
	.poll		= dst_poll,
};

static const struct block_device_operations dst_disk_fops = {
	.owner	= THIS_MODULE,
};

/* The tag set and the disk, not yet visible. */
int dst_remote_alloc_disk(struct dst_remote *rem, u64 size)
{
	struct dst_node *node = rem->node;
	struct gendisk *disk;
	s64 ms;
	int err;

	rem->set.ops = &dst_mq_ops;
	rem->set.nr_hw_queues = rem->nr_conns + rem->nr_poll;
	/* With poll queues blk-mq gives a disk more queues than CPUs. */
	rem->set.nr_maps = rem->nr_poll ? HCTX_MAX_TYPES : 1;
	rem->set.queue_depth = dst_node_get_param(node, DST_P_QUEUE_DEPTH);
	rem->set.numa_node = NUMA_NO_NODE;
	rem->set.cmd_size = sizeof(struct dst_cmd);
	/*
	 * No I/O scheduler: a transaction id names the request by its tag,
	 * which must stay the same while the request is requeued and resent.
	 * With a scheduler blk-mq hands a request a new driver tag at every
	 * dispatch.  Requests are still merged in the software queues, and
	 * the server's backing device has its own scheduler.
	 */
	rem->set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING |
			 BLK_MQ_F_NO_SCHED;
	rem->set.driver_data = rem;
	/* One scan period per copy: dst_timeout() resends or gives up. */
	ms = dst_node_get_param(node, DST_P_TRANS_SCAN_TIMEOUT);
	rem->set.timeout = msecs_to_jiffies(ms);
	err = blk_mq_alloc_tag_set(&rem->set);
	if (err)
		return err;

	disk = blk_mq_alloc_disk(&rem->set, rem);
	if (IS_ERR(disk)) {
		blk_mq_free_tag_set(&rem->set);
		return PTR_ERR(disk);
	}
	rem->disk = disk;
	disk->major = dst_major;
	disk->first_minor = rem->index << DST_PART_SHIFT;
	disk->minors = 1 << DST_PART_SHIFT;
	disk->fops = &dst_disk_fops;
	disk->private_data = rem;
	snprintf(disk->disk_name, DISK_NAME_LEN, "dst%d", rem->index);
	dst_remote_set_limits(rem);
	set_capacity(disk, size >> SECTOR_SHIFT);
	set_disk_ro(disk, rem->read_only);
	return 0;
}

void dst_remote_free_disk(struct dst_remote *rem)
{
	/* The disk is gone, so every request ended: polled_work is idle. */
	cancel_delayed_work_sync(&rem->polled_work);
	WARN_ON_ONCE(!llist_empty(&rem->polled_done));
	put_disk(rem->disk);
	blk_mq_free_tag_set(&rem->set);
}
