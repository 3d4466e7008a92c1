// SPDX-License-Identifier: GPL-2.0
/*
 * DST export node: replies.
 *
 * A request's reply is queued by its bio's completion.  The receive loop
 * holds replies back while it reads a batch (DST_SRV_REPLY_BATCH requests
 * or DST_SRV_REPLY_BYTES of read data) and flushes them before it may
 * sleep; otherwise the connection's send work sends them, on a workqueue
 * of its own so replies never wait behind receive loops.  Plain replies
 * send read data without a copy, except reserve pages, which return to
 * their pool.  Keyed replies are sealed and sent without blocking from
 * the crypto workqueue, resuming from write_space, so one slow client
 * cannot stall the others; a watchdog kills a connection whose client
 * stops reading for DST_SRV_SEND_MS.  The RESIZE notice, the one frame
 * the server sends unasked, travels among the replies.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "export.h"
#include "trace.h"

/* --- the RESIZE notice ----------------------------------------------- */

/*
 * The RESIZE notice (docs/protocol.md): a header-only frame among the
 * replies, so the one sender sends it and a keyed one is sealed in
 * sequence.  Each connection has one, embedded, so telling clients never
 * allocates: it is queued once and says the size as it is when it goes
 * out, so any number of grows while it waits make one frame.  It counts
 * in inflight while queued or being sent, as a reply does, so
 * dst_sconn_close() waits for it.
 */
void dst_sconn_notice_init(struct dst_sconn *conn)
{
	struct dst_io *io = &conn->notice;

	io->conn = conn;
	INIT_LIST_HEAD(&io->entry);
	io->m.cmd = DST_CMD_RESIZE;
	io->bvecs = io->inline_bvecs;
}

/*
 * Tell the client its export grew.  The caller holds conns_lock and has
 * seen the connection welcomed, not fenced and not closing: the welcome
 * is out, so nothing can overtake it, and the close has not begun.
 */
void dst_sconn_notify_size(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;
	bool kick = false;

	lockdep_assert_held(&exp->conns_lock);
	spin_lock_irq(&conn->lock);
	switch (conn->notice_state) {
	case DST_NOTICE_IDLE:
		conn->notice_state = DST_NOTICE_QUEUED;
		conn->notice.start = jiffies;
		atomic_inc(&conn->inflight);
		list_add_tail(&conn->notice.entry, &conn->replies);
		kick = true;
		break;
	case DST_NOTICE_QUEUED:		/* it will say the new size */
		break;
	case DST_NOTICE_SENDING:	/* it says the old one: again */
		conn->notice_again = true;
		break;
	}
	spin_unlock_irq(&conn->lock);
	if (kick)
		queue_work(conn->crypto ? exp->crypto_wq : exp->send_wq,
			   &conn->send_work);
}

/* The notice is about to be encoded: it says the size as of now. */
static void dst_notice_encode(struct dst_sconn *conn, struct dst_io *io)
{
	if (io != &conn->notice)
		return;
	spin_lock_irq(&conn->lock);
	conn->notice_state = DST_NOTICE_SENDING;
	io->m.offset = conn->geo.size;
	spin_unlock_irq(&conn->lock);
}

/*
 * dst_io_free() of the notice: sent (or dropped with a dead
 * connection).  Queued again at once if the export grew while it was
 * being sent; the sender, which called this, looks at the list again.
 */
void dst_notice_done(struct dst_sconn *conn)
{
	bool gone;

	spin_lock_irq(&conn->lock);
	if (conn->notice_again) {
		conn->notice_again = false;
		conn->notice_state = DST_NOTICE_QUEUED;
		list_add_tail(&conn->notice.entry, &conn->replies);
		gone = false;
	} else {
		conn->notice_state = DST_NOTICE_IDLE;
		gone = true;
	}
	spin_unlock_irq(&conn->lock);
	if (gone) {
		atomic_dec(&conn->inflight);
		wake_up(&conn->wait);
	}
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

static int dst_send_reply(struct dst_sconn *conn, struct dst_io *io,
			  bool more)
{
	bool data = dst_reply_has_data(io);
	struct dst_wire_hdr hdr;
	unsigned int i;
	int err;

	dst_notice_encode(conn, io);
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
	dst_notice_encode(conn, io);
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
void dst_sconn_tx_watchdog(struct work_struct *work)
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

void dst_send_work(struct work_struct *work)
{
	struct dst_sconn *conn = container_of(work, struct dst_sconn,
					      send_work);

	mutex_lock(&conn->send_lock);
	dst_send_replies_locked(conn);
	mutex_unlock(&conn->send_lock);
}

bool dst_sconn_replies_pending(struct dst_sconn *conn)
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
void dst_sconn_flush_replies(struct dst_sconn *conn)
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
void dst_sconn_before_read(struct dst_sconn *conn, u32 bytes)
{
	if (dst_sconn_replies_pending(conn) &&
	    !dst_sock_has_input(conn->sock,
				bytes + dst_crypto_tag_len(conn->crypto)))
		dst_sconn_flush_replies(conn);
}
