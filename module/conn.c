// SPDX-License-Identifier: GPL-2.0
/*
 * DST connections: the TCP sockets under both roles.
 *
 * Creating them (in the network namespace the node was enabled from),
 * tuning them for a storage path that must not recurse into reclaim,
 * moving whole frames: a header, a buffer, or a page of a request sent
 * without a copy where the page allows it and received straight into the
 * request's pages; and the reads a fast path makes in softirq.  Who
 * reads a socket, and where, is watch.c's business; what the bytes mean
 * is the client's and the export's; their layout is proto.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/sched/mm.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "dst.h"

/*
 * A storage socket: no allocation that could recurse into I/O, since the
 * pages being reclaimed may be the ones this socket is writing out.
 *
 * The @client's sockets dip into the emergency reserves, as nbd's do, so
 * swap on DST can make progress, and they keep Nagle's algorithm: a
 * request frame is held while the server has not acknowledged an earlier
 * one, and goes out with the next segment the server sends -- a reply
 * (the server batches them) or an ACK.  With a queue of requests in
 * flight, fio's 4 KiB requests then leave a few to a segment instead of
 * one segment, one softirq and one server wakeup each; at queue depth 1
 * nothing is unacknowledged and a request leaves at once.  The server
 * acknowledges at once what it read whenever requests stay in its
 * backing device (dst_sock_ack_now()), so a request is held behind a
 * slow one for no longer than the server takes to read it.
 *
 * The server's sockets send without delay (TCP_NODELAY): it pushes a
 * batch of replies itself once it has read what the client sent.  So do
 * the client's sockets under session keys (dst_sock_nodelay()).
 *
 * sk_use_task_frag must be off: a socket used from reclaim context must
 * not use the task's page fragment.
 */
void dst_sock_setup(struct socket *sock, bool client)
{
	struct sock *sk = sock->sk;

	if (!client)
		tcp_sock_set_nodelay(sk);
	lock_sock(sk);
	sk->sk_allocation = GFP_NOIO | (client ? __GFP_MEMALLOC : 0);
	sk->sk_use_task_frag = false;
	release_sock(sk);
	if (client)
		sk_set_memalloc(sk);
}

/* Send every frame at once after all: a client socket under session keys. */
void dst_sock_nodelay(struct socket *sock)
{
	tcp_sock_set_nodelay(sock->sk);
}

/*
 * Acknowledge what was read now rather than with the next reply: the
 * client holds its next request until this ACK or that reply comes
 * (dst_sock_setup()).  The socket goes back to delaying its ACKs to
 * ride on replies.
 */
void dst_sock_ack_now(struct socket *sock)
{
	tcp_sock_set_quickack(sock->sk, 2);
}

/* Bound blocking sends and receives (handshake); 0 means forever. */
void dst_sock_set_timeout(struct socket *sock, int timeout_ms)
{
	long t = timeout_ms ? msecs_to_jiffies(timeout_ms) :
			      MAX_SCHEDULE_TIMEOUT;

	lock_sock(sock->sk);
	sock->sk->sk_rcvtimeo = t;
	sock->sk->sk_sndtimeo = t;
	release_sock(sock->sk);
}

/*
 * TCP keepalive and a bound on unacknowledged data, for the server's side
 * of a connection: a client that vanished (cable pulled, machine gone)
 * must not keep its connection, and the pages of its replies, forever.
 * The client has its own, faster, application-level keepalive (PING).
 */
void dst_sock_keepalive(struct socket *sock, int idle_s, int intvl_s, int cnt)
{
	struct sock *sk = sock->sk;

	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, idle_s);
	tcp_sock_set_keepintvl(sk, intvl_s);
	tcp_sock_set_keepcnt(sk, cnt);
	tcp_sock_set_user_timeout(sk, (idle_s + intvl_s * cnt) * MSEC_PER_SEC);
}

/*
 * TCP sequence numbers, to tell a slow network from a silent server: the
 * sequence number just past what has been queued on @sock, and whether
 * the peer has acknowledged everything up to @seq.  Lockless reads: an
 * answer a moment old is good enough for a timeout decision.
 */
u32 dst_sock_queued_seq(struct socket *sock)
{
	return READ_ONCE(tcp_sk(sock->sk)->write_seq);
}

/* Bytes handed to TCP and not acknowledged by the peer yet (debugfs). */
u32 dst_sock_unacked(struct socket *sock)
{
	const struct tcp_sock *tp = tcp_sk(sock->sk);

	return READ_ONCE(tp->write_seq) - READ_ONCE(tp->snd_una);
}

bool dst_sock_acked(struct socket *sock, u32 seq)
{
	return !before(READ_ONCE(tcp_sk(sock->sk)->snd_una), seq);
}

/*
 * A token that changes whenever TCP receives bytes from the peer or the
 * peer acknowledges ours: proof of life even in the middle of a frame
 * that a slow link takes seconds to deliver.
 */
u64 dst_sock_progress(struct socket *sock)
{
	const struct tcp_sock *tp = tcp_sk(sock->sk);

	return (u64)READ_ONCE(tp->rcv_nxt) << 32 | READ_ONCE(tp->snd_una);
}

/*
 * At least @bytes received in order and not yet read: a read of that
 * many would not wait for the network.  (A lockless peek: it can only
 * be stale towards "fewer", as the reader is the caller.)
 */
bool dst_sock_has_input(struct socket *sock, u32 bytes)
{
	const struct tcp_sock *tp = tcp_sk(sock->sk);

	return (s32)(READ_ONCE(tp->rcv_nxt) - READ_ONCE(tp->copied_seq)) >=
	       (s32)bytes;
}

/*
 * Nothing to read and nothing to learn: no byte received and unread, no
 * error, no end of stream.  A receive loop that finds its socket idle
 * between frames returns, and the watch queues it again (below).
 */
bool dst_sock_idle(struct socket *sock)
{
	const struct sock *sk = sock->sk;

	return !dst_sock_has_input(sock, 1) && !READ_ONCE(sk->sk_err) &&
	       !(READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN);
}

/* Send what MSG_MORE held back. */
void dst_sock_push(struct socket *sock)
{
	tcp_sock_set_cork(sock->sk, false);
}

static int dst_addrlen(const struct sockaddr_storage *addr)
{
	return addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					     sizeof(struct sockaddr_in);
}

/* A kernel TCP socket for @addr's family, in @net. */
static struct socket *dst_sock_new(struct net *net,
				   const struct sockaddr_storage *addr)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(net, addr->ss_family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	return err ? ERR_PTR(err) : sock;
}

/**
 * dst_sock_connect - connect to a server
 * @net: network namespace to create the socket in
 * @addr: server address
 * @timeout_ms: bound on the connect and on later blocking calls
 *
 * Returns the connected socket or an ERR_PTR: -ECONNREFUSED, -ETIMEDOUT,
 * -ENETUNREACH, ... as the network said.
 */
struct socket *dst_sock_connect(struct net *net,
				const struct sockaddr_storage *addr,
				int timeout_ms)
{
	struct socket *sock = dst_sock_new(net, addr);
	int err;

	if (IS_ERR(sock))
		return sock;
	dst_sock_setup(sock, true);
	dst_sock_set_timeout(sock, timeout_ms);
	err = kernel_connect(sock, (struct sockaddr *)addr, dst_addrlen(addr),
			     0);
	if (err) {
		sock_release(sock);
		/* A blocking connect that ran out of time says EINPROGRESS. */
		return ERR_PTR(err == -EINPROGRESS ? -ETIMEDOUT : err);
	}
	return sock;
}

/*
 * A listening socket.  An IPv6 wildcard listens on IPv6 only, so that
 * "0.0.0.0:p" and "[::]:p" can be two exports, as with any daemon that
 * binds both.
 */
struct socket *dst_sock_listen(struct net *net,
			       const struct sockaddr_storage *addr)
{
	struct socket *sock = dst_sock_new(net, addr);
	int err;

	if (IS_ERR(sock))
		return sock;
	sock_set_reuseaddr(sock->sk);
	if (addr->ss_family == AF_INET6)
		ip6_sock_set_v6only(sock->sk);
	err = kernel_bind(sock, (struct sockaddr *)addr, dst_addrlen(addr));
	if (!err)
		err = kernel_listen(sock, 128);
	if (err) {
		sock_release(sock);
		return ERR_PTR(err);
	}
	return sock;
}

int dst_sock_peer(struct socket *sock, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	return kernel_getpeername(sock, (struct sockaddr *)ss) < 0 ? -ENOTCONN
								     : 0;
}

/*
 * Send or receive all of @iter.  Short transfers are continued; a
 * closed connection is -EPIPE (send) or -ECONNRESET (receive), so the
 * callers can tell a peer that left from one that misbehaved.
 */
static int dst_sock_xfer(struct socket *sock, struct iov_iter *iter,
			 bool send, int flags)
{
	unsigned int noreclaim = memalloc_noreclaim_save();
	struct msghdr msg = { };
	int ret = 0;

	while (iov_iter_count(iter)) {
		msg.msg_iter = *iter;
		msg.msg_flags = flags | MSG_NOSIGNAL | (send ? 0 : MSG_WAITALL);
		ret = send ? sock_sendmsg(sock, &msg) :
			     sock_recvmsg(sock, &msg, msg.msg_flags);
		if (ret <= 0) {
			if (ret == 0)
				ret = send ? -EPIPE : -ECONNRESET;
			else if (ret == -EAGAIN)
				ret = -ETIMEDOUT;
			break;
		}
		iov_iter_advance(iter, ret);
		ret = 0;
	}
	memalloc_noreclaim_restore(noreclaim);
	return ret;
}

int dst_sock_send(struct socket *sock, const void *buf, size_t len, int flags)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct iov_iter iter;

	iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, len);
	return dst_sock_xfer(sock, &iter, true, flags);
}

int dst_sock_recv(struct socket *sock, void *buf, size_t len)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter iter;

	iov_iter_kvec(&iter, ITER_DEST, &kv, 1, len);
	return dst_sock_xfer(sock, &iter, false, 0);
}

/**
 * dst_sock_send_bvec - send one segment of data
 * @sock: the socket
 * @bv: the segment
 * @zero_copy: the page stays untouched until the peer acknowledged it
 *	(it belongs to a request that completes only on the reply, or its
 *	last reference goes with the socket buffer), so it may be sent
 *	without a copy
 * @flags: MSG_MORE while more of the frame follows
 */
int dst_sock_send_bvec(struct socket *sock, const struct bio_vec *bv,
		       bool zero_copy, int flags)
{
	unsigned int noreclaim;
	struct iov_iter iter;
	size_t done = 0;
	int ret = 0;

	if (!zero_copy || !sendpage_ok(bv->bv_page)) {
		iov_iter_bvec(&iter, ITER_SOURCE, bv, 1, bv->bv_len);
		return dst_sock_xfer(sock, &iter, true, flags);
	}

	noreclaim = memalloc_noreclaim_save();
	while (done < bv->bv_len) {
		ret = kernel_sendpage(sock, bv->bv_page, bv->bv_offset + done,
				      bv->bv_len - done, flags | MSG_NOSIGNAL);
		if (ret <= 0) {
			ret = ret ? ret : -EPIPE;
			if (ret == -EAGAIN)
				ret = -ETIMEDOUT;
			break;
		}
		done += ret;
		ret = 0;
	}
	memalloc_noreclaim_restore(noreclaim);
	return ret;
}

/**
 * dst_sock_send_nowait - one try to send, without waiting for room
 * @sock: the socket
 * @buf: bytes in kernel memory, or NULL to send from @bv
 * @bv: with @buf NULL, a segment of data (see dst_sock_send_bvec())
 * @off: where in @buf's @len bytes, or in @bv, to start
 * @len: with @buf, its length
 * @zero_copy: as for dst_sock_send_bvec()
 * @flags: MSG_MORE while more of the frame follows
 *
 * For senders that must not block (dst_sock_watch_tx()).  Returns the
 * bytes sent (perhaps fewer than asked), -EAGAIN when there was no room
 * at all (the socket's write_space will tell when there is), or an error.
 */
int dst_sock_send_nowait(struct socket *sock, const void *buf,
			 const struct bio_vec *bv, size_t off, size_t len,
			 bool zero_copy, int flags)
{
	unsigned int noreclaim = memalloc_noreclaim_save();
	struct msghdr msg = { .msg_flags = flags | MSG_DONTWAIT | MSG_NOSIGNAL };
	struct bio_vec b;
	struct kvec kv;
	int ret;

	if (buf) {
		kv.iov_base = (void *)buf + off;
		kv.iov_len = len - off;
		iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &kv, 1, kv.iov_len);
		ret = sock_sendmsg(sock, &msg);
	} else if (!zero_copy || !sendpage_ok(bv->bv_page)) {
		bvec_set_page(&b, bv->bv_page, bv->bv_len - off,
			      bv->bv_offset + off);
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &b, 1, b.bv_len);
		ret = sock_sendmsg(sock, &msg);
	} else {
		ret = kernel_sendpage(sock, bv->bv_page, bv->bv_offset + off,
				      bv->bv_len - off, msg.msg_flags);
	}
	memalloc_noreclaim_restore(noreclaim);
	return ret ?: -EAGAIN;
}

/*
 * Receive @len bytes into @nr bio_vecs starting @offset bytes into the
 * first: a whole bio (or a server request's pages) in one call instead of
 * one per page.
 */
int dst_sock_recv_bvecs(struct socket *sock, const struct bio_vec *bv,
			unsigned int nr, size_t len, size_t offset)
{
	struct iov_iter iter;

	iov_iter_bvec(&iter, ITER_DEST, bv, nr, len);
	iter.iov_offset = offset;
	return dst_sock_xfer(sock, &iter, false, 0);
}

/* Read and drop @len bytes: the data of a reply nobody waits for. */
int dst_sock_discard(struct socket *sock, size_t len)
{
	static char sink[512];
	int err = 0;

	/* Nobody reads the sink: concurrent writers may share it. */
	while (len && !err) {
		size_t n = min(len, sizeof(sink));

		err = dst_sock_recv(sock, sink, n);
		len -= n;
	}
	return err;
}

/*
 * Reading for a fast path: called from sk_data_ready, in softirq with
 * the socket's spinlock held and no process owning the socket, or in
 * the owner's release_sock(); either way the receive queue is ours.
 * Bytes received in order and not yet read.
 *
 * A FIN takes a sequence number too: rcv_nxt counts it once it is in,
 * though it is no byte anybody can read.  As tcp_inq() does, leave it
 * out (SOCK_DONE: the FIN is in), or a frame cut short by the peer's
 * close would look whole by one byte, and reading it would come up
 * short of what this promised.
 */
u32 dst_sk_inq(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	s32 n = READ_ONCE(tp->rcv_nxt) - READ_ONCE(tp->copied_seq);

	if (n > 0 && sock_flag(sk, SOCK_DONE))
		n--;
	return n > 0 ? n : 0;
}

/*
 * Whether a frame of @len bytes whose start is in the socket will come
 * whole while it lies there unread: it fits in the receive window with
 * room to spare, whatever the buffers' overhead.  Else it must be read
 * as it comes.
 */
bool dst_sk_room_for(const struct sock *sk, u32 len)
{
	return len <= READ_ONCE(sk->sk_rcvbuf) / 4;
}

/* Copy the next @len unread bytes without reading them; false if short. */
bool dst_sk_peek(struct sock *sk, void *buf, u32 len)
{
	u32 seq = tcp_sk(sk)->copied_seq;
	struct sk_buff *skb;
	u32 done = 0;

	if (dst_sk_inq(sk) < len)
		return false;
	skb_queue_walk(&sk->sk_receive_queue, skb) {
		u32 off = seq - TCP_SKB_CB(skb)->seq;
		u32 n;

		if (off >= skb->len)
			continue;	/* read already, or a bare FIN */
		n = min(len - done, skb->len - off);
		if (skb_copy_bits(skb, off, buf + done, n))
			return false;
		done += n;
		seq += n;
		if (done == len)
			return true;
	}
	return false;
}

struct dst_sk_reader {
	u32 skip;		/* bytes to drop first (a header peeked at) */
	struct iov_iter *iter;	/* then these */
	int err;
};

static int dst_sk_read_actor(read_descriptor_t *desc, struct sk_buff *skb,
			     unsigned int off, size_t len)
{
	struct dst_sk_reader *rd = desc->arg.data;
	size_t used, n;

	len = min_t(size_t, len, desc->count);
	used = min_t(size_t, len, rd->skip);
	rd->skip -= used;
	if (used < len && rd->iter) {
		n = len - used;
		if (skb_copy_datagram_iter(skb, off + used, rd->iter, n)) {
			rd->err = -EFAULT;
			return used ? used : -EFAULT;
		}
		used += n;
	}
	desc->count -= used;
	return used;
}

/**
 * dst_sk_read_bvecs - read @skip bytes, then @len into bio_vecs
 * @sk: the socket, as for dst_sk_peek()
 * @skip: bytes to drop first
 * @bv: @nr bio_vecs, filled from @offset bytes into the first
 * @nr: how many
 * @len: bytes for them (0: only skip)
 * @offset: into the first
 *
 * All of it must be there (dst_sk_inq()).  Returns 0, or -EIO if fewer
 * bytes were read than asked, which leaves the stream out of step: the
 * caller must end the connection.
 */
int dst_sk_read_bvecs(struct sock *sk, u32 skip, const struct bio_vec *bv,
		      unsigned int nr, size_t len, size_t offset)
{
	struct dst_sk_reader rd = { .skip = skip };
	read_descriptor_t desc = { .count = skip + len };
	struct iov_iter iter;
	int ret;

	if (len) {
		iov_iter_bvec(&iter, ITER_DEST, bv, nr, len);
		iter.iov_offset = offset;
		rd.iter = &iter;
	}
	desc.arg.data = &rd;
	ret = tcp_read_sock(sk, &desc, dst_sk_read_actor);
	return ret == skip + len && !rd.err ? 0 : -EIO;
}
