// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: an export attached as /dev/dstN.
 *
 * Enabling a remote opens `connections` TCP connections to the server,
 * shakes hands on each (all must describe the same export), and adds a
 * blk-mq disk with one hardware queue per connection.  queue_rq sends a
 * request in the submitter's context (BLK_MQ_F_BLOCKING: sending may
 * sleep) on its queue's connection, or on a surviving one.  Replies are
 * read straight into the request's pages and completed, either in the
 * softirq that received them, when a reply is all there and nothing
 * about it is unusual (the fast path), or by the connection's receive
 * loop, a work item on the node's own WQ_MEM_RECLAIM workqueue, which
 * handles everything.  trans.c names the transactions and decides who
 * owns each one.
 *
 * The network is allowed to fail (docs/resilience.md has the state
 * machines).  An unanswered request is resent after trans_scan_timeout
 * ms, up to trans_max_retries times.  A connection that dies -- reset,
 * FIN, protocol error, or no answer to keepalive PINGs -- leaves its
 * requests as orphans and is reconnected with capped exponential backoff;
 * the server fences the old connection during the new handshake, and
 * only then are the orphans resent.  With no connection at all the queue
 * is quiesced: I/O is held, not failed, until fail_timeout_s passes (-1:
 * forever), after which it fails fast until a reconnection succeeds.
 *
 * Disabling deletes the disk while the connections still work, so dirty
 * data is written back and requests in flight finish; requests issued
 * after that fail with EIO.  If the server stops answering, a watchdog
 * shuts the connections down after DST_DETACH_GRACE_MS without a single
 * completion, which fails what is left: detaching never hangs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/error-injection.h>
#include <linux/blkdev.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "dst.h"
#include "trace.h"

#define DST_CONNECT_TIMEOUT_MS	10000	/* connect and handshake at enable */
#define DST_RECONNECT_TIMEOUT_MS 5000	/* ... and for each reconnect attempt */
#define DST_RECONNECT_MAX_MS	10000	/* backoff cap, unless the delay is more */
#define DST_DETACH_GRACE_MS	5000	/* without progress, while detaching */
#define DST_MAX_DISKS		(1 << (MINORBITS - DST_PART_SHIFT))

static DEFINE_IDA(dst_index_ida);

struct dst_remote;

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
	u64 ka_progress;	/* TCP progress seen by the keepalive */
	/* Runs while the socket has input, where it arrives (conn.c). */
	struct work_struct recv_work;
	struct dst_sock_watch watch;
};

struct dst_remote {
	struct dst_node *node;
	struct net *net;		/* where the sockets live */
	struct dst_geometry geo;	/* as the server described it */
	bool read_only;
	int index;			/* dstN */
	u64 session;			/* names us to the server's fence */
	struct workqueue_struct *wq;	/* rx loops, reconnect, timers */
	struct blk_mq_tag_set set;
	struct dst_trans_gens *gens;	/* per tag, see trans.c */
	struct work_struct scan_work;	/* the partition table, at attach */
	struct gendisk *disk;

	/* Configuration, fixed while enabled. */
	unsigned int max_retries;
	unsigned int ka_ms, reconnect_ms;
	int fail_s;

	/* The link (docs/resilience.md), under state_lock. */
	struct mutex state_lock;
	int nr_live;
	bool quiesced;			/* no connection: I/O held */
	bool failfast;			/* none for fail_s: I/O fails */
	bool stopping;			/* also read lockless */

	struct delayed_work reconnect_work;
	unsigned int attempt;		/* since the link last went down */
	struct delayed_work fail_work;
	struct delayed_work ka_work;

	atomic_long_t completions;	/* progress, for the watchdog */
	long seen;
	struct delayed_work watchdog;

	struct dst_io_stats __percpu *stats;
	atomic64_t reconnects, resends, timeouts;

	int nr_conns;
	struct dst_rconn conns[];
};

static const char *dst_rem_name(struct dst_remote *rem)
{
	return rem->node->name;
}

/*
 * Take a connection out of service: its socket is shut down, so sends
 * fail, and the watch runs the receive loop, which reads the end of the
 * stream and does the rest (see dst_rconn_down()).  Any context that may
 * sleep; idempotent.
 */
static void dst_rconn_kill(struct dst_rconn *conn)
{
	mutex_lock(&conn->sock_lock);
	if (conn->sock)
		kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	mutex_unlock(&conn->sock_lock);
}

static void dst_remote_set_link(struct dst_remote *rem)
{
	int link;

	lockdep_assert_held(&rem->state_lock);
	if (rem->nr_live == rem->nr_conns)
		link = DST_LINK_UP;
	else if (rem->nr_live)
		link = DST_LINK_DEGRADED;
	else if (rem->failfast)
		link = DST_LINK_FAILED;
	else
		link = DST_LINK_RECONNECTING;
	WRITE_ONCE(rem->node->link, link);
	wake_up_all(&rem->node->scan_wait);
}

/* --- handshake ----------------------------------------------------- */

/*
 * The authenticated part of a keyed handshake (docs/protocol.md): the
 * server's challenge must prove the key before this side proves it in
 * turn.  @hello is our HELLO frame as sent.  On success the session's
 * keys are set up in *@cryptop and the welcome is the next frame.
 */
static int dst_rconn_auth(struct dst_remote *rem, struct dst_rconn *conn,
			  struct socket *sock, const void *hello,
			  size_t hello_len, const u8 *cnonce,
			  struct dst_crypto **cryptop)
{
	const struct dst_crypto_cfg *cfg = &rem->node->cfg.crypto;
	struct dst_node *node = rem->node;
	struct {
		struct dst_wire_hdr hdr;
		union {
			struct dst_wire_challenge ch;
			struct dst_wire_proof pr;
		};
		u8 sproof[DST_PROOF_LEN];
		u8 cproof[DST_PROOF_LEN];
	} *b;
	struct dst_crypto *c;
	struct dst_msg m;
	int err;

	b = kzalloc(sizeof(*b), GFP_NOIO);
	if (!b)
		return -ENOMEM;
	err = dst_sock_recv(sock, &b->ch, DST_CHALLENGE_SIZE);
	if (err)
		goto out;
	err = dst_crypto_proofs(cfg, hello, hello_len, b->ch.nonce, b->sproof,
				b->cproof);
	if (err) {
		pr_err("%s: cannot compute the handshake proofs: %d\n",
		       node->name, err);
		goto out;
	}
	if (!dst_crypto_proof_ok(b->sproof, b->ch.proof)) {
		pr_err("%s: %pISpc cannot prove the shared key (a different key on one side?); closing\n",
		       node->name, &node->cfg.addr);
		err = -EKEYREJECTED;
		goto out;
	}
	c = dst_crypto_session(cfg, false, cnonce, b->ch.nonce,
			       dst_node_get_param(node, DST_P_MAX_PAGES) *
			       PAGE_SIZE, conn->cbuf);
	if (IS_ERR(c)) {
		err = PTR_ERR(c);
		pr_err("%s: cannot set up %s%s%s: %d\n", node->name,
		       dst_crypto_hash_name(cfg), cfg->cipher[0] ? " + " : "",
		       cfg->cipher, err);
		goto out;
	}
	m = (struct dst_msg){ .cmd = DST_CMD_AUTH | DST_CMD_REPLY,
			      .len = DST_PROOF_SIZE };
	dst_msg_encode(&b->hdr, &m);
	memcpy(b->pr.proof, b->cproof, DST_PROOF_LEN);
	err = dst_sock_send(sock, b, DST_HDR_SIZE + DST_PROOF_SIZE, 0);
	if (err) {
		dst_crypto_free(c);
		goto out;
	}
	*cryptop = c;
out:
	kfree_sensitive(b);
	return err;
}

static noinline __noclone int
dst_rconn_handshake(struct dst_remote *rem, struct dst_rconn *conn,
		    struct socket *sock, struct dst_geometry *geo,
		    struct dst_crypto **cryptop)
{
	struct dst_node *node = rem->node;
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	struct {
		struct dst_wire_hdr hdr;
		union {
			struct {
				struct dst_wire_hello hello;
				struct dst_wire_hello_auth auth;
			};
			struct dst_wire_welcome welcome;
		};
	} *buf;
	struct dst_hello hello = {
		.version_min = DST_PROTO_VERSION_MIN,
		.version_max = DST_PROTO_VERSION,
		.features = DST_FEAT_ALL,
		.max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE,
		.session = rem->session,
		.slot = conn->idx,
		.nr_queues = rem->nr_conns,
		.queue_depth = dst_node_get_param(node, DST_P_QUEUE_DEPTH),
	};
	struct dst_msg m = {
		.cmd = DST_CMD_HELLO,
		.len = DST_HELLO_SIZE,
	};
	struct dst_crypto *c = NULL;
	u8 cnonce[DST_NONCE_LEN];
	bool keyed = cfg->key_len;
	int err;

	*cryptop = NULL;
	buf = kzalloc(sizeof(*buf), GFP_NOIO);
	if (!buf)
		return -ENOMEM;
	if (!dst_node_get_param(node, DST_P_READ_ONLY))
		hello.features &= ~DST_FEAT_READ_ONLY;
	if (keyed) {
		hello.features |= DST_FEAT_AUTH;
		m.len += DST_HELLO_AUTH_SIZE;
		dst_crypto_nonce(cnonce);
		dst_hello_auth_encode(&buf->auth, cnonce,
				      dst_crypto_hash_name(cfg), cfg->cipher);
	}
	strscpy(hello.export, node->cfg.export, sizeof(hello.export));
	dst_msg_encode(&buf->hdr, &m);
	dst_hello_encode(&buf->hello, &hello);

	err = dst_sock_send(sock, buf, DST_HDR_SIZE + m.len, 0);
	if (!err && keyed) {
		err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
		if (!err && !dst_msg_decode(&buf->hdr, &m) &&
		    m.cmd == DST_CMD_AUTH && m.len == DST_CHALLENGE_SIZE &&
		    !m.id && !m.offset && !m.status) {
			/* The HELLO as sent is what both proofs cover. */
			dst_msg_encode(&buf->hdr, &(struct dst_msg){
				.cmd = DST_CMD_HELLO,
				.len = DST_HELLO_SIZE + DST_HELLO_AUTH_SIZE });
			dst_hello_encode(&buf->hello, &hello);
			err = dst_rconn_auth(rem, conn, sock, buf,
					     DST_HDR_SIZE + DST_HELLO_SIZE +
					     DST_HELLO_AUTH_SIZE, cnonce, &c);
			if (err)
				goto out;
			err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
		} else if (!err && !dst_msg_decode(&buf->hdr, &m) &&
			   m.cmd == (DST_CMD_HELLO | DST_CMD_REPLY) &&
			   m.status == DST_ST_OK) {
			pr_err("%s: %pISpc did not authenticate (the export has no key?); closing\n",
			       node->name, &node->cfg.addr);
			err = -EKEYREJECTED;
			goto out;
		}
		/* Else a refusal: read below like any other. */
	} else if (!err) {
		err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
	}
	if (err) {
		pr_err("%s: handshake with %pISpc failed: %d\n", node->name,
		       &node->cfg.addr, err);
		goto out;
	}

	err = dst_msg_decode(&buf->hdr, &m);
	if (err || m.cmd != (DST_CMD_HELLO | DST_CMD_REPLY) || m.id) {
		pr_err("%s: %pISpc does not speak DST v%d\n", node->name,
		       &node->cfg.addr, DST_PROTO_VERSION);
		err = -EPROTO;
		goto out;
	}
	if (m.status != DST_ST_OK) {
		err = dst_status_to_errno(m.status);
		pr_err("%s: %pISpc refused export '%s': status %u (%d)%s\n",
		       node->name, &node->cfg.addr, hello.export, m.status,
		       err, m.status == DST_ST_AUTH ?
		       ": key, hash or cipher differ from the export's" : "");
		goto out;
	}
	if (m.len != DST_WELCOME_SIZE) {
		pr_err("%s: welcome of %u bytes from %pISpc\n", node->name,
		       m.len, &node->cfg.addr);
		err = -EPROTO;
		goto out;
	}
	err = dst_sock_recv(sock, &buf->welcome, DST_WELCOME_SIZE);
	if (!err && c) {
		/* The welcome is the server's first protected frame. */
		struct scatterlist *sg = dst_crypto_sg(c, false, 1);

		sg_set_buf(sg, &buf->welcome, DST_WELCOME_SIZE);
		err = dst_sock_recv(sock, dst_crypto_rx_tag(c),
				    dst_crypto_tag_len(c));
		if (!err && dst_crypto_open(c, &buf->hdr, 1, DST_WELCOME_SIZE)) {
			pr_err("%s: the welcome from %pISpc fails its integrity check; closing\n",
			       node->name, &node->cfg.addr);
			err = -EBADMSG;
		}
	}
	if (err)
		goto out;
	err = dst_welcome_decode(&buf->welcome, geo);
	if (!err && (geo->version < hello.version_min ||
		     geo->version > hello.version_max ||
		     geo->features & ~(hello.features | DST_FEAT_READ_ONLY) ||
		     geo->max_io > hello.max_io))
		err = -EPROTO;
	if (err)
		pr_err("%s: %pISpc describes an export this client cannot use\n",
		       node->name, &node->cfg.addr);
out:
	memzero_explicit(cnonce, sizeof(cnonce));
	kfree(buf);
	if (err)
		dst_crypto_free(c);
	else
		*cryptop = c;
	return err;
}

/* make check-debug fails it (fail_function): attach and reconnect unwind. */
ALLOW_ERROR_INJECTION(dst_rconn_handshake, ERRNO);

/* The same export: field by field, as the structure has padding. */
static bool dst_geometry_same(const struct dst_geometry *a,
			      const struct dst_geometry *b)
{
	return a->version == b->version && a->features == b->features &&
	       a->size == b->size && a->lbs == b->lbs && a->pbs == b->pbs &&
	       a->max_io == b->max_io && a->max_discard == b->max_discard &&
	       a->max_write_zeroes == b->max_write_zeroes;
}

/*
 * Connect slot @conn and shake hands.  The first connection of an attach
 * fixes the geometry; every later one, and every reconnection, must see
 * the same export.  Returns the socket, ready for the receive loop.
 */
static struct socket *dst_rconn_open(struct dst_remote *rem,
				     struct dst_rconn *conn, bool first,
				     int timeout_ms,
				     struct dst_crypto **cryptop)
{
	struct dst_node *node = rem->node;
	struct dst_geometry geo;
	struct socket *sock;
	int err;

	sock = dst_sock_connect(rem->net, &node->cfg.addr, timeout_ms);
	if (IS_ERR(sock)) {
		pr_err("%s: cannot connect to %pISpc: %ld\n", node->name,
		       &node->cfg.addr, PTR_ERR(sock));
		return sock;
	}
	err = dst_rconn_handshake(rem, conn, sock, &geo, cryptop);
	if (err)
		goto fail;

	if (first) {
		rem->geo = geo;
	} else if (!dst_geometry_same(&geo, &rem->geo)) {
		pr_err("%s: connection %d to %pISpc found a different export (size, blocks or features changed)\n",
		       node->name, conn->idx, &node->cfg.addr);
		err = -ESTALE;
		dst_crypto_free(*cryptop);
		*cryptop = NULL;
		goto fail;
	}
	dst_sock_set_timeout(sock, 0);
	/*
	 * Under session keys every reply is checked by the receive loop
	 * and a request held for the server's ACK waits for that too:
	 * measured, keyed 4k reads at QD32 lost a third with Nagle on.
	 */
	if (*cryptop)
		dst_sock_nodelay(sock);
	return sock;
fail:
	sock_release(sock);
	return ERR_PTR(err);
}

/* --- sending ------------------------------------------------------- */

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
static int dst_frame_prepare(struct dst_rconn *conn, struct dst_frame *f,
			     struct request *rq, const struct dst_msg *m,
			     int last, int flags)
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
static int dst_frame_send(struct dst_rconn *conn, const struct dst_frame *f,
			  u32 skip)
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
static int dst_rconn_send_ctl(struct dst_rconn *conn, u8 op, int flags,
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

/* A signal cut the send short: the submitter had one pending. */
static bool dst_send_interrupted(int err)
{
	return err == -ERESTARTSYS || err == -EINTR;
}

/* Send the rest of the interrupted frame, for queue_rq (below). */
static void dst_tx_work(struct work_struct *work)
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
static int dst_rconn_send_rest(struct dst_rconn *conn, u32 skip)
{
	conn->tx_skip = skip;
	reinit_completion(&conn->tx_done);
	queue_work(conn->rem->wq, &conn->tx_work);
	wait_for_completion_state(&conn->tx_done, TASK_IDLE);
	return conn->tx_err;
}

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
 * A reply for a request being resent got there first (dst_recv_reply()
 * took it, data and all): finish the request instead of sending it.
 * Called with cmd->lock held; true if so.
 */
static bool dst_cmd_take_answer(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	lockdep_assert_held(&cmd->lock);
	if (!test_and_clear_bit(DST_CMD_ANSWERED, &cmd->flags))
		return false;
	clear_bit(DST_CMD_RESENDING, &cmd->flags);
	blk_mq_complete_request(rq);
	return true;
}

static blk_status_t __dst_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct dst_rconn *conn = hctx->driver_data;
	struct dst_remote *rem = conn->rem;
	struct request *rq = bd->rq;
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	bool resend = false, requeue = false, answered, more;
	struct dst_msg m = { };
	struct {
		u64 id;
		u32 gen;
		int conn;
		u32 epoch, seq;
	} was;
	blk_status_t ret;
	u32 start;
	int err;

	m.cmd = dst_rq_op(rq, &m.flags);
	if (!m.cmd)
		return BLK_STS_NOTSUPP;
	if (rem->read_only && op_is_write(req_op(rq)))
		return BLK_STS_IOERR;	/* the server would refuse it too */
	if (m.cmd != DST_CMD_FLUSH) {
		m.offset = blk_rq_pos(rq) << SECTOR_SHIFT;
		m.len = blk_rq_bytes(rq);
	}
	/* A requeued request keeps RQF_DONTPREP: its history goes on. */
	if (!(rq->rq_flags & RQF_DONTPREP)) {
		cmd->flags = 0;
		cmd->conn = -1;
		cmd->retries = 0;
		cmd->start = jiffies;
		rq->rq_flags |= RQF_DONTPREP;
		blk_mq_start_request(rq);
	} else {
		/* Requeued: its reply may have come meanwhile. */
		blk_mq_start_request(rq);
		spin_lock_bh(&cmd->lock);
		if (dst_cmd_take_answer(rq)) {
			spin_unlock_bh(&cmd->lock);
			return BLK_STS_OK;
		}
		spin_unlock_bh(&cmd->lock);
	}

	/*
	 * A copy sent before on a connection that has not been replaced
	 * since may still be executed by the server: send this one on the
	 * same connection with the same id (the server executes a
	 * transaction once per connection and answers it once), or, if
	 * that died, hold it as an orphan until the reconnection has fenced
	 * it.
	 */
	if (cmd->conn >= 0) {
		conn = &rem->conns[cmd->conn];
		mutex_lock(&conn->tx_lock);
		if (conn->epoch == cmd->epoch) {
			resend = true;
			if (conn->live)
				goto send;
			ret = BLK_STS_OK;
			spin_lock_bh(&cmd->lock);
			if (!dst_cmd_take_answer(rq)) {
				clear_bit(DST_CMD_RESENDING, &cmd->flags);
				if (READ_ONCE(rem->failfast) ||
				    READ_ONCE(rem->stopping))
					ret = BLK_STS_IOERR;
				else
					set_bit(DST_CMD_ORPHAN, &cmd->flags);
			}
			spin_unlock_bh(&cmd->lock);
			mutex_unlock(&conn->tx_lock);
			return ret;
		}
		mutex_unlock(&conn->tx_lock);
	}
	resend = false;
	conn = dst_pick_conn(rem, hctx->queue_num);
	if (!conn) {
		/* Any copy is fenced: no reply can come for it any more. */
		clear_bit(DST_CMD_RESENDING, &cmd->flags);
		/*
		 * No connection: fail fast once fail_timeout_s has passed,
		 * else give the request back; the queue is (being) quiesced
		 * and is run again when a connection comes back.
		 */
		if (READ_ONCE(rem->failfast) || READ_ONCE(rem->stopping))
			return BLK_STS_IOERR;
		return BLK_STS_RESOURCE;
	}

send:
	spin_lock_bh(&cmd->lock);
	if (dst_cmd_take_answer(rq)) {
		spin_unlock_bh(&cmd->lock);
		mutex_unlock(&conn->tx_lock);
		return BLK_STS_OK;
	}
	clear_bit(DST_CMD_RESENDING, &cmd->flags);
	was.id = cmd->id;
	was.gen = cmd->gen;
	was.conn = cmd->conn;
	was.epoch = cmd->epoch;
	was.seq = cmd->seq;
	m.id = dst_trans_start(rem->gens, rq, resend);
	cmd->id = m.id;
	cmd->op = m.cmd;
	cmd->conn = conn->idx;
	cmd->epoch = conn->epoch;
	/* Where this frame will end in the byte stream (tx_lock is ours). */
	start = dst_sock_queued_seq(conn->sock);
	cmd->seq = start + DST_HDR_SIZE +
		   (m.cmd == DST_CMD_WRITE ? m.len : 0) +
		   dst_crypto_tag_len(conn->crypto);
	set_bit(DST_CMD_INFLIGHT, &cmd->flags);
	set_bit(DST_CMD_SENDING, &cmd->flags);
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
	trace_dst_send(dst_rem_name(rem), conn->idx, m.id, m.cmd, m.offset,
		       m.len, cmd->retries, was.conn >= 0);
	err = dst_frame_prepare(conn, &conn->tx, rq, &m, more ? MSG_MORE : 0,
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
	clear_bit(DST_CMD_SENDING, &cmd->flags);
	answered = test_and_clear_bit(DST_CMD_ANSWERED, &cmd->flags);
	if (requeue && !answered) {
		/* Nothing of this copy went out: as it was before. */
		clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
		cmd->id = was.id;
		cmd->gen = was.gen;
		cmd->conn = was.conn;
		cmd->epoch = was.epoch;
		cmd->seq = was.seq;
		/* An earlier copy on this connection may still answer. */
		if (resend)
			set_bit(DST_CMD_RESENDING, &cmd->flags);
	}
	spin_unlock_bh(&cmd->lock);
	mutex_unlock(&conn->tx_lock);
	/* Answered while it was being sent (a fast server): ours to end. */
	if (answered)
		dst_trans_complete(rq);
	else if (requeue)
		return BLK_STS_RESOURCE;
	if (err) {
		if (!READ_ONCE(rem->stopping))
			pr_warn("%s: send on connection %d failed: %d\n",
				dst_rem_name(rem), conn->idx, err);
		dst_rconn_kill(conn);
	}
	return BLK_STS_OK;
}

static blk_status_t dst_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	blk_status_t ret = __dst_queue_rq(hctx, bd);

	if (bd->last)
		dst_commit_rqs(hctx);
	return ret;
}

static void dst_complete_rq(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_remote *rem = rq->q->queuedata;
	enum dst_dir dir;

	if (cmd->requeue) {
		cmd->requeue = false;
		blk_mq_requeue_request(rq, true);
		return;
	}
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
	dst_stats_account(rem->stats, dir, blk_rq_bytes(rq),
			  cmd->status != BLK_STS_OK);
	atomic_long_inc(&rem->completions);
	blk_mq_end_request(rq, cmd->status);
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
 * decides), else count the wait as a retry too -- except an expired
 * one, which waits for its fence.
 */
static enum blk_eh_timer_return dst_timeout(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_remote *rem = rq->q->queuedata;
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	unsigned int bytes = blk_rq_bytes(rq);
	const char *op = dst_cmd_name(cmd->op);
	u8 cmd_op;
	enum { HOLD, RESEND, EXPIRE, TIMEOUT, FAIL } what = HOLD;
	bool expired;
	unsigned int tries;
	int conn;
	u64 id;

	spin_lock_bh(&cmd->lock);
	tries = cmd->retries;
	id = cmd->id;
	cmd_op = cmd->op;
	conn = cmd->conn;
	expired = test_bit(DST_CMD_EXPIRED, &cmd->flags);
	if (test_bit(DST_CMD_SENDING, &cmd->flags) ||
	    test_bit(DST_CMD_RECEIVING, &cmd->flags)) {
		/* Its pages are being sent or filled: not ours to touch. */
	} else if (test_bit(DST_CMD_INFLIGHT, &cmd->flags)) {
		/*
		 * The server has not even received all of it: the network
		 * is slow, and a copy queued behind it would only be slower.
		 * Keepalive finds out if the connection is dead.  (While
		 * INFLIGHT is set under cmd->lock, the socket stays.)
		 * Expired: its connection is on its way down.
		 */
		if (!expired &&
		    dst_sock_acked(rem->conns[cmd->conn].sock, cmd->seq))
			what = cmd->retries < rem->max_retries ? RESEND :
								 EXPIRE;
	} else if (test_bit(DST_CMD_ORPHAN, &cmd->flags)) {
		if (READ_ONCE(rem->failfast) || READ_ONCE(rem->stopping))
			what = FAIL;
		else if (!expired && READ_ONCE(rem->nr_live) &&
			 cmd->retries++ >= rem->max_retries)
			what = TIMEOUT;
	}
	switch (what) {
	case HOLD:
		break;
	case RESEND:
		clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
		set_bit(DST_CMD_RESENDING, &cmd->flags);
		tries = ++cmd->retries;
		dst_trans_requeue(rq);
		break;
	case EXPIRE:
		set_bit(DST_CMD_EXPIRED, &cmd->flags);
		break;
	default:
		clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
		clear_bit(DST_CMD_ORPHAN, &cmd->flags);
		cmd->status = what == FAIL ? BLK_STS_IOERR : BLK_STS_TIMEOUT;
		blk_mq_complete_request(rq);
		break;
	}
	spin_unlock_bh(&cmd->lock);

	/* rq may be on its way again or finished: use the copies. */
	switch (what) {
	case HOLD:
		return BLK_EH_RESET_TIMER;
	case EXPIRE:
		atomic64_inc(&rem->timeouts);
		trace_dst_timeout(dst_rem_name(rem), conn, id, cmd_op, pos, bytes,
				  tries, true);
		pr_err_ratelimited("%s: %s of %u bytes at %llu timed out after %u resends; dropping connection %d, to fail it once the server has fenced it\n",
				   dst_rem_name(rem), op, bytes, pos,
				   rem->max_retries, conn);
		dst_rconn_kill(&rem->conns[conn]);
		return BLK_EH_RESET_TIMER;
	case RESEND:
		atomic64_inc(&rem->resends);
		trace_dst_resend(dst_rem_name(rem), conn, id, cmd_op, pos, bytes,
				 tries, 0);
		pr_warn_ratelimited("%s: %s of %u bytes at %llu unanswered; resending (%u of %u)\n",
				    dst_rem_name(rem), op, bytes, pos, tries,
				    rem->max_retries);
		break;
	case TIMEOUT:
		atomic64_inc(&rem->timeouts);
		trace_dst_timeout(dst_rem_name(rem), conn, id, cmd_op, pos, bytes,
				  tries, false);
		pr_err_ratelimited("%s: %s of %u bytes at %llu timed out after %u resends\n",
				   dst_rem_name(rem), op, bytes, pos,
				   rem->max_retries);
		break;
	case FAIL:
		break;
	}
	return BLK_EH_DONE;
}

static int dst_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int idx)
{
	struct dst_remote *rem = data;

	hctx->driver_data = &rem->conns[idx];
	return 0;
}

static int dst_init_request(struct blk_mq_tag_set *set, struct request *rq,
			    unsigned int hctx_idx, unsigned int numa_node)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	spin_lock_init(&cmd->lock);
	cmd->conn = -1;
	return 0;
}

static const struct blk_mq_ops dst_mq_ops = {
	.queue_rq	= dst_queue_rq,
	.commit_rqs	= dst_commit_rqs,
	.complete	= dst_complete_rq,
	.timeout	= dst_timeout,
	.init_hctx	= dst_init_hctx,
	.init_request	= dst_init_request,
};

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
		       dst_rem_name(conn->rem), &conn->rem->node->cfg.addr,
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

/*
 * @rq has its answer, data and all.  Returns true if the caller now owns
 * it and must complete it (dst_trans_complete(), after dropping
 * cmd->lock, which is held here).
 */
static bool dst_reply_answer(struct request *rq, u32 status)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	if (test_bit(DST_CMD_RESENDING, &cmd->flags) ||
	    test_bit(DST_CMD_SENDING, &cmd->flags)) {
		/*
		 * Requeued to be resent, or a copy is being sent: queue_rq
		 * finishes it instead, once it no longer needs it.
		 */
		clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
		cmd->status = dst_status_to_blk(status);
		set_bit(DST_CMD_ANSWERED, &cmd->flags);
		return false;
	}
	return dst_trans_take(rq, dst_status_to_blk(status));
}

/*
 * One reply, by the receive loop.  Returns 0 to go on, or an error that
 * ends the connection: the socket failed, or the server sent something
 * no correct server sends (logged once, with the reason).
 */
static int dst_recv_reply(struct dst_rconn *conn)
{
	struct dst_remote *rem = conn->rem;
	struct dst_crypto *c = conn->crypto;
	struct dst_wire_hdr hdr;
	const char *why = NULL;
	bool data, done, awaited;
	unsigned int retries;
	struct request *rq;
	struct dst_cmd *cmd;
	struct dst_msg m;
	int err;

	err = dst_sock_recv(conn->sock, &hdr, sizeof(hdr));
	if (err)
		return err;
	if (dst_msg_decode(&hdr, &m)) {
		why = "bad magic or version";
		goto proto;
	}
	if (!(m.cmd & DST_CMD_REPLY) || m.status >= DST_ST_MAX) {
		why = "not a reply";
		goto proto;
	}
	data = m.cmd == (DST_CMD_READ | DST_CMD_REPLY) && m.status == DST_ST_OK;
	/* A frame without data is checked before anything is done with it. */
	if (c && !data) {
		err = dst_rconn_open_frame(conn, &hdr, NULL);
		if (err)
			return err;
	}
	/* Any frame proves the connection alive to the keepalive. */
	WRITE_ONCE(conn->last_rx, jiffies);
	if (m.cmd == (DST_CMD_PING | DST_CMD_REPLY)) {
		if (m.len || m.status) {
			why = "malformed PING reply";
			goto proto;
		}
		return 0;
	}

	rq = dst_trans_find(&rem->set, m.id, &why);
	if (!rq) {
		if (why)
			goto proto;
		goto stale;
	}
	cmd = blk_mq_rq_to_pdu(rq);
	spin_lock_bh(&cmd->lock);
	awaited = dst_trans_awaited(rq, m.id);
	retries = cmd->retries;
	if (awaited)
		why = dst_reply_mismatch(conn, rq, &m);
	/*
	 * The data may take a while to come: RECEIVING keeps the request
	 * from being completed under it meanwhile (the timeout handler
	 * holds it; only this loop orphans what was sent on this
	 * connection).  A resend may still go out: the server answers the
	 * id once.
	 */
	if (awaited && !why && data)
		set_bit(DST_CMD_RECEIVING, &cmd->flags);
	/* Ours once taken: completed without holding up the next user. */
	done = awaited && !why && !data && dst_reply_answer(rq, m.status);
	spin_unlock_bh(&cmd->lock);
	if (!awaited)
		goto stale;
	if (why)
		goto proto;
	trace_dst_reply(dst_rem_name(rem), conn->idx, m.id,
			m.cmd & ~DST_CMD_REPLY, m.offset, m.len, retries,
			m.status);
	if (data) {
		err = dst_recv_data(conn, NULL, 0, rq);
		if (!err && c)
			err = dst_rconn_open_frame(conn, &hdr, rq);
		spin_lock_bh(&cmd->lock);
		clear_bit(DST_CMD_RECEIVING, &cmd->flags);
		done = !err && dst_reply_answer(rq, m.status);
		spin_unlock_bh(&cmd->lock);
		if (err)
			return err;
	}
	if (done)
		dst_trans_complete(rq);
	return 0;

stale:
	/* Its request timed out, or the tag moved on.  Skip what it carries. */
	if (m.cmd != (DST_CMD_READ | DST_CMD_REPLY) || m.status)
		return 0;
	if (m.len > rem->geo.max_io) {
		why = "stale reply longer than max_io";
		goto proto;
	}
	/*
	 * Under session keys the data must be checked, and there are no
	 * pages to check it in: start afresh.
	 */
	if (c) {
		why = "stale READ reply under session keys";
		goto proto;
	}
	return dst_sock_discard(conn->sock, m.len);

proto:
	pr_err("%s: protocol error from %pISpc on connection %d: %s\n",
	       dst_rem_name(rem), &rem->node->cfg.addr, conn->idx, why);
	return -EPROTO;
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
	    !test_bit(DST_CMD_RECEIVING, &cmd->flags)) {
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
			done = dst_reply_answer(rq, m.status);
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
static bool dst_rconn_rx_fast(struct dst_sock_watch *w, struct sock *sk)
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

static void dst_rconn_down(struct dst_rconn *conn, int err);

/*
 * The receive loop: replies while there are any, then back to the
 * watch, which queues it again on the CPU where the server's next frame
 * arrives (conn.c), so the reply completes there without waking a
 * worker on another CPU.  A frame that is half there is waited for.
 */
static void dst_recv_work(struct work_struct *work)
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

/* --- the link: connections going down and coming back --------------- */

/*
 * The receive loop of @conn has ended: nothing more can arrive on it.
 * Stop sending on it, orphan what it carried, and let the reconnect work
 * bring it back.  Losing the last connection quiesces the queue (I/O is
 * held) and starts the fail_timeout_s clock.
 */
static void dst_rconn_down(struct dst_rconn *conn, int err)
{
	struct dst_remote *rem = conn->rem;
	unsigned int orphans;
	bool stopping;

	dst_rconn_kill(conn);
	mutex_lock(&conn->tx_lock);
	WRITE_ONCE(conn->live, false);
	mutex_unlock(&conn->tx_lock);
	orphans = dst_trans_orphan(&rem->set, conn->idx);
	trace_dst_conn_down(dst_rem_name(rem), conn->idx, READ_ONCE(conn->epoch),
			    err, orphans);

	mutex_lock(&rem->state_lock);
	rem->nr_live--;
	stopping = rem->stopping;
	if (!stopping && !rem->nr_live && !rem->failfast) {
		blk_mq_quiesce_queue_nowait(rem->disk->queue);
		rem->quiesced = true;
		if (rem->fail_s >= 0)
			queue_delayed_work(rem->wq, &rem->fail_work,
					   rem->fail_s * HZ);
	}
	dst_remote_set_link(rem);
	if (!stopping)
		queue_delayed_work(rem->wq, &rem->reconnect_work, 0);
	mutex_unlock(&rem->state_lock);

	if (stopping || READ_ONCE(rem->failfast)) {
		dst_trans_fail_orphans(&rem->set, conn->idx);
		return;
	}
	pr_warn("%s: connection %d to %pISpc lost (%d) with %u request%s in flight; reconnecting\n",
		dst_rem_name(rem), conn->idx, &rem->node->cfg.addr, err,
		orphans, orphans == 1 ? "" : "s");
}

/* Put a fresh, fenced socket in slot @conn and resend its orphans. */
static void dst_rconn_up(struct dst_rconn *conn, struct socket *sock,
			 struct dst_crypto *crypto)
{
	struct dst_remote *rem = conn->rem;
	struct dst_crypto *old_crypto;
	struct socket *old;
	unsigned int n;

	mutex_lock(&conn->sock_lock);
	old = conn->sock;
	old_crypto = conn->crypto;
	conn->sock = sock;
	conn->crypto = crypto;
	mutex_unlock(&conn->sock_lock);
	if (old) {
		dst_sock_unwatch(old, &conn->watch);
		sock_release(old);
	}
	dst_crypto_free(old_crypto);

	WRITE_ONCE(conn->last_rx, jiffies);
	dst_sock_watch(sock, &conn->watch, rem->wq, &conn->recv_work,
		       dst_rconn_rx_fast);

	/*
	 * One transition under state_lock: the slot is counted in nr_live
	 * before it is published live.  From then on its receive loop may
	 * find the socket dead at once and take the slot down again
	 * (dst_rconn_down() decrements nr_live under state_lock, and with
	 * none left quiesces the queue and starts the fail clock), so it
	 * must find the count that includes it.
	 */
	mutex_lock(&rem->state_lock);
	rem->nr_live++;
	rem->failfast = false;
	cancel_delayed_work(&rem->fail_work);
	mutex_lock(&conn->tx_lock);
	WRITE_ONCE(conn->epoch, conn->epoch + 1);
	/* A stale run of the receive loop that sees live sees this sock. */
	smp_store_release(&conn->live, true);
	mutex_unlock(&conn->tx_lock);
	if (rem->quiesced) {
		rem->quiesced = false;
		blk_mq_unquiesce_queue(rem->disk->queue);
	}
	dst_remote_set_link(rem);
	mutex_unlock(&rem->state_lock);
	queue_work(rem->wq, &conn->recv_work);

	n = dst_trans_resend_orphans(&rem->set, conn->idx);
	trace_dst_conn_up(dst_rem_name(rem), conn->idx, READ_ONCE(conn->epoch),
			  0, n);
	atomic64_add(n, &rem->resends);
	atomic64_inc(&rem->reconnects);
	pr_info("%s: connection %d to %pISpc is back; %u request%s resent\n",
		dst_rem_name(rem), conn->idx, &rem->node->cfg.addr, n,
		n == 1 ? "" : "s");
}

/* Capped exponential backoff from reconnect_delay_ms. */
static unsigned long dst_reconnect_delay(struct dst_remote *rem)
{
	unsigned int shift = min(rem->attempt, 16U);
	u64 ms = (u64)rem->reconnect_ms << shift;

	ms = min_t(u64, ms, max(rem->reconnect_ms, DST_RECONNECT_MAX_MS));
	return msecs_to_jiffies(ms);
}

static void dst_reconnect_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote,
					      reconnect_work);
	unsigned int noio = memalloc_noio_save();
	bool again = false;
	int i;

	for (i = 0; i < rem->nr_conns && !READ_ONCE(rem->stopping); i++) {
		struct dst_rconn *conn = &rem->conns[i];
		struct dst_crypto *crypto;
		struct socket *sock;

		if (READ_ONCE(conn->live))
			continue;
		/* Its old receive loop must be quite finished. */
		flush_work(&conn->recv_work);
		rem->attempt++;
		pr_info("%s: reconnect attempt %u to %pISpc (connection %d)\n",
			dst_rem_name(rem), rem->attempt, &rem->node->cfg.addr,
			i);
		sock = dst_rconn_open(rem, conn, false,
				      DST_RECONNECT_TIMEOUT_MS, &crypto);
		trace_dst_reconnect(dst_rem_name(rem), i, rem->attempt,
				    PTR_ERR_OR_ZERO(sock));
		if (IS_ERR(sock)) {
			again = true;
			continue;
		}
		dst_rconn_up(conn, sock, crypto);
	}
	if (again && !READ_ONCE(rem->stopping))
		queue_delayed_work(rem->wq, &rem->reconnect_work,
				   dst_reconnect_delay(rem));
	else if (!again)
		rem->attempt = 0;
	memalloc_noio_restore(noio);
}

/* fail_timeout_s without any connection: stop holding I/O. */
static void dst_fail_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, fail_work);

	mutex_lock(&rem->state_lock);
	if (rem->nr_live || rem->failfast) {
		mutex_unlock(&rem->state_lock);
		return;
	}
	rem->failfast = true;
	if (rem->quiesced) {
		rem->quiesced = false;
		blk_mq_unquiesce_queue(rem->disk->queue);
	}
	dst_remote_set_link(rem);
	mutex_unlock(&rem->state_lock);

	pr_err("%s: no connection to %pISpc for %d s; failing I/O until it is back\n",
	       dst_rem_name(rem), &rem->node->cfg.addr, rem->fail_s);
	dst_trans_fail_orphans(&rem->set, -1);
}

/*
 * Keepalive: a connection silent for keepalive_ms gets a PING; one silent
 * for twice that is dead, whatever TCP thinks.  A busy connection is
 * never silent: every reply counts, and so does any byte TCP receives or
 * gets acknowledged, so a frame crawling over a bad link is not mistaken
 * for a dead peer.
 */
static void dst_ka_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, ka_work);
	unsigned long ka = msecs_to_jiffies(rem->ka_ms);
	unsigned int noio = memalloc_noio_save();
	int i;

	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];
		unsigned long idle;
		bool spent = false;
		int err;

		if (!READ_ONCE(conn->live))
			continue;
		/*
		 * Bytes moving either way count, not only whole frames.
		 * Sampled without tx_lock, which a sender holds for as
		 * long as a slow link takes to drain its frame: TCP's
		 * sequence numbers are read locklessly, and sock_lock only
		 * keeps the socket from being replaced meanwhile.
		 */
		mutex_lock(&conn->sock_lock);
		if (conn->sock) {
			u64 p = dst_sock_progress(conn->sock);

			if (p != conn->ka_progress) {
				conn->ka_progress = p;
				WRITE_ONCE(conn->last_rx, jiffies);
			}
		}
		mutex_unlock(&conn->sock_lock);
		idle = jiffies - READ_ONCE(conn->last_rx);
		if (idle >= 2 * ka) {
			pr_warn("%s: connection %d to %pISpc silent for %u ms despite keepalive; dropping it\n",
				dst_rem_name(rem), i, &rem->node->cfg.addr,
				jiffies_to_msecs(idle));
			dst_rconn_kill(conn);
			continue;
		}
		/*
		 * A connection busy sending is not idle: no PING then.  Nor
		 * does the PING wait for socket memory, which would hold up
		 * every other connection's keepalive: one that the socket
		 * does not take at once, whole, is skipped, unless part of
		 * it (or its seal) is spent, which ends the connection.
		 */
		if (idle < ka || !mutex_trylock(&conn->tx_lock))
			continue;
		if (conn->live && sk_stream_is_writeable(conn->sock->sk)) {
			err = dst_rconn_send_ctl(conn, DST_CMD_PING,
						 MSG_DONTWAIT, &spent);
			if (spent)
				pr_warn("%s: PING on connection %d failed half-way: %d; dropping it\n",
					dst_rem_name(rem), i, err);
		}
		mutex_unlock(&conn->tx_lock);
		if (spent)
			dst_rconn_kill(conn);
	}
	memalloc_noio_restore(noio);
	queue_delayed_work(rem->wq, &rem->ka_work, max(ka / 2, 1UL));
}

/* --- detach watchdog ----------------------------------------------- */

static void dst_watchdog(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, watchdog);
	long now = atomic_long_read(&rem->completions);
	int i;

	if (now != rem->seen) {
		rem->seen = now;
		queue_delayed_work(rem->wq, &rem->watchdog,
				   msecs_to_jiffies(DST_DETACH_GRACE_MS));
		return;
	}
	pr_warn("%s: server silent for %d ms while detaching; failing I/O in flight\n",
		dst_rem_name(rem), DST_DETACH_GRACE_MS);
	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_kill(&rem->conns[i]);
}

/* --- attach and detach --------------------------------------------- */

static void dst_remote_free(struct dst_remote *rem)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];

		if (conn->sock) {
			dst_sock_unwatch(conn->sock, &conn->watch);
			sock_release(conn->sock);
		}
		dst_crypto_free(conn->crypto);
		dst_crypto_buf_free(conn->cbuf);
	}
	if (rem->wq)
		destroy_workqueue(rem->wq);
	free_percpu(rem->stats);
	dst_trans_gens_free(rem->gens);
	if (rem->index >= 0)
		ida_free(&dst_index_ida, rem->index);
	put_net(rem->net);
	kfree(rem);
}

/* Size the disk: the server's, or a smaller one the administrator set. */
static int dst_remote_size(struct dst_remote *rem, u64 *size)
{
	struct dst_node *node = rem->node;
	u64 want = dst_node_get_param(node, DST_P_SIZE);

	*size = rem->geo.size;
	if (!want)
		return 0;
	if (want > rem->geo.size || want % rem->geo.lbs) {
		pr_err("%s: size %llu does not fit export '%s' (%llu bytes, %u-byte blocks)\n",
		       node->name, want, node->cfg.export, rem->geo.size,
		       rem->geo.lbs);
		return -EINVAL;
	}
	*size = want;
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

static const struct block_device_operations dst_disk_fops = {
	.owner	= THIS_MODULE,
};

/* The tag set and the disk, not yet visible. */
static int dst_remote_alloc_disk(struct dst_remote *rem, u64 size)
{
	struct dst_node *node = rem->node;
	struct gendisk *disk;
	s64 ms;
	int err;

	rem->set.ops = &dst_mq_ops;
	rem->set.nr_hw_queues = rem->nr_conns;
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

static void dst_remote_free_disk(struct dst_remote *rem)
{
	put_disk(rem->disk);
	blk_mq_free_tag_set(&rem->set);
}

/* Stop the receive loops; what they leave behind fails. */
static void dst_remote_close(struct dst_remote *rem, int started)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_kill(&rem->conns[i]);
	for (i = 0; i < started; i++)
		flush_work(&rem->conns[i].recv_work);
	/* The fast path must not look at requests once the tag set goes. */
	for (i = 0; i < rem->nr_conns; i++)
		if (rem->conns[i].sock)
			dst_sock_unwatch(rem->conns[i].sock,
					 &rem->conns[i].watch);
}

static void dst_remote_cancel_works(struct dst_remote *rem)
{
	cancel_delayed_work_sync(&rem->reconnect_work);
	cancel_delayed_work_sync(&rem->fail_work);
	cancel_delayed_work_sync(&rem->ka_work);
}

/*
 * Read the partition table of a disk just attached, by opening it: the
 * first open scans (GD_NEED_PART_SCAN).  A work item of its own, on a
 * workqueue that is not the node's: held I/O (fail_timeout_s=-1) may
 * keep it waiting until the server is back or the disk is detached, and
 * the node's WQ_MEM_RECLAIM rescuer must never be the one waiting.
 * dst_remote_stop() fails what is held, then waits for it.
 */
static void dst_remote_scan_work(struct work_struct *work)
{
	struct dst_remote *rem = container_of(work, struct dst_remote,
					      scan_work);
	struct dst_node *node = rem->node;
	struct block_device *bdev;

	bdev = blkdev_get_by_dev(disk_devt(rem->disk), FMODE_READ, NULL);
	if (!IS_ERR(bdev))
		blkdev_put(bdev, FMODE_READ);
	WRITE_ONCE(node->scanning, false);
	wake_up_all(&node->scan_wait);
}

static struct dst_remote *dst_remote_alloc(struct dst_node *node, int n)
{
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	u32 max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE;
	struct dst_remote *rem;
	int i;

	rem = kzalloc(struct_size(rem, conns, n), GFP_KERNEL);
	if (!rem)
		return NULL;
	rem->node = node;
	rem->nr_conns = n;
	rem->index = -1;
	rem->net = get_net(current->nsproxy->net_ns);
	/* Never 0: that is "no session" to the server. */
	rem->session = get_random_u64() | 1;
	rem->max_retries = dst_node_get_param(node, DST_P_TRANS_MAX_RETRIES);
	rem->ka_ms = dst_node_get_param(node, DST_P_KEEPALIVE_MS);
	rem->reconnect_ms = dst_node_get_param(node, DST_P_RECONNECT_DELAY_MS);
	rem->fail_s = dst_node_get_param(node, DST_P_FAIL_TIMEOUT_S);
	mutex_init(&rem->state_lock);
	atomic_long_set(&rem->completions, 0);
	INIT_DELAYED_WORK(&rem->watchdog, dst_watchdog);
	INIT_DELAYED_WORK(&rem->reconnect_work, dst_reconnect_work);
	INIT_DELAYED_WORK(&rem->fail_work, dst_fail_work);
	INIT_DELAYED_WORK(&rem->ka_work, dst_ka_work);
	INIT_WORK(&rem->scan_work, dst_remote_scan_work);
	atomic64_set(&rem->reconnects, 0);
	atomic64_set(&rem->resends, 0);
	atomic64_set(&rem->timeouts, 0);
	for (i = 0; i < n; i++) {
		rem->conns[i].rem = rem;
		rem->conns[i].idx = i;
		mutex_init(&rem->conns[i].tx_lock);
		mutex_init(&rem->conns[i].sock_lock);
		INIT_WORK(&rem->conns[i].recv_work, dst_recv_work);
		INIT_WORK(&rem->conns[i].tx_work, dst_tx_work);
		init_completion(&rem->conns[i].tx_done);
	}
	/* Now, not when a reconnection needs them under memory pressure. */
	for (i = 0; i < n && cfg->key_len; i++) {
		rem->conns[i].cbuf = dst_crypto_buf_alloc(max_io,
							  cfg->cipher[0]);
		if (!rem->conns[i].cbuf) {
			dst_remote_free(rem);
			return NULL;
		}
	}
	return rem;
}

/**
 * dst_remote_start - attach a remote node's export as /dev/dstN
 * @node: the node, locked, with its configuration
 *
 * Returns 0, or the errno the administrator's "echo 1 > enable" sees:
 * -EDESTADDRREQ without an address, what connect() said (ECONNREFUSED,
 * ETIMEDOUT, ...), the server's refusal (ENOENT: no such export, ...),
 * -EPROTO for a peer that does not speak DST, -EINVAL for a size that
 * does not fit.  Attaching does not retry: only a working attachment
 * reconnects.
 */
int dst_remote_start(struct dst_node *node)
{
	int n = dst_node_get_param(node, DST_P_CONNECTIONS);
	struct dst_remote *rem;
	int i, err, started = 0;
	u64 size;

	lockdep_assert_held(&node->lock);
	if (!node->cfg.addr_set) {
		pr_err("%s: set addr before enabling\n", node->name);
		return -EDESTADDRREQ;
	}

	rem = dst_remote_alloc(node, n);
	if (!rem)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct socket *sock = dst_rconn_open(rem, &rem->conns[i], !i,
						     DST_CONNECT_TIMEOUT_MS,
						     &rem->conns[i].crypto);

		if (IS_ERR(sock)) {
			err = PTR_ERR(sock);
			goto out_free;
		}
		rem->conns[i].sock = sock;
		rem->conns[i].live = true;
		rem->conns[i].last_rx = jiffies;
	}
	rem->nr_live = n;
	err = dst_remote_size(rem, &size);
	if (err)
		goto out_free;
	rem->read_only = dst_node_get_param(node, DST_P_READ_ONLY) ||
			 (rem->geo.features & DST_FEAT_READ_ONLY);

	err = -ENOMEM;
	rem->stats = dst_stats_alloc();
	rem->gens = dst_trans_gens_alloc(n, dst_node_get_param(node,
							       DST_P_QUEUE_DEPTH));
	if (!rem->stats || !rem->gens)
		goto out_free;
	/* Per-CPU: a receive loop runs where its socket's bytes arrive. */
	rem->wq = alloc_workqueue("dst-%s", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0,
				  node->name);
	if (!rem->wq)
		goto out_free;
	err = ida_alloc_max(&dst_index_ida, DST_MAX_DISKS - 1, GFP_KERNEL);
	if (err < 0)
		goto out_free;
	rem->index = err;

	err = dst_remote_alloc_disk(rem, size);
	if (err)
		goto out_free;

	/*
	 * Receive before the disk is added: udev may read it the moment
	 * it appears.  The disk is a child of the node's bus device, so
	 * udev rules can match ATTRS{name}.
	 */
	node->rem = rem;
	WRITE_ONCE(node->link, DST_LINK_UP);
	for (started = 0; started < n; started++) {
		struct dst_rconn *conn = &rem->conns[started];

		dst_sock_watch(conn->sock, &conn->watch, rem->wq,
			       &conn->recv_work, dst_rconn_rx_fast);
		queue_work(rem->wq, &conn->recv_work);
		trace_dst_conn_up(node->name, started, 0, 0, 0);
	}
	if (rem->ka_ms)
		queue_delayed_work(rem->wq, &rem->ka_work,
				   msecs_to_jiffies(rem->ka_ms / 2));
	/*
	 * Not the partition scan, though: it would run here, under
	 * node->lock, and a connection lost during it with
	 * fail_timeout_s=-1 would hold the lock -- and disable, rmdir and
	 * stats with it -- until the server came back.  The first open
	 * scans instead: udev's, as for nbd, or dst_remote_scan_work()'s.
	 */
	set_bit(GD_SUPPRESS_PART_SCAN, &rem->disk->state);
	err = device_add_disk(&node->dev, rem->disk, NULL);
	if (err)
		goto out_close;
	clear_bit(GD_SUPPRESS_PART_SCAN, &rem->disk->state);
	set_bit(GD_NEED_PART_SCAN, &rem->disk->state);
	node->scanning = true;
	queue_work(system_long_wq, &rem->scan_work);

	node->eff_size = size;
	pr_info("%s: attached export '%s' at %pISpc as %s: %llu bytes, %d connection%s%s\n",
		node->name, node->cfg.export, &node->cfg.addr,
		rem->disk->disk_name, size, n, n > 1 ? "s" : "",
		rem->read_only ? ", read-only" : "");
	return 0;

out_close:
	mutex_lock(&rem->state_lock);
	rem->stopping = true;
	mutex_unlock(&rem->state_lock);
	dst_remote_close(rem, started);
	dst_remote_cancel_works(rem);
	dst_remote_free_disk(rem);
out_free:
	node->rem = NULL;
	dst_remote_free(rem);
	return err;
}

/**
 * dst_remote_scan_wait - let "echo 1 > enable" return with partitions
 * @node: the remote node, just enabled, not locked
 *
 * Waits for the partition scan to end, but not for a server that went
 * away meanwhile (no connection left: the scan goes on in the
 * background, and partitions appear when it can end), and not past a
 * fatal signal.  configfs holds the attribute's lock while the store
 * waits here, which rmdir waits for: that wait must stay short.
 */
void dst_remote_scan_wait(struct dst_node *node)
{
	int err;

	err = wait_event_killable(node->scan_wait,
				  !READ_ONCE(node->scanning) ||
				  READ_ONCE(node->link) == DST_LINK_RECONNECTING ||
				  READ_ONCE(node->link) == DST_LINK_FAILED);
	if (!err && READ_ONCE(node->scanning))
		pr_warn("%s: the server went away during the partition scan; partitions appear when it is back\n",
			node->name);
}

/* Tell the server we are going, where the connection still works. */
static void dst_rconn_bye(struct dst_rconn *conn)
{
	bool spent;

	/* The connection closes right after: a BYE cut short is harmless. */
	mutex_lock(&conn->tx_lock);
	if (conn->live)
		dst_rconn_send_ctl(conn, DST_CMD_BYE, MSG_DONTWAIT, &spent);
	mutex_unlock(&conn->tx_lock);
}

/**
 * dst_remote_stop - detach: remove the disk and close the connections
 * @node: the node, locked
 *
 * No reconnection is tried any more; with no connection left, held and
 * new I/O fail at once, so the disk can go.
 */
void dst_remote_stop(struct dst_node *node)
{
	struct dst_remote *rem = node->rem;
	int i;

	lockdep_assert_held(&node->lock);
	mutex_lock(&rem->state_lock);
	WRITE_ONCE(rem->stopping, true);
	if (!rem->nr_live) {
		rem->failfast = true;
		if (rem->quiesced) {
			rem->quiesced = false;
			blk_mq_unquiesce_queue(rem->disk->queue);
		}
	}
	mutex_unlock(&rem->state_lock);
	/* Orphans wait for a reconnection that will not come now. */
	dst_trans_fail_orphans(&rem->set, -1);
	cancel_delayed_work_sync(&rem->reconnect_work);

	rem->seen = atomic_long_read(&rem->completions);
	queue_delayed_work(rem->wq, &rem->watchdog,
			   msecs_to_jiffies(DST_DETACH_GRACE_MS));
	/* A scan still waiting ends with its I/O, failed above or by then. */
	cancel_work_sync(&rem->scan_work);
	WRITE_ONCE(node->scanning, false);
	wake_up_all(&node->scan_wait);
	/* Writes back, fails new I/O, waits for what is in flight. */
	del_gendisk(rem->disk);
	cancel_delayed_work_sync(&rem->watchdog);
	dst_remote_cancel_works(rem);

	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_bye(&rem->conns[i]);
	dst_remote_close(rem, rem->nr_conns);

	pr_info("%s: detached %s\n", node->name, rem->disk->disk_name);
	dst_remote_free_disk(rem);
	node->rem = NULL;
	node->eff_size = 0;
	dst_remote_free(rem);
}

ssize_t dst_remote_show_device(struct dst_node *node, char *buf)
{
	struct dst_remote *rem;
	ssize_t ret;

	mutex_lock(&node->lock);
	rem = node->enabled ? node->rem : NULL;
	if (rem)
		ret = sysfs_emit(buf, "%s %d:%d\n", rem->disk->disk_name,
				 rem->disk->major, rem->disk->first_minor);
	else
		ret = sysfs_emit(buf, "\n");
	mutex_unlock(&node->lock);
	return ret;
}

const char *dst_remote_link_state(struct dst_node *node)
{
	static const char *const names[] = {
		[DST_LINK_UP]		= "running",
		[DST_LINK_DEGRADED]	= "degraded",
		[DST_LINK_RECONNECTING]	= "reconnecting",
		[DST_LINK_FAILED]	= "failed",
	};
	int link = READ_ONCE(node->link);

	return link >= 0 && link < ARRAY_SIZE(names) ? names[link] : "?";
}

/* "key value" lines: see docs/configfs.md. */
ssize_t dst_remote_show_stats(struct dst_node *node, char *buf)
{
	struct dst_remote *rem;
	ssize_t len;

	mutex_lock(&node->lock);
	rem = node->enabled ? node->rem : NULL;
	if (!rem) {
		len = sysfs_emit(buf, "state disabled\n");
		goto out;
	}
	len = sysfs_emit(buf, "state %s\nconnections %d/%d\n",
			 dst_remote_link_state(node), READ_ONCE(rem->nr_live),
			 rem->nr_conns);
	len += sysfs_emit_at(buf, len,
			     "reconnects %lld\nresends %lld\ntimeouts %lld\ninflight %u\n",
			     atomic64_read(&rem->reconnects),
			     atomic64_read(&rem->resends),
			     atomic64_read(&rem->timeouts),
			     dst_trans_count(&rem->set));
	len = dst_stats_emit(rem->stats, buf, len);
out:
	mutex_unlock(&node->lock);
	return len;
}

/*
 * debugfs (debugfs.c): the files exist only while node->rem does, and
 * their removal waits for a reader, so neither takes node->lock.
 */
void dst_remote_show_inflight(struct dst_node *node, struct seq_file *m)
{
	dst_trans_show(m, &node->rem->set);
}

void dst_remote_show_conns(struct dst_node *node, struct seq_file *m)
{
	struct dst_remote *rem = node->rem;
	int i;

	seq_printf(m, "link %s live %d/%d reconnect_attempt %u\n",
		   dst_remote_link_state(node), READ_ONCE(rem->nr_live),
		   rem->nr_conns, READ_ONCE(rem->attempt));
	for (i = 0; i < rem->nr_conns; i++) {
		struct dst_rconn *conn = &rem->conns[i];
		u32 unacked = 0, inq = 0;

		mutex_lock(&conn->sock_lock);
		if (conn->sock) {
			unacked = dst_sock_unacked(conn->sock);
			inq = dst_sk_inq(conn->sock->sk);
		}
		mutex_unlock(&conn->sock_lock);
		seq_printf(m, "conn %d %s epoch %u unacked_bytes %u unread_bytes %u last_rx_ms %u\n",
			   i, READ_ONCE(conn->live) ? "live" : "down",
			   READ_ONCE(conn->epoch), unacked, inq,
			   jiffies_to_msecs(jiffies - READ_ONCE(conn->last_rx)));
	}
}
