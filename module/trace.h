/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DST tracepoints: the life of a transaction and of a connection, for
 * perf, trace-cmd and tracefs (events/dst/).  docs/debugging.md lists
 * them with their fields.
 *
 * Remote side: a request sent (or resent) on a connection, its reply,
 * a resend after trans_scan_timeout, a timeout (out of retries), a
 * connection up and down, a reconnect attempt.  Export side: a request
 * read, its reply sent, and a fence (a reconnecting client's old
 * connection replaced).  Every event names the node; transaction
 * events carry the connection, the wire id, the operation, the byte
 * offset and the length.  On a remote "conn" is the connection slot;
 * on an export it is the client's slot, and "peer" its address.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dst

#if !defined(_DST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DST_TRACE_H

#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/tracepoint.h>
#include <linux/dst.h>

TRACE_DEFINE_ENUM(DST_CMD_HELLO);
TRACE_DEFINE_ENUM(DST_CMD_READ);
TRACE_DEFINE_ENUM(DST_CMD_WRITE);
TRACE_DEFINE_ENUM(DST_CMD_FLUSH);
TRACE_DEFINE_ENUM(DST_CMD_DISCARD);
TRACE_DEFINE_ENUM(DST_CMD_WRITE_ZEROES);
TRACE_DEFINE_ENUM(DST_CMD_PING);
TRACE_DEFINE_ENUM(DST_CMD_BYE);
TRACE_DEFINE_ENUM(DST_CMD_AUTH);
TRACE_DEFINE_ENUM(DST_CMD_RESIZE);

#define show_dst_op(op)						\
	__print_symbolic(op,					\
		{ DST_CMD_HELLO,	"HELLO" },		\
		{ DST_CMD_READ,		"READ" },		\
		{ DST_CMD_WRITE,	"WRITE" },		\
		{ DST_CMD_FLUSH,	"FLUSH" },		\
		{ DST_CMD_DISCARD,	"DISCARD" },		\
		{ DST_CMD_WRITE_ZEROES,	"WRITE_ZEROES" },	\
		{ DST_CMD_PING,		"PING" },		\
		{ DST_CMD_BYE,		"BYE" },		\
		{ DST_CMD_AUTH,		"AUTH" },		\
		{ DST_CMD_RESIZE,	"RESIZE" })

/*
 * A transaction on the remote side: @retries counts its timeouts
 * (trans_scan_timeout), @status is the server's DST_ST_* in a reply,
 * 0 otherwise.
 */
DECLARE_EVENT_CLASS(dst_rq_class,
		    TP_PROTO(const char *node, int conn, u64 id, u8 op, u64 offset,
			     u32 len, u32 retries, u32 status),
		    TP_ARGS(node, conn, id, op, offset, len, retries, status),
		    TP_STRUCT__entry(__string(node, node)
				     __field(int, conn)
				     __field(u64, id)
				     __field(u8, op)
				     __field(u64, offset)
				     __field(u32, len)
				     __field(u32, retries)
				     __field(u32, status)),
		    TP_fast_assign(__assign_str(node, node);
				   __entry->conn = conn;
				   __entry->id = id;
				   __entry->op = op;
				   __entry->offset = offset;
				   __entry->len = len;
				   __entry->retries = retries;
				   __entry->status = status;),
		    TP_printk("node=%s conn=%d id=%#llx op=%s offset=%llu len=%u retries=%u status=%u",
			      __get_str(node), __entry->conn, __entry->id,
			      show_dst_op(__entry->op), __entry->offset, __entry->len,
			      __entry->retries, __entry->status)
);

/*
 * A request handed to connection @conn's socket: traced before its
 * frame goes out, so its reply is never traced first.  @resend: a copy
 * of it went out before (a timeout's resend on the same connection, or
 * an orphan's after a reconnection).  A signal that stops the send
 * before any byte went requeues the request, which goes out again
 * under a new id: that first id is never answered.
 */
TRACE_EVENT(dst_send,
	    TP_PROTO(const char *node, int conn, u64 id, u8 op, u64 offset,
		     u32 len, u32 retries, bool resend),
	    TP_ARGS(node, conn, id, op, offset, len, retries, resend),
	    TP_STRUCT__entry(__string(node, node)
			     __field(int, conn)
			     __field(u64, id)
			     __field(u8, op)
			     __field(u64, offset)
			     __field(u32, len)
			     __field(u32, retries)
			     __field(bool, resend)),
	    TP_fast_assign(__assign_str(node, node);
			   __entry->conn = conn;
			   __entry->id = id;
			   __entry->op = op;
			   __entry->offset = offset;
			   __entry->len = len;
			   __entry->retries = retries;
			   __entry->resend = resend;),
	    TP_printk("node=%s conn=%d id=%#llx op=%s offset=%llu len=%u retries=%u resend=%d",
		      __get_str(node), __entry->conn, __entry->id,
		      show_dst_op(__entry->op), __entry->offset, __entry->len,
		      __entry->retries, __entry->resend)
);

/* Its reply, read from connection @conn. */
DEFINE_EVENT(dst_rq_class, dst_reply,
	     TP_PROTO(const char *node, int conn, u64 id, u8 op, u64 offset,
		      u32 len, u32 retries, u32 status),
	     TP_ARGS(node, conn, id, op, offset, len, retries, status)
);

/* Unanswered for trans_scan_timeout: requeued to be sent again. */
DEFINE_EVENT(dst_rq_class, dst_resend,
	     TP_PROTO(const char *node, int conn, u64 id, u8 op, u64 offset,
		      u32 len, u32 retries, u32 status),
	     TP_ARGS(node, conn, id, op, offset, len, retries, status)
);

/*
 * Out of retries.  @drop_conn: its connection is dropped first and the
 * request fails once the server has fenced it; else it fails now.
 */
TRACE_EVENT(dst_timeout,
	    TP_PROTO(const char *node, int conn, u64 id, u8 op, u64 offset,
		     u32 len, u32 retries, bool drop_conn),
	    TP_ARGS(node, conn, id, op, offset, len, retries, drop_conn),
	    TP_STRUCT__entry(__string(node, node)
			     __field(int, conn)
			     __field(u64, id)
			     __field(u8, op)
			     __field(u64, offset)
			     __field(u32, len)
			     __field(u32, retries)
			     __field(bool, drop_conn)),
	    TP_fast_assign(__assign_str(node, node);
			   __entry->conn = conn;
			   __entry->id = id;
			   __entry->op = op;
			   __entry->offset = offset;
			   __entry->len = len;
			   __entry->retries = retries;
			   __entry->drop_conn = drop_conn;),
	    TP_printk("node=%s conn=%d id=%#llx op=%s offset=%llu len=%u retries=%u drop_conn=%d",
		      __get_str(node), __entry->conn, __entry->id,
		      show_dst_op(__entry->op), __entry->offset, __entry->len,
		      __entry->retries, __entry->drop_conn)
);

/*
 * A remote's connection slot @conn, in incarnation @epoch: @requests
 * resent when it comes up, orphaned when it goes down (with @err).
 */
DECLARE_EVENT_CLASS(dst_conn_class,
		    TP_PROTO(const char *node, int conn, u32 epoch, int err,
			     u32 requests),
		    TP_ARGS(node, conn, epoch, err, requests),
		    TP_STRUCT__entry(__string(node, node)
				     __field(int, conn)
				     __field(u32, epoch)
				     __field(int, err)
				     __field(u32, requests)),
		    TP_fast_assign(__assign_str(node, node);
				   __entry->conn = conn;
				   __entry->epoch = epoch;
				   __entry->err = err;
				   __entry->requests = requests;),
		    TP_printk("node=%s conn=%d epoch=%u err=%d requests=%u",
			      __get_str(node), __entry->conn, __entry->epoch,
			      __entry->err, __entry->requests)
);

DEFINE_EVENT(dst_conn_class, dst_conn_up,
	     TP_PROTO(const char *node, int conn, u32 epoch, int err,
		      u32 requests),
	     TP_ARGS(node, conn, epoch, err, requests)
);

DEFINE_EVENT(dst_conn_class, dst_conn_down,
	     TP_PROTO(const char *node, int conn, u32 epoch, int err,
		      u32 requests),
	     TP_ARGS(node, conn, epoch, err, requests)
);

/* Attempt @attempt (since the link went down) to reconnect @conn: @err. */
TRACE_EVENT(dst_reconnect,
	    TP_PROTO(const char *node, int conn, u32 attempt, int err),
	    TP_ARGS(node, conn, attempt, err),
	    TP_STRUCT__entry(__string(node, node)
			     __field(int, conn)
			     __field(u32, attempt)
			     __field(int, err)),
	    TP_fast_assign(__assign_str(node, node);
			   __entry->conn = conn;
			   __entry->attempt = attempt;
			   __entry->err = err;),
	    TP_printk("node=%s conn=%d attempt=%u err=%d", __get_str(node),
		      __entry->conn, __entry->attempt, __entry->err)
);

/* A transaction on the export side, from client @peer's slot @conn. */
DECLARE_EVENT_CLASS(dst_srv_class,
		    TP_PROTO(const char *node, const struct sockaddr_storage *peer,
			     int conn, u64 id, u8 op, u64 offset, u32 len, u32 status),
		    TP_ARGS(node, peer, conn, id, op, offset, len, status),
		    TP_STRUCT__entry(__string(node, node)
				     __array(u8, peer, sizeof(struct sockaddr_in6))
				     __field(int, conn)
				     __field(u64, id)
				     __field(u8, op)
				     __field(u64, offset)
				     __field(u32, len)
				     __field(u32, status)),
		    TP_fast_assign(__assign_str(node, node);
				   memcpy(__entry->peer, peer, sizeof(struct sockaddr_in6));
				   __entry->conn = conn;
				   __entry->id = id;
				   __entry->op = op;
				   __entry->offset = offset;
				   __entry->len = len;
				   __entry->status = status;),
		    TP_printk("node=%s peer=%pISpc conn=%d id=%#llx op=%s offset=%llu len=%u status=%u",
			      __get_str(node), __entry->peer, __entry->conn, __entry->id,
			      show_dst_op(__entry->op), __entry->offset, __entry->len,
			      __entry->status)
);

/* A request read from a client (status 0: not answered yet). */
DEFINE_EVENT(dst_srv_class, dst_srv_request,
	     TP_PROTO(const char *node, const struct sockaddr_storage *peer,
		      int conn, u64 id, u8 op, u64 offset, u32 len, u32 status),
	     TP_ARGS(node, peer, conn, id, op, offset, len, status)
);

/* Its reply, all of it handed to TCP. */
DEFINE_EVENT(dst_srv_class, dst_srv_reply,
	     TP_PROTO(const char *node, const struct sockaddr_storage *peer,
		      int conn, u64 id, u8 op, u64 offset, u32 len, u32 status),
	     TP_ARGS(node, peer, conn, id, op, offset, len, status)
);

/*
 * A reconnecting client (session @session, slot @conn) replaced
 * @fenced older connections; @drained: their I/O finished in time.
 */
TRACE_EVENT(dst_fence,
	    TP_PROTO(const char *node, const struct sockaddr_storage *peer,
		     int conn, u64 session, u32 fenced, bool drained),
	    TP_ARGS(node, peer, conn, session, fenced, drained),
	    TP_STRUCT__entry(__string(node, node)
			     __array(u8, peer, sizeof(struct sockaddr_in6))
			     __field(int, conn)
			     __field(u64, session)
			     __field(u32, fenced)
			     __field(bool, drained)),
	    TP_fast_assign(__assign_str(node, node);
			   memcpy(__entry->peer, peer, sizeof(struct sockaddr_in6));
			   __entry->conn = conn;
			   __entry->session = session;
			   __entry->fenced = fenced;
			   __entry->drained = drained;),
	    TP_printk("node=%s peer=%pISpc conn=%d session=%#llx fenced=%u drained=%d",
		      __get_str(node), __entry->peer, __entry->conn,
		      __entry->session, __entry->fenced, __entry->drained)
);

/*
 * The size of @node changed from @old to @size bytes: an export resized
 * while enabled, or a remote's disk after the server said it grew.
 */
TRACE_EVENT(dst_resize,
	    TP_PROTO(const char *node, u64 old, u64 size),
	    TP_ARGS(node, old, size),
	    TP_STRUCT__entry(__string(node, node)
			     __field(u64, old)
			     __field(u64, size)),
	    TP_fast_assign(__assign_str(node, node);
			   __entry->old = old;
			   __entry->size = size;),
	    TP_printk("node=%s old=%llu size=%llu", __get_str(node),
		      __entry->old, __entry->size)
);

#endif /* _DST_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
