// SPDX-License-Identifier: GPL-2.0
/*
 * DST core: module init and exit, the node registry, node lifetime,
 * enable and disable, and the node operations every control interface
 * calls (config.c has those that configure a node).
 *
 * configfs, the connector and sysfs only parse what userspace gave them and
 * call the functions here and in config.c, so a rule (a range, a refusal
 * while enabled) exists in exactly one place whichever door the
 * administrator used.
 *
 * Lifetime: a node is one allocation whose reference count is that of its
 * embedded struct device.  The creator (a configfs mkdir) owns the first
 * reference; the block device's open and the data path take more.  The
 * memory goes when the last one is put, from the device release callback.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/ctype.h>
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

/* Names become device and directory names: keep them plain. */
int dst_check_name(const char *name)
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
	int err;

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
	dst_config_init(&node->cfg);
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
