/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * DST: distributed storage, a network block device.
 *
 * This header is the whole user-visible binary ABI of DST:
 *
 *  - the wire protocol spoken between a remote node (client) and an
 *    export node (server) over TCP, documented byte for byte in
 *    docs/protocol.md;
 *  - the connector messages of the original 2008 DST (CN_DST_IDX,
 *    CN_DST_VAL), documented in docs/connector.md.
 *
 * Every multi-byte field on the wire is big-endian.  Every structure
 * has a fixed size that does not depend on the architecture: explicit
 * padding, fixed-width types only.
 */
#ifndef _UAPI_LINUX_DST_H
#define _UAPI_LINUX_DST_H

#include <linux/types.h>

#define DST_NAMELEN		32	/* node and export names, with NUL */

/* ------------------------------------------------------------------ */
/* Wire protocol                                                      */
/* ------------------------------------------------------------------ */

#define DST_PROTO_MAGIC		0x44535450	/* "DSTP" */
#define DST_PROTO_VERSION	1		/* highest version spoken */
#define DST_PROTO_VERSION_MIN	1		/* lowest version accepted */

/*
 * Operation codes.  A reply carries the request's code with
 * DST_CMD_REPLY set.  These are portable codes, never kernel bi_opf bits.
 */
enum {
	DST_CMD_HELLO		= 1,	/* handshake, client first */
	DST_CMD_READ		= 2,
	DST_CMD_WRITE		= 3,
	DST_CMD_FLUSH		= 4,	/* make completed writes durable */
	DST_CMD_DISCARD		= 5,
	DST_CMD_WRITE_ZEROES	= 6,
	DST_CMD_PING		= 7,	/* keepalive */
	DST_CMD_BYE		= 8,	/* orderly close, no reply */
	DST_CMD_AUTH		= 9,	/* handshake: server's challenge, client's proof */
	DST_CMD_RESIZE		= 10,	/* server to client: the export grew; no reply */
	DST_CMD_MAX
};

#define DST_CMD_REPLY		0x80

/* Header flags (dst_wire_hdr.flags). */
#define DST_F_FUA		0x01	/* WRITE, WRITE_ZEROES: durable before reply */
#define DST_F_NO_UNMAP		0x02	/* WRITE_ZEROES: do not deallocate */
#define DST_F_ALL		(DST_F_FUA | DST_F_NO_UNMAP)

/* Reply status codes (dst_wire_hdr.status). */
enum {
	DST_ST_OK		= 0,
	DST_ST_IO		= 1,	/* the backing device failed the I/O */
	DST_ST_PERM		= 2,	/* write on a read-only export or connection */
	DST_ST_INVAL		= 3,	/* malformed or out-of-range request */
	DST_ST_NOENT		= 4,	/* HELLO: no export of that name */
	DST_ST_NOTSUPP		= 5,	/* operation not offered by this export */
	DST_ST_VERSION		= 6,	/* HELLO: no common protocol version */
	DST_ST_ACCESS		= 7,	/* HELLO: refused by the access list */
	DST_ST_NOSPC		= 8,	/* backing device out of space */
	DST_ST_BUSY		= 9,	/* HELLO: export is shutting down */
	DST_ST_AUTH		= 10,	/* HELLO: authentication needed or failed */
	DST_ST_MAX
};

/*
 * Every frame starts with this 32-byte header.  What follows it is
 * fixed by (cmd, status, len):
 *  - WRITE request: len bytes of data;
 *  - READ reply with DST_ST_OK: len bytes of data;
 *  - HELLO request and HELLO reply with DST_ST_OK: len bytes of
 *    handshake payload (struct dst_wire_hello / dst_wire_welcome);
 *  - anything else: nothing.
 */
struct dst_wire_hdr {
	__be32	magic;		/* DST_PROTO_MAGIC */
	__u8	version;	/* negotiated version (1 in HELLO) */
	__u8	cmd;		/* DST_CMD_*, | DST_CMD_REPLY in replies */
	__be16	flags;		/* DST_F_* */
	__be32	len;		/* I/O length or payload length, bytes */
	__be32	status;		/* DST_ST_* in replies, 0 in requests */
	__be64	id;		/* transaction id, echoed in the reply */
	__be64	offset;		/* byte offset into the export */
};

/*
 * A client with a session (HELLO's session != 0) builds ids the server
 * reads to recognise resends (docs/protocol.md, "Transaction ids"):
 * bits 0..15 tag, 16..31 queue, 32..63 generation (never 0).
 */
#define DST_ID_TAG(id)		((__u16)(id))
#define DST_ID_QUEUE(id)	((__u16)((id) >> 16))
#define DST_ID_GEN(id)		((__u32)((id) >> 32))

/* Feature bits, offered by the client and granted by the server. */
#define DST_FEAT_READ_ONLY	0x01	/* no WRITE/DISCARD/WRITE_ZEROES */
#define DST_FEAT_FLUSH		0x02	/* FLUSH honoured (volatile cache) */
#define DST_FEAT_FUA		0x04	/* DST_F_FUA honoured */
#define DST_FEAT_DISCARD	0x08
#define DST_FEAT_WRITE_ZEROES	0x10
#define DST_FEAT_ALL		0x1f	/* the I/O features */
/*
 * Not in DST_FEAT_ALL: offered by a client with a key, which then sends
 * struct dst_wire_hello_auth after struct dst_wire_hello; granted by an
 * export with the same key, hash and cipher (docs/security.md).
 */
#define DST_FEAT_AUTH		0x20
/*
 * Not in DST_FEAT_ALL either: the client understands DST_CMD_RESIZE,
 * which the server then sends, unasked, when the export grows.
 */
#define DST_FEAT_RESIZE		0x40
/*
 * Nor this: the welcome carries the export's identity (uuid), the same
 * on every address the export is reached by, so a client with several
 * paths can tell the export from another one of the same name.
 */
#define DST_FEAT_UUID		0x80

/* HELLO request payload, client to server: 64 bytes. */
struct dst_wire_hello {
	__be16	version_min;	/* lowest version the client speaks */
	__be16	version_max;	/* highest version the client speaks */
	__be32	features;	/* DST_FEAT_* the client can use */
	__be32	max_io;		/* largest I/O the client will send, bytes */
	__be32	reserved0;	/* zero */
	char	export[DST_NAMELEN];	/* NUL-terminated, NUL-padded */
	__be64	session;	/* client's random id for this attachment, 0: none */
	__be16	slot;		/* connection index within the session */
	__be16	nr_queues;	/* ids use hardware queues 0..nr_queues-1 */
	__be16	queue_depth;	/* ... and tags 0..queue_depth-1 */
	__u8	reserved1[2];	/* zero */
};

/*
 * Authenticated handshake (docs/protocol.md, docs/security.md).  A
 * keyed client's HELLO carries this after struct dst_wire_hello (len =
 * 64 + 128); the export answers with a DST_CMD_AUTH frame carrying
 * struct dst_wire_challenge, the client with DST_CMD_AUTH | DST_CMD_REPLY
 * carrying struct dst_wire_proof, and then the export's HELLO reply is
 * the first protected frame.
 */
#define DST_NONCE_LEN		32
#define DST_PROOF_LEN		64	/* digests shorter than this are zero-padded */

struct dst_wire_hello_auth {
	__u8	nonce[DST_NONCE_LEN];	/* the client's, random, fresh */
	char	hash[DST_NAMELEN];	/* keyed hash, NUL-padded */
	char	cipher[DST_NAMELEN];	/* AEAD, or "" for none */
	__u8	reserved[32];		/* zero */
};

struct dst_wire_challenge {
	__u8	nonce[DST_NONCE_LEN];	/* the server's, random, fresh */
	__u8	proof[DST_PROOF_LEN];	/* the server's proof of the key */
};

struct dst_wire_proof {
	__u8	proof[DST_PROOF_LEN];	/* the client's proof of the key */
};

/* HELLO reply payload, server to client: 64 bytes. */
struct dst_wire_welcome {
	__be16	version;	/* chosen version */
	__be16	reserved0;	/* zero */
	__be32	features;	/* DST_FEAT_* granted */
	__be64	size;		/* export size, bytes */
	__be32	logical_block_size;
	__be32	physical_block_size;
	__be32	max_io;		/* largest READ/WRITE accepted, bytes */
	__be32	max_discard;	/* largest DISCARD, bytes (0: none) */
	__be32	max_write_zeroes; /* largest WRITE_ZEROES, bytes (0: none) */
	__be32	reserved1;	/* zero */
	__u8	uuid[16];	/* with DST_FEAT_UUID: the export's identity */
	__u8	reserved2[8];	/* zero */
};

/* ------------------------------------------------------------------ */
/* Connector ABI of the original DST (see docs/connector.md)          */
/* ------------------------------------------------------------------ */

/* Connector commands, dst_ctl.cmd. */
enum {
	DST_DEL_NODE	= 0,	/* remove the node named dst_ctl.name */
	DST_ADD_REMOTE,		/* create a remote node; payload dst_network_ctl */
	DST_ADD_EXPORT,		/* create an export node; payload dst_export_ctl */
	DST_CRYPTO,		/* set hash/cipher; payload dst_crypto_ctl + keys */
	DST_SECURITY,		/* add an access rule; payload dst_secure_user */
	DST_START,		/* enable the node */
	DST_CMD_MAX_CN
};

/*
 * Every connector request: struct cn_msg, struct dst_ctl, then the
 * command's payload; cn_msg.len covers dst_ctl and the payload exactly.
 * A parameter left 0 keeps the node's default.  Names are NUL-terminated
 * within DST_NAMELEN.
 */
struct dst_ctl {
	char	name[DST_NAMELEN];	/* node name, NUL-terminated */
	__u32	flags;			/* DST_SECURITY: DST_SEC_PREFIX; else 0 */
	__u32	cmd;			/* DST_DEL_NODE .. DST_START */
	__u32	max_pages;		/* largest I/O in pages, 0: default */
	__u32	trans_scan_timeout;	/* ms, 0: default */
	__u32	trans_max_retries;	/* 0: default */
	__u32	__pad;			/* zero; keeps size 8-byte aligned */
	__u64	size;			/* bytes, 0: whole device / server's */
};

/*
 * The original's "struct saddr": a socket address as userspace holds it.
 * sa_family and sa_data together are laid out exactly as a struct
 * sockaddr_in or sockaddr_in6 (family in host order, port and address
 * in network order), and sa_data_len is that structure's whole size
 * (16 for AF_INET, 28 for AF_INET6), as getaddrinfo() gives ai_addrlen.
 */
#define DST_SADDR_MAX_DATA	128

struct dst_saddr {
	__u16	sa_family;		/* AF_INET or AF_INET6 */
	__u8	sa_data[DST_SADDR_MAX_DATA];
	__u16	sa_data_len;		/* sizeof(sockaddr_in/in6) */
};

/* DST_ADD_REMOTE payload: the server; TCP only. */
struct dst_network_ctl {
	__u32	type;			/* SOCK_STREAM */
	__u32	proto;			/* IPPROTO_TCP, or 0 */
	struct dst_saddr addr;		/* server address and port */
};

/*
 * DST_ADD_REMOTE may carry this instead (a DST extension, told apart by
 * its size): the export to attach.  With the original dst_network_ctl
 * alone, the remote attaches the export of its own name.
 */
struct dst_remote_ctl {
	struct dst_network_ctl ctl;
	char	export[DST_NAMELEN];	/* NUL-terminated */
};

/* DST_ADD_EXPORT payload: the backing device and the listening address. */
struct dst_export_ctl {
	char	device[DST_NAMELEN];	/* absolute path, NUL-terminated */
	struct dst_network_ctl ctl;	/* address and port to listen on */
};

/*
 * DST_CRYPTO payload, followed by hash_keysize bytes of hash key, then
 * cipher_keysize bytes of cipher key.
 */
#define DST_KEY_MAX		64	/* bytes, per key */

struct dst_crypto_ctl {
	char	cipher_algo[DST_NAMELEN];	/* "" for none */
	char	hash_algo[DST_NAMELEN];		/* "" for none */
	__u32	cipher_keysize;
	__u32	hash_keysize;
	__u32	crypto_attached_size;		/* zero (the module computes it) */
	__s32	thread_num;			/* crypto_threads, 0: default */
};

/* Access rule permissions (dst_secure_user.permissions). */
#define DST_PERM_READ		0x1
#define DST_PERM_WRITE		0x2

/*
 * DST_SECURITY flags: the rule covers a prefix of addr, of the length in
 * the low 8 bits.  Without it the rule covers addr alone (/32, /128), as
 * in the original.
 */
#define DST_SEC_PREFIX		0x100
#define DST_SEC_PREFIX_LEN_MASK	0xff

/*
 * DST_SECURITY payload: one access rule of an export.  permissions is
 * DST_PERM_READ (read-only) or DST_PERM_READ | DST_PERM_WRITE; the
 * address's port is ignored.
 */
struct dst_secure_user {
	__u32	permissions;
	struct dst_saddr addr;
};

/* Answer to every request: the request's cn_msg header and an errno. */
struct dst_ctl_ack_payload {
	__s32	error;		/* 0 or a negative errno */
	__u32	unused[3];
};

#endif /* _UAPI_LINUX_DST_H */
