// SPDX-License-Identifier: GPL-2.0
/*
 * DST node configuration: every setting of a node and its rule -- the
 * range of each numeric parameter and which roles have it, which may
 * change while the node is enabled (and what that change does), the
 * addresses, names, algorithms, key and identity -- and the attributes
 * that show them.  configfs and the connector parse and call these;
 * the refusal and the log line that says why are here, once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if.h>
#include <linux/inet.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uuid.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "dst.h"

#define DST_R_BOTH	(BIT(DST_ROLE_EXPORT) | BIT(DST_ROLE_REMOTE))
#define DST_R_REMOTE	BIT(DST_ROLE_REMOTE)
#define DST_R_EXPORT	BIT(DST_ROLE_EXPORT)

/*
 * Numeric parameters: name, range, default and which roles have them.
 * The configfs attributes and the connector both come through here.
 */
static const struct dst_param_desc {
	const char *name;
	s64 min, max, def;
	unsigned int roles;
	/* May change while enabled (docs/configfs.md): for these roles. */
	unsigned int live;
} dst_params[DST_P_NR] = {
	[DST_P_SIZE]		   = { "size", 0, S64_MAX, 0, DST_R_BOTH,
				       DST_R_EXPORT },
	[DST_P_READ_ONLY]	   = { "read_only", 0, 1, 0, DST_R_BOTH },
	[DST_P_MAX_PAGES]	   = { "max_pages", 1, 1024, 256, DST_R_REMOTE },
	[DST_P_CONNECTIONS]	   = { "connections", 1, DST_MAX_CONNS, 1,
				       DST_R_REMOTE, DST_R_REMOTE },
	[DST_P_QUEUE_DEPTH]	   = { "queue_depth", 1, 1024, 128, DST_R_REMOTE },
	[DST_P_TRANS_SCAN_TIMEOUT] = { "trans_scan_timeout", 100, 600000, 30000,
				       DST_R_REMOTE, DST_R_REMOTE },
	[DST_P_TRANS_MAX_RETRIES]  = { "trans_max_retries", 0, 1000, 5,
				       DST_R_REMOTE, DST_R_REMOTE },
	[DST_P_KEEPALIVE_MS]	   = { "keepalive_ms", 0, 600000, 5000,
				       DST_R_REMOTE, DST_R_REMOTE },
	[DST_P_RECONNECT_DELAY_MS] = { "reconnect_delay_ms", 10, 60000, 500,
				       DST_R_REMOTE, DST_R_REMOTE },
	[DST_P_FAIL_TIMEOUT_S]	   = { "fail_timeout_s", -1, 86400, 30,
				       DST_R_REMOTE, DST_R_REMOTE },
	[DST_P_CRYPTO_THREADS]	   = { "crypto_threads", 1, 64, 4,
				       DST_R_EXPORT, DST_R_EXPORT },
	[DST_P_POLL_QUEUES]	   = { "poll_queues", 0, DST_MAX_POLL_QUEUES, 0,
				       DST_R_REMOTE },
};

bool dst_param_applies(enum dst_param p, enum dst_role role)
{
	return p < DST_P_NR && (dst_params[p].roles & BIT(role));
}

/* A new node's configuration: every parameter at its default. */
void dst_config_init(struct dst_config *cfg)
{
	int p;

	for (p = 0; p < DST_P_NR; p++)
		cfg->param[p] = dst_params[p].def;
}

/* Called with node->lock held: refuse configuration of a running node. */
static int dst_node_check_configurable(struct dst_node *node, const char *what)
{
	lockdep_assert_held(&node->lock);
	if (node->enabled) {
		pr_err("%s: disable the node before changing %s\n",
		       node->name, what);
		return -EBUSY;
	}
	return 0;
}

/**
 * dst_node_set_param - set a numeric parameter
 * @node: the node
 * @p: which parameter
 * @val: the new value
 *
 * Returns -EINVAL (and logs the range) for a value out of range or a
 * parameter the node's role does not have, -EBUSY while enabled unless
 * the parameter is live for the role: then it takes effect at once
 * (an export's size and crypto_threads, a remote's timing), or fails
 * with what the live change says (dst_export_resize()).
 */
int dst_node_set_param(struct dst_node *node, enum dst_param p, s64 val)
{
	const struct dst_param_desc *d;
	int err = 0;

	if (!dst_param_applies(p, node->role))
		return -EINVAL;
	d = &dst_params[p];
	if (val < d->min || val > d->max) {
		pr_err("%s: %s must be in [%lld, %lld], not %lld\n",
		       node->name, d->name, d->min, d->max, val);
		return -EINVAL;
	}
	if (p == DST_P_SIZE && (val & (SECTOR_SIZE - 1))) {
		pr_err("%s: size must be a multiple of %u bytes\n",
		       node->name, SECTOR_SIZE);
		return -EINVAL;
	}

	mutex_lock(&node->lock);
	if (!node->enabled || !(d->live & BIT(node->role)))
		err = dst_node_check_configurable(node, d->name);
	else if (p == DST_P_CRYPTO_THREADS)
		/* The export's crypto workqueue takes the new width. */
		dst_export_set_crypto_threads(node, val);
	else if (p == DST_P_SIZE)
		err = dst_export_resize(node, val);
	else if (p == DST_P_CONNECTIONS)
		err = dst_remote_set_connections(node, val);
	else
		dst_remote_set_param(node, p, val);
	if (!err)
		WRITE_ONCE(node->cfg.param[p], val);
	mutex_unlock(&node->lock);
	return err;
}

/**
 * dst_node_bad_number - a numeric attribute's value did not parse
 * @node: the node
 * @p: which parameter
 *
 * Returns -EINVAL, with the accepted range in the log, as for a number
 * out of range (docs/configfs.md).
 */
int dst_node_bad_number(struct dst_node *node, enum dst_param p)
{
	const struct dst_param_desc *d = &dst_params[p];

	if (dst_param_applies(p, node->role))
		pr_err("%s: %s takes an integer in [%lld, %lld]\n",
		       node->name, d->name, d->min, d->max);
	return -EINVAL;
}

/*
 * Crypto configuration: algorithm names are checked against the crypto
 * API when written (an unknown one is refused with the reason in the
 * log), the key is parsed from hex; an empty write clears.
 */
static int dst_node_set_alg(struct dst_node *node, const char *name,
			    bool cipher)
{
	char *dst;
	int err = 0;

	/* Trimmed and measured by configfs.c (dst_copy_str()). */
	if (WARN_ON_ONCE(strnlen(name, DST_NAMELEN) >= DST_NAMELEN))
		return -EINVAL;
	if (name[0])
		err = cipher ? dst_crypto_check_cipher(name) :
			       dst_crypto_check_hash(name);
	if (err)
		return err;
	mutex_lock(&node->lock);
	err = dst_node_check_configurable(node, cipher ? "cipher" : "hash");
	dst = cipher ? node->cfg.crypto.cipher : node->cfg.crypto.hash;
	if (!err)
		strscpy_pad(dst, name, DST_NAMELEN);
	mutex_unlock(&node->lock);
	return err;
}

int dst_node_set_hash(struct dst_node *node, const char *name)
{
	return dst_node_set_alg(node, name, false);
}

int dst_node_set_cipher(struct dst_node *node, const char *name)
{
	return dst_node_set_alg(node, name, true);
}

/* "" or the name, for the configfs attributes. */
ssize_t dst_node_show_alg(struct dst_node *node, char *buf, bool cipher)
{
	ssize_t ret;

	mutex_lock(&node->lock);
	ret = sysfs_emit(buf, "%s\n", cipher ? node->cfg.crypto.cipher :
						node->cfg.crypto.hash);
	mutex_unlock(&node->lock);
	return ret;
}

/**
 * dst_node_set_key - set or clear the shared key
 * @node: the node
 * @key: the key, or NULL to clear it
 * @len: its length, DST_KEY_MIN..DST_KEY_MAX bytes
 *
 * The old key is wiped.  -EBUSY while enabled.
 */
int dst_node_set_key(struct dst_node *node, const u8 *key, unsigned int len)
{
	struct dst_crypto_cfg *c = &node->cfg.crypto;
	int err;

	if (key && (len < DST_KEY_MIN || len > DST_KEY_MAX)) {
		pr_err("%s: a key has %d to %d bytes, not %u\n", node->name,
		       DST_KEY_MIN, DST_KEY_MAX, len);
		return -EINVAL;
	}
	mutex_lock(&node->lock);
	err = dst_node_check_configurable(node, "key");
	if (!err) {
		memzero_explicit(c->key, sizeof(c->key));
		c->key_len = key ? len : 0;
		if (key)
			memcpy(c->key, key, len);
	}
	mutex_unlock(&node->lock);
	return err;
}

/**
 * dst_node_set_crypto - set hash, cipher and key in one step
 * @node: the node
 * @hash: hash name ("" for none), already checked by the caller
 * @cipher: cipher name ("" for none), already checked by the caller
 * @key: the key, or NULL to keep the one set
 * @len: its length
 *
 * For the connector's DST_CRYPTO, which carries all three: they change
 * together under one hold of node->lock, so no enable can start the
 * node with half of them.  -EBUSY while enabled, -EINVAL for a bad key
 * length or name; nothing changes then.
 */
int dst_node_set_crypto(struct dst_node *node, const char *hash,
			const char *cipher, const u8 *key, unsigned int len)
{
	struct dst_crypto_cfg *c = &node->cfg.crypto;
	int err;

	if ((key && (len < DST_KEY_MIN || len > DST_KEY_MAX)) ||
	    strnlen(hash, DST_NAMELEN) == DST_NAMELEN ||
	    strnlen(cipher, DST_NAMELEN) == DST_NAMELEN)
		return -EINVAL;
	mutex_lock(&node->lock);
	err = dst_node_check_configurable(node, "crypto");
	if (!err) {
		strscpy_pad(c->hash, hash, DST_NAMELEN);
		strscpy_pad(c->cipher, cipher, DST_NAMELEN);
		if (key) {
			memzero_explicit(c->key, sizeof(c->key));
			memcpy(c->key, key, len);
			c->key_len = len;
		}
	}
	mutex_unlock(&node->lock);
	return err;
}

/* Whether a key is set; never the key. */
ssize_t dst_node_show_key(struct dst_node *node, char *buf)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(node->cfg.crypto.key_len) ?
					"set" : "none");
}

s64 dst_node_get_param(struct dst_node *node, enum dst_param p)
{
	return READ_ONCE(node->cfg.param[p]);
}

/*
 * Parse "a.b.c.d:port" or "[v6addr]:port" (an IPv6 scope "%eth0" is
 * accepted).  The port is mandatory: a default would only hide mistakes.
 */
static int dst_parse_addr(const char *str, struct sockaddr_storage *ss)
{
	char buf[INET6_ADDRSTRLEN + IFNAMSIZ + 16];
	char *host, *port;
	u16 portnum;
	int err;

	if (strscpy(buf, str, sizeof(buf)) < 0)
		return -EINVAL;
	strim(buf);
	port = strrchr(buf, ':');
	if (!port || port == buf)
		return -EINVAL;
	*port++ = '\0';
	host = buf;
	if (host[0] == '[') {
		size_t len = strlen(host);

		if (len < 3 || host[len - 1] != ']')
			return -EINVAL;
		host[len - 1] = '\0';
		host++;
		if (!strchr(host, ':'))
			return -EINVAL;
	} else if (strchr(host, ':')) {
		return -EINVAL;	/* IPv6 needs brackets to tell the port apart */
	}
	if (kstrtou16(port, 10, &portnum) || !portnum)
		return -EINVAL;

	/* A scope ("%eth0") names an interface of the writer's namespace. */
	memset(ss, 0, sizeof(*ss));
	err = inet_pton_with_scope(current->nsproxy->net_ns, AF_UNSPEC, host,
				   port, ss);
	return err ? -EINVAL : 0;
}

static bool dst_sockaddr_ok(const struct sockaddr_storage *ss)
{
	/* sin_port and sin6_port share their offset */
	return (ss->ss_family == AF_INET || ss->ss_family == AF_INET6) &&
	       ((const struct sockaddr_in *)ss)->sin_port;
}

/* The same address and port (and IPv6 scope). */
static bool dst_sockaddr_same(const struct sockaddr_storage *a,
			      const struct sockaddr_storage *b)
{
	size_t len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
					       sizeof(struct sockaddr_in6);

	return a->ss_family == b->ss_family && !memcmp(a, b, len);
}

/*
 * Set the node's addresses: an export listens on one, a remote may name
 * up to DST_MAX_PATHS addresses of the same export (multipath).
 */
static int dst_node_set_addrs(struct dst_node *node,
			      const struct sockaddr_storage *ss, int n)
{
	int i, j, err;

	if (n > 1 && node->role == DST_ROLE_EXPORT) {
		pr_err("%s: an export listens on one address\n", node->name);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!dst_sockaddr_ok(&ss[i])) {
			pr_err("%s: addr must be IPv4 or IPv6 with a port\n",
			       node->name);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (dst_sockaddr_same(&ss[i], &ss[j])) {
				pr_err("%s: address %pISpc is listed twice\n",
				       node->name, &ss[i]);
				return -EINVAL;
			}
		}
	}
	mutex_lock(&node->lock);
	err = dst_node_check_configurable(node, "addr");
	if (!err) {
		memcpy(node->cfg.addrs, ss, n * sizeof(*ss));
		node->cfg.nr_addrs = n;
	}
	mutex_unlock(&node->lock);
	return err;
}

/* The address to listen on (export) or connect to (remote): the connector's. */
int dst_node_set_sockaddr(struct dst_node *node,
			  const struct sockaddr_storage *ss)
{
	return dst_node_set_addrs(node, ss, 1);
}

/*
 * "ADDR:PORT", or for a remote "ADDR:PORT,ADDR:PORT,...": every one must
 * parse, none twice, at most DST_MAX_PATHS.
 */
int dst_node_set_addr(struct dst_node *node, const char *str)
{
	struct sockaddr_storage *ss;
	char *buf, *cur, *one;
	int n = 0, err = 0;

	ss = kcalloc(DST_MAX_PATHS, sizeof(*ss), GFP_KERNEL);
	buf = kstrdup(str, GFP_KERNEL);
	if (!ss || !buf) {
		err = -ENOMEM;
		goto out;
	}
	cur = buf;
	while (!err && (one = strsep(&cur, ","))) {
		if (n == DST_MAX_PATHS) {
			pr_err("%s: at most %d addresses\n", node->name,
			       DST_MAX_PATHS);
			err = -EINVAL;
		} else if (dst_parse_addr(one, &ss[n++])) {
			pr_err("%s: cannot parse address '%s': want ipv4:port or [ipv6]:port%s\n",
			       node->name, strim(one),
			       node->role == DST_ROLE_REMOTE ?
			       ", comma-separated" : "");
			err = -EINVAL;
		}
	}
	if (!err)
		err = dst_node_set_addrs(node, ss, n);
out:
	kfree(buf);
	kfree(ss);
	return err;
}

/*
 * An export's identity, or the one a remote's export must show
 * (docs/configfs.md, uuid); "" clears it.
 */
int dst_node_set_uuid(struct dst_node *node, const char *str)
{
	uuid_t u = {};
	int err;

	if (*str && uuid_parse(str, &u)) {
		pr_err("%s: uuid must look like 01234567-89ab-cdef-0123-456789abcdef\n",
		       node->name);
		return -EINVAL;
	}
	mutex_lock(&node->lock);
	err = dst_node_check_configurable(node, "uuid");
	if (!err)
		node->cfg.uuid = u;
	mutex_unlock(&node->lock);
	return err;
}

/* A running export shows the identity in use, derived or set. */
ssize_t dst_node_show_uuid(struct dst_node *node, char *buf)
{
	u8 u[16];
	ssize_t ret;

	mutex_lock(&node->lock);
	memcpy(u, &node->cfg.uuid, sizeof(u));
	if (node->role == DST_ROLE_EXPORT && node->enabled)
		dst_export_get_uuid(node, u);
	if (memchr_inv(u, 0, sizeof(u)))
		ret = sysfs_emit(buf, "%pUb\n", u);
	else
		ret = sysfs_emit(buf, "\n");
	mutex_unlock(&node->lock);
	return ret;
}

/* Store a validated string setting, unless the node is enabled. */
static int dst_node_set_str(struct dst_node *node, const char *what,
			    char *dst, size_t size, const char *val)
{
	int err;

	mutex_lock(&node->lock);
	err = dst_node_check_configurable(node, what);
	if (!err)
		strscpy(dst, val, size);
	mutex_unlock(&node->lock);
	return err;
}

int dst_node_set_device(struct dst_node *node, const char *path)
{
	if (node->role != DST_ROLE_EXPORT)
		return -EINVAL;
	if (!*path || strlen(path) >= DST_PATHLEN || path[0] != '/') {
		pr_err("%s: device must be an absolute path shorter than %d\n",
		       node->name, DST_PATHLEN);
		return -EINVAL;
	}
	return dst_node_set_str(node, "device", node->cfg.device,
				sizeof(node->cfg.device), path);
}

int dst_node_set_export(struct dst_node *node, const char *name)
{
	if (node->role != DST_ROLE_REMOTE)
		return -EINVAL;
	if (dst_check_name(name)) {
		pr_err("%s: invalid export name '%.*s'\n", node->name,
		       DST_NAMELEN, name);
		return -EINVAL;
	}
	return dst_node_set_str(node, "export", node->cfg.export,
				sizeof(node->cfg.export), name);
}

ssize_t dst_node_show_addr(struct dst_node *node, char *buf)
{
	ssize_t ret = 0;
	int i;

	mutex_lock(&node->lock);
	for (i = 0; i < node->cfg.nr_addrs; i++) {
		const struct sockaddr_in6 *a6 =
			(const struct sockaddr_in6 *)&node->cfg.addrs[i];

		/*
		 * A link-local address reads back with its interface, as
		 * it can be written again, "[fe80::1%2]:7000" (by index):
		 * %pISpcs would put the scope after the port.  Any other
		 * address ignores a scope (the connector may pass one).
		 */
		if (a6->sin6_family == AF_INET6 && a6->sin6_scope_id &&
		    (ipv6_addr_type(&a6->sin6_addr) & IPV6_ADDR_LINKLOCAL))
			ret += sysfs_emit_at(buf, ret, "%s[%pI6c%%%u]:%u",
					     i ? "," : "", &a6->sin6_addr,
					     a6->sin6_scope_id,
					     ntohs(a6->sin6_port));
		else
			ret += sysfs_emit_at(buf, ret, "%s%pISpc",
					     i ? "," : "",
					     &node->cfg.addrs[i]);
	}
	ret += sysfs_emit_at(buf, ret, "\n");
	mutex_unlock(&node->lock);
	return ret;
}

/* While enabled, the size in use (negotiated, or the whole device). */
ssize_t dst_node_show_size(struct dst_node *node, char *buf)
{
	ssize_t ret;

	mutex_lock(&node->lock);
	if (node->enabled)	/* a remote's grows without node->lock */
		ret = sysfs_emit(buf, "%llu\n", READ_ONCE(node->eff_size));
	else
		ret = sysfs_emit(buf, "%lld\n", node->cfg.param[DST_P_SIZE]);
	mutex_unlock(&node->lock);
	return ret;
}

ssize_t dst_node_show_local(struct dst_node *node, char *buf)
{
	ssize_t ret;

	mutex_lock(&node->lock);
	ret = sysfs_emit(buf, "%s\n", node->cfg.device);
	mutex_unlock(&node->lock);
	return ret;
}
