// SPDX-License-Identifier: GPL-2.0
/*
 * DST core: module init and exit, the node registry, node lifetime and the
 * node operations every control interface calls.
 *
 * configfs, the connector and sysfs only parse what userspace gave them and
 * call the functions below, so a rule (a range, a refusal while enabled)
 * exists in exactly one place whichever door the administrator used.
 *
 * Lifetime: a node is one allocation whose reference count is that of its
 * embedded struct device.  The creator (a configfs mkdir) owns the first
 * reference; the block device's open and the data path take more.  The
 * memory goes when the last one is put, from the device release callback.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/if.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sched.h>
#include <net/net_namespace.h>

#include "dst.h"

#define DST_VERSION "0.1"

int dst_major;

/* The registry: every node, export or remote; names are unique across both. */
static LIST_HEAD(dst_nodes);
static DEFINE_MUTEX(dst_nodes_lock);

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
	[DST_P_CONNECTIONS]	   = { "connections", 1, 16, 1, DST_R_REMOTE },
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
};

const char *dst_role_name(enum dst_role role)
{
	return role == DST_ROLE_EXPORT ? "export" : "remote";
}

static const char *const dst_state_names[] = {
	[DST_STATE_DISABLED]	= "disabled",
	[DST_STATE_STARTING]	= "starting",
	[DST_STATE_RUNNING]	= "running",
	[DST_STATE_STOPPING]	= "stopping",
};

bool dst_param_applies(enum dst_param p, enum dst_role role)
{
	return p < DST_P_NR && (dst_params[p].roles & BIT(role));
}

/* Names become device and directory names: keep them plain. */
static int dst_check_name(const char *name)
{
	size_t len = strnlen(name, DST_NAMELEN);
	size_t i;

	if (len == 0 || len >= DST_NAMELEN)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return -EINVAL;
	return name[0] == '.' ? -EINVAL : 0;
}

static struct dst_node *dst_find_locked(const char *name)
{
	struct dst_node *node;

	lockdep_assert_held(&dst_nodes_lock);
	list_for_each_entry(node, &dst_nodes, entry)
		if (!strcmp(node->name, name))
			return node;
	return NULL;
}

static void dst_node_release(struct device *dev)
{
	struct dst_node *node = dst_dev_to_node(dev);

	/* The key goes with the node, wiped. */
	kfree_sensitive(node);
}

void dst_node_get(struct dst_node *node)
{
	get_device(&node->dev);
}

void dst_node_put(struct dst_node *node)
{
	put_device(&node->dev);
}

/**
 * dst_node_create - add a new, disabled node to the registry
 * @name: node name; unique among exports and remotes
 * @role: export or remote
 *
 * Returns the node holding one reference for the caller, or an ERR_PTR:
 * -EINVAL for a bad name, -EEXIST when the name is taken.
 */
struct dst_node *dst_node_create(const char *name, enum dst_role role)
{
	struct dst_node *node;
	int p, err;

	err = dst_check_name(name);
	if (err) {
		pr_err("invalid node name '%.*s': use 1-%d of [A-Za-z0-9._-]\n",
		       DST_NAMELEN, name, DST_NAMELEN - 1);
		return ERR_PTR(err);
	}

	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);

	strscpy(node->name, name, sizeof(node->name));
	strscpy(node->cfg.export, name, sizeof(node->cfg.export));
	node->role = role;
	node->state = DST_STATE_DISABLED;
	mutex_init(&node->lock);
	init_waitqueue_head(&node->scan_wait);
	INIT_LIST_HEAD(&node->entry);
	dst_acl_init(node);
	for (p = 0; p < DST_P_NR; p++)
		node->cfg.param[p] = dst_params[p].def;
	dst_sysfs_init_node(node, dst_node_release);

	mutex_lock(&dst_nodes_lock);
	if (dst_find_locked(name)) {
		mutex_unlock(&dst_nodes_lock);
		pr_err("node '%s' already exists\n", name);
		dst_node_put(node);
		return ERR_PTR(-EEXIST);
	}
	err = device_add(&node->dev);
	if (err) {
		mutex_unlock(&dst_nodes_lock);
		pr_err("%s: cannot register device: %d\n", name, err);
		dst_node_put(node);
		return ERR_PTR(err);
	}
	list_add_tail(&node->entry, &dst_nodes);
	mutex_unlock(&dst_nodes_lock);
	return node;
}

/**
 * dst_node_remove - disable a node and take it out of the registry
 * @node: the node; the caller still owns its reference and puts it after
 *
 * An enabled node is disabled first (a remote's disk goes away, failing
 * what is in flight; an export drains and closes its clients), so
 * removal never fails and never leaves anything behind.
 */
void dst_node_remove(struct dst_node *node)
{
	/*
	 * No enable may follow: a connector DST_START that found the node
	 * before it left the registry may be waiting for node->lock, and
	 * would otherwise start a node nobody can reach or stop again.
	 */
	mutex_lock(&node->lock);
	node->removed = true;
	mutex_unlock(&node->lock);
	dst_node_enable(node, false);

	mutex_lock(&dst_nodes_lock);
	list_del_init(&node->entry);
	mutex_unlock(&dst_nodes_lock);
	device_del(&node->dev);
}

/**
 * dst_node_find - look a node up by name
 * @name: the node's name
 *
 * Returns the node with a reference the caller puts, or NULL.
 */
struct dst_node *dst_node_find(const char *name)
{
	struct dst_node *node;

	mutex_lock(&dst_nodes_lock);
	node = dst_find_locked(name);
	if (node)
		dst_node_get(node);
	mutex_unlock(&dst_nodes_lock);
	return node;
}

/**
 * dst_node_add - create a node as "mkdir {exports,remotes}/<name>" does
 * @name: node name
 * @role: export or remote
 *
 * For the connector.  The node is an ordinary configfs directory (see
 * configfs.c), so rmdir removes it whichever door made it.  Returns 0,
 * -EINVAL for a bad name, -EEXIST when it is taken.
 */
int dst_node_add(const char *name, enum dst_role role)
{
	int err = dst_check_name(name);

	if (err) {
		pr_err("invalid node name '%.*s': use 1-%d of [A-Za-z0-9._-]\n",
		       DST_NAMELEN, name, DST_NAMELEN - 1);
		return err;
	}
	return dst_configfs_add_node(role, name);
}

/**
 * dst_node_del - remove a node as rmdir of its directory does
 * @name: node name
 *
 * For the connector.  An export's access rules go first.  Returns 0 or
 * -ENODEV when there is no such node.
 */
int dst_node_del(const char *name)
{
	char *rules = NULL;
	struct dst_node *node;
	enum dst_role role;
	int nr = 0, err;

	node = dst_node_find(name);
	if (!node)
		return -ENODEV;
	role = node->role;
	if (role == DST_ROLE_EXPORT)
		nr = dst_acl_rule_names(node, &rules);
	dst_node_put(node);
	if (nr < 0)
		return nr;
	err = dst_configfs_del_node(role, name, rules, nr);
	kfree(rules);
	return err == -ENOENT ? -ENODEV : err;
}

/* Connector rules are named cn0, cn1, ...: the first free name. */
#define DST_CN_RULES_MAX	1024

/**
 * dst_node_add_rule - add an access rule to an export
 * @node: the export
 * @ss: the address (its port is ignored)
 * @plen: prefix length
 * @perm: DST_PERM_RO or DST_PERM_RW
 *
 * For the connector: the rule is a directory acl/cn<N>, as if made by
 * mkdir and written to.  Returns 0 or an errno, and then adds nothing.
 */
int dst_node_add_rule(struct dst_node *node,
		      const struct sockaddr_storage *ss, u8 plen, int perm)
{
	char name[DST_NAMELEN];
	unsigned int i;
	int err = -ENOSPC;

	if (node->role != DST_ROLE_EXPORT)
		return -EINVAL;
	for (i = 0; i < DST_CN_RULES_MAX; i++) {
		snprintf(name, sizeof(name), "cn%u", i);
		err = dst_configfs_add_rule(node->name, name);
		if (err != -EEXIST)
			break;
	}
	if (err)
		return err == -EEXIST ? -ENOSPC : err;
	err = dst_acl_rule_set_by_name(node, name, ss, plen, perm);
	if (err)
		dst_configfs_del_rule(node->name, name);
	return err;
}

static int dst_node_start(struct dst_node *node)
{
	const struct dst_crypto_cfg *c = &node->cfg.crypto;
	int err;

	if ((c->hash[0] || c->cipher[0]) && !c->key_len) {
		pr_err("%s: hash and cipher need a key: write one to 'key'\n",
		       node->name);
		return -EINVAL;
	}
	err = node->role == DST_ROLE_EXPORT ? dst_export_start(node) :
					      dst_remote_start(node);
	if (!err)
		dst_debugfs_add_node(node);
	return err;
}

static void dst_node_stop(struct dst_node *node)
{
	/* Waits for a reader of its files, none of which takes node->lock. */
	dst_debugfs_del_node(node);
	if (node->role == DST_ROLE_EXPORT)
		dst_export_stop(node);
	else
		dst_remote_stop(node);
}

/**
 * dst_node_enable - start or stop a node
 * @node: the node
 * @on: true to start (listen, or connect and add the disk), false to stop
 *
 * Enabling an enabled node, or disabling a disabled one, is a no-op that
 * succeeds, so scripts may repeat themselves.  A failed start leaves the
 * node disabled and as configured before.  A remote's partitions are read
 * after node->lock is dropped (see dst_remote_scan_wait()).
 */
int dst_node_enable(struct dst_node *node, bool on)
{
	bool scan = false;
	int err = 0;

	mutex_lock(&node->lock);
	if (on == node->enabled)
		goto out;
	if (on && node->removed) {
		err = -ENODEV;
		goto out;
	}

	if (on) {
		WRITE_ONCE(node->state, DST_STATE_STARTING);
		err = dst_node_start(node);
		if (err) {
			WRITE_ONCE(node->state, DST_STATE_DISABLED);
			goto out;
		}
		node->enabled = true;
		WRITE_ONCE(node->state, DST_STATE_RUNNING);
		scan = node->role == DST_ROLE_REMOTE;
	} else {
		WRITE_ONCE(node->state, DST_STATE_STOPPING);
		dst_node_stop(node);
		node->enabled = false;
		WRITE_ONCE(node->state, DST_STATE_DISABLED);
	}
out:
	mutex_unlock(&node->lock);
	if (scan)
		dst_remote_scan_wait(node);
	return err;
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
	else
		dst_remote_set_param(node, p, val);
	if (!err)
		WRITE_ONCE(node->cfg.param[p], val);
	mutex_unlock(&node->lock);
	return err;
}

/*
 * Crypto configuration: algorithm names are checked against the crypto
 * API when written (an unknown one is refused with the reason in the
 * log), the key is parsed from hex; an empty write clears.
 */
static int dst_node_set_alg(struct dst_node *node, const char *str,
			    bool cipher)
{
	char buf[DST_NAMELEN];
	char *dst, *name;
	int err = 0;

	if (strscpy(buf, str, sizeof(buf)) < 0) {
		pr_err("%s: algorithm names are at most %d bytes\n",
		       node->name, DST_NAMELEN - 1);
		return -EINVAL;
	}
	name = strim(buf);
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
	for (i = 0; i < node->cfg.nr_addrs; i++)
		ret += sysfs_emit_at(buf, ret, "%s%pISpcs", i ? "," : "",
				     &node->cfg.addrs[i]);
	ret += sysfs_emit_at(buf, ret, "\n");
	mutex_unlock(&node->lock);
	return ret;
}

/*
 * A running remote shows the state of its link instead of "running":
 * see dst_remote_link_state() and docs/resilience.md.
 */
ssize_t dst_node_show_state(struct dst_node *node, char *buf)
{
	enum dst_state st = READ_ONCE(node->state);

	if (st == DST_STATE_RUNNING && node->role == DST_ROLE_REMOTE)
		return sysfs_emit(buf, "%s\n", dst_remote_link_state(node));
	return sysfs_emit(buf, "%s\n", dst_state_names[st]);
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

ssize_t dst_node_show_device(struct dst_node *node, char *buf)
{
	if (node->role == DST_ROLE_REMOTE)
		return dst_remote_show_device(node, buf);
	return dst_node_show_local(node, buf);
}

ssize_t dst_node_show_clients(struct dst_node *node, char *buf)
{
	if (node->role == DST_ROLE_EXPORT)
		return dst_export_show_clients(node, buf);
	return sysfs_emit(buf, "\n");
}

ssize_t dst_node_show_stats(struct dst_node *node, char *buf)
{
	if (node->role == DST_ROLE_EXPORT)
		return dst_export_show_stats(node, buf);
	return dst_remote_show_stats(node, buf);
}

struct dst_io_stats __percpu *dst_stats_alloc(void)
{
	return alloc_percpu(struct dst_io_stats);
}

/* Count one finished I/O; any context, including a bio's end_io. */
void dst_stats_account(struct dst_io_stats __percpu *st, enum dst_dir dir,
		       u32 bytes, bool error)
{
	if (error) {
		this_cpu_inc(st->errors);
		return;
	}
	this_cpu_inc(st->ops[dir]);
	this_cpu_add(st->bytes[dir], bytes);
}

/* Append the summed counters to a stats buffer at @len. */
ssize_t dst_stats_emit(struct dst_io_stats __percpu *st, char *buf,
		       ssize_t len)
{
	struct dst_io_stats sum = { };
	int cpu, d;

	for_each_possible_cpu(cpu) {
		const struct dst_io_stats *c = per_cpu_ptr(st, cpu);

		for (d = 0; d < DST_DIR_NR; d++) {
			sum.ops[d] += READ_ONCE(c->ops[d]);
			sum.bytes[d] += READ_ONCE(c->bytes[d]);
		}
		sum.errors += READ_ONCE(c->errors);
	}
	len += sysfs_emit_at(buf, len,
			     "read_ops %llu\nread_bytes %llu\nwrite_ops %llu\nwrite_bytes %llu\nother_ops %llu\nerrors %llu\n",
			     sum.ops[DST_DIR_READ], sum.bytes[DST_DIR_READ],
			     sum.ops[DST_DIR_WRITE], sum.bytes[DST_DIR_WRITE],
			     sum.ops[DST_DIR_OTHER], sum.errors);
	return len;
}

static int __init dst_init(void)
{
	int err;

	err = register_blkdev(0, "dst");
	if (err < 0)
		return err;
	dst_major = err;

	dst_debugfs_init();
	err = dst_sysfs_init();
	if (err)
		goto out_blkdev;
	err = dst_configfs_init();
	if (err)
		goto out_sysfs;
	err = dst_connector_init();
	if (err)
		goto out_configfs;

	pr_info("distributed storage " DST_VERSION ", block major %d\n",
		dst_major);
	return 0;

out_configfs:
	dst_configfs_exit();
out_sysfs:
	dst_sysfs_exit();
out_blkdev:
	dst_debugfs_exit();
	unregister_blkdev(dst_major, "dst");
	return err;
}

static void __exit dst_exit(void)
{
	/* No connector message can create a node once this returns. */
	dst_connector_exit();
	/* configfs holds a module reference per directory: none are left. */
	dst_configfs_exit();
	dst_sysfs_exit();
	dst_debugfs_exit();
	unregister_blkdev(dst_major, "dst");
}

module_init(dst_init);
module_exit(dst_exit);

MODULE_DESCRIPTION("DST: distributed storage, a network block device");
MODULE_AUTHOR("DST developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(DST_VERSION);
