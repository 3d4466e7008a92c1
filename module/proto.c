// SPDX-License-Identifier: GPL-2.0
/*
 * DST wire format: encode and decode the big-endian frames of
 * include/uapi/linux/dst.h to and from host-order structures, and the
 * checks every received request must pass before it is used.
 *
 * This is the only file that knows about byte order; conn.c moves bytes,
 * client.c and export.c work on struct dst_msg, dst_hello and
 * dst_geometry.  docs/protocol.md is the specification.
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "dst.h"

void dst_msg_encode(struct dst_wire_hdr *h, const struct dst_msg *m)
{
	h->magic = cpu_to_be32(DST_PROTO_MAGIC);
	h->version = DST_PROTO_VERSION;
	h->cmd = m->cmd;
	h->flags = cpu_to_be16(m->flags);
	h->len = cpu_to_be32(m->len);
	h->status = cpu_to_be32(m->status);
	h->id = cpu_to_be64(m->id);
	h->offset = cpu_to_be64(m->offset);
}

/* Decode a header; -EPROTO if it is not a DST v1 frame at all. */
int dst_msg_decode(const struct dst_wire_hdr *h, struct dst_msg *m)
{
	if (be32_to_cpu(h->magic) != DST_PROTO_MAGIC ||
	    h->version != DST_PROTO_VERSION)
		return -EPROTO;
	m->cmd = h->cmd;
	m->flags = be16_to_cpu(h->flags);
	m->len = be32_to_cpu(h->len);
	m->status = be32_to_cpu(h->status);
	m->id = be64_to_cpu(h->id);
	m->offset = be64_to_cpu(h->offset);
	return 0;
}

void dst_hello_encode(struct dst_wire_hello *w, const struct dst_hello *h)
{
	memset(w, 0, sizeof(*w));
	w->version_min = cpu_to_be16(h->version_min);
	w->version_max = cpu_to_be16(h->version_max);
	w->features = cpu_to_be32(h->features);
	w->max_io = cpu_to_be32(h->max_io);
	strscpy_pad(w->export, h->export, sizeof(w->export));
	w->session = cpu_to_be64(h->session);
	w->slot = cpu_to_be16(h->slot);
	w->nr_queues = cpu_to_be16(h->nr_queues);
	w->queue_depth = cpu_to_be16(h->queue_depth);
}

/* -EPROTO for a HELLO no v1 server can make sense of. */
int dst_hello_decode(const struct dst_wire_hello *w, struct dst_hello *h)
{
	h->version_min = be16_to_cpu(w->version_min);
	h->version_max = be16_to_cpu(w->version_max);
	h->features = be32_to_cpu(w->features);
	h->max_io = be32_to_cpu(w->max_io);
	h->session = be64_to_cpu(w->session);
	h->slot = be16_to_cpu(w->slot);
	h->nr_queues = be16_to_cpu(w->nr_queues);
	h->queue_depth = be16_to_cpu(w->queue_depth);
	if (!memchr(w->export, '\0', sizeof(w->export)) ||
	    h->version_min > h->version_max)
		return -EPROTO;
	memcpy(h->export, w->export, sizeof(h->export));
	return 0;
}

void dst_welcome_encode(struct dst_wire_welcome *w,
			const struct dst_geometry *g)
{
	memset(w, 0, sizeof(*w));
	w->version = cpu_to_be16(g->version);
	w->features = cpu_to_be32(g->features);
	w->size = cpu_to_be64(g->size);
	w->logical_block_size = cpu_to_be32(g->lbs);
	w->physical_block_size = cpu_to_be32(g->pbs);
	w->max_io = cpu_to_be32(g->max_io);
	w->max_discard = cpu_to_be32(g->max_discard);
	w->max_write_zeroes = cpu_to_be32(g->max_write_zeroes);
	if (g->features & DST_FEAT_UUID)
		memcpy(w->uuid, g->uuid, sizeof(w->uuid));
}

/*
 * Decode the server's welcome and check that it describes a disk the
 * block layer can use; the caller checks it against what it offered.
 */
int dst_welcome_decode(const struct dst_wire_welcome *w,
		       struct dst_geometry *g)
{
	g->version = be16_to_cpu(w->version);
	g->features = be32_to_cpu(w->features);
	g->size = be64_to_cpu(w->size);
	g->lbs = be32_to_cpu(w->logical_block_size);
	g->pbs = be32_to_cpu(w->physical_block_size);
	g->max_io = be32_to_cpu(w->max_io);
	g->max_discard = be32_to_cpu(w->max_discard);
	g->max_write_zeroes = be32_to_cpu(w->max_write_zeroes);
	memset(g->uuid, 0, sizeof(g->uuid));
	if (g->features & DST_FEAT_UUID)
		memcpy(g->uuid, w->uuid, sizeof(g->uuid));

	if (g->features & ~(DST_FEAT_ALL | DST_FEAT_RESIZE | DST_FEAT_UUID))
		return -EPROTO;
	if (!is_power_of_2(g->lbs) || g->lbs < SECTOR_SIZE || g->lbs > 4096)
		return -EPROTO;
	if (!is_power_of_2(g->pbs) || g->pbs < g->lbs || g->pbs > SZ_64K)
		return -EPROTO;
	if (!g->size || g->size % g->lbs || g->size > (U64_MAX >> 1))
		return -EPROTO;
	if (g->max_io < PAGE_SIZE || g->max_io % PAGE_SIZE)
		return -EPROTO;
	if (!(g->features & DST_FEAT_DISCARD) != !g->max_discard ||
	    g->max_discard % g->lbs)
		return -EPROTO;
	if (!(g->features & DST_FEAT_WRITE_ZEROES) != !g->max_write_zeroes ||
	    g->max_write_zeroes % g->lbs)
		return -EPROTO;
	return 0;
}

/* Bytes of payload that follow a request header. */
u32 dst_request_payload(const struct dst_msg *m)
{
	switch (m->cmd) {
	case DST_CMD_WRITE:
	case DST_CMD_HELLO:
		return m->len;
	default:
		return 0;
	}
}

/*
 * The extent of an I/O lies in the export and on block boundaries.  The
 * size is read once: an export may grow meanwhile (dst_export_resize()).
 */
static bool dst_extent_ok(const struct dst_msg *m, const struct dst_geometry *g,
			  u32 max)
{
	u64 size = READ_ONCE(g->size);

	return m->len && m->len <= max &&
	       !(m->offset % g->lbs) && !(m->len % g->lbs) &&
	       m->offset <= size && m->len <= size - m->offset;
}

/**
 * dst_check_request - validate a request header against a connection
 * @m: the decoded header
 * @g: what the connection negotiated
 * @why: set to a short reason on failure, for the log line
 *
 * Returns 0 when the request may be served, -EPROTO when the frame is
 * malformed (the connection is dropped), or a positive DST_ST_* status
 * for a well-formed request that is refused with a reply.
 */
int dst_check_request(const struct dst_msg *m, const struct dst_geometry *g,
		      const char **why)
{
	u16 flags_ok = 0;
	bool extent;

	switch (m->cmd) {
	case DST_CMD_READ:
		extent = dst_extent_ok(m, g, g->max_io);
		break;
	case DST_CMD_WRITE:
		flags_ok = DST_F_FUA;
		extent = dst_extent_ok(m, g, g->max_io);
		break;
	case DST_CMD_DISCARD:
		extent = !g->max_discard ||
			 dst_extent_ok(m, g, g->max_discard);
		break;
	case DST_CMD_WRITE_ZEROES:
		flags_ok = DST_F_FUA | DST_F_NO_UNMAP;
		extent = !g->max_write_zeroes ||
			 dst_extent_ok(m, g, g->max_write_zeroes);
		break;
	case DST_CMD_FLUSH:
	case DST_CMD_PING:
	case DST_CMD_BYE:
		extent = !m->len && !m->offset;
		break;
	default:
		*why = "unknown command";
		return -EPROTO;
	}
	if (m->status) {
		*why = "status set in a request";
		return -EPROTO;
	}
	if (m->flags & ~flags_ok) {
		*why = "invalid flags";
		return -EPROTO;
	}
	if (!extent) {
		*why = "length or offset out of range";
		return -EPROTO;
	}

	switch (m->cmd) {
	case DST_CMD_WRITE:
	case DST_CMD_DISCARD:
	case DST_CMD_WRITE_ZEROES:
		if (g->features & DST_FEAT_READ_ONLY)
			return DST_ST_PERM;
		break;
	}
	if ((m->cmd == DST_CMD_DISCARD && !g->max_discard) ||
	    (m->cmd == DST_CMD_WRITE_ZEROES && !g->max_write_zeroes))
		return DST_ST_NOTSUPP;
	return 0;
}

/* What a handshake refusal means to the administrator's "enable". */
int dst_status_to_errno(u32 status)
{
	switch (status) {
	case DST_ST_OK:		return 0;
	case DST_ST_PERM:	return -EPERM;
	case DST_ST_INVAL:	return -EINVAL;
	case DST_ST_NOENT:	return -ENOENT;
	case DST_ST_NOTSUPP:	return -EOPNOTSUPP;
	case DST_ST_VERSION:	return -EPROTONOSUPPORT;
	case DST_ST_ACCESS:	return -EACCES;
	case DST_ST_NOSPC:	return -ENOSPC;
	case DST_ST_BUSY:	return -EBUSY;
	case DST_ST_AUTH:	return -EKEYREJECTED;
	default:		return -EIO;
	}
}

const char *dst_cmd_name(u8 cmd)
{
	static const char *const names[DST_CMD_MAX] = {
		[DST_CMD_HELLO] = "HELLO", [DST_CMD_READ] = "READ",
		[DST_CMD_WRITE] = "WRITE", [DST_CMD_FLUSH] = "FLUSH",
		[DST_CMD_DISCARD] = "DISCARD",
		[DST_CMD_WRITE_ZEROES] = "WRITE_ZEROES",
		[DST_CMD_PING] = "PING", [DST_CMD_BYE] = "BYE",
		[DST_CMD_AUTH] = "AUTH", [DST_CMD_RESIZE] = "RESIZE",
	};
	u8 c = cmd & ~DST_CMD_REPLY;

	return c < DST_CMD_MAX && names[c] ? names[c] : "?";
}

/* The authentication part of a keyed HELLO. */
void dst_hello_auth_encode(struct dst_wire_hello_auth *w, const u8 *nonce,
			   const char *hash, const char *cipher)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->nonce, nonce, DST_NONCE_LEN);
	strscpy_pad(w->hash, hash, sizeof(w->hash));
	strscpy_pad(w->cipher, cipher, sizeof(w->cipher));
}

/* -EPROTO for names without their NUL. */
int dst_hello_auth_decode(const struct dst_wire_hello_auth *w, u8 *nonce,
			  char *hash, char *cipher)
{
	if (!memchr(w->hash, '\0', sizeof(w->hash)) ||
	    !memchr(w->cipher, '\0', sizeof(w->cipher)))
		return -EPROTO;
	memcpy(nonce, w->nonce, DST_NONCE_LEN);
	memcpy(hash, w->hash, sizeof(w->hash));
	memcpy(cipher, w->cipher, sizeof(w->cipher));
	return 0;
}

/*
 * A frame's sequence number as the MAC and the AEAD nonce take it: 8
 * bytes, big-endian, at @out.
 */
void dst_seq_encode(u8 *out, u64 seq)
{
	put_unaligned_be64(seq, out);
}
