/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DST internal interfaces.
 *
 * A node is either an export (serves a local block device) or a remote
 * (attaches an export as /dev/dstN).  Every control interface -- configfs,
 * the connector, sysfs -- works on the one registry kept by core.c and
 * calls the node operations declared here; the data path files (conn.c,
 * proto.c, trans.c, client.c, export.c) hang their state off the node
 * while it is enabled.
 */
#ifndef DST_INTERNAL_H
#define DST_INTERNAL_H

#include <linux/configfs.h>
#include <linux/device.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/dst.h>

#define DST_PATHLEN		256
#define DST_PART_SHIFT		4	/* 15 partitions per disk */

enum dst_role {
	DST_ROLE_EXPORT,
	DST_ROLE_REMOTE,
};

/* Node states, as shown by the read-only "state" attributes. */
enum dst_state {
	DST_STATE_DISABLED,	/* configurable, nothing running */
	DST_STATE_STARTING,	/* enable in progress */
	DST_STATE_RUNNING,	/* serving / attached */
	DST_STATE_STOPPING,	/* disable in progress */
};

/* Numeric parameters.  core.c holds their ranges and defaults. */
enum dst_param {
	DST_P_SIZE,
	DST_P_READ_ONLY,
	DST_P_MAX_PAGES,
	DST_P_CONNECTIONS,
	DST_P_QUEUE_DEPTH,
	DST_P_TRANS_SCAN_TIMEOUT,
	DST_P_TRANS_MAX_RETRIES,
	DST_P_KEEPALIVE_MS,
	DST_P_RECONNECT_DELAY_MS,
	DST_P_FAIL_TIMEOUT_S,
	DST_P_NR
};

/* What the administrator configured; read under node->lock. */
struct dst_config {
	struct sockaddr_storage addr;	/* listen (export) or server (remote) */
	bool addr_set;
	char device[DST_PATHLEN];	/* export: backing device path */
	char export[DST_NAMELEN];	/* remote: export to attach */
	s64 param[DST_P_NR];
};

struct dst_export;
struct dst_remote;

struct dst_node {
	/* The device's reference count is the node's lifetime. */
	struct device dev;
	struct config_group group;
	struct list_head entry;		/* dst_nodes, under dst_nodes_lock */

	char name[DST_NAMELEN];
	enum dst_role role;

	/* Serialises configuration, enable and disable. */
	struct mutex lock;
	enum dst_state state;		/* written under lock, read lockless */
	bool enabled;
	struct dst_config cfg;

	/* Data path state, present while enabled. */
	union {
		struct dst_export *exp;
		struct dst_remote *rem;
	};
};

static inline struct dst_node *dst_dev_to_node(struct device *dev)
{
	return container_of(dev, struct dst_node, dev);
}

/* core.c: the registry and node operations */
struct dst_node *dst_node_create(const char *name, enum dst_role role);
void dst_node_remove(struct dst_node *node);
void dst_node_get(struct dst_node *node);
void dst_node_put(struct dst_node *node);
int dst_node_enable(struct dst_node *node, bool on);
int dst_node_set_param(struct dst_node *node, enum dst_param p, s64 val);
s64 dst_node_get_param(struct dst_node *node, enum dst_param p);
bool dst_param_applies(enum dst_param p, enum dst_role role);
int dst_node_set_addr(struct dst_node *node, const char *str);
int dst_node_set_device(struct dst_node *node, const char *path);
int dst_node_set_export(struct dst_node *node, const char *name);
ssize_t dst_node_show_addr(struct dst_node *node, char *buf);
ssize_t dst_node_show_state(struct dst_node *node, char *buf);
ssize_t dst_node_show_size(struct dst_node *node, char *buf);
ssize_t dst_node_show_local(struct dst_node *node, char *buf);
ssize_t dst_node_show_device(struct dst_node *node, char *buf);
const char *dst_role_name(enum dst_role role);
extern int dst_major;

/* configfs.c */
int dst_configfs_init(void);
void dst_configfs_exit(void);

/* sysfs.c */
int dst_sysfs_init(void);
void dst_sysfs_exit(void);
void dst_sysfs_init_node(struct dst_node *node, void (*release)(struct device *));

/* connector.c */
int dst_connector_init(void);
void dst_connector_exit(void);

#endif /* DST_INTERNAL_H */
