// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: frames out.
 *
 * A frame is set up (and, under session keys, sealed) by
 * dst_frame_prepare(), then sent by dst_frame_send(): its header, a
 * WRITE's data straight from the request's pages, its tag.  Both run
 * under the connection's tx_lock, for queue_rq (client.c) and for the
 * connection's own PING and BYE (dst_rconn_send_ctl()).  A send a signal
 * cuts short is finished by the connection's tx_work, so the stream never
 * carries half a frame.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/sched/mm.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "client.h"

/*
 * Sending a frame, or the rest of one: @skip bytes of it went out
 * already, and the parts are walked again to find where to go on.
 */
struct dst_tx {
	struct socket *sock;
	u32 skip;
	int err;
};

static void dst_tx_buf(struct dst_tx *tx, const void *buf, u32 len,
		       int flags)
{
	if (tx->err)
		return;
	if (tx->skip >= len) {
		tx->skip -= len;
		return;
	}
	tx->err = dst_sock_send(tx->sock, buf + tx->skip, len - tx->skip,
				flags);
	tx->skip = 0;
}

static void dst_tx_page(struct dst_tx *tx, const struct bio_vec *bv,
			bool zero_copy, int flags)
{
	struct bio_vec v = *bv;

	if (tx->err)
		return;
	if (tx->skip >= v.bv_len) {
		tx->skip -= v.bv_len;
		return;
	}
	v.bv_offset += tx->skip;
	v.bv_len -= tx->skip;
	tx->skip = 0;
	tx->err = dst_sock_send_bvec(tx->sock, &v, zero_copy, flags);
}

/*
 * Set @f up for request @m (@rq: a WRITE's pages), sealing it under
 * session keys.  @last: MSG_MORE while blk-mq has more requests for us
 * right behind this one, so that TCP may put several frames in one
 * packet; the last request of the batch, or commit_rqs, pushes.  A
 * cipher seals a WRITE's data into the session's own pages (the
 * request's belong to the page cache or the writer), which are sent
 * with a copy because they are used again for the next frame; a MAC
 * covers the request's pages, which then go without one.  Called with
 * tx_lock held.
 */
int dst_frame_prepare(struct dst_rconn *conn, struct dst_frame *f,
		      struct request *rq, const struct dst_msg *m, int last,
		      int flags)
{
	struct dst_crypto *c = conn->crypto;
	const u8 *tag;

	dst_msg_encode(&f->hdr, m);
	f->rq = rq;
	f->len = m->cmd == DST_CMD_WRITE ? m->len : 0;
	f->tag = NULL;
	f->bounce = false;
	f->last = last;
	f->flags = flags;
	if (!c)
		return 0;
	if (f->len) {
		struct scatterlist *sg;
		unsigned int nents;

		if (WARN_ON_ONCE(blk_rq_nr_phys_segments(rq) >
				 dst_crypto_max_segs(c)))
			return -EIO;
		sg = dst_crypto_sg(c, true, blk_rq_nr_phys_segments(rq));
		nents = blk_rq_map_sg(rq->q, rq, sg);
		f->bounce = dst_crypto_has_cipher(c);
		tag = dst_crypto_seal(c, &f->hdr, nents, f->len, false);
	} else {
		tag = dst_crypto_seal(c, &f->hdr, 0, 0, true);
	}
	if (IS_ERR(tag))
		return PTR_ERR(tag);
	f->tag = tag;
	return 0;
}

/*
 * Send @f from its byte @skip on: the header, a WRITE's data (from the
 * request's pages without a copy: the request completes only when the
 * server has answered, i.e. after TCP delivered them), the tag.
 * Called with tx_lock held, or on its holder's behalf (tx_work).
 */
int dst_frame_send(struct dst_rconn *conn, const struct dst_frame *f, u32 skip)
{
	unsigned int tag_len = dst_crypto_tag_len(conn->crypto);
	struct dst_tx tx = { .sock = conn->sock, .skip = skip };
	int end = tag_len ? MSG_MORE : f->last;
	struct req_iterator iter;
	struct bio_vec bv;
	u32 left = f->len;
	unsigned int i;

	dst_tx_buf(&tx, &f->hdr, sizeof(f->hdr),
		   f->flags | (left ? MSG_MORE : end));
	if (f->bounce) {
		for (i = 0; left; i++) {
			bv.bv_page = dst_crypto_sealed(conn->crypto, i);
			bv.bv_offset = 0;
			bv.bv_len = min_t(u32, PAGE_SIZE, left);
			left -= bv.bv_len;
			dst_tx_page(&tx, &bv, false,
				    f->flags | (left ? MSG_MORE : end));
		}
	} else if (left) {
		rq_for_each_segment(bv, f->rq, iter) {
			left -= bv.bv_len;
			dst_tx_page(&tx, &bv, true,
				    f->flags | (left ? MSG_MORE : end));
		}
	}
	if (tag_len)
		dst_tx_buf(&tx, f->tag, tag_len, f->flags | f->last);
	return tx.err;
}

/*
 * A header-only frame of our own (PING, BYE), not on a request's
 * behalf.  Returns 0, or the error and whether part of the frame (or,
 * under session keys, its seal) is spent, in which case the stream is
 * out of step unless the rest follows.  Called with tx_lock held.
 */
int dst_rconn_send_ctl(struct dst_rconn *conn, u8 op, int flags,
		       bool *spent)
{
	struct dst_msg m = { .cmd = op };
	u32 start = dst_sock_queued_seq(conn->sock);
	struct dst_frame f;
	int err;

	err = dst_frame_prepare(conn, &f, NULL, &m, 0, flags);
	if (!err)
		err = dst_frame_send(conn, &f, 0);
	*spent = err && (f.tag || dst_sock_queued_seq(conn->sock) != start);
	return err;
}

/* Send the rest of the interrupted frame, for dst_rconn_send_rest(). */
void dst_tx_work(struct work_struct *work)
{
	struct dst_rconn *conn = container_of(work, struct dst_rconn,
					      tx_work);
	unsigned int noio = memalloc_noio_save();

	conn->tx_err = dst_frame_send(conn, &conn->tx, conn->tx_skip);
	memalloc_noio_restore(noio);
	complete(&conn->tx_done);
}

/*
 * queue_rq sends in the submitter's context, and a signal (Ctrl-C, the
 * OOM killer) makes a send that waits for socket memory return with
 * whatever part of the frame was written.  The stream must never carry
 * half a frame: the rest is sent from @conn's tx_work, a worker that
 * takes no signals, while the submitter waits for it, holding tx_lock
 * on its behalf.  TASK_IDLE: the wait is as long as the send would have
 * been (keepalive ends a connection that does not move), and is no
 * more a hung task than that send was.  Called with tx_lock held.
 */
int dst_rconn_send_rest(struct dst_rconn *conn, u32 skip)
{
	conn->tx_skip = skip;
	reinit_completion(&conn->tx_done);
	queue_work(conn->rem->tx_wq, &conn->tx_work);
	wait_for_completion_state(&conn->tx_done, TASK_IDLE);
	return conn->tx_err;
}
