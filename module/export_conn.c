// SPDX-License-Identifier: GPL-2.0
/*
 * DST export node: a client connection.
 *
 * Admission happens at accept (dst_export_admit(): the access list, the
 * number of handshakes, per source); the connection's receive loop then
 * shakes hands within DST_SRV_HELLO_MS, authenticates a keyed client and
 * derives the session keys, and from then on reads requests until the
 * connection dies or the export stops.
 *
 * Fencing (docs/resilience.md).  A client that reconnects names its
 * session and slot in HELLO, and the server fences the connection it
 * replaces -- shuts it down and waits for all its I/O to finish -- before
 * the welcome, so no stale copy of a resent write can reach the disk after
 * the client saw it complete.
 *
 * A connection's state, each change made in one function, under
 * exp->conns_lock:
 *
 *   accept --> handshake --dst_sconn_establish()--> established
 *                  |                                     |
 *                  +-- a newer HELLO for its (session, slot):
 *                  |   dst_sconn_fence() marks it fenced and shuts
 *                  |   it down; it drains and never answers again
 *                  v                                     v
 *   dst_sconn_close(): off the list, freed  <-- error, BYE, fenced,
 *                                               the export stopping
 *
 * `established` and `fenced` are two bits, not one state: a connection
 * can be fenced while still in its handshake (itself waiting on a fence),
 * and must then still give its handshake slot back when it closes.  Two
 * more bits, also under conns_lock, say whom dst_export_resize() tells
 * when the export grows: `welcomed` (the welcome is out, so a RESIZE
 * notice cannot overtake it) and `closing` (dst_sconn_close() has begun
 * and waits for no new frame).
 * `dead` belongs to the reply path (dst_sconn_kill(), under conn->lock):
 * a send failed, and replies are dropped from then on.  debugfs shows
 * the combination (dst_sconn_state()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "export.h"
#include "trace.h"

/* A connection whose sends fail: replies are dropped from now on. */
void dst_sconn_kill(struct dst_sconn *conn)
{
	conn->dead = true;
	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
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
		/* The size now: the export may have grown since the grant. */
		conn->geo.size = exp->geo.size;
	}
	mutex_unlock(&exp->conns_lock);
	return ok;
}

/*
 * The welcome is out: from now on dst_export_resize() tells this client
 * when the export grows.  Until now it kept the size the welcome would
 * carry; if the export grew meanwhile, tell the client at once.
 */
static void dst_sconn_welcomed(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;

	mutex_lock(&exp->conns_lock);
	conn->welcomed = true;
	if (exp->geo.size > conn->geo.size && !conn->fenced) {
		WRITE_ONCE(conn->geo.size, exp->geo.size);
		if (conn->geo.features & DST_FEAT_RESIZE)
			dst_sconn_notify_size(conn);
	}
	mutex_unlock(&exp->conns_lock);
}

/* A client's HELLO, as received (what a keyed handshake's proofs cover) and decoded. */
struct dst_sconn_hello {
	struct {
		struct dst_wire_hdr hdr;
		struct dst_wire_hello w;
		struct dst_wire_hello_auth auth;
	} f;
	u32 len;			/* of the frame, header and all */
	bool keyed;			/* it carries a nonce and algorithms */
	struct dst_hello h;
	char hash[DST_NAMELEN], cipher[DST_NAMELEN];
	u8 cnonce[DST_NONCE_LEN];
};

/* The first frame: a well-formed HELLO, or the connection ends. */
static int dst_sconn_read_hello(struct dst_sconn *conn,
				struct dst_sconn_hello *hi)
{
	const char *name = conn->exp->node->name;
	struct dst_msg m;
	int err;

	err = dst_sock_recv(conn->sock, &hi->f.hdr, sizeof(hi->f.hdr));
	if (err)
		return err;
	if (dst_msg_decode(&hi->f.hdr, &m) || m.cmd != DST_CMD_HELLO ||
	    (m.len != DST_HELLO_SIZE &&
	     m.len != DST_HELLO_SIZE + DST_HELLO_AUTH_SIZE) ||
	    m.id || m.offset || m.status) {
		pr_err_ratelimited("%s: %pISpc: not a DST v%d HELLO; closing\n",
				   name, &conn->peer, DST_PROTO_VERSION);
		return -EPROTO;
	}
	err = dst_sock_recv(conn->sock, &hi->f.w, m.len);
	if (err)
		return err;
	hi->len = DST_HDR_SIZE + m.len;
	hi->keyed = m.len > DST_HELLO_SIZE;
	if (dst_hello_decode(&hi->f.w, &hi->h) ||
	    !(hi->h.features & DST_FEAT_AUTH) != !hi->keyed ||
	    (hi->keyed && dst_hello_auth_decode(&hi->f.auth, hi->cnonce,
						 hi->hash, hi->cipher))) {
		pr_err_ratelimited("%s: %pISpc: malformed HELLO; closing\n",
				   name, &conn->peer);
		return -EPROTO;
	}
	return 0;
}

/*
 * Whether this client may have this export: DST_ST_OK, or the status
 * that tells it why not.  *@ro: an access rule makes it read-only.
 */
static u32 dst_sconn_judge_hello(struct dst_sconn *conn,
				 const struct dst_sconn_hello *hi, bool *ro)
{
	struct dst_export *exp = conn->exp;
	struct dst_node *node = exp->node;
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	const struct dst_hello *h = &hi->h;

	if (h->version_min > DST_PROTO_VERSION ||
	    h->version_max < DST_PROTO_VERSION_MIN)
		return DST_ST_VERSION;
	/* A client the list refuses learns nothing, not even the name. */
	if (dst_acl_check(node, &conn->peer, ro))
		return DST_ST_ACCESS;
	if (strcmp(h->export, node->name))
		return DST_ST_NOENT;
	if (READ_ONCE(exp->stopping))
		return DST_ST_BUSY;
	if (h->max_io < PAGE_SIZE)
		return DST_ST_INVAL;
	if (h->session &&
	    (!h->nr_queues || !h->queue_depth ||
	     (u32)h->nr_queues * h->queue_depth > DST_SRV_MAX_TAGS))
		return DST_ST_INVAL;
	/* A key on one side only, or other algorithms: never a silent downgrade. */
	if (!hi->keyed != !cfg->key_len) {
		pr_warn_ratelimited("%s: %pISpc: refused: %s\n", node->name,
				    &conn->peer, hi->keyed ?
				    "the client has a key and this export none" :
				    "the client has no key and this export needs one");
		return DST_ST_AUTH;
	}
	if (hi->keyed && (strcmp(hi->hash, dst_crypto_hash_name(cfg)) ||
			  strcmp(hi->cipher, cfg->cipher))) {
		pr_warn_ratelimited("%s: %pISpc: refused: the client uses hash '%*pE' cipher '%*pE', this export '%s' '%s'\n",
				    node->name, &conn->peer,
				    (int)strnlen(hi->hash, sizeof(hi->hash)),
				    hi->hash,
				    (int)strnlen(hi->cipher, sizeof(hi->cipher)),
				    hi->cipher, dst_crypto_hash_name(cfg),
				    cfg->cipher);
		return DST_ST_AUTH;
	}
	return DST_ST_OK;
}

/*
 * What this connection may do: what both sides can, read-only if either
 * side says so.  The server enforces a ro rule itself: the client just
 * knows.
 */
static void dst_sconn_grant(struct dst_sconn *conn, const struct dst_hello *h,
			    bool ro)
{
	struct dst_geometry *g = &conn->geo;

	*g = conn->exp->geo;
	g->version = DST_PROTO_VERSION;
	g->features &= h->features | DST_FEAT_READ_ONLY;
	g->features |= h->features & DST_FEAT_READ_ONLY;
	if (ro)
		g->features |= DST_FEAT_READ_ONLY;
	g->max_io = min_t(u32, g->max_io, rounddown(h->max_io, PAGE_SIZE));
	if (!(g->features & DST_FEAT_DISCARD))
		g->max_discard = 0;
	if (!(g->features & DST_FEAT_WRITE_ZEROES))
		g->max_write_zeroes = 0;
}

/* Refuse the client with @status, telling it why; returns -EPERM. */
static int dst_sconn_refuse(struct dst_sconn *conn, const struct dst_hello *h,
			    u32 status)
{
	const char *name = conn->exp->node->name;

	if (status == DST_ST_ACCESS)
		pr_warn_ratelimited("%s: %pISpc: refused: no access rule allows this address\n",
				    name, &conn->peer);
	else if (status != DST_ST_AUTH)	/* said when found */
		pr_warn_ratelimited("%s: %pISpc: refused (export '%*pE'): status %u\n",
				    name, &conn->peer,
				    (int)strnlen(h->export, sizeof(h->export)),
				    h->export, status);
	dst_sconn_reply_hello(conn, status);
	return -EPERM;
}

/*
 * The first frame must be a well-formed HELLO for this export; the
 * answer is the welcome with what this connection may do, or a status
 * that tells the client why not.  Returns 0 when the client is in.
 */
static noinline __noclone int dst_sconn_handshake(struct dst_sconn *conn)
{
	struct dst_node *node = conn->exp->node;
	struct dst_sconn_hello hi;
	const struct dst_hello *h = &hi.h;
	bool ro = false;
	u32 status;
	int err;

	err = dst_sconn_read_hello(conn, &hi);
	if (err)
		return err;
	status = dst_sconn_judge_hello(conn, &hi, &ro);
	if (status)
		return dst_sconn_refuse(conn, h, status);
	dst_sconn_grant(conn, h, ro);
	/* Only an authenticated client may fence a slot or cost memory. */
	if (hi.keyed) {
		err = dst_sconn_auth(conn, &hi.f, hi.len, hi.cnonce);
		memzero_explicit(hi.cnonce, sizeof(hi.cnonce));
		if (err == -EKEYREJECTED)
			dst_sconn_reply_hello(conn, DST_ST_AUTH);
		if (err)
			return err == -EKEYREJECTED ? -EPERM : err;
	}
	if (h->session) {
		conn->seen = kvcalloc((u32)h->nr_queues * h->queue_depth,
				      sizeof(*conn->seen), GFP_KERNEL);
		if (!conn->seen)
			return -ENOMEM;
		conn->nr_queues = h->nr_queues;
		conn->queue_depth = h->queue_depth;
	}
	/*
	 * The client has said all it had to say, and proved it holds the
	 * key if there is one: waiting for a replaced connection to drain
	 * may take longer than a handshake is given to read.
	 */
	cancel_delayed_work_sync(&conn->hs_timeout);
	if (h->session && !dst_sconn_fence(conn, h->session, h->slot)) {
		pr_warn_ratelimited("%s: %pISpc: the connection slot %u replaces did not drain in %d ms; refused\n",
				    node->name, &conn->peer, h->slot,
				    DST_SRV_FENCE_MS);
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
	dst_sconn_welcomed(conn);
	pr_info("%s: client %pISpc attached%s%s\n", node->name, &conn->peer,
		conn->geo.features & DST_FEAT_READ_ONLY ? " read-only" : "",
		conn->crypto ? ", authenticated" : "");
	return 0;
}

/* make check-debug fails it (fail_function): a half-made client unwinds. */
ALLOW_ERROR_INJECTION(dst_sconn_handshake, ERRNO);

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
 * The handshake, then the socket set up for service: no more receive
 * timeout, a send timeout for clients that stop reading, and the watch
 * that queues the loop where the client's frames arrive.
 */
static int dst_sconn_open(struct dst_sconn *conn)
{
	struct dst_export *exp = conn->exp;
	int err;

	dst_sock_set_timeout(conn->sock, DST_SRV_HELLO_MS);
	err = dst_sconn_handshake(conn);
	/* The timeout's work uses the socket: done before it goes. */
	cancel_delayed_work_sync(&conn->hs_timeout);
	if (err)
		return err;
	dst_sock_set_timeout(conn->sock, 0);
	lock_sock(conn->sock->sk);
	conn->sock->sk->sk_sndtimeo = msecs_to_jiffies(DST_SRV_SEND_MS);
	release_sock(conn->sock->sk);
	dst_sock_watch(conn->sock, &conn->watch, exp->recv_wq,
		       &conn->recv_work, NULL);
	if (conn->crypto)
		dst_sock_watch_tx(conn->sock, &conn->watch, exp->crypto_wq,
				  &conn->send_work);
	return 0;
}

/*
 * Serve requests while the client has sent any.  Returns 0 when all is
 * read and the watch will bring the loop back, or what ends the
 * connection: an error, or 1 for the client's goodbye.
 */
static int dst_sconn_serve(struct dst_sconn *conn)
{
	unsigned int batch = 0, frames = 0;
	bool more;
	int err;

	for (;;) {
		dst_sconn_wait_budget(conn);
		err = dst_sconn_recv_request(conn);
		frames++;
		if (err)
			return err;
		/*
		 * Answer what completed inline once the client has sent all
		 * it had, so replies to a burst of requests go out together
		 * -- or after a batch, so a client that never pauses still
		 * hears back, or once DST_SRV_REPLY_BYTES of read data wait,
		 * so the client copies one large read while we do the next.
		 */
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
			return 0;
		}
	}
}

/*
 * The end of a connection: answer what was read (unless sending
 * failed), close, and free it.
 */
static void dst_sconn_close(struct dst_sconn *conn, int err)
{
	struct dst_export *exp = conn->exp;
	struct dst_node *node = exp->node;
	unsigned int noio = memalloc_noio_save();

	/* No size notice is queued from now on (dst_export_resize()). */
	mutex_lock(&exp->conns_lock);
	conn->closing = true;
	mutex_unlock(&exp->conns_lock);
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
	unsigned int noio = memalloc_noio_save();
	int err = 0;

	if (!conn->established)
		err = dst_sconn_open(conn);
	/* Queued for bytes an earlier run already read: wait for more. */
	if (!err && dst_sock_idle(conn->sock)) {
		memalloc_noio_restore(noio);
		return;
	}
	if (!err)
		err = dst_sconn_serve(conn);
	memalloc_noio_restore(noio);
	if (err)
		dst_sconn_close(conn, err);
}

void dst_export_add_conn(struct dst_export *exp, struct socket *sock)
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
	dst_sconn_notice_init(conn);
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

/*
 * debugfs (debugfs.c): the files exist only while node->exp does, and
 * their removal waits for a reader, so neither takes node->lock.
 * conns_lock keeps each connection (and its socket) while it is shown.
 */
const char *dst_sconn_state(const struct dst_sconn *conn)
{
	if (READ_ONCE(conn->fenced))
		return "fenced";
	if (READ_ONCE(conn->dead))
		return "dead";
	return READ_ONCE(conn->established) ? "established" : "handshake";
}
