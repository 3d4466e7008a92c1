// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: replies.
 *
 * Replies are read straight into the request's pages and completed,
 * either in the softirq that received them, when a reply is all there and
 * nothing about it is unusual (the fast path, dst_rconn_rx_fast()), or by
 * the connection's receive loop (dst_recv_work()), a work item on the
 * node's own WQ_MEM_RECLAIM workqueue, which handles everything: keyed
 * frames, PONGs, stale and mismatched replies, errors, the end of the
 * stream.  Who completes a request is decided under its cmd->lock
 * (trans.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <net/sock.h>

#include "client.h"
#include "trace.h"

/* --- receiving ----------------------------------------------------- */

static blk_status_t dst_status_to_blk(u32 status)
{
	switch (status) {
	case DST_ST_OK:		return BLK_STS_OK;
	case DST_ST_NOSPC:	return BLK_STS_NOSPC;
	case DST_ST_NOTSUPP:	return BLK_STS_NOTSUPP;
	default:		return BLK_STS_IOERR;
	}
}

/*
 * A READ reply's data, straight into the request's pages, a bio a call:
 * by the receive loop, which may wait for it (@sk NULL), or by the fast
 * path from a socket that has all of it, after @skip bytes of header.
 */
static int dst_recv_data(struct dst_rconn *conn, struct sock *sk, u32 skip,
			 struct request *rq)
{
	struct bio *bio;
	int err = 0;

	__rq_for_each_bio(bio, rq) {
		const struct bio_vec *bv = __bvec_iter_bvec(bio->bi_io_vec,
							    bio->bi_iter);
		struct bvec_iter bi;
		struct bio_vec v;
		unsigned int nr = 0;

		bio_for_each_bvec(v, bio, bi)
			nr++;
		if (sk)
			err = dst_sk_read_bvecs(sk, skip, bv, nr,
						bio->bi_iter.bi_size,
						bio->bi_iter.bi_bvec_done);
		else
			err = dst_sock_recv_bvecs(conn->sock, bv, nr,
						  bio->bi_iter.bi_size,
						  bio->bi_iter.bi_bvec_done);
		if (err)
			break;
		skip = 0;
	}
	return err;
}

/*
 * With session keys: read the tag of the frame whose header is @hdr
 * (its data, if any, is in @rq's pages already) and check it.  Nothing
 * of a frame that fails may be used: the connection goes, and what it
 * carried is resent on the next one.
 */
static int dst_rconn_open_frame(struct dst_rconn *conn,
				struct dst_wire_hdr *hdr, struct request *rq)
{
	struct dst_crypto *c = conn->crypto;
	unsigned int nents = 0;
	int err;

	err = dst_sock_recv(conn->sock, dst_crypto_rx_tag(c),
			    dst_crypto_tag_len(c));
	if (err)
		return err;
	if (rq) {
		if (WARN_ON_ONCE(blk_rq_nr_phys_segments(rq) >
				 dst_crypto_max_segs(c)))
			return -EIO;
		nents = blk_rq_map_sg(rq->q, rq,
				      dst_crypto_sg(c, false,
						    blk_rq_nr_phys_segments(rq)));
	}
	err = dst_crypto_open(c, hdr, nents, rq ? blk_rq_bytes(rq) : 0);
	if (err)
		pr_err("%s: frame from %pISpc on connection %d fails its integrity check (modified, replayed or out of order); dropping the connection\n",
		       dst_rem_name(conn->rem), dst_rconn_addr(conn),
		       conn->idx);
	return err;
}

/*
 * Whether reply @m, which @rq awaits (cmd->lock held), fits the request
 * as it was sent on @conn: NULL if so, else what is wrong with it.
 */
static const char *dst_reply_mismatch(struct dst_rconn *conn,
				      struct request *rq,
				      const struct dst_msg *m)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	if (cmd->conn != conn->idx || cmd->epoch != READ_ONCE(conn->epoch))
		return "reply on a connection its request was not sent on";
	if (m->cmd != (cmd->op | DST_CMD_REPLY) ||
	    (cmd->op != DST_CMD_FLUSH &&
	     (m->len != blk_rq_bytes(rq) ||
	      m->offset != (u64)blk_rq_pos(rq) << SECTOR_SHIFT)))
		return "reply does not match its request";
	return NULL;
}

/* A frame no correct server sends: logged, and the connection ends. */
static int dst_rconn_proto(struct dst_rconn *conn, const char *why)
{
	struct dst_remote *rem = conn->rem;

	pr_err("%s: protocol error from %pISpc on connection %d: %s\n",
	       dst_rem_name(rem), dst_rconn_addr(conn), conn->idx, why);
	return -EPROTO;
}

/* A reply whose request timed out, or whose tag moved on: skip its data. */
static int dst_recv_stale(struct dst_rconn *conn, const struct dst_msg *m)
{
	if (m->cmd != (DST_CMD_READ | DST_CMD_REPLY) || m->status)
		return 0;
	if (m->len > conn->rem->geo.max_io)
		return dst_rconn_proto(conn, "stale reply longer than max_io");
	/*
	 * Under session keys the data must be checked, and there are no
	 * pages to check it in: start afresh.
	 */
	if (conn->crypto)
		return dst_rconn_proto(conn,
				       "stale READ reply under session keys");
	return dst_sock_discard(conn->sock, m->len);
}

/*
 * The reply @m to a request, header @hdr read, @data to follow: find
 * the request, check the reply fits it, read the data into its pages,
 * and complete it if it is ours to.
 */
static int dst_recv_answer(struct dst_rconn *conn, struct dst_wire_hdr *hdr,
			   const struct dst_msg *m, bool data)
{
	struct dst_remote *rem = conn->rem;
	blk_status_t st = dst_status_to_blk(m->status);
	const char *why = NULL;
	unsigned int retries;
	bool done, awaited;
	struct request *rq;
	struct dst_cmd *cmd;
	int err;

	rq = dst_trans_find(&rem->set, m->id, &why);
	if (!rq)
		return why ? dst_rconn_proto(conn, why) :
			     dst_recv_stale(conn, m);
	cmd = blk_mq_rq_to_pdu(rq);
	spin_lock_bh(&cmd->lock);
	awaited = dst_trans_awaited(rq, m->id);
	retries = cmd->retries;
	if (awaited)
		why = dst_reply_mismatch(conn, rq, m);
	/*
	 * The data may take a while to come: RECEIVING keeps the request
	 * from being completed under it meanwhile (the timeout handler
	 * holds it; only this loop orphans what was sent on this
	 * connection).  A resend may still go out: the server answers the
	 * id once.
	 */
	if (awaited && !why && data)
		dst_trans_receive_begin(rq);
	/* Ours once taken: completed without holding up the next user. */
	done = awaited && !why && !data && dst_trans_answer(rq, st);
	spin_unlock_bh(&cmd->lock);
	if (!awaited)
		return dst_recv_stale(conn, m);
	if (why)
		return dst_rconn_proto(conn, why);
	trace_dst_reply(dst_rem_name(rem), conn->idx, m->id,
			m->cmd & ~DST_CMD_REPLY, m->offset, m->len, retries,
			m->status);
	if (data) {
		err = dst_recv_data(conn, NULL, 0, rq);
		if (!err && conn->crypto)
			err = dst_rconn_open_frame(conn, hdr, rq);
		spin_lock_bh(&cmd->lock);
		dst_trans_receive_end(rq);
		done = !err && dst_trans_answer(rq, st);
		spin_unlock_bh(&cmd->lock);
		if (err)
			return err;
	}
	if (done)
		dst_trans_complete(rq);
	return 0;
}

/*
 * The server's notice that the export grew (docs/protocol.md), sent
 * only to a client that offered DST_FEAT_RESIZE.  Checked, then the
 * disk grows in a work of its own (client_node.c).  Each connection
 * carries every notice, in order: one smaller than what this connection
 * last heard (welcome or notice) is a shrink, which no correct server
 * sends.  One smaller only than the disk is late: the export grew twice
 * and another connection (or a reconnection's welcome) told the newer
 * size first.  That one is ignored.
 */
static int dst_recv_resize(struct dst_rconn *conn, struct dst_wire_hdr *hdr,
			   const struct dst_msg *m)
{
	struct dst_remote *rem = conn->rem;
	int err;

	if (!conn->resize || m->len || m->status ||
	    m->flags || m->id || m->offset % rem->geo.lbs ||
	    m->offset > (U64_MAX >> 1))
		return dst_rconn_proto(conn, "malformed RESIZE");
	if (conn->crypto) {
		err = dst_rconn_open_frame(conn, hdr, NULL);
		if (err)
			return err;
	}
	WRITE_ONCE(conn->last_rx, jiffies);
	if (m->offset < conn->size)
		return dst_rconn_proto(conn, "RESIZE to a smaller size");
	WRITE_ONCE(conn->size, m->offset);	/* debugfs reads it */
	/* -ESTALE: late, as above. */
	dst_remote_grow(rem, m->offset);
	return 0;
}

/*
 * One reply, by the receive loop.  Returns 0 to go on, or an error that
 * ends the connection: the socket failed, or the server sent something
 * no correct server sends (logged once, with the reason).
 */
static int dst_recv_reply(struct dst_rconn *conn)
{
	struct dst_wire_hdr hdr;
	struct dst_msg m;
	bool data;
	int err;

	err = dst_sock_recv(conn->sock, &hdr, sizeof(hdr));
	if (err)
		return err;
	if (dst_msg_decode(&hdr, &m))
		return dst_rconn_proto(conn, "bad magic or version");
	if (m.cmd == DST_CMD_RESIZE)
		return dst_recv_resize(conn, &hdr, &m);
	if (!(m.cmd & DST_CMD_REPLY) || m.status >= DST_ST_MAX)
		return dst_rconn_proto(conn, "not a reply");
	data = m.cmd == (DST_CMD_READ | DST_CMD_REPLY) && m.status == DST_ST_OK;
	/* A frame without data is checked before anything is done with it. */
	if (conn->crypto && !data) {
		err = dst_rconn_open_frame(conn, &hdr, NULL);
		if (err)
			return err;
	}
	/* Any frame proves the connection alive to the keepalive. */
	WRITE_ONCE(conn->last_rx, jiffies);
	if (m.cmd == (DST_CMD_PING | DST_CMD_REPLY)) {
		if (m.len || m.status)
			return dst_rconn_proto(conn, "malformed PING reply");
		return 0;
	}
	return dst_recv_answer(conn, &hdr, &m, data);
}

/*
 * Replies the fast path takes, at most: a larger one is copied by the
 * receive loop, on a CPU of its own, rather than in the softirq of
 * whoever sent it (on loopback, the server's loop, which has the next
 * request to serve).
 */
#define DST_RX_FAST_MAX		(64 << 10)

/*
 * The fast path's one frame: 1 taken, 0 nothing more to take now, -1
 * for the loop.  It takes only what it can finish here and now -- a
 * reply for a request in flight that is all in the socket, or a PING
 * reply -- and waits for the rest of one that is not all there yet, if
 * the socket has room for all of it.  Everything else it leaves, unread,
 * to the loop: replies that are stale, malformed or large, and every
 * frame under session keys.  Errors are the loop's to find and report.
 */
static int dst_rconn_rx_fast_one(struct dst_rconn *conn, struct sock *sk)
{
	struct dst_remote *rem = conn->rem;
	struct dst_wire_hdr hdr;
	struct dst_cmd *cmd;
	struct request *rq;
	const char *why;
	struct dst_msg m;
	u32 inq, len;
	bool done = false;
	int ret;

	/* A frame half there: the rest comes with the next data_ready. */
	inq = dst_sk_inq(sk);
	if (inq < sizeof(hdr))
		return 0;
	if (!dst_sk_peek(sk, &hdr, sizeof(hdr)) || dst_msg_decode(&hdr, &m) ||
	    !(m.cmd & DST_CMD_REPLY) || m.status >= DST_ST_MAX)
		return -1;
	if (m.cmd == (DST_CMD_PING | DST_CMD_REPLY)) {
		if (m.len || m.status ||
		    dst_sk_read_bvecs(sk, sizeof(hdr), NULL, 0, 0, 0))
			return -1;
		WRITE_ONCE(conn->last_rx, jiffies);
		return 1;
	}
	len = m.cmd == (DST_CMD_READ | DST_CMD_REPLY) && !m.status ? m.len : 0;
	if (len > DST_RX_FAST_MAX)
		return -1;
	if (inq - sizeof(hdr) < len)
		return dst_sk_room_for(sk, sizeof(hdr) + len) ? 0 : -1;

	rq = dst_trans_find(&rem->set, m.id, &why);
	if (!rq)
		return -1;
	cmd = blk_mq_rq_to_pdu(rq);
	spin_lock_bh(&cmd->lock);
	ret = -1;
	if (dst_trans_awaited(rq, m.id) && !dst_reply_mismatch(conn, rq, &m) &&
	    !dst_trans_receiving(rq)) {
		/*
		 * Every byte is there, so the read cannot come up short;
		 * if it did, the stream would be out of step and the loop
		 * would find it so and end the connection, orphaning rq
		 * with the rest.
		 */
		if (!WARN_ON_ONCE(len ? dst_recv_data(conn, sk, sizeof(hdr), rq) :
				  dst_sk_read_bvecs(sk, sizeof(hdr), NULL, 0,
						    0, 0))) {
			WRITE_ONCE(conn->last_rx, jiffies);
			trace_dst_reply(dst_rem_name(rem), conn->idx, m.id,
					m.cmd & ~DST_CMD_REPLY, m.offset,
					m.len, cmd->retries, m.status);
			done = dst_trans_answer(rq,
						dst_status_to_blk(m.status));
			ret = 1;
		}
	}
	spin_unlock_bh(&cmd->lock);
	if (done)
		dst_trans_complete(rq);
	return ret;
}

/*
 * The watch's fast path (conn.c), in softirq: complete the replies that
 * are all there, where they arrived.  True if it took everything.
 */
bool dst_rconn_rx_fast(struct dst_sock_watch *w, struct sock *sk)
{
	struct dst_rconn *conn = container_of(w, struct dst_rconn, watch);
	int ret;

	/* The loop handles a connection going or coming, and all keyed ones. */
	if (!smp_load_acquire(&conn->live) || READ_ONCE(conn->crypto))
		return false;
	while ((ret = dst_rconn_rx_fast_one(conn, sk)) > 0)
		;
	return !ret;
}

/*
 * The receive loop: replies while there are any, then back to the
 * watch, which queues it again on the CPU where the server's next frame
 * arrives (conn.c), so the reply completes there without waking a
 * worker on another CPU.  A frame that is half there is waited for.
 */
void dst_recv_work(struct work_struct *work)
{
	struct dst_rconn *conn = container_of(work, struct dst_rconn,
					      recv_work);
	unsigned int noio, frames = 0;
	int err;

	/*
	 * Queued through a socket whose loop already ended: nothing to do
	 * until dst_rconn_up() installs the next one (and publishes it
	 * with live).
	 */
	if (!smp_load_acquire(&conn->live))
		return;
	/*
	 * The socket is ours until the watch has it back: from here the
	 * fast path leaves its bytes to this loop.  Queued for bytes an
	 * earlier run (or the fast path) already read: return rather than
	 * wait for the next frame here, where it may not arrive.
	 */
	dst_sock_watch_claim(conn->sock, &conn->watch);
	noio = memalloc_noio_save();
	err = 0;
	while (!err && !dst_sock_idle(conn->sock)) {
		err = dst_recv_reply(conn);
		frames++;
	}
	if (err)
		dst_rconn_down(conn, err);
	else
		dst_sock_watch_ran(&conn->watch, frames);
	memalloc_noio_restore(noio);
}
