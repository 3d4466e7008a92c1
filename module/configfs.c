// SPDX-License-Identifier: GPL-2.0
/*
 * DST configfs: /sys/kernel/config/dst/{exports,remotes}/<name>/.
 *
 * mkdir creates a node, rmdir removes it (disabling it first), and each
 * attribute is one parse-and-call into config.c or core.c, which own the
 * rules: the ranges, the refusal of changes while enabled, the log line
 * that says why.  Nothing here keeps state of its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/configfs.h>
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/uuid.h>

#include "dst.h"

static inline struct dst_node *to_dst_node(struct config_item *item)
{
	return container_of(to_config_group(item), struct dst_node, group);
}

/*
 * A configfs write without the blanks around it (echo's newline), as a
 * NUL-terminated string in @dst of @size bytes: -E2BIG if what is left
 * does not fit, -EINVAL for a NUL inside ("e1\0junk" is not e1).
 */
static int dst_trim(char *dst, size_t size, const char *page, size_t count)
{
	while (count && (isspace(page[count - 1]) || !page[count - 1]))
		count--;
	while (count && isspace(*page)) {
		page++;
		count--;
	}
	if (memchr(page, '\0', count))
		return -EINVAL;
	if (count >= size)
		return -E2BIG;
	memcpy(dst, page, count);
	dst[count] = '\0';
	return 0;
}

/* A string attribute's value: dst_trim(), the reason logged; -EINVAL. */
static int dst_copy_str(struct config_item *item, const char *attr,
			char *dst, size_t size, const char *page, size_t count)
{
	int err = dst_trim(dst, size, page, count);

	if (err == -E2BIG)
		pr_err("%s: %s takes at most %zu bytes\n",
		       config_item_name(item), attr, size - 1);
	else if (err)
		pr_err("%s: %s must not hold a NUL byte\n",
		       config_item_name(item), attr);
	return err ? -EINVAL : 0;
}

/* A number, with blanks around it or not: 0, or -EINVAL. */
static int dst_parse_s64(const char *page, size_t count, s64 *val)
{
	char buf[32];

	if (dst_trim(buf, sizeof(buf), page, count) || kstrtoll(buf, 0, val))
		return -EINVAL;
	return 0;
}

/*
 * A plain numeric parameter: show prints it, store parses a signed
 * integer and hands it to config.c, which checks range and state.
 */
#define DST_PARAM_ATTR(_name, _param)					\
static const enum dst_param dsta_##_name##_param = _param;		\
static ssize_t dsta_##_name##_show(struct config_item *item,	\
				       char *page)			\
{									\
	return sysfs_emit(page, "%lld\n",				\
			  dst_node_get_param(to_dst_node(item),	\
					     dsta_##_name##_param));	\
}									\
static ssize_t dsta_##_name##_store(struct config_item *item,	\
					const char *page, size_t count)	\
{									\
	struct dst_node *node = to_dst_node(item);			\
	s64 val;							\
	int err;							\
									\
	if (dst_parse_s64(page, count, &val))				\
		err = dst_node_bad_number(node, dsta_##_name##_param);	\
	else								\
		err = dst_node_set_param(node, dsta_##_name##_param,	\
					 val);				\
	return err ? err : count;					\
}									\
CONFIGFS_ATTR(dsta_, _name)

DST_PARAM_ATTR(read_only, DST_P_READ_ONLY);
DST_PARAM_ATTR(max_pages, DST_P_MAX_PAGES);
DST_PARAM_ATTR(connections, DST_P_CONNECTIONS);
DST_PARAM_ATTR(queue_depth, DST_P_QUEUE_DEPTH);
DST_PARAM_ATTR(poll_queues, DST_P_POLL_QUEUES);
DST_PARAM_ATTR(trans_scan_timeout, DST_P_TRANS_SCAN_TIMEOUT);
DST_PARAM_ATTR(trans_max_retries, DST_P_TRANS_MAX_RETRIES);
DST_PARAM_ATTR(keepalive_ms, DST_P_KEEPALIVE_MS);
DST_PARAM_ATTR(reconnect_delay_ms, DST_P_RECONNECT_DELAY_MS);
DST_PARAM_ATTR(fail_timeout_s, DST_P_FAIL_TIMEOUT_S);

/* size reads back the effective size once the node runs. */
static ssize_t dsta_size_show(struct config_item *item, char *page)
{
	return dst_node_show_size(to_dst_node(item), page);
}

static ssize_t dsta_size_store(struct config_item *item,
			       const char *page, size_t count)
{
	struct dst_node *node = to_dst_node(item);
	char buf[32];
	u64 val;
	int err;

	if (dst_trim(buf, sizeof(buf), page, count) ||
	    kstrtou64(buf, 0, &val) || val > S64_MAX)
		err = dst_node_bad_number(node, DST_P_SIZE);
	else
		err = dst_node_set_param(node, DST_P_SIZE, val);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, size);

static ssize_t dsta_addr_show(struct config_item *item, char *page)
{
	return dst_node_show_addr(to_dst_node(item), page);
}

static ssize_t dsta_addr_store(struct config_item *item,
			       const char *page, size_t count)
{
	/* Up to DST_MAX_PATHS addresses, a scoped IPv6 one is 60 bytes. */
	char buf[256];
	int err = dst_copy_str(item, "addr", buf, sizeof(buf), page, count);

	if (!err)
		err = dst_node_set_addr(to_dst_node(item), buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, addr);

static ssize_t dsta_device_show(struct config_item *item, char *page)
{
	return dst_node_show_local(to_dst_node(item), page);
}

static ssize_t dsta_device_store(struct config_item *item,
				 const char *page, size_t count)
{
	char *buf;
	int err;

	buf = kmalloc(DST_PATHLEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = dst_copy_str(item, "device", buf, DST_PATHLEN, page, count);
	if (!err)
		err = dst_node_set_device(to_dst_node(item), buf);
	kfree(buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, device);

/* A remote's device is what the kernel made of it: read-only. */
static ssize_t dsta_remote_device_show(struct config_item *item,
				       char *page)
{
	return dst_node_show_device(to_dst_node(item), page);
}
CONFIGFS_ATTR_RO(dsta_remote_, device);

static ssize_t dsta_export_show(struct config_item *item, char *page)
{
	struct dst_node *node = to_dst_node(item);
	ssize_t ret;

	mutex_lock(&node->lock);
	ret = sysfs_emit(page, "%s\n", node->cfg.export);
	mutex_unlock(&node->lock);
	return ret;
}

static ssize_t dsta_export_store(struct config_item *item,
				 const char *page, size_t count)
{
	char buf[DST_NAMELEN];
	int err = dst_copy_str(item, "export", buf, sizeof(buf), page,
			       count);

	if (!err)
		err = dst_node_set_export(to_dst_node(item), buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, export);

static ssize_t dsta_enable_show(struct config_item *item, char *page)
{
	return sysfs_emit(page, "%d\n", READ_ONCE(to_dst_node(item)->enabled));
}

static ssize_t dsta_enable_store(struct config_item *item,
				 const char *page, size_t count)
{
	char buf[8];
	bool on;
	int err = dst_trim(buf, sizeof(buf), page, count);

	if (!err)
		err = kstrtobool(buf, &on);
	if (err) {
		pr_err("%s: enable takes 1 or 0\n", config_item_name(item));
		err = -EINVAL;
	} else {
		err = dst_node_enable(to_dst_node(item), on);
	}
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, enable);

static ssize_t dsta_state_show(struct config_item *item, char *page)
{
	return dst_node_show_state(to_dst_node(item), page);
}
CONFIGFS_ATTR_RO(dsta_, state);

/* An export's connected clients, one "address[ ro]" per line. */
static ssize_t dsta_clients_show(struct config_item *item, char *page)
{
	return dst_node_show_clients(to_dst_node(item), page);
}
CONFIGFS_ATTR_RO(dsta_, clients);

/* Counters and the link state, "key value" per line. */
static ssize_t dsta_stats_show(struct config_item *item, char *page)
{
	return dst_node_show_stats(to_dst_node(item), page);
}
CONFIGFS_ATTR_RO(dsta_, stats);

DST_PARAM_ATTR(crypto_threads, DST_P_CRYPTO_THREADS);

static ssize_t dsta_hash_show(struct config_item *item, char *page)
{
	return dst_node_show_alg(to_dst_node(item), page, false);
}

static ssize_t dsta_hash_store(struct config_item *item, const char *page,
			       size_t count)
{
	char buf[DST_NAMELEN];
	int err = dst_copy_str(item, "hash", buf, sizeof(buf), page, count);

	if (!err)
		err = dst_node_set_hash(to_dst_node(item), buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, hash);

static ssize_t dsta_cipher_show(struct config_item *item, char *page)
{
	return dst_node_show_alg(to_dst_node(item), page, true);
}

static ssize_t dsta_cipher_store(struct config_item *item, const char *page,
				 size_t count)
{
	char buf[DST_NAMELEN];
	int err = dst_copy_str(item, "cipher", buf, sizeof(buf), page, count);

	if (!err)
		err = dst_node_set_cipher(to_dst_node(item), buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, cipher);

/* Write-only in effect: reading says "set" or "none", never the key. */
static ssize_t dsta_key_show(struct config_item *item, char *page)
{
	return dst_node_show_key(to_dst_node(item), page);
}

static ssize_t dsta_key_store(struct config_item *item, const char *page,
			      size_t count)
{
	struct dst_node *node = to_dst_node(item);
	u8 key[DST_KEY_MAX];
	size_t len = count;
	int err;

	while (len && isspace(page[len - 1]))
		len--;
	if (!len) {
		err = dst_node_set_key(node, NULL, 0);
	} else if (len % 2 || len / 2 > DST_KEY_MAX || len / 2 < DST_KEY_MIN) {
		pr_err("%s: key must be %d to %d bytes in hex\n",
		       node->name, DST_KEY_MIN, DST_KEY_MAX);
		err = -EINVAL;
	} else {
		err = hex2bin(key, page, len / 2);
		if (err)
			pr_err("%s: key is not hex\n", node->name);
		else
			err = dst_node_set_key(node, key, len / 2);
		memzero_explicit(key, sizeof(key));
	}
	/*
	 * configfs's write buffer is ours until we return, and is freed
	 * later without being cleared: the hex key must not outlive us.
	 */
	memzero_explicit((char *)page, count);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, key);

static ssize_t dsta_uuid_show(struct config_item *item, char *page)
{
	return dst_node_show_uuid(to_dst_node(item), page);
}

static ssize_t dsta_uuid_store(struct config_item *item,
			       const char *page, size_t count)
{
	char buf[UUID_STRING_LEN + 1];
	int err = dst_copy_str(item, "uuid", buf, sizeof(buf), page, count);

	if (!err)
		err = dst_node_set_uuid(to_dst_node(item), buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_, uuid);

static struct configfs_attribute *dst_export_attrs[] = {
	&dsta_attr_device,
	&dsta_attr_addr,
	&dsta_attr_size,
	&dsta_attr_read_only,
	&dsta_attr_hash,
	&dsta_attr_cipher,
	&dsta_attr_key,
	&dsta_attr_crypto_threads,
	&dsta_attr_uuid,
	&dsta_attr_enable,
	&dsta_attr_state,
	&dsta_attr_clients,
	&dsta_attr_stats,
	NULL,
};

static struct configfs_attribute *dst_remote_attrs[] = {
	&dsta_attr_addr,
	&dsta_attr_export,
	&dsta_attr_size,
	&dsta_attr_max_pages,
	&dsta_attr_connections,
	&dsta_attr_queue_depth,
	&dsta_attr_poll_queues,
	&dsta_attr_trans_scan_timeout,
	&dsta_attr_trans_max_retries,
	&dsta_attr_keepalive_ms,
	&dsta_attr_reconnect_delay_ms,
	&dsta_attr_fail_timeout_s,
	&dsta_attr_read_only,
	&dsta_attr_hash,
	&dsta_attr_cipher,
	&dsta_attr_key,
	&dsta_attr_uuid,
	&dsta_attr_enable,
	&dsta_attr_state,
	&dsta_remote_attr_device,
	&dsta_attr_stats,
	NULL,
};

/* --- exports/<name>/acl/<rule>/ ------------------------------------ */

static inline struct dst_acl_rule *to_dst_acl_rule(struct config_item *item)
{
	return container_of(item, struct dst_acl_rule, item);
}

static ssize_t dsta_acl_addr_show(struct config_item *item, char *page)
{
	return dst_acl_rule_show_addr(to_dst_acl_rule(item), page);
}

static ssize_t dsta_acl_addr_store(struct config_item *item,
				   const char *page, size_t count)
{
	char buf[INET6_ADDRSTRLEN + 8];
	int err = dst_copy_str(item, "addr", buf, sizeof(buf), page, count);

	if (!err)
		err = dst_acl_rule_set_addr(to_dst_acl_rule(item), buf);
	return err ? err : count;
}
CONFIGFS_ATTR(dsta_acl_, addr);

static ssize_t dsta_acl_perm_show(struct config_item *item, char *page)
{
	return dst_acl_rule_show_perm(to_dst_acl_rule(item), page);
}

static ssize_t dsta_acl_perm_store(struct config_item *item,
				   const char *page, size_t count)
{
	int err = dst_acl_rule_set_perm(to_dst_acl_rule(item), page);

	return err ? err : count;
}
CONFIGFS_ATTR(dsta_acl_, perm);

static struct configfs_attribute *dst_acl_rule_attrs[] = {
	&dsta_acl_attr_addr,
	&dsta_acl_attr_perm,
	NULL,
};

static void dst_acl_rule_release(struct config_item *item)
{
	dst_acl_rule_free(to_dst_acl_rule(item));
}

static struct configfs_item_operations dst_acl_rule_ops = {
	.release	= dst_acl_rule_release,
};

static const struct config_item_type dst_acl_rule_type = {
	.ct_item_ops	= &dst_acl_rule_ops,
	.ct_attrs	= dst_acl_rule_attrs,
	.ct_owner	= THIS_MODULE,
};

static struct config_item *dst_acl_make_item(struct config_group *group,
					     const char *name)
{
	struct dst_node *node = container_of(group, struct dst_node,
					     acl_group);
	struct dst_acl_rule *rule = dst_acl_rule_create(node, name);

	if (IS_ERR(rule))
		return ERR_CAST(rule);
	config_item_init_type_name(&rule->item, name, &dst_acl_rule_type);
	return &rule->item;
}

static void dst_acl_drop_item(struct config_group *group,
			      struct config_item *item)
{
	dst_acl_rule_remove(to_dst_acl_rule(item));
	config_item_put(item);
}

static struct configfs_group_operations dst_acl_group_ops = {
	.make_item	= dst_acl_make_item,
	.drop_item	= dst_acl_drop_item,
};

static const struct config_item_type dst_acl_type = {
	.ct_group_ops	= &dst_acl_group_ops,
	.ct_owner	= THIS_MODULE,
};

/* --- nodes --------------------------------------------------------- */

/* The last configfs reference is gone: drop the creator's node reference. */
static void dst_node_item_release(struct config_item *item)
{
	dst_node_put(to_dst_node(item));
}

static struct configfs_item_operations dst_node_item_ops = {
	.release	= dst_node_item_release,
};

static const struct config_item_type dst_export_type = {
	.ct_item_ops	= &dst_node_item_ops,
	.ct_attrs	= dst_export_attrs,
	.ct_owner	= THIS_MODULE,
};

static const struct config_item_type dst_remote_type = {
	.ct_item_ops	= &dst_node_item_ops,
	.ct_attrs	= dst_remote_attrs,
	.ct_owner	= THIS_MODULE,
};

static struct config_group *dst_make_node(const char *name, enum dst_role role,
					  const struct config_item_type *type)
{
	struct dst_node *node = dst_node_create(name, role);

	if (IS_ERR(node))
		return ERR_CAST(node);
	config_group_init_type_name(&node->group, name, type);
	if (role == DST_ROLE_EXPORT) {
		config_group_init_type_name(&node->acl_group, "acl",
					    &dst_acl_type);
		configfs_add_default_group(&node->acl_group, &node->group);
	}
	return &node->group;
}

static struct config_group *dst_exports_make_group(struct config_group *group,
						   const char *name)
{
	return dst_make_node(name, DST_ROLE_EXPORT, &dst_export_type);
}

static struct config_group *dst_remotes_make_group(struct config_group *group,
						   const char *name)
{
	return dst_make_node(name, DST_ROLE_REMOTE, &dst_remote_type);
}

/* rmdir: disable (see dst_node_remove) and unregister, then let go. */
static void dst_drop_node(struct config_group *group, struct config_item *item)
{
	dst_node_remove(to_dst_node(item));
	config_item_put(item);
}

static struct configfs_group_operations dst_exports_group_ops = {
	.make_group	= dst_exports_make_group,
	.drop_item	= dst_drop_node,
};

static struct configfs_group_operations dst_remotes_group_ops = {
	.make_group	= dst_remotes_make_group,
	.drop_item	= dst_drop_node,
};

static const struct config_item_type dst_exports_type = {
	.ct_group_ops	= &dst_exports_group_ops,
	.ct_owner	= THIS_MODULE,
};

static const struct config_item_type dst_remotes_type = {
	.ct_group_ops	= &dst_remotes_group_ops,
	.ct_owner	= THIS_MODULE,
};

static const struct config_item_type dst_root_type = {
	.ct_owner	= THIS_MODULE,
};

static struct config_group dst_exports_group;
static struct config_group dst_remotes_group;

static struct configfs_subsystem dst_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf	= "dst",
			.ci_type	= &dst_root_type,
		},
	},
};

/*
 * Directories made for the connector.
 *
 * configfs lets the kernel add a group only as a "default group", and
 * userspace can never rmdir one of those (EPERM).  A node the connector
 * creates must be an ordinary directory that rmdir removes like any
 * other, so the connector's requests make and remove directories here
 * exactly as mkdir(2) and rmdir(2) would, with the sender's credentials;
 * configfs then calls the make_group, make_item and drop_item above as
 * for any directory, and there is one registry whichever door was used.
 *
 * Paths are looked up from the subsystem's own "exports" and "remotes"
 * directories, which live until dst_configfs_exit(); a held dentry of a
 * directory removed meanwhile only makes the operation fail (ENOENT).
 */
static struct dentry *dst_cfs_role_dir(enum dst_role role)
{
	return role == DST_ROLE_EXPORT ? dst_exports_group.cg_item.ci_dentry :
					 dst_remotes_group.cg_item.ci_dentry;
}

/* A referenced, positive dentry of @parent/@name, or an ERR_PTR. */
static struct dentry *dst_cfs_child(struct dentry *parent, const char *name)
{
	struct dentry *d = lookup_one_len_unlocked(name, parent, strlen(name));

	if (!IS_ERR(d) && d_really_is_negative(d)) {
		dput(d);
		d = ERR_PTR(-ENOENT);
	}
	return d;
}

static int dst_cfs_mkdir(struct dentry *parent, const char *name)
{
	struct inode *dir = d_inode(parent);
	struct dentry *d;
	int err;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	d = lookup_one_len(name, parent, strlen(name));
	if (IS_ERR(d)) {
		err = PTR_ERR(d);
	} else {
		err = d_really_is_positive(d) ? -EEXIST :
		      vfs_mkdir(&init_user_ns, dir, d, 0755);
		dput(d);
	}
	inode_unlock(dir);
	return err;
}

static int dst_cfs_rmdir(struct dentry *parent, const char *name)
{
	struct inode *dir = d_inode(parent);
	struct dentry *d;
	int err;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	d = lookup_one_len(name, parent, strlen(name));
	if (IS_ERR(d)) {
		err = PTR_ERR(d);
	} else {
		err = d_really_is_negative(d) ? -ENOENT :
		      vfs_rmdir(&init_user_ns, dir, d);
		dput(d);
	}
	inode_unlock(dir);
	return err;
}

/* mkdir {exports,remotes}/<name>: the node, as a configfs mkdir makes it. */
int dst_configfs_add_node(enum dst_role role, const char *name)
{
	return dst_cfs_mkdir(dst_cfs_role_dir(role), name);
}

/* The "acl" directory of export @name, referenced. */
static struct dentry *dst_cfs_acl_dir(const char *name)
{
	struct dentry *node_d, *acl_d;

	node_d = dst_cfs_child(dst_cfs_role_dir(DST_ROLE_EXPORT), name);
	if (IS_ERR(node_d))
		return node_d;
	acl_d = dst_cfs_child(node_d, "acl");
	dput(node_d);
	return acl_d;
}

/*
 * rmdir {exports,remotes}/<name>, an export's rules first (@rules, the
 * names of its @nr_rules rules, DST_NAMELEN bytes each: configfs
 * removes only empty directories).  A rule
 * someone else removed meanwhile is no error.
 */
int dst_configfs_del_node(enum dst_role role, const char *name,
			  const char *rules, unsigned int nr_rules)
{
	struct dentry *acl_d;
	unsigned int i;
	int err;

	if (nr_rules) {
		acl_d = dst_cfs_acl_dir(name);
		if (IS_ERR(acl_d))
			return PTR_ERR(acl_d);
		for (i = 0; i < nr_rules; i++) {
			err = dst_cfs_rmdir(acl_d, rules + DST_NAMELEN * i);
			if (err && err != -ENOENT) {
				dput(acl_d);
				return err;
			}
		}
		dput(acl_d);
	}
	return dst_cfs_rmdir(dst_cfs_role_dir(role), name);
}

/* mkdir exports/<export>/acl/<rule>. */
int dst_configfs_add_rule(const char *export, const char *rule)
{
	struct dentry *acl_d = dst_cfs_acl_dir(export);
	int err;

	if (IS_ERR(acl_d))
		return PTR_ERR(acl_d);
	err = dst_cfs_mkdir(acl_d, rule);
	dput(acl_d);
	return err;
}

/* rmdir exports/<export>/acl/<rule>. */
int dst_configfs_del_rule(const char *export, const char *rule)
{
	struct dentry *acl_d = dst_cfs_acl_dir(export);
	int err;

	if (IS_ERR(acl_d))
		return PTR_ERR(acl_d);
	err = dst_cfs_rmdir(acl_d, rule);
	dput(acl_d);
	return err;
}

int dst_configfs_init(void)
{
	config_group_init(&dst_subsys.su_group);
	mutex_init(&dst_subsys.su_mutex);

	config_group_init_type_name(&dst_exports_group, "exports",
				    &dst_exports_type);
	configfs_add_default_group(&dst_exports_group, &dst_subsys.su_group);
	config_group_init_type_name(&dst_remotes_group, "remotes",
				    &dst_remotes_type);
	configfs_add_default_group(&dst_remotes_group, &dst_subsys.su_group);

	return configfs_register_subsystem(&dst_subsys);
}

void dst_configfs_exit(void)
{
	configfs_unregister_subsystem(&dst_subsys);
}
