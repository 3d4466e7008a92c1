// SPDX-License-Identifier: GPL-2.0
/*
 * DST frame protection, on the kernel crypto API.
 *
 * With a shared key configured on both sides, every connection is
 * authenticated in its handshake and every later frame carries a tag:
 *
 *  - the handshake: each side proves the key with a keyed hash (the
 *    node's "hash", hmac(sha256) by default) over the client's HELLO and
 *    both sides' fresh nonces; the proofs have different labels, so one
 *    cannot be reflected as the other;
 *  - session keys: derived per connection from the shared key and both
 *    nonces (an HKDF: extract, then expand per purpose and direction),
 *    so no two connections, and no two directions, share a key;
 *  - frames: with "cipher" (an AEAD such as gcm(aes)) the payload is
 *    encrypted and header and payload are authenticated, the nonce being
 *    the frame's sequence number in its direction; with "hash" alone the
 *    tag is the keyed hash of sequence number, header and payload.  The
 *    sequence number is not sent: a frame replayed, reordered, dropped
 *    or changed fails its tag, and the connection is dropped.
 *
 * docs/security.md states the threat model and what is not protected.
 * This file owns the algorithms and the session state; conn.c moves the
 * bytes, client.c and export.c call seal before sending a frame and
 * open after receiving one, before they act on it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/aead.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/error-injection.h>
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dst.h"

#define DST_DEFAULT_HASH	"hmac(sha256)"
#define DST_AEAD_KEYLEN		32	/* e.g. AES-256 */
#define DST_IV_MAX		16
#define DST_DIGEST_MIN		16

/* One direction of a connection. */
struct dst_crypto_dir {
	struct crypto_shash *mac;	/* hash only */
	struct crypto_aead *aead;	/* with a cipher */
	struct aead_request *req;
	struct scatterlist *sg;		/* [header][data...][tag] */
	u64 seq;			/* of the next frame */
	u8 iv[DST_IV_MAX];
	u8 tag[DST_PROOF_LEN];
	/* The header, where a scatterlist may point (not on a stack). */
	u8 hdr[DST_HDR_SIZE];
};

/*
 * The large buffers of a session: a scatterlist for a frame of max_io
 * in each direction, and the pages a remote seals its writes into (the
 * plaintext is in pages not ours to change).  A remote allocates them
 * once per connection slot, when it is enabled, and lends them to every
 * session of that slot: a reconnection -- perhaps what stands between
 * the machine and the memory it needs, with swap on DST -- then
 * allocates only the algorithms' small state, not a megabyte of pages.
 */
struct dst_crypto_buf {
	unsigned int max_segs;
	struct scatterlist *sg[2];	/* tx, rx */
	struct scatterlist *bounce_sg;
	struct page **bounce;
	unsigned int nr_bounce;
};

struct dst_crypto {
	unsigned int tag_len;
	unsigned int max_segs;
	struct dst_crypto_dir tx, rx;
	struct dst_crypto_buf *buf;
	bool own_buf;			/* not lent: freed with the session */
};

const char *dst_crypto_hash_name(const struct dst_crypto_cfg *cfg)
{
	return cfg->hash[0] ? cfg->hash : DST_DEFAULT_HASH;
}

/* --- checking names as they are written ------------------------------ */

/*
 * @name could not be allocated as a @kind: unknown to the crypto API
 * (-ENOENT), or known as something else (-EINVAL: a cipher named as the
 * hash, "cbc(aes)" as the AEAD).  crypto_has_alg() may load a module.
 */
static int dst_crypto_not_found(const char *kind, const char *name,
				long err, const char *hint)
{
	if (err == -ENOENT && !crypto_has_alg(name, 0, 0)) {
		pr_err("%s '%s': the kernel has no such algorithm\n", kind,
		       name);
		return -ENOENT;
	}
	pr_err("%s '%s' is not %s: %ld\n", kind, name, hint, err);
	return -EINVAL;
}

int dst_crypto_check_hash(const char *name)
{
	struct crypto_shash *tfm = crypto_alloc_shash(name, 0, 0);
	unsigned int ds;
	bool keyed;

	if (IS_ERR(tfm))
		return dst_crypto_not_found("hash", name, PTR_ERR(tfm),
					    "a keyed hash such as hmac(sha256)");
	keyed = crypto_shash_get_flags(tfm) & CRYPTO_TFM_NEED_KEY;
	ds = crypto_shash_digestsize(tfm);
	crypto_free_shash(tfm);
	if (!keyed) {
		pr_err("hash '%s' takes no key: use a keyed hash such as hmac(sha256)\n",
		       name);
		return -EINVAL;
	}
	if (ds < DST_DIGEST_MIN || ds > DST_PROOF_LEN) {
		pr_err("hash '%s' has a %u-byte digest; DST needs %d to %d\n",
		       name, ds, DST_DIGEST_MIN, DST_PROOF_LEN);
		return -EINVAL;
	}
	return 0;
}

/* Synchronous AEADs only: frames are sealed in the sender's context. */
static struct crypto_aead *dst_alloc_aead(const char *name)
{
	return crypto_alloc_aead(name, 0, CRYPTO_ALG_ASYNC);
}

/*
 * Seal one small frame the way every frame is sealed: a header's worth
 * of associated data, the nonce the frame counter (the first frame's,
 * 0) in the IV's last eight bytes, zeros before it.  An AEAD with rules
 * of its own for the nonce (ccm(aes) wants a length field in the IV's
 * first byte) or the associated data refuses it, and would refuse every
 * frame.
 */
static int dst_crypto_try_seal(struct crypto_aead *tfm)
{
	unsigned int iv = crypto_aead_ivsize(tfm);
	unsigned int len = DST_HDR_SIZE + 16 + crypto_aead_authsize(tfm);
	struct aead_request *req;
	struct scatterlist sg;
	u8 *buf;
	int err;

	buf = kzalloc(len + DST_IV_MAX, GFP_KERNEL);
	req = aead_request_alloc(tfm, GFP_KERNEL);
	if (!buf || !req) {
		err = -ENOMEM;
		goto out;
	}
	dst_seq_encode(buf + len + iv - sizeof(u64), 0);
	sg_init_one(&sg, buf, len);
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, DST_HDR_SIZE);
	aead_request_set_crypt(req, &sg, &sg, 16, buf + len);
	err = crypto_aead_encrypt(req);
out:
	aead_request_free(req);
	kfree(buf);
	return err;
}

int dst_crypto_check_cipher(const char *name)
{
	static const u8 zero[DST_AEAD_KEYLEN];
	struct crypto_aead *tfm = dst_alloc_aead(name);
	unsigned int iv;
	int err;

	if (IS_ERR(tfm))
		return dst_crypto_not_found("cipher", name, PTR_ERR(tfm),
					    "a synchronous AEAD such as gcm(aes)");
	iv = crypto_aead_ivsize(tfm);
	err = crypto_aead_setkey(tfm, zero, sizeof(zero));
	if (err) {
		pr_err("cipher '%s' does not take a %d-bit key\n", name,
		       DST_AEAD_KEYLEN * 8);
		err = -EINVAL;
	} else if (iv < sizeof(u64) || iv > DST_IV_MAX) {
		pr_err("cipher '%s' has a %u-byte nonce; DST needs 8 to %d\n",
		       name, iv, DST_IV_MAX);
		err = -EINVAL;
	} else if (dst_crypto_try_seal(tfm)) {
		pr_err("cipher '%s' refuses DST's nonces (a frame counter in the IV's last 8 bytes); use e.g. gcm(aes)\n",
		       name);
		err = -EINVAL;
	}
	crypto_free_aead(tfm);
	return err;
}

/* --- the handshake ---------------------------------------------------- */

struct dst_span {
	const void *p;
	size_t len;
};

/* out = HMAC(key, spans...), the full digest. */
static int dst_hmac(struct crypto_shash *tfm, const u8 *key,
		    unsigned int key_len, const struct dst_span *s,
		    unsigned int n, u8 *out)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	unsigned int i;
	int err;

	err = crypto_shash_setkey(tfm, key, key_len);
	if (err)
		return err;
	desc->tfm = tfm;
	err = crypto_shash_init(desc);
	for (i = 0; !err && i < n; i++)
		err = crypto_shash_update(desc, s[i].p, s[i].len);
	if (!err)
		err = crypto_shash_final(desc, out);
	shash_desc_zero(desc);
	return err;
}

/**
 * dst_crypto_proofs - both sides' proofs of the shared key
 * @cfg: the node's key and hash
 * @hello: the client's HELLO frame as sent (header, hello, hello_auth)
 * @hello_len: its length
 * @snonce: the server's nonce
 * @sproof: the server's proof, DST_PROOF_LEN bytes
 * @cproof: the client's proof, which also covers the server's
 *
 * Each side computes both: the server sends @sproof and checks the
 * client's against @cproof, the client the other way round.
 */
int dst_crypto_proofs(const struct dst_crypto_cfg *cfg, const void *hello,
		      size_t hello_len, const u8 *snonce, u8 *sproof,
		      u8 *cproof)
{
	static const char slabel[] = "DST1 server proof";
	static const char clabel[] = "DST1 client proof";
	unsigned int noio = memalloc_noio_save();
	struct crypto_shash *tfm;
	u8 d[DST_PROOF_LEN];
	int err;

	tfm = crypto_alloc_shash(dst_crypto_hash_name(cfg), 0, 0);
	memalloc_noio_restore(noio);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	memset(sproof, 0, DST_PROOF_LEN);
	memset(cproof, 0, DST_PROOF_LEN);
	{
		const struct dst_span s[] = {
			{ slabel, sizeof(slabel) }, { hello, hello_len },
			{ snonce, DST_NONCE_LEN },
		};

		err = dst_hmac(tfm, cfg->key, cfg->key_len, s, ARRAY_SIZE(s),
			       d);
		memcpy(sproof, d, crypto_shash_digestsize(tfm));
	}
	if (!err) {
		const struct dst_span s[] = {
			{ clabel, sizeof(clabel) }, { hello, hello_len },
			{ snonce, DST_NONCE_LEN }, { sproof, DST_PROOF_LEN },
		};

		err = dst_hmac(tfm, cfg->key, cfg->key_len, s, ARRAY_SIZE(s),
			       d);
		memcpy(cproof, d, crypto_shash_digestsize(tfm));
	}
	memzero_explicit(d, sizeof(d));
	crypto_free_shash(tfm);
	return err;
}

bool dst_crypto_proof_ok(const u8 *a, const u8 *b)
{
	return !crypto_memneq(a, b, DST_PROOF_LEN);
}

/*
 * HKDF-Expand with the session's pseudorandom key: @len bytes for
 * @label into @out.
 */
static int dst_expand(struct crypto_shash *tfm, const u8 *prk,
		      const char *label, u8 *out, unsigned int len)
{
	unsigned int ds = crypto_shash_digestsize(tfm);
	u8 t[DST_PROOF_LEN];
	unsigned int done = 0, tlen = 0;
	u8 i = 1;
	int err = 0;

	while (done < len && !err) {
		const struct dst_span s[] = {
			{ t, tlen }, { label, strlen(label) }, { &i, 1 },
		};

		err = dst_hmac(tfm, prk, ds, s, ARRAY_SIZE(s), t);
		tlen = ds;
		memcpy(out + done, t, min(ds, len - done));
		done += min(ds, len - done);
		i++;
	}
	memzero_explicit(t, sizeof(t));
	return err;
}

/* --- a session ------------------------------------------------------- */

static void dst_crypto_dir_free(struct dst_crypto_dir *d)
{
	aead_request_free(d->req);
	if (d->aead)
		crypto_free_aead(d->aead);
	if (d->mac)
		crypto_free_shash(d->mac);
}

/**
 * dst_crypto_buf_alloc - the buffers sessions of one connection borrow
 * @max_io: the largest payload a frame will carry, bytes
 * @bounce: with pages to seal into (a remote with a cipher)
 *
 * Returns the buffers, or NULL without memory.
 */
struct dst_crypto_buf *dst_crypto_buf_alloc(u32 max_io, bool bounce)
{
	struct dst_crypto_buf *b = kzalloc(sizeof(*b), GFP_KERNEL);
	unsigned int i;

	if (!b)
		return NULL;
	b->max_segs = DIV_ROUND_UP(max_io, PAGE_SIZE);
	for (i = 0; i < ARRAY_SIZE(b->sg); i++) {
		b->sg[i] = kcalloc(b->max_segs + 2, sizeof(*b->sg[i]),
				   GFP_KERNEL);
		if (!b->sg[i])
			goto fail;
	}
	if (!bounce)
		return b;
	b->bounce = kcalloc(b->max_segs, sizeof(*b->bounce), GFP_KERNEL);
	b->bounce_sg = kcalloc(b->max_segs + 2, sizeof(*b->bounce_sg),
			       GFP_KERNEL);
	if (!b->bounce || !b->bounce_sg)
		goto fail;
	for (i = 0; i < b->max_segs; i++) {
		b->bounce[i] = alloc_page(GFP_KERNEL);
		if (!b->bounce[i])
			goto fail;
		b->nr_bounce++;
	}
	return b;
fail:
	dst_crypto_buf_free(b);
	return NULL;
}

void dst_crypto_buf_free(struct dst_crypto_buf *b)
{
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < b->nr_bounce; i++)
		__free_page(b->bounce[i]);
	kfree(b->bounce);
	kfree(b->bounce_sg);
	for (i = 0; i < ARRAY_SIZE(b->sg); i++)
		kfree(b->sg[i]);
	kfree(b);
}

void dst_crypto_free(struct dst_crypto *c)
{
	if (!c)
		return;
	dst_crypto_dir_free(&c->tx);
	dst_crypto_dir_free(&c->rx);
	if (c->own_buf)
		dst_crypto_buf_free(c->buf);
	kfree_sensitive(c);
}

static int dst_crypto_dir_init(struct dst_crypto *c, struct dst_crypto_dir *d,
			       const struct dst_crypto_cfg *cfg,
			       struct crypto_shash *kdf, const u8 *prk,
			       const char *label)
{
	u8 key[DST_PROOF_LEN];
	int err;

	d->sg = c->buf->sg[d == &c->rx];
	if (cfg->cipher[0]) {
		d->aead = dst_alloc_aead(cfg->cipher);
		if (IS_ERR(d->aead)) {
			err = PTR_ERR(d->aead);
			d->aead = NULL;
			return err;
		}
		err = dst_expand(kdf, prk, label, key, DST_AEAD_KEYLEN);
		if (!err)
			err = crypto_aead_setkey(d->aead, key, DST_AEAD_KEYLEN);
		memzero_explicit(key, sizeof(key));
		if (err)
			return err;
		d->req = aead_request_alloc(d->aead, GFP_KERNEL);
		if (!d->req)
			return -ENOMEM;
		aead_request_set_callback(d->req, 0, NULL, NULL);
		c->tag_len = crypto_aead_authsize(d->aead);
		return 0;
	}
	d->mac = crypto_alloc_shash(dst_crypto_hash_name(cfg), 0, 0);
	if (IS_ERR(d->mac)) {
		err = PTR_ERR(d->mac);
		d->mac = NULL;
		return err;
	}
	c->tag_len = crypto_shash_digestsize(d->mac);
	err = dst_expand(kdf, prk, label, key, c->tag_len);
	if (!err)
		err = crypto_shash_setkey(d->mac, key, c->tag_len);
	memzero_explicit(key, sizeof(key));
	return err;
}

/**
 * dst_crypto_session - the protection state of one connection
 * @cfg: the node's key, hash and cipher
 * @server: this side is the export (sets which direction is which)
 * @cnonce: the client's nonce
 * @snonce: the server's nonce
 * @max_io: the largest payload a frame will carry, bytes
 * @buf: buffers lent for the session's life (dst_crypto_buf_alloc(),
 *	with bounce pages if the plaintext is in pages this side must not
 *	change: a remote node's write requests), or NULL to allocate its
 *	own, without bounce pages
 *
 * Allocated once per connection, when it is set up; nothing is allocated
 * per frame afterwards.  Returns an ERR_PTR on failure.
 */
noinline __noclone struct dst_crypto *
dst_crypto_session(const struct dst_crypto_cfg *cfg, bool server,
		   const u8 *cnonce, const u8 *snonce, u32 max_io,
		   struct dst_crypto_buf *buf)
{
	static const char xlabel[] = "DST1 session";
	unsigned int noio = memalloc_noio_save();
	struct crypto_shash *kdf = NULL;
	u8 prk[DST_PROOF_LEN];
	struct dst_crypto *c;
	int err = -ENOMEM;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto out;
	c->max_segs = DIV_ROUND_UP(max_io, PAGE_SIZE);
	c->buf = buf;
	if (!buf) {
		c->buf = dst_crypto_buf_alloc(max_io, false);
		if (!c->buf)
			goto out;
		c->own_buf = true;
	}
	if (WARN_ON_ONCE(c->buf->max_segs < c->max_segs)) {
		err = -EINVAL;
		goto out;
	}
	kdf = crypto_alloc_shash(dst_crypto_hash_name(cfg), 0, 0);
	if (IS_ERR(kdf)) {
		err = PTR_ERR(kdf);
		kdf = NULL;
		goto out;
	}
	{
		const struct dst_span s[] = {
			{ xlabel, sizeof(xlabel) }, { cnonce, DST_NONCE_LEN },
			{ snonce, DST_NONCE_LEN },
		};

		err = dst_hmac(kdf, cfg->key, cfg->key_len, s, ARRAY_SIZE(s),
			       prk);
	}
	if (err)
		goto out;
	err = dst_crypto_dir_init(c, &c->tx, cfg, kdf, prk,
				  server ? "s2c" : "c2s");
	if (!err)
		err = dst_crypto_dir_init(c, &c->rx, cfg, kdf, prk,
					  server ? "c2s" : "s2c");
out:
	memzero_explicit(prk, sizeof(prk));
	if (kdf)
		crypto_free_shash(kdf);
	memalloc_noio_restore(noio);
	if (err) {
		dst_crypto_free(c);
		return ERR_PTR(err);
	}
	return c;
}

/* make check-debug fails it (fail_function): keyed setup on either side. */
ALLOW_ERROR_INJECTION(dst_crypto_session, ERRNO);

unsigned int dst_crypto_tag_len(const struct dst_crypto *c)
{
	return c ? c->tag_len : 0;
}

bool dst_crypto_has_cipher(const struct dst_crypto *c)
{
	return c->tx.aead;
}

u32 dst_crypto_max_segs(const struct dst_crypto *c)
{
	return c->max_segs;
}

/*
 * The data part of the next frame's scatterlist, for the caller to fill
 * with at most @nents entries (blk_rq_map_sg, sg_set_page) before seal
 * or open.
 */
struct scatterlist *dst_crypto_sg(struct dst_crypto *c, bool tx,
				  unsigned int nents)
{
	struct dst_crypto_dir *d = tx ? &c->tx : &c->rx;

	sg_init_table(d->sg, min(nents, c->max_segs) + 2);
	return d->sg + 1;
}

/* Header in front, the tag after the @nents data entries. */
static void dst_crypto_frame_sg(struct scatterlist *sg, void *hdr,
				unsigned int nents, u8 *tag, unsigned int len)
{
	sg_set_buf(&sg[0], hdr, DST_HDR_SIZE);
	sg_unmark_end(&sg[0]);
	if (nents)
		sg_unmark_end(&sg[nents]);
	sg_set_buf(&sg[nents + 1], tag, len);
	sg_mark_end(&sg[nents + 1]);
}

/* The keyed hash of sequence number, header and @len bytes of data. */
static int dst_crypto_mac(struct dst_crypto_dir *d, const void *hdr,
			  unsigned int nents, u32 len, u8 *out)
{
	SHASH_DESC_ON_STACK(desc, d->mac);
	struct scatterlist *sg;
	u8 seq[8];
	unsigned int i;
	int err;

	dst_seq_encode(seq, d->seq);
	desc->tfm = d->mac;
	err = crypto_shash_init(desc);
	if (!err)
		err = crypto_shash_update(desc, seq, sizeof(seq));
	if (!err)
		err = crypto_shash_update(desc, hdr, DST_HDR_SIZE);
	for_each_sg(d->sg + 1, sg, nents, i) {
		struct page *page = sg_page(sg);
		unsigned int off = sg->offset;
		unsigned int left = min(sg->length, len);

		len -= left;
		while (!err && left) {
			unsigned int n;
			void *p;

			page += off >> PAGE_SHIFT;
			off &= ~PAGE_MASK;
			n = min_t(unsigned int, PAGE_SIZE - off, left);
			p = kmap_local_page(page);
			err = crypto_shash_update(desc, p + off, n);
			kunmap_local(p);
			off += n;
			left -= n;
		}
	}
	if (!err)
		err = crypto_shash_final(desc, out);
	shash_desc_zero(desc);
	return err;
}

static void dst_crypto_iv(struct dst_crypto_dir *d)
{
	unsigned int n = crypto_aead_ivsize(d->aead);

	memset(d->iv, 0, n);
	dst_seq_encode(d->iv + n - sizeof(u64), d->seq);
}

/**
 * dst_crypto_seal - protect the next frame to send
 * @c: the connection's session
 * @hdr: the encoded header (authenticated, sent in clear; copied)
 * @nents: data entries filled in after dst_crypto_sg(c, true, ...)
 * @len: data bytes
 * @in_place: encrypt the data where it is; else into the session's
 *	bounce pages, which dst_crypto_sealed() then names
 *
 * Returns the tag to send after the data (dst_crypto_tag_len() bytes),
 * or an ERR_PTR.  Called in send order, one frame at a time.
 */
const u8 *dst_crypto_seal(struct dst_crypto *c, const void *hdr,
			  unsigned int nents, u32 len, bool in_place)
{
	struct dst_crypto_dir *d = &c->tx;
	struct dst_crypto_buf *b = c->buf;
	struct scatterlist *dst = d->sg;
	int err;

	memcpy(d->hdr, hdr, DST_HDR_SIZE);
	if (d->mac) {
		err = dst_crypto_mac(d, d->hdr, nents, len, d->tag);
	} else {
		dst_crypto_frame_sg(d->sg, d->hdr, nents, d->tag, c->tag_len);
		if (!in_place && len) {
			unsigned int i, n = DIV_ROUND_UP(len, PAGE_SIZE);

			if (WARN_ON_ONCE(n > b->nr_bounce))
				return ERR_PTR(-EINVAL);
			sg_init_table(b->bounce_sg, n + 2);
			for (i = 0; i < n; i++)
				sg_set_page(&b->bounce_sg[i + 1], b->bounce[i],
					    min_t(u32, PAGE_SIZE,
						  len - i * PAGE_SIZE), 0);
			dst_crypto_frame_sg(b->bounce_sg, d->hdr, n, d->tag,
					    c->tag_len);
			dst = b->bounce_sg;
		}
		dst_crypto_iv(d);
		aead_request_set_ad(d->req, DST_HDR_SIZE);
		aead_request_set_crypt(d->req, d->sg, dst, len, d->iv);
		err = crypto_aead_encrypt(d->req);
	}
	if (err)
		return ERR_PTR(err);
	d->seq++;
	return d->tag;
}

/* Page @i of what the last out-of-place seal wrote. */
struct page *dst_crypto_sealed(struct dst_crypto *c, unsigned int i)
{
	return c->buf->bounce[i];
}

/* Where the tag of the frame being received goes. */
u8 *dst_crypto_rx_tag(struct dst_crypto *c)
{
	return c->rx.tag;
}

/**
 * dst_crypto_open - check (and decrypt in place) a received frame
 * @c: the connection's session
 * @hdr: the header as received
 * @nents: data entries filled in after dst_crypto_sg(c, false, ...)
 * @len: data bytes
 *
 * The tag must be in dst_crypto_rx_tag().  Returns 0, or -EBADMSG when
 * the frame is not the one the peer sent next: nothing of it may be
 * used, and the connection must be dropped.
 */
int dst_crypto_open(struct dst_crypto *c, const void *hdr,
		    unsigned int nents, u32 len)
{
	struct dst_crypto_dir *d = &c->rx;
	u8 want[DST_PROOF_LEN];
	int err;

	memcpy(d->hdr, hdr, DST_HDR_SIZE);
	if (d->mac) {
		err = dst_crypto_mac(d, d->hdr, nents, len, want);
		if (!err && crypto_memneq(want, d->tag, c->tag_len))
			err = -EBADMSG;
	} else {
		dst_crypto_frame_sg(d->sg, d->hdr, nents, d->tag, c->tag_len);
		dst_crypto_iv(d);
		aead_request_set_ad(d->req, DST_HDR_SIZE);
		aead_request_set_crypt(d->req, d->sg, d->sg, len + c->tag_len,
				       d->iv);
		err = crypto_aead_decrypt(d->req);
	}
	/* The next frame has the next number, whatever became of this one. */
	d->seq++;
	return err == -EBADMSG || !err ? err : -EBADMSG;
}

/* Fresh random bytes for a handshake. */
void dst_crypto_nonce(u8 *nonce)
{
	get_random_bytes(nonce, DST_NONCE_LEN);
}
