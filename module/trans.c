// SPDX-License-Identifier: GPL-2.0
/*
 * DST transactions: the remote node's I/O in flight.
 *
 * Every request sent to the server is a transaction named by a 64-bit id
 * the server only echoes:
 *
 *	bits  0..15  blk-mq tag
 *	bits 16..31  hardware queue (blk_mq_unique_tag())
 *	bits 32..47  generation, bumped each time the request is started
 *
 * so a reply finds its request in O(1) through the tag set, and a late
 * reply for a tag that has been reused since is recognised and dropped.
 *
 * Who completes a request is decided by one bit, DST_CMD_INFLIGHT, set
 * when it is sent: whoever clears it (the reply, the timeout handler, or
 * the loss of the connection) owns the completion.  cmd->lock is held
 * across the reception of a reply's data so that nobody else completes a
 * request whose pages are still being written.
 */
#include <linux/blk-mq.h>

#include "dst.h"

#define DST_ID_GEN_SHIFT	32
#define DST_ID_GEN_MASK		0xffffULL

/* Start a transaction for @rq: returns its wire id. */
u64 dst_trans_start(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	cmd->gen++;
	cmd->status = BLK_STS_OK;
	return ((u64)cmd->gen << DST_ID_GEN_SHIFT) | blk_mq_unique_tag(rq);
}

/**
 * dst_trans_find - the request a reply is for
 * @set: the remote's tag set
 * @id: the id from the reply
 * @why: reason, when there is none
 *
 * Returns the request with its cmd->lock held and DST_CMD_INFLIGHT set,
 * or NULL: an id that never existed is a protocol error (@why says so),
 * one that has finished or been reused is a stale reply (@why is NULL).
 */
struct request *dst_trans_find(struct blk_mq_tag_set *set, u64 id,
			       const char **why)
{
	u32 unique = lower_32_bits(id);
	u16 hwq = blk_mq_unique_tag_to_hwq(unique);
	u16 tag = blk_mq_unique_tag_to_tag(unique);
	struct request *rq;
	struct dst_cmd *cmd;

	*why = NULL;
	if (id >> (DST_ID_GEN_SHIFT + 16) || hwq >= set->nr_hw_queues ||
	    tag >= set->queue_depth) {
		*why = "reply for an id never sent";
		return NULL;
	}
	rq = blk_mq_tag_to_rq(set->tags[hwq], tag);
	if (!rq || !blk_mq_request_started(rq))
		return NULL;
	cmd = blk_mq_rq_to_pdu(rq);
	mutex_lock(&cmd->lock);
	if (cmd->gen != ((id >> DST_ID_GEN_SHIFT) & DST_ID_GEN_MASK) ||
	    !test_bit(DST_CMD_INFLIGHT, &cmd->flags)) {
		mutex_unlock(&cmd->lock);
		return NULL;
	}
	return rq;
}

/*
 * Finish a transaction with @status if it is still in flight.  Returns
 * false when someone else already did.  Called with cmd->lock held.
 */
bool dst_trans_finish(struct request *rq, blk_status_t status)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	if (!test_and_clear_bit(DST_CMD_INFLIGHT, &cmd->flags))
		return false;
	cmd->status = status;
	blk_mq_complete_request(rq);
	return true;
}

struct dst_fail_ctx {
	int hctx;		/* -1: every queue */
};

static bool dst_trans_fail_one(struct request *rq, void *data)
{
	struct dst_fail_ctx *ctx = data;
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	if (ctx->hctx >= 0 && rq->mq_hctx->queue_num != ctx->hctx)
		return true;
	mutex_lock(&cmd->lock);
	dst_trans_finish(rq, BLK_STS_IOERR);
	mutex_unlock(&cmd->lock);
	return true;
}

/*
 * Fail everything in flight on one hardware queue (its connection is
 * gone) or on all of them.  The caller has made sure no reply can arrive
 * for them any more: the receiving side is stopped.
 */
void dst_trans_fail_hctx(struct blk_mq_tag_set *set, int hctx)
{
	struct dst_fail_ctx ctx = { .hctx = hctx };

	blk_mq_tagset_busy_iter(set, dst_trans_fail_one, &ctx);
}

void dst_trans_fail_all(struct blk_mq_tag_set *set)
{
	dst_trans_fail_hctx(set, -1);
}
