// SPDX-License-Identifier: GPL-2.0
/*
 * DST sysfs: the "dst" bus and one device per node,
 * /sys/bus/dst/devices/dst-<name>/, with the original DST attributes
 * (name, size, type = peer address, local = backing device) plus state and
 * role.  A remote node's gendisk is registered as a child of this device,
 * so udev rules can match ATTRS{name} on the disk.  Read-only: all
 * configuration goes through configfs or the connector.
 */
#include <linux/device.h>

#include "dst.h"

static struct device *dst_root;

/* An attribute whose value core.c formats. */
#define DST_NODE_ATTR(_name, _fn)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return _fn(dst_dev_to_node(dev), buf);				\
}									\
static DEVICE_ATTR_RO(_name)

static ssize_t name_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", dst_dev_to_node(dev)->name);
}
static DEVICE_ATTR_RO(name);

DST_NODE_ATTR(size, dst_node_show_size);
DST_NODE_ATTR(type, dst_node_show_addr);
DST_NODE_ATTR(local, dst_node_show_local);
DST_NODE_ATTR(state, dst_node_show_state);
DST_NODE_ATTR(stats, dst_node_show_stats);

static ssize_t role_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  dst_role_name(dst_dev_to_node(dev)->role));
}
static DEVICE_ATTR_RO(role);

static struct attribute *dst_node_attrs[] = {
	&dev_attr_name.attr,
	&dev_attr_size.attr,
	&dev_attr_type.attr,
	&dev_attr_local.attr,
	&dev_attr_state.attr,
	&dev_attr_role.attr,
	&dev_attr_stats.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dst_node);

static int dst_uevent(struct device *dev, struct kobj_uevent_env *env)
{
	struct dst_node *node = dst_dev_to_node(dev);

	if (add_uevent_var(env, "DST_NAME=%s", node->name))
		return -ENOMEM;
	return add_uevent_var(env, "DST_ROLE=%s", dst_role_name(node->role));
}

static struct bus_type dst_bus_type = {
	.name		= "dst",
	.dev_groups	= dst_node_groups,
	.uevent		= dst_uevent,
};

/* Prepare a node's device; core.c adds it once the name is known unique. */
void dst_sysfs_init_node(struct dst_node *node, void (*release)(struct device *))
{
	device_initialize(&node->dev);
	node->dev.bus = &dst_bus_type;
	node->dev.parent = dst_root;
	node->dev.release = release;
	dev_set_name(&node->dev, "dst-%s", node->name);
}

int dst_sysfs_init(void)
{
	int err;

	err = bus_register(&dst_bus_type);
	if (err)
		return err;
	dst_root = root_device_register("dst");
	if (IS_ERR(dst_root)) {
		bus_unregister(&dst_bus_type);
		return PTR_ERR(dst_root);
	}
	return 0;
}

void dst_sysfs_exit(void)
{
	root_device_unregister(dst_root);
	bus_unregister(&dst_bus_type);
}
