// SPDX-License-Identifier: GPL-2.0
/*
 * DST remote node: an export attached as /dev/dstN.
 *
 * Enabling a remote opens `connections` TCP connections to the server,
 * shakes hands on each (all must describe the same export), and adds a
 * blk-mq disk with one hardware queue per connection.  queue_rq sends a
 * request on its queue's connection, in the submitter's context
 * (BLK_MQ_F_BLOCKING: sending may sleep); each connection's receive loop
 * runs as a work item on the node's own WQ_MEM_RECLAIM workqueue, reads
 * replies straight into the request's pages and completes them.
 * trans.c names the transactions and decides who completes each one.
 *
 * Disabling deletes the disk while the connections still work, so dirty
 * data is written back and requests in flight finish; requests issued
 * after that fail with EIO.  If the server stops answering, a watchdog
 * shuts the connections down after DST_DETACH_GRACE_MS without a single
 * completion, which fails what is left: detaching never hangs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "dst.h"

#define DST_CONNECT_TIMEOUT_MS	10000	/* connect and handshake */
#define DST_DETACH_GRACE_MS	5000	/* without progress, while detaching */
#define DST_MAX_DISKS		(1 << (MINORBITS - DST_PART_SHIFT))

static DEFINE_IDA(dst_index_ida);

struct dst_remote;

/* One connection = one hardware queue. */
struct dst_rconn {
	struct dst_remote *rem;
	int idx;
	struct socket *sock;
	struct mutex tx_lock;	/* one frame at a time; guards dead */
	bool dead;
	struct work_struct recv_work;
};

struct dst_remote {
	struct dst_node *node;
	struct net *net;		/* where the sockets live */
	struct dst_geometry geo;	/* as the server described it */
	bool read_only;
	int index;			/* dstN */
	struct workqueue_struct *wq;	/* receive loops, detach watchdog */
	struct blk_mq_tag_set set;
	struct gendisk *disk;

	bool stopping;
	atomic_long_t completions;	/* progress, for the watchdog */
	long seen;
	struct delayed_work watchdog;

	int nr_conns;
	struct dst_rconn conns[];
};

static const char *dst_rem_name(struct dst_remote *rem)
{
	return rem->node->name;
}

/*
 * Take a connection out of service: no frame is sent on it any more, and
 * its receive loop returns.  What it had in flight is failed by whoever
 * stops the receive loop, once nothing can arrive for it.
 */
static void dst_rconn_kill(struct dst_rconn *conn)
{
	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	mutex_lock(&conn->tx_lock);
	conn->dead = true;
	mutex_unlock(&conn->tx_lock);
}

/* --- handshake ----------------------------------------------------- */

static int dst_rconn_handshake(struct dst_remote *rem, struct dst_rconn *conn,
			       struct dst_geometry *geo)
{
	struct dst_node *node = rem->node;
	struct {
		struct dst_wire_hdr hdr;
		union {
			struct dst_wire_hello hello;
			struct dst_wire_welcome welcome;
		};
	} *buf;
	struct dst_hello hello = {
		.version_min = DST_PROTO_VERSION_MIN,
		.version_max = DST_PROTO_VERSION,
		.features = DST_FEAT_ALL,
		.max_io = dst_node_get_param(node, DST_P_MAX_PAGES) * PAGE_SIZE,
	};
	struct dst_msg m = {
		.cmd = DST_CMD_HELLO,
		.len = DST_HELLO_SIZE,
	};
	int err;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (!dst_node_get_param(node, DST_P_READ_ONLY))
		hello.features &= ~DST_FEAT_READ_ONLY;
	strscpy(hello.export, node->cfg.export, sizeof(hello.export));
	dst_msg_encode(&buf->hdr, &m);
	dst_hello_encode(&buf->hello, &hello);

	err = dst_sock_send(conn->sock, buf, DST_HDR_SIZE + DST_HELLO_SIZE, 0);
	if (!err)
		err = dst_sock_recv(conn->sock, &buf->hdr, DST_HDR_SIZE);
	if (err) {
		pr_err("%s: handshake with %pISpc failed: %d\n", node->name,
		       &node->cfg.addr, err);
		goto out;
	}

	err = dst_msg_decode(&buf->hdr, &m);
	if (err || m.cmd != (DST_CMD_HELLO | DST_CMD_REPLY) || m.id) {
		pr_err("%s: %pISpc does not speak DST v%d\n", node->name,
		       &node->cfg.addr, DST_PROTO_VERSION);
		err = -EPROTO;
		goto out;
	}
	if (m.status != DST_ST_OK) {
		err = dst_status_to_errno(m.status);
		pr_err("%s: %pISpc refused export '%s': status %u (%d)\n",
		       node->name, &node->cfg.addr, hello.export, m.status,
		       err);
		goto out;
	}
	if (m.len != DST_WELCOME_SIZE) {
		pr_err("%s: welcome of %u bytes from %pISpc\n", node->name,
		       m.len, &node->cfg.addr);
		err = -EPROTO;
		goto out;
	}
	err = dst_sock_recv(conn->sock, &buf->welcome, DST_WELCOME_SIZE);
	if (err)
		goto out;
	err = dst_welcome_decode(&buf->welcome, geo);
	if (!err && (geo->version < hello.version_min ||
		     geo->version > hello.version_max ||
		     geo->features & ~(hello.features | DST_FEAT_READ_ONLY) ||
		     geo->max_io > hello.max_io))
		err = -EPROTO;
	if (err)
		pr_err("%s: %pISpc describes an export this client cannot use\n",
		       node->name, &node->cfg.addr);
out:
	kfree(buf);
	return err;
}

static int dst_rconn_open(struct dst_remote *rem, struct dst_rconn *conn)
{
	struct dst_node *node = rem->node;
	struct dst_geometry geo;
	int err;

	conn->sock = dst_sock_connect(rem->net, &node->cfg.addr,
				      DST_CONNECT_TIMEOUT_MS);
	if (IS_ERR(conn->sock)) {
		err = PTR_ERR(conn->sock);
		conn->sock = NULL;
		pr_err("%s: cannot connect to %pISpc: %d\n", node->name,
		       &node->cfg.addr, err);
		return err;
	}
	err = dst_rconn_handshake(rem, conn, &geo);
	if (err)
		return err;

	if (conn->idx == 0) {
		rem->geo = geo;
	} else if (memcmp(&geo, &rem->geo, sizeof(geo))) {
		pr_err("%s: connection %d to %pISpc negotiated a different export\n",
		       node->name, conn->idx, &node->cfg.addr);
		return -EPROTO;
	}
	dst_sock_set_timeout(conn->sock, 0);
	return 0;
}

/* --- sending ------------------------------------------------------- */

static int dst_rconn_send(struct dst_rconn *conn, struct request *rq,
			  const struct dst_msg *m)
{
	struct dst_wire_hdr hdr;
	struct req_iterator iter;
	struct bio_vec bv;
	u32 left = m->len;
	int err;

	dst_msg_encode(&hdr, m);
	if (m->cmd != DST_CMD_WRITE)
		return dst_sock_send(conn->sock, &hdr, sizeof(hdr), 0);

	err = dst_sock_send(conn->sock, &hdr, sizeof(hdr), MSG_MORE);
	rq_for_each_segment(bv, rq, iter) {
		if (err)
			break;
		left -= bv.bv_len;
		/*
		 * The request completes only when the server has answered,
		 * i.e. after it received (and TCP acknowledged) these pages.
		 */
		err = dst_sock_send_bvec(conn->sock, &bv, true,
					 left ? MSG_MORE : 0);
	}
	return err;
}

/* The portable operation for a block request; 0 if there is none. */
static u8 dst_rq_op(struct request *rq, u16 *flags)
{
	*flags = 0;
	switch (req_op(rq)) {
	case REQ_OP_READ:
		return DST_CMD_READ;
	case REQ_OP_WRITE:
		if (rq->cmd_flags & REQ_FUA)
			*flags |= DST_F_FUA;
		return DST_CMD_WRITE;
	case REQ_OP_FLUSH:
		return DST_CMD_FLUSH;
	case REQ_OP_DISCARD:
		return DST_CMD_DISCARD;
	case REQ_OP_WRITE_ZEROES:
		if (rq->cmd_flags & REQ_FUA)
			*flags |= DST_F_FUA;
		if (rq->cmd_flags & REQ_NOUNMAP)
			*flags |= DST_F_NO_UNMAP;
		return DST_CMD_WRITE_ZEROES;
	default:
		return 0;
	}
}

static blk_status_t dst_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	struct dst_rconn *conn = hctx->driver_data;
	struct dst_remote *rem = conn->rem;
	struct request *rq = bd->rq;
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_msg m = { };
	u16 gen;
	int err;

	m.cmd = dst_rq_op(rq, &m.flags);
	if (!m.cmd)
		return BLK_STS_NOTSUPP;
	if (rem->read_only && op_is_write(req_op(rq)))
		return BLK_STS_IOERR;	/* the server would refuse it too */
	if (m.cmd != DST_CMD_FLUSH) {
		m.offset = blk_rq_pos(rq) << SECTOR_SHIFT;
		m.len = blk_rq_bytes(rq);
	}

	blk_mq_start_request(rq);
	mutex_lock(&conn->tx_lock);
	if (conn->dead) {
		mutex_unlock(&conn->tx_lock);
		return BLK_STS_IOERR;
	}
	mutex_lock(&cmd->lock);
	m.id = dst_trans_start(rq);
	gen = cmd->gen;
	cmd->op = m.cmd;
	set_bit(DST_CMD_INFLIGHT, &cmd->flags);
	mutex_unlock(&cmd->lock);

	/* From here on the reply may complete rq at any moment. */
	err = dst_rconn_send(conn, rq, &m);
	mutex_unlock(&conn->tx_lock);
	if (!err)
		return BLK_STS_OK;

	if (!READ_ONCE(rem->stopping))
		pr_err("%s: send on connection %d failed: %d\n",
		       dst_rem_name(rem), conn->idx, err);
	dst_rconn_kill(conn);
	/*
	 * An incomplete frame gets no reply, but the receive loop, seeing
	 * the connection die, may have failed rq already: the generation
	 * tells us whether rq is still this incarnation.
	 */
	mutex_lock(&cmd->lock);
	if (cmd->gen == gen && test_and_clear_bit(DST_CMD_INFLIGHT,
						  &cmd->flags)) {
		mutex_unlock(&cmd->lock);
		return BLK_STS_IOERR;
	}
	mutex_unlock(&cmd->lock);
	return BLK_STS_OK;
}

static void dst_complete_rq(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_remote *rem = rq->q->queuedata;

	atomic_long_inc(&rem->completions);
	blk_mq_end_request(rq, cmd->status);
}

/*
 * No reply in time: fail the request.  A reply that still comes is
 * recognised as stale and dropped (resending is the resilience work).
 */
static enum blk_eh_timer_return dst_timeout(struct request *rq)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dst_remote *rem = rq->q->queuedata;
	bool mine;

	mutex_lock(&cmd->lock);
	mine = test_and_clear_bit(DST_CMD_INFLIGHT, &cmd->flags);
	if (mine)
		cmd->status = BLK_STS_TIMEOUT;
	mutex_unlock(&cmd->lock);
	if (!mine)
		return BLK_EH_RESET_TIMER;	/* not sent yet, or completing */

	pr_warn_ratelimited("%s: %s of %u bytes at %llu timed out\n",
			    dst_rem_name(rem), dst_cmd_name(cmd->op),
			    blk_rq_bytes(rq),
			    (u64)blk_rq_pos(rq) << SECTOR_SHIFT);
	blk_mq_complete_request(rq);
	return BLK_EH_DONE;
}

static int dst_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int idx)
{
	struct dst_remote *rem = data;

	hctx->driver_data = &rem->conns[idx];
	return 0;
}

static int dst_init_request(struct blk_mq_tag_set *set, struct request *rq,
			    unsigned int hctx_idx, unsigned int numa_node)
{
	struct dst_cmd *cmd = blk_mq_rq_to_pdu(rq);

	mutex_init(&cmd->lock);
	return 0;
}

static const struct blk_mq_ops dst_mq_ops = {
	.queue_rq	= dst_queue_rq,
	.complete	= dst_complete_rq,
	.timeout	= dst_timeout,
	.init_hctx	= dst_init_hctx,
	.init_request	= dst_init_request,
};

/* --- receiving ----------------------------------------------------- */

static blk_status_t dst_status_to_blk(u32 status)
{
	switch (status) {
	case DST_ST_OK:		return BLK_STS_OK;
	case DST_ST_NOSPC:	return BLK_STS_NOSPC;
	case DST_ST_NOTSUPP:	return BLK_STS_NOTSUPP;
	default:		return BLK_STS_IOERR;
	}
}

static int dst_recv_data(struct dst_rconn *conn, struct request *rq)
{
	struct req_iterator iter;
	struct bio_vec bv;
	int err = 0;

	rq_for_each_segment(bv, rq, iter) {
		err = dst_sock_recv_bvec(conn->sock, &bv);
		if (err)
			break;
	}
	return err;
}

/*
 * One reply.  Returns 0 to go on, or an error that ends the connection:
 * the socket failed, or the server sent something no correct server
 * sends (logged once, with the reason).
 */
static int dst_recv_reply(struct dst_rconn *conn)
{
	struct dst_remote *rem = conn->rem;
	struct dst_wire_hdr hdr;
	const char *why = NULL;
	struct request *rq;
	struct dst_cmd *cmd;
	struct dst_msg m;
	int err;

	err = dst_sock_recv(conn->sock, &hdr, sizeof(hdr));
	if (err)
		return err;
	if (dst_msg_decode(&hdr, &m)) {
		why = "bad magic or version";
		goto proto;
	}
	if (!(m.cmd & DST_CMD_REPLY) || m.status >= DST_ST_MAX) {
		why = "not a reply";
		goto proto;
	}

	rq = dst_trans_find(&rem->set, m.id, &why);
	if (!rq) {
		if (why)
			goto proto;
		/* Stale: its request timed out.  Skip what it carries. */
		if (m.cmd != (DST_CMD_READ | DST_CMD_REPLY) || m.status)
			return 0;
		if (m.len > rem->geo.max_io) {
			why = "stale reply longer than max_io";
			goto proto;
		}
		return dst_sock_discard(conn->sock, m.len);
	}

	cmd = blk_mq_rq_to_pdu(rq);
	if (m.cmd != (cmd->op | DST_CMD_REPLY) ||
	    (cmd->op != DST_CMD_FLUSH &&
	     (m.len != blk_rq_bytes(rq) ||
	      m.offset != (u64)blk_rq_pos(rq) << SECTOR_SHIFT))) {
		mutex_unlock(&cmd->lock);
		why = "reply does not match its request";
		goto proto;
	}
	if (m.cmd == (DST_CMD_READ | DST_CMD_REPLY) && m.status == DST_ST_OK) {
		err = dst_recv_data(conn, rq);
		if (err) {
			mutex_unlock(&cmd->lock);
			return err;
		}
	}
	dst_trans_finish(rq, dst_status_to_blk(m.status));
	mutex_unlock(&cmd->lock);
	return 0;

proto:
	pr_err("%s: protocol error from %pISpc on connection %d: %s\n",
	       dst_rem_name(rem), &rem->node->cfg.addr, conn->idx, why);
	return -EPROTO;
}

static void dst_recv_work(struct work_struct *work)
{
	struct dst_rconn *conn = container_of(work, struct dst_rconn,
					      recv_work);
	struct dst_remote *rem = conn->rem;
	int err;

	do {
		err = dst_recv_reply(conn);
	} while (!err);

	if (!READ_ONCE(rem->stopping))
		pr_err("%s: connection %d to %pISpc lost: %d; its I/O fails\n",
		       dst_rem_name(rem), conn->idx, &rem->node->cfg.addr,
		       err);
	dst_rconn_kill(conn);
	/* Nothing can arrive for this queue any more. */
	dst_trans_fail_hctx(&rem->set, conn->idx);
}

/* --- detach watchdog ----------------------------------------------- */

static void dst_watchdog(struct work_struct *work)
{
	struct dst_remote *rem = container_of(to_delayed_work(work),
					      struct dst_remote, watchdog);
	long now = atomic_long_read(&rem->completions);
	int i;

	if (now != rem->seen) {
		rem->seen = now;
		queue_delayed_work(rem->wq, &rem->watchdog,
				   msecs_to_jiffies(DST_DETACH_GRACE_MS));
		return;
	}
	pr_warn("%s: server silent for %d ms while detaching; failing I/O in flight\n",
		dst_rem_name(rem), DST_DETACH_GRACE_MS);
	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_kill(&rem->conns[i]);
}

/* --- attach and detach --------------------------------------------- */

static void dst_remote_free(struct dst_remote *rem)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++)
		if (rem->conns[i].sock)
			sock_release(rem->conns[i].sock);
	if (rem->wq)
		destroy_workqueue(rem->wq);
	if (rem->index >= 0)
		ida_free(&dst_index_ida, rem->index);
	put_net(rem->net);
	kfree(rem);
}

/* Size the disk: the server's, or a smaller one the administrator set. */
static int dst_remote_size(struct dst_remote *rem, u64 *size)
{
	struct dst_node *node = rem->node;
	u64 want = dst_node_get_param(node, DST_P_SIZE);

	*size = rem->geo.size;
	if (!want)
		return 0;
	if (want > rem->geo.size || want % rem->geo.lbs) {
		pr_err("%s: size %llu does not fit export '%s' (%llu bytes, %u-byte blocks)\n",
		       node->name, want, node->cfg.export, rem->geo.size,
		       rem->geo.lbs);
		return -EINVAL;
	}
	*size = want;
	return 0;
}

static void dst_remote_set_limits(struct dst_remote *rem)
{
	struct request_queue *q = rem->disk->queue;
	const struct dst_geometry *g = &rem->geo;
	bool flush = g->features & DST_FEAT_FLUSH;

	blk_queue_logical_block_size(q, g->lbs);
	blk_queue_physical_block_size(q, g->pbs);
	blk_queue_io_min(q, g->pbs);
	blk_queue_max_hw_sectors(q, g->max_io >> SECTOR_SHIFT);
	blk_queue_max_segments(q, USHRT_MAX);
	blk_queue_max_segment_size(q, UINT_MAX);
	blk_queue_write_cache(q, flush, flush && (g->features & DST_FEAT_FUA));
	if (g->max_discard) {
		q->limits.discard_granularity = g->pbs;
		blk_queue_max_discard_sectors(q, g->max_discard >> SECTOR_SHIFT);
	}
	blk_queue_max_write_zeroes_sectors(q, g->max_write_zeroes >>
					   SECTOR_SHIFT);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
}

static const struct block_device_operations dst_disk_fops = {
	.owner	= THIS_MODULE,
};

/* The tag set and the disk, not yet visible. */
static int dst_remote_alloc_disk(struct dst_remote *rem, u64 size)
{
	struct dst_node *node = rem->node;
	struct gendisk *disk;
	s64 ms;
	int err;

	rem->set.ops = &dst_mq_ops;
	rem->set.nr_hw_queues = rem->nr_conns;
	rem->set.queue_depth = dst_node_get_param(node, DST_P_QUEUE_DEPTH);
	rem->set.numa_node = NUMA_NO_NODE;
	rem->set.cmd_size = sizeof(struct dst_cmd);
	rem->set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	rem->set.driver_data = rem;
	ms = dst_node_get_param(node, DST_P_TRANS_SCAN_TIMEOUT) *
	     (dst_node_get_param(node, DST_P_TRANS_MAX_RETRIES) + 1);
	rem->set.timeout = msecs_to_jiffies(min_t(s64, ms, INT_MAX));
	err = blk_mq_alloc_tag_set(&rem->set);
	if (err)
		return err;

	disk = blk_mq_alloc_disk(&rem->set, rem);
	if (IS_ERR(disk)) {
		blk_mq_free_tag_set(&rem->set);
		return PTR_ERR(disk);
	}
	rem->disk = disk;
	disk->major = dst_major;
	disk->first_minor = rem->index << DST_PART_SHIFT;
	disk->minors = 1 << DST_PART_SHIFT;
	disk->fops = &dst_disk_fops;
	disk->private_data = rem;
	snprintf(disk->disk_name, DISK_NAME_LEN, "dst%d", rem->index);
	dst_remote_set_limits(rem);
	set_capacity(disk, size >> SECTOR_SHIFT);
	set_disk_ro(disk, rem->read_only);
	return 0;
}

static void dst_remote_free_disk(struct dst_remote *rem)
{
	put_disk(rem->disk);
	blk_mq_free_tag_set(&rem->set);
}

/* Stop the receive loops and fail what they leave behind. */
static void dst_remote_close(struct dst_remote *rem, int started)
{
	int i;

	for (i = 0; i < rem->nr_conns; i++)
		if (rem->conns[i].sock)
			dst_rconn_kill(&rem->conns[i]);
	for (i = 0; i < started; i++)
		flush_work(&rem->conns[i].recv_work);
}

/**
 * dst_remote_start - attach a remote node's export as /dev/dstN
 * @node: the node, locked, with its configuration
 *
 * Returns 0, or the errno the administrator's "echo 1 > enable" sees:
 * -EDESTADDRREQ without an address, what connect() said (ECONNREFUSED,
 * ETIMEDOUT, ...), the server's refusal (ENOENT: no such export, ...),
 * -EPROTO for a peer that does not speak DST, -EINVAL for a size that
 * does not fit.
 */
int dst_remote_start(struct dst_node *node)
{
	int n = dst_node_get_param(node, DST_P_CONNECTIONS);
	struct dst_remote *rem;
	int i, err, started = 0;
	u64 size;

	lockdep_assert_held(&node->lock);
	if (!node->cfg.addr_set) {
		pr_err("%s: set addr before enabling\n", node->name);
		return -EDESTADDRREQ;
	}

	rem = kzalloc(struct_size(rem, conns, n), GFP_KERNEL);
	if (!rem)
		return -ENOMEM;
	rem->node = node;
	rem->nr_conns = n;
	rem->index = -1;
	rem->net = get_net(current->nsproxy->net_ns);
	atomic_long_set(&rem->completions, 0);
	INIT_DELAYED_WORK(&rem->watchdog, dst_watchdog);
	for (i = 0; i < n; i++) {
		rem->conns[i].rem = rem;
		rem->conns[i].idx = i;
		mutex_init(&rem->conns[i].tx_lock);
		INIT_WORK(&rem->conns[i].recv_work, dst_recv_work);
	}

	for (i = 0; i < n; i++) {
		err = dst_rconn_open(rem, &rem->conns[i]);
		if (err)
			goto out_free;
	}
	err = dst_remote_size(rem, &size);
	if (err)
		goto out_free;
	rem->read_only = dst_node_get_param(node, DST_P_READ_ONLY) ||
			 (rem->geo.features & DST_FEAT_READ_ONLY);

	err = -ENOMEM;
	rem->wq = alloc_workqueue("dst-%s", WQ_MEM_RECLAIM | WQ_UNBOUND |
				  WQ_HIGHPRI, 0, node->name);
	if (!rem->wq)
		goto out_free;
	err = ida_alloc_max(&dst_index_ida, DST_MAX_DISKS - 1, GFP_KERNEL);
	if (err < 0)
		goto out_free;
	rem->index = err;

	err = dst_remote_alloc_disk(rem, size);
	if (err)
		goto out_free;

	/*
	 * Receive before the disk is added: adding it reads the partition
	 * table through the connections.  The disk is a child of the
	 * node's bus device, so udev rules can match ATTRS{name}.
	 */
	node->rem = rem;
	for (started = 0; started < n; started++)
		queue_work(rem->wq, &rem->conns[started].recv_work);
	err = device_add_disk(&node->dev, rem->disk, NULL);
	if (err)
		goto out_close;

	node->eff_size = size;
	pr_info("%s: attached export '%s' at %pISpc as %s: %llu bytes, %d connection%s%s\n",
		node->name, node->cfg.export, &node->cfg.addr,
		rem->disk->disk_name, size, n, n > 1 ? "s" : "",
		rem->read_only ? ", read-only" : "");
	return 0;

out_close:
	WRITE_ONCE(rem->stopping, true);
	dst_remote_close(rem, started);
	dst_remote_free_disk(rem);
out_free:
	node->rem = NULL;
	dst_remote_free(rem);
	return err;
}

/* Tell the server we are going, where the connection still works. */
static void dst_rconn_bye(struct dst_rconn *conn)
{
	struct dst_msg m = { .cmd = DST_CMD_BYE };
	struct dst_wire_hdr hdr;

	dst_msg_encode(&hdr, &m);
	mutex_lock(&conn->tx_lock);
	if (!conn->dead)
		dst_sock_send(conn->sock, &hdr, sizeof(hdr), MSG_DONTWAIT);
	mutex_unlock(&conn->tx_lock);
}

/**
 * dst_remote_stop - detach: remove the disk and close the connections
 * @node: the node, locked
 */
void dst_remote_stop(struct dst_node *node)
{
	struct dst_remote *rem = node->rem;
	int i;

	lockdep_assert_held(&node->lock);
	WRITE_ONCE(rem->stopping, true);
	rem->seen = atomic_long_read(&rem->completions);
	queue_delayed_work(rem->wq, &rem->watchdog,
			   msecs_to_jiffies(DST_DETACH_GRACE_MS));

	/* Writes back, fails new I/O, waits for what is in flight. */
	del_gendisk(rem->disk);
	cancel_delayed_work_sync(&rem->watchdog);

	for (i = 0; i < rem->nr_conns; i++)
		dst_rconn_bye(&rem->conns[i]);
	dst_remote_close(rem, rem->nr_conns);

	pr_info("%s: detached %s\n", node->name, rem->disk->disk_name);
	dst_remote_free_disk(rem);
	node->rem = NULL;
	node->eff_size = 0;
	dst_remote_free(rem);
}

ssize_t dst_remote_show_device(struct dst_node *node, char *buf)
{
	struct dst_remote *rem;
	ssize_t ret;

	mutex_lock(&node->lock);
	rem = node->enabled ? node->rem : NULL;
	if (rem)
		ret = sysfs_emit(buf, "%s %d:%d\n", rem->disk->disk_name,
				 rem->disk->major, rem->disk->first_minor);
	else
		ret = sysfs_emit(buf, "\n");
	mutex_unlock(&node->lock);
	return ret;
}
