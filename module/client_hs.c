// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: a new connection.
 *
 * dst_rconn_open() gives a slot its next socket: it picks the path
 * (several addresses of one export, docs/configfs.md "Multipath"),
 * connects, and shakes hands -- HELLO/WELCOME, and for keyed nodes the
 * authenticated exchange that derives the session keys -- then checks
 * that the server is the export this disk is: the same geometry, and
 * where it counts the same identity (feature UUID).  dst_path_probe()
 * asks the same of a path without taking a slot.  What becomes of the
 * socket then is client_conn.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/slab.h>
#include <net/sock.h>

#include "client.h"

/* --- handshake ----------------------------------------------------- */

/*
 * The authenticated part of a keyed handshake (docs/protocol.md): the
 * server's challenge must prove the key before this side proves it in
 * turn.  @hello is our HELLO frame as sent.  On success the session's
 * keys are set up in *@cryptop and the welcome is the next frame.
 */
static int dst_rconn_auth(struct dst_remote *rem,
			  const struct sockaddr_storage *peer,
			  struct dst_crypto_buf *cbuf,
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
		       node->name, peer);
		err = -EKEYREJECTED;
		goto out;
	}
	c = dst_crypto_session(cfg, false, cnonce, b->ch.nonce,
			       dst_node_get_param(node, DST_P_MAX_PAGES) *
			       PAGE_SIZE, cbuf);
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

/* The handshake's frames, one at a time. */
struct dst_hs_buf {
	struct dst_wire_hdr hdr;
	union {
		struct {
			struct dst_wire_hello hello;
			struct dst_wire_hello_auth auth;
		};
		struct dst_wire_welcome welcome;
	};
};

/*
 * Say @hello; under a key, answer the server's challenge, which gives
 * the session keys (*@cryptop, the caller's to free).  Leaves the
 * header of the server's answer to HELLO in @buf->hdr.
 */
static int dst_rconn_hello(struct dst_remote *rem,
			   const struct sockaddr_storage *peer,
			   struct dst_crypto_buf *cbuf,
			   struct socket *sock, struct dst_hs_buf *buf,
			   const struct dst_hello *hello,
			   struct dst_crypto **cryptop)
{
	struct dst_node *node = rem->node;
	const struct dst_crypto_cfg *cfg = &node->cfg.crypto;
	struct dst_msg m = {
		.cmd = DST_CMD_HELLO,
		.len = DST_HELLO_SIZE,
	};
	u8 cnonce[DST_NONCE_LEN];
	bool keyed = cfg->key_len;
	int err;

	if (keyed) {
		m.len += DST_HELLO_AUTH_SIZE;
		dst_crypto_nonce(cnonce);
		dst_hello_auth_encode(&buf->auth, cnonce,
				      dst_crypto_hash_name(cfg), cfg->cipher);
	}
	dst_msg_encode(&buf->hdr, &m);
	dst_hello_encode(&buf->hello, hello);

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
			dst_hello_encode(&buf->hello, hello);
			err = dst_rconn_auth(rem, peer, cbuf, sock, buf,
					     DST_HDR_SIZE + DST_HELLO_SIZE +
					     DST_HELLO_AUTH_SIZE, cnonce, cryptop);
			if (err)
				goto out;
			err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
		} else if (!err && !dst_msg_decode(&buf->hdr, &m) &&
			   m.cmd == (DST_CMD_HELLO | DST_CMD_REPLY) &&
			   m.status == DST_ST_OK) {
			pr_err("%s: %pISpc did not authenticate (the export has no key?); closing\n",
			       node->name, peer);
			err = -EKEYREJECTED;
			goto out;
		}
		/* Else a refusal: read by the caller like any other. */
	} else if (!err) {
		err = dst_sock_recv(sock, &buf->hdr, DST_HDR_SIZE);
	}
	if (err)
		pr_err("%s: handshake with %pISpc failed: %d\n", node->name,
		       peer, err);
out:
	memzero_explicit(cnonce, sizeof(cnonce));
	return err;
}

/*
 * The server's answer to @hello, whose header is in @buf->hdr: a
 * refusal, or a welcome (checked with session keys @c, if any) that
 * describes an export this client can use, into @geo.
 */
static int dst_rconn_welcome(struct dst_remote *rem,
			     const struct sockaddr_storage *peer,
			     struct socket *sock,
			     struct dst_hs_buf *buf, struct dst_crypto *c,
			     const struct dst_hello *hello,
			     struct dst_geometry *geo)
{
	struct dst_node *node = rem->node;
	struct dst_msg m;
	int err;

	err = dst_msg_decode(&buf->hdr, &m);
	if (err || m.cmd != (DST_CMD_HELLO | DST_CMD_REPLY) || m.id) {
		pr_err("%s: %pISpc does not speak DST v%d\n", node->name,
		       peer, DST_PROTO_VERSION);
		return -EPROTO;
	}
	if (m.status != DST_ST_OK) {
		err = dst_status_to_errno(m.status);
		pr_err("%s: %pISpc refused export '%s': status %u (%d)%s\n",
		       node->name, peer, hello->export, m.status,
		       err, m.status == DST_ST_AUTH ?
		       ": key, hash or cipher differ from the export's" : "");
		return err;
	}
	if (m.len != DST_WELCOME_SIZE) {
		pr_err("%s: welcome of %u bytes from %pISpc\n", node->name,
		       m.len, peer);
		return -EPROTO;
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
			       node->name, peer);
			err = -EBADMSG;
		}
	}
	if (err)
		return err;
	err = dst_welcome_decode(&buf->welcome, geo);
	if (!err && (geo->version < hello->version_min ||
		     geo->version > hello->version_max ||
		     geo->features & ~(hello->features | DST_FEAT_READ_ONLY) ||
		     geo->max_io > hello->max_io))
		err = -EPROTO;
	if (err)
		pr_err("%s: %pISpc describes an export this client cannot use\n",
		       node->name, peer);
	return err;
}

/*
 * HELLO and its answer on a new connection to @peer, for slot @slot (-1:
 * a probe, with no session, which fences nothing): the export it
 * describes into @geo, and under a key the session keys into *@cryptop.
 */
static noinline __noclone int
dst_rconn_handshake(struct dst_remote *rem, int slot,
		    const struct sockaddr_storage *peer,
		    struct socket *sock, struct dst_geometry *geo,
		    struct dst_crypto **cryptop)
{
	struct dst_node *node = rem->node;
	struct dst_hello hello = {
		.version_min = DST_PROTO_VERSION_MIN,
		.version_max = DST_PROTO_VERSION,
		.features = DST_FEAT_ALL | DST_FEAT_RESIZE | DST_FEAT_UUID,
		.max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE,
		.session = slot < 0 ? 0 : rem->session,
		.slot = slot < 0 ? 0 : slot,
		.nr_queues = rem->nr_queues,
		.queue_depth = dst_node_get_param(node, DST_P_QUEUE_DEPTH),
	};
	struct dst_crypto *c = NULL;
	struct dst_hs_buf *buf;
	int err;

	*cryptop = NULL;
	buf = kzalloc(sizeof(*buf), GFP_NOIO);
	if (!buf)
		return -ENOMEM;
	if (!dst_node_get_param(node, DST_P_READ_ONLY))
		hello.features &= ~DST_FEAT_READ_ONLY;
	if (node->cfg.crypto.key_len)
		hello.features |= DST_FEAT_AUTH;
	strscpy(hello.export, node->cfg.export, sizeof(hello.export));
	/* A probe's keys are its own: the slot's buffers are in use. */
	err = dst_rconn_hello(rem, peer, slot < 0 ? NULL : rem->conns[slot].cbuf,
			      sock, buf, &hello, &c);
	if (!err)
		err = dst_rconn_welcome(rem, peer, sock, buf, c, &hello, geo);
	kfree(buf);
	if (err)
		dst_crypto_free(c);
	else
		*cryptop = c;
	return err;
}

/* make check-debug fails it (fail_function): attach and reconnect unwind. */
ALLOW_ERROR_INJECTION(dst_rconn_handshake, ERRNO);

/*
 * The same export: field by field, as the structure has padding, and
 * with @identity its uuid.  Not the size, which may have grown
 * (dst_remote_grow()), nor RESIZE or UUID, which a server upgraded or
 * downgraded meanwhile may grant or not: RESIZE is a connection's
 * (conn->resize), and dst_rconn_identity() checks UUID where it counts.
 */
static bool dst_geometry_same(const struct dst_geometry *a,
			      const struct dst_geometry *b, bool identity)
{
	const u32 optional = DST_FEAT_RESIZE | DST_FEAT_UUID;

	return a->version == b->version &&
	       !((a->features ^ b->features) & ~optional) &&
	       a->lbs == b->lbs && a->pbs == b->pbs &&
	       a->max_io == b->max_io && a->max_discard == b->max_discard &&
	       a->max_write_zeroes == b->max_write_zeroes &&
	       (!identity || !memcmp(a->uuid, b->uuid, sizeof(a->uuid)));
}

/*
 * The export's identity counts with several paths, which must all reach
 * the same export, and when the administrator named it (the remote's
 * uuid): then every welcome must carry it (feature UUID).  A single
 * path with no uuid set is checked as before identities existed, by
 * geometry alone, so a server whose derived identity changed (another
 * host name) is still the same disk to it.  Returns 0, or the errno and
 * the log line for a server that cannot be this export.
 */
static int dst_rconn_identity(struct dst_remote *rem,
			      const struct sockaddr_storage *peer,
			      const struct dst_geometry *geo)
{
	struct dst_node *node = rem->node;
	const uuid_t *want = &node->cfg.uuid;

	if (rem->nr_paths < 2 && uuid_is_null(want))
		return 0;
	if (!(geo->features & DST_FEAT_UUID)) {
		pr_err("%s: %pISpc does not say which export it is (feature UUID): several addresses or a uuid need it\n",
		       node->name, peer);
		return -EOPNOTSUPP;
	}
	if (!uuid_is_null(want) && memcmp(geo->uuid, want, sizeof(*want))) {
		pr_err("%s: %pISpc is export %pUb, not %pUb\n", node->name,
		       peer, geo->uuid, want);
		return -ESTALE;
	}
	return 0;
}

/*
 * Connect slot @conn over path @p and shake hands.  The first connection
 * of an attach fixes the geometry; every later one, and every
 * reconnection, must see the same export.  Returns the socket, ready for
 * the receive loop; -ESTALE for a server that is not this export.
 */
static struct socket *dst_rconn_try(struct dst_remote *rem,
				    struct dst_rconn *conn, int p, bool first,
				    int timeout_ms,
				    struct dst_crypto **cryptop)
{
	const struct sockaddr_storage *peer = &rem->paths[p].addr;
	struct dst_node *node = rem->node;
	struct dst_geometry geo;
	struct socket *sock;
	bool identity;
	int err;

	WRITE_ONCE(conn->path, p);
	sock = dst_sock_connect(rem->net, peer, timeout_ms);
	if (IS_ERR(sock)) {
		pr_err("%s: cannot connect to %pISpc: %ld\n", node->name,
		       peer, PTR_ERR(sock));
		return sock;
	}
	err = dst_rconn_handshake(rem, conn->idx, peer, sock, &geo, cryptop);
	if (err)
		goto fail;

	conn->resize = geo.features & DST_FEAT_RESIZE;
	WRITE_ONCE(conn->size, geo.size);	/* debugfs reads it */
	identity = rem->nr_paths > 1 || !uuid_is_null(&node->cfg.uuid);
	err = dst_rconn_identity(rem, peer, &geo);
	if (!err && first) {
		rem->geo = geo;
	} else if (!err && (!dst_geometry_same(&geo, &rem->geo, identity) ||
			    dst_remote_grow(rem, geo.size))) {
		pr_err("%s: connection %d to %pISpc found a different export (another identity, it shrank, or its blocks or features changed)\n",
		       node->name, conn->idx, peer);
		err = -ESTALE;
	}
	if (err) {
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

/* The network failed us (try another path), not the server. */
static bool dst_err_is_network(long err)
{
	switch (err) {
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -EHOSTDOWN:
	case -ENETUNREACH:
	case -ENETDOWN:
	case -EADDRNOTAVAIL:
	case -EPIPE:
		return true;
	}
	return false;
}

/**
 * dst_rconn_open - connect slot @conn, over one of the server's paths
 * @rem: the remote
 * @conn: the slot, not live
 * @first: the attach's first connection, which fixes the geometry
 * @timeout_ms: for each connect and handshake
 * @cryptop: the session keys, if keyed
 *
 * Its own path first -- at attach, when path_work sends it back, when it
 * was away, after a round in which no path answered (a server restart:
 * every slot goes back where it belongs) -- else, when its own path has
 * just failed, the others first and that one last.  At attach a server
 * that refuses or is another export ends the attempt: a wrong address is
 * the administrator's to fix, not to route around.
 */
struct socket *dst_rconn_open(struct dst_remote *rem,
			      struct dst_rconn *conn, bool first,
			      int timeout_ms,
			      struct dst_crypto **cryptop)
{
	/* Set by dst_remote_run(), after every slot's first open. */
	bool attach = !READ_ONCE(rem->running);
	bool go_home = READ_ONCE(conn->go_home), was_lost = conn->lost_all;
	int k, p = conn->home, from = conn->path, start;
	struct socket *sock = ERR_PTR(-ENOTCONN);

	WRITE_ONCE(conn->go_home, false);
	start = attach || go_home || conn->lost_all || from != conn->home ?
		conn->home : conn->home + 1;
	for (k = 0; k < rem->nr_paths; k++) {
		if (k && READ_ONCE(rem->stopping))
			break;
		p = (start + k) % rem->nr_paths;
		sock = dst_rconn_try(rem, conn, p, first, timeout_ms, cryptop);
		if (!IS_ERR(sock))
			break;
		WRITE_ONCE(rem->paths[p].down, true);
		atomic64_inc(&rem->paths[p].failures);
		if (attach && !dst_err_is_network(PTR_ERR(sock)))
			return sock;
	}
	conn->lost_all = IS_ERR(sock);
	if (IS_ERR(sock))
		return sock;
	WRITE_ONCE(rem->paths[p].down, false);
	if (attach)
		return sock;
	if (p != conn->home && go_home) {
		/* Sent home and not taken there: wait longer next time. */
		conn->home_fails = min(conn->home_fails + 1, 5U);
		WRITE_ONCE(conn->home_retry, jiffies +
			   msecs_to_jiffies(DST_PATH_PROBE_MS << conn->home_fails));
	} else if (p == conn->home) {
		conn->home_fails = 0;
	}
	if (p != from && !was_lost) {
		if (!go_home)
			atomic64_inc(&rem->paths[from].failovers);
		pr_info("%s: connection %d moved from %pISpc to %pISpc\n",
			dst_rem_name(rem), conn->idx, &rem->paths[from].addr,
			&rem->paths[p].addr);
	}
	return sock;
}

/*
 * Does path @p reach this export now?  A whole handshake without a
 * session, which fences nothing on the server, then the same checks a
 * reconnection makes: a path that takes TCP connections but refuses us,
 * or leads to another export, is no way home.
 */
bool dst_path_probe(struct dst_remote *rem, int p)
{
	const struct sockaddr_storage *peer = &rem->paths[p].addr;
	bool identity = rem->nr_paths > 1 ||
			!uuid_is_null(&rem->node->cfg.uuid);
	struct dst_crypto *c = NULL;
	struct dst_geometry geo;
	struct socket *sock;
	bool ok;

	sock = dst_sock_connect(rem->net, peer, DST_PATH_PROBE_TIMEOUT_MS);
	if (IS_ERR(sock))
		return false;
	ok = !dst_rconn_handshake(rem, -1, peer, sock, &geo, &c) &&
	     !dst_rconn_identity(rem, peer, &geo) &&
	     dst_geometry_same(&geo, &rem->geo, identity);
	dst_crypto_free(c);
	sock_release(sock);
	return ok;
}
