// SPDX-License-Identifier: GPL-2.0
/*
 * DST connector: the original 2008 DST control ABI, messages on
 * CN_DST_IDX/CN_DST_VAL, each answered by an acknowledgment carrying an
 * errno (struct dst_ctl_ack_payload after the request's cn_msg header).
 *
 * This file only validates messages and calls the node operations in
 * core.c, like configfs does.  Commands are not wired up yet: every
 * message is answered with -EOPNOTSUPP, so an old tool gets an answer
 * instead of waiting forever.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/connector.h>
#include <linux/slab.h>

#include "dst.h"

static struct cb_id dst_cn_id = { .idx = CN_DST_IDX, .val = CN_DST_VAL };

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

/*
 * The connector delivers a message synchronously, in the context of the
 * task that sent it, so capable() checks the sender.
 */
static void dst_cn_callback(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	if (!capable(CAP_SYS_ADMIN)) {
		dst_cn_ack(msg, nsp, -EPERM);
		return;
	}
	dst_cn_ack(msg, nsp, -EOPNOTSUPP);
}

int dst_connector_init(void)
{
	return cn_add_callback(&dst_cn_id, "dst", dst_cn_callback);
}

void dst_connector_exit(void)
{
	cn_del_callback(&dst_cn_id);
}
