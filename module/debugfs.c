// SPDX-License-Identifier: GPL-2.0
/*
 * DST debugfs: what a running node is doing, for whoever debugs it.
 *
 *	/sys/kernel/debug/dst/exports/<name>/{inflight,connections}
 *	/sys/kernel/debug/dst/remotes/<name>/{inflight,connections}
 *
 * A node's directory exists while it is enabled: core.c adds it once
 * the node runs and removes it, under node->lock, before stopping it.
 * debugfs's removal waits for a read in progress, so the show functions
 * (client.c and export.c, which own the state) may use node->rem and
 * node->exp without node->lock -- and must not take it.  The format is
 * for people (docs/debugging.md), not an ABI.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "dst.h"

static struct dentry *dst_debugfs_root;
static struct dentry *dst_debugfs_dirs[2];	/* by enum dst_role */

static int dst_debugfs_inflight_show(struct seq_file *m, void *unused)
{
	struct dst_node *node = m->private;

	if (node->role == DST_ROLE_EXPORT)
		dst_export_show_inflight(node, m);
	else
		dst_remote_show_inflight(node, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dst_debugfs_inflight);

static int dst_debugfs_conns_show(struct seq_file *m, void *unused)
{
	struct dst_node *node = m->private;

	if (node->role == DST_ROLE_EXPORT)
		dst_export_show_conns(node, m);
	else
		dst_remote_show_conns(node, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dst_debugfs_conns);

/* Called with node->lock held, once the node runs. */
void dst_debugfs_add_node(struct dst_node *node)
{
	struct dentry *dir;

	lockdep_assert_held(&node->lock);
	/* Without debugfs these are no-ops; a failure costs only these files. */
	dir = debugfs_create_dir(node->name, dst_debugfs_dirs[node->role]);
	debugfs_create_file("inflight", 0400, dir, node,
			    &dst_debugfs_inflight_fops);
	debugfs_create_file("connections", 0400, dir, node,
			    &dst_debugfs_conns_fops);
	node->debugfs = dir;
}

/* Called with node->lock held, before the node stops. */
void dst_debugfs_del_node(struct dst_node *node)
{
	lockdep_assert_held(&node->lock);
	debugfs_remove_recursive(node->debugfs);
	node->debugfs = NULL;
}

void dst_debugfs_init(void)
{
	dst_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	dst_debugfs_dirs[DST_ROLE_EXPORT] =
		debugfs_create_dir("exports", dst_debugfs_root);
	dst_debugfs_dirs[DST_ROLE_REMOTE] =
		debugfs_create_dir("remotes", dst_debugfs_root);
}

void dst_debugfs_exit(void)
{
	debugfs_remove_recursive(dst_debugfs_root);
}
