// SPDX-License-Identifier: GPL-2.0
/*
 * DST connector: the original 2008 DST control ABI, messages on
 * CN_DST_IDX/CN_DST_VAL (layouts in include/uapi/linux/dst.h, semantics
 * in docs/connector.md), each answered by an acknowledgment carrying an
 * errno.
 *
 * This file only validates messages and calls the node operations in
 * core.c, as configfs does: a node made here is a directory under
 * /sys/kernel/config/dst like any other, and rmdir or DST_DEL_NODE
 * removes it, whichever door made it.  Nothing in a message is trusted:
 * every length, name, family and field a command does not use is
 * checked before anything changes, and a command that fails half-way
 * undoes what it did.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/connector.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <asm/unaligned.h>

#include "dst.h"

static struct cb_id dst_cn_id = { .idx = CN_DST_IDX, .val = CN_DST_VAL };

/* Crypto threads the original's thread_num may ask for. */
#define DST_CN_THREADS_MAX	64

/* Why a message was refused, for the administrator; rate limited. */
#define dst_cn_refuse(err, fmt, ...)					\
	({								\
		pr_warn_ratelimited("connector: " fmt "\n", ##__VA_ARGS__); \
		(err);							\
	})

/* Answer @req, unicast to its sender, with @error. */
static void dst_cn_ack(struct cn_msg *req, struct netlink_skb_parms *nsp,
		       int error)
{
	struct dst_ctl_ack_payload *ack;
	struct cn_msg *msg;

	msg = kzalloc(sizeof(*msg) + sizeof(*ack), GFP_KERNEL);
	if (!msg)
		return;
	msg->id = req->id;
	msg->seq = req->seq;
	msg->ack = req->seq + 1;
	msg->len = sizeof(*ack);
	ack = (struct dst_ctl_ack_payload *)msg->data;
	ack->error = error;
	cn_netlink_send(msg, nsp->portid, 0, GFP_KERNEL);
	kfree(msg);
}

/* A NUL-terminated string within a fixed-size field. */
static bool dst_cn_str_ok(const char *s, size_t size)
{
	return !!memchr(s, '\0', size);
}

/* The original's struct saddr, checked, as a sockaddr_storage. */
static int dst_cn_saddr(const struct dst_saddr *sa,
			struct sockaddr_storage *ss)
{
	size_t want;

	BUILD_BUG_ON(offsetof(struct dst_saddr, sa_data) !=
		     offsetof(struct sockaddr, sa_data));
	switch (sa->sa_family) {
	case AF_INET:
		want = sizeof(struct sockaddr_in);
		break;
	case AF_INET6:
		want = sizeof(struct sockaddr_in6);
		break;
	default:
		return dst_cn_refuse(-EAFNOSUPPORT, "address family %u",
				     sa->sa_family);
	}
	if (sa->sa_data_len != want)
		return dst_cn_refuse(-EINVAL,
				     "address length %u, want %zu for family %u",
				     sa->sa_data_len, want, sa->sa_family);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, sa, want);
	return 0;
}

static int dst_cn_network(const struct dst_network_ctl *net,
			  struct sockaddr_storage *ss)
{
	if (net->type != SOCK_STREAM)
		return dst_cn_refuse(-ESOCKTNOSUPPORT,
				     "socket type %u: only SOCK_STREAM",
				     net->type);
	if (net->proto && net->proto != IPPROTO_TCP)
		return dst_cn_refuse(-EPROTONOSUPPORT,
				     "protocol %u: only TCP", net->proto);
	return dst_cn_saddr(&net->addr, ss);
}

/* dst_ctl's numeric parameters, in the order they are applied. */
static const struct {
	enum dst_param param;
	size_t offset;
	bool is_u64;
} dst_cn_params[] = {
	{ DST_P_SIZE, offsetof(struct dst_ctl, size), true },
	{ DST_P_MAX_PAGES, offsetof(struct dst_ctl, max_pages), false },
	{ DST_P_TRANS_SCAN_TIMEOUT,
	  offsetof(struct dst_ctl, trans_scan_timeout), false },
	{ DST_P_TRANS_MAX_RETRIES,
	  offsetof(struct dst_ctl, trans_max_retries), false },
};

static u64 dst_cn_param(const struct dst_ctl *ctl, unsigned int i)
{
	const void *p = (const void *)ctl + dst_cn_params[i].offset;

	/* A message's payload has no alignment the ABI promises. */
	return dst_cn_params[i].is_u64 ? get_unaligned((const u64 *)p) :
					 get_unaligned((const u32 *)p);
}

/*
 * A parameter the command (or the node's role) does not use must be
 * zero: 0 means "the default" everywhere, and anything else would be
 * silently dropped.
 */
static int dst_cn_check_params(const struct dst_ctl *ctl, bool adds,
			       enum dst_role role)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dst_cn_params); i++) {
		u64 val = dst_cn_param(ctl, i);

		if (!val)
			continue;
		if (!adds || !dst_param_applies(dst_cn_params[i].param, role))
			return dst_cn_refuse(-EINVAL,
					     "%s: field %u set for a command or role without it",
					     ctl->name, i);
		if (val > S64_MAX)
			return dst_cn_refuse(-EINVAL, "%s: size out of range",
					     ctl->name);
	}
	return 0;
}

static int dst_cn_apply_params(struct dst_node *node,
			       const struct dst_ctl *ctl)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(dst_cn_params); i++) {
		u64 val = dst_cn_param(ctl, i);

		if (!val)
			continue;
		err = dst_node_set_param(node, dst_cn_params[i].param, val);
		if (err)
			return err;
	}
	return 0;
}

/*
 * DST_ADD_EXPORT and DST_ADD_REMOTE: make the node's directory, then set
 * what the message carries; if any of it is refused, remove the node
 * again, so a failed command leaves nothing behind.
 */
static int dst_cn_add(const struct dst_ctl *ctl, enum dst_role role,
		      const char *device, const char *export,
		      const struct sockaddr_storage *ss)
{
	struct dst_node *node;
	int err;

	err = dst_node_add(ctl->name, role);
	if (err)
		return err;
	node = dst_node_find(ctl->name);
	if (!node)
		return -ENOENT;	/* removed by someone else meanwhile */
	err = device ? dst_node_set_device(node, device) : 0;
	if (!err && export)
		err = dst_node_set_export(node, export);
	if (!err)
		err = dst_node_set_sockaddr(node, ss);
	if (!err)
		err = dst_cn_apply_params(node, ctl);
	dst_node_put(node);
	if (err)
		dst_node_del(ctl->name);
	return err;
}

static int dst_cn_add_remote(const struct dst_ctl *ctl, void *data,
			     size_t size)
{
	const struct dst_remote_ctl *rc = data;
	const char *export = NULL;
	struct sockaddr_storage ss;
	int err;

	if (size == sizeof(*rc)) {
		if (!dst_cn_str_ok(rc->export, sizeof(rc->export)))
			return dst_cn_refuse(-EINVAL, "%s: export name without NUL",
					     ctl->name);
		export = rc->export;
	} else if (size != sizeof(struct dst_network_ctl)) {
		return dst_cn_refuse(-EBADMSG,
				     "%s: ADD_REMOTE payload of %zu bytes, want %zu or %zu",
				     ctl->name, size,
				     sizeof(struct dst_network_ctl),
				     sizeof(*rc));
	}
	err = dst_cn_check_params(ctl, true, DST_ROLE_REMOTE);
	if (!err)
		err = dst_cn_network(&rc->ctl, &ss);
	if (!err)
		err = dst_cn_add(ctl, DST_ROLE_REMOTE, NULL, export, &ss);
	return err;
}

static int dst_cn_add_export(const struct dst_ctl *ctl, void *data,
			     size_t size)
{
	const struct dst_export_ctl *ex = data;
	struct sockaddr_storage ss;
	int err;

	if (size != sizeof(*ex))
		return dst_cn_refuse(-EBADMSG, "%s: ADD_EXPORT payload of %zu bytes, want %zu",
				     ctl->name, size, sizeof(*ex));
	if (!dst_cn_str_ok(ex->device, sizeof(ex->device)))
		return dst_cn_refuse(-EINVAL, "%s: device name without NUL",
				     ctl->name);
	err = dst_cn_check_params(ctl, true, DST_ROLE_EXPORT);
	if (!err)
		err = dst_cn_network(&ex->ctl, &ss);
	if (!err)
		err = dst_cn_add(ctl, DST_ROLE_EXPORT, ex->device, NULL, &ss);
	return err;
}

static int dst_cn_security(const struct dst_ctl *ctl, struct dst_node *node,
			   void *data, size_t size)
{
	const struct dst_secure_user *sec = data;
	struct sockaddr_storage ss;
	unsigned int plen;
	int perm, err;

	if (size != sizeof(*sec))
		return dst_cn_refuse(-EBADMSG, "%s: SECURITY payload of %zu bytes, want %zu",
				     ctl->name, size, sizeof(*sec));
	if (node->role != DST_ROLE_EXPORT)
		return dst_cn_refuse(-EINVAL, "%s: access rules are for exports",
				     ctl->name);
	if (sec->permissions == DST_PERM_READ)
		perm = DST_PERM_RO;
	else if (sec->permissions == (DST_PERM_READ | DST_PERM_WRITE))
		perm = DST_PERM_RW;
	else
		return dst_cn_refuse(-EINVAL, "%s: permissions %#x: want READ or READ|WRITE",
				     ctl->name, sec->permissions);
	err = dst_cn_saddr(&sec->addr, &ss);
	if (err)
		return err;
	plen = ss.ss_family == AF_INET ? 32 : 128;
	if (ctl->flags & DST_SEC_PREFIX) {
		if ((ctl->flags & DST_SEC_PREFIX_LEN_MASK) > plen)
			return dst_cn_refuse(-EINVAL, "%s: prefix length %u",
					     ctl->name,
					     ctl->flags & DST_SEC_PREFIX_LEN_MASK);
		plen = ctl->flags & DST_SEC_PREFIX_LEN_MASK;
	}
	return dst_node_add_rule(node, &ss, plen, perm);
}

/*
 * DST_CRYPTO: hash, cipher, the shared key and crypto_threads.  The
 * original had a key per algorithm; DST has one shared key, so the
 * message may carry it as the hash key, the cipher key, or both (then
 * equal).  No key leaves the node's key as it is; an empty name clears
 * that algorithm.  Everything is checked before anything is set, so a
 * refusal changes nothing; the keys are wiped from the message either
 * way.
 */
static int dst_cn_crypto(const struct dst_ctl *ctl, struct dst_node *node,
			 void *data, size_t size)
{
	struct dst_crypto_ctl *c = data;
	const u8 *hkey = (const u8 *)(c + 1), *ckey;
	unsigned int klen;
	const u8 *key;
	size_t total;
	int err;

	if (size < sizeof(*c))
		return dst_cn_refuse(-EBADMSG, "%s: CRYPTO payload of %zu bytes",
				     ctl->name, size);
	if (c->hash_keysize > DST_KEY_MAX || c->cipher_keysize > DST_KEY_MAX) {
		err = dst_cn_refuse(-EINVAL, "%s: key sizes %u/%u, at most %u",
				    ctl->name, c->hash_keysize,
				    c->cipher_keysize, DST_KEY_MAX);
		goto wipe;
	}
	if (check_add_overflow(sizeof(*c), (size_t)c->hash_keysize, &total) ||
	    check_add_overflow(total, (size_t)c->cipher_keysize, &total) ||
	    total != size) {
		err = dst_cn_refuse(-EBADMSG,
				    "%s: CRYPTO payload of %zu bytes does not match its key sizes",
				    ctl->name, size);
		goto wipe;
	}
	if (!dst_cn_str_ok(c->cipher_algo, sizeof(c->cipher_algo)) ||
	    !dst_cn_str_ok(c->hash_algo, sizeof(c->hash_algo)) ||
	    c->crypto_attached_size || c->thread_num < 0 ||
	    c->thread_num > DST_CN_THREADS_MAX ||
	    (c->thread_num && node->role != DST_ROLE_EXPORT)) {
		err = dst_cn_refuse(-EINVAL, "%s: CRYPTO fields out of range",
				    ctl->name);
		goto wipe;
	}
	ckey = hkey + c->hash_keysize;
	key = c->hash_keysize ? hkey : ckey;
	klen = c->hash_keysize ?: c->cipher_keysize;
	if (c->hash_keysize && c->cipher_keysize &&
	    (c->hash_keysize != c->cipher_keysize ||
	     memcmp(hkey, ckey, klen))) {
		err = dst_cn_refuse(-EINVAL,
				    "%s: one shared key: hash and cipher keys differ",
				    ctl->name);
		goto wipe;
	}
	if (klen && klen < DST_KEY_MIN) {
		err = dst_cn_refuse(-EINVAL, "%s: a key of %u bytes, at least %d",
				    ctl->name, klen, DST_KEY_MIN);
		goto wipe;
	}
	/* The names first: they are the checks that can fail. */
	err = c->hash_algo[0] ? dst_crypto_check_hash(c->hash_algo) : 0;
	if (!err && c->cipher_algo[0])
		err = dst_crypto_check_cipher(c->cipher_algo);
	if (err)
		goto wipe;
	/* All three at once: an enable never sees half of them. */
	err = dst_node_set_crypto(node, c->hash_algo, c->cipher_algo,
				  klen ? key : NULL, klen);
	if (!err && c->thread_num)
		err = dst_node_set_param(node, DST_P_CRYPTO_THREADS,
					 c->thread_num);
wipe:
	memzero_explicit(c + 1, size - sizeof(*c));
	return err;
}

static int dst_cn_handle(struct cn_msg *msg)
{
	struct dst_ctl *ctl = (struct dst_ctl *)msg->data;
	void *data = ctl + 1;
	struct dst_node *node;
	size_t size;
	int err;

	/* The connector has checked that msg->len bytes did arrive. */
	if (msg->len < sizeof(*ctl))
		return dst_cn_refuse(-EBADMSG, "message of %u bytes, want at least %zu",
				     msg->len, sizeof(*ctl));
	size = msg->len - sizeof(*ctl);
	if (ctl->cmd >= DST_CMD_MAX_CN)
		return dst_cn_refuse(-EINVAL, "unknown command %u", ctl->cmd);
	if (!dst_cn_str_ok(ctl->name, sizeof(ctl->name)))
		return dst_cn_refuse(-EINVAL, "node name without NUL");
	if (ctl->__pad || (ctl->flags && ctl->cmd != DST_SECURITY) ||
	    (ctl->flags & ~(DST_SEC_PREFIX | DST_SEC_PREFIX_LEN_MASK)))
		return dst_cn_refuse(-EINVAL, "%s: unknown flags %#x",
				     ctl->name, ctl->flags);

	switch (ctl->cmd) {
	case DST_ADD_REMOTE:
		return dst_cn_add_remote(ctl, data, size);
	case DST_ADD_EXPORT:
		return dst_cn_add_export(ctl, data, size);
	}

	/* The other commands work on a node that exists. */
	err = dst_cn_check_params(ctl, false, DST_ROLE_EXPORT);
	if (err)
		return err;
	if (ctl->cmd == DST_DEL_NODE || ctl->cmd == DST_START) {
		if (size)
			return dst_cn_refuse(-EBADMSG, "%s: unexpected payload of %zu bytes",
					     ctl->name, size);
		if (ctl->cmd == DST_DEL_NODE)
			return dst_node_del(ctl->name);
	}
	node = dst_node_find(ctl->name);
	if (!node) {
		if (ctl->cmd == DST_CRYPTO && size >= sizeof(struct dst_crypto_ctl))
			memzero_explicit(data + sizeof(struct dst_crypto_ctl),
					 size - sizeof(struct dst_crypto_ctl));
		return -ENODEV;
	}
	switch (ctl->cmd) {
	case DST_CRYPTO:
		err = dst_cn_crypto(ctl, node, data, size);
		break;
	case DST_SECURITY:
		err = dst_cn_security(ctl, node, data, size);
		break;
	default:	/* DST_START */
		err = dst_node_enable(node, true);
		break;
	}
	dst_node_put(node);
	return err;
}

/*
 * The connector delivers a message synchronously, in the context of the
 * task that sent it, so capable() checks the sender, a node's network
 * namespace is the sender's (as for a configfs write), and the message
 * may be answered before the sender reads its socket.
 */
/*
 * The connector holds no reference on this module while it runs a
 * callback, and cn_del_callback() does not wait for running ones: the
 * module counts them itself, and dst_connector_exit() waits for the
 * count to drop.  A callback that finds the door closing refuses.  This
 * narrows the race with unloading to the few instructions before the
 * count is raised and after it drops; closing it needs the connector
 * core to pin the callback's module, which 6.1's does not.
 */
static atomic_t dst_cn_running = ATOMIC_INIT(0);
static bool dst_cn_closing;
static DECLARE_WAIT_QUEUE_HEAD(dst_cn_wait);

static void dst_cn_callback(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	int err;

	atomic_inc(&dst_cn_running);
	smp_mb__after_atomic();		/* pairs with dst_connector_exit() */
	if (READ_ONCE(dst_cn_closing))
		err = -ESHUTDOWN;
	else if (!capable(CAP_SYS_ADMIN))
		err = -EPERM;
	else
		err = dst_cn_handle(msg);
	dst_cn_ack(msg, nsp, err);
	if (atomic_dec_and_test(&dst_cn_running))
		wake_up(&dst_cn_wait);
}

int dst_connector_init(void)
{
	/* The ABI: these sizes are the same on every architecture. */
	BUILD_BUG_ON(sizeof(struct dst_ctl) != 64);
	BUILD_BUG_ON(sizeof(struct dst_saddr) != 132);
	BUILD_BUG_ON(sizeof(struct dst_network_ctl) != 140);
	BUILD_BUG_ON(sizeof(struct dst_remote_ctl) != 172);
	BUILD_BUG_ON(sizeof(struct dst_export_ctl) != 172);
	BUILD_BUG_ON(sizeof(struct dst_secure_user) != 136);
	BUILD_BUG_ON(sizeof(struct dst_crypto_ctl) != 80);
	BUILD_BUG_ON(sizeof(struct dst_ctl_ack_payload) != 16);
	return cn_add_callback(&dst_cn_id, "dst", dst_cn_callback);
}

void dst_connector_exit(void)
{
	WRITE_ONCE(dst_cn_closing, true);
	smp_mb();	/* closing seen, or our count seen by exit */
	cn_del_callback(&dst_cn_id);
	wait_event(dst_cn_wait, !atomic_read(&dst_cn_running));
}
