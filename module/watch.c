// SPDX-License-Identifier: GPL-2.0
/*
 * DST socket watches: who reads a connection's socket, and where.
 *
 * A receive loop is a work item, queued by the socket's callbacks when
 * bytes or a state change arrive, on the CPU where they arrive (or its
 * neighbour, dst_sock_watch_ran()).  On the client a fast path may take
 * whole replies in the callback itself.  Exactly one of the two reads
 * the socket at any time; this file owns that claim protocol:
 *
 *   bytes arrive (softirq, or the            receive loop (work item)
 *   socket owner's release_sock())
 *   ------------------------------           ------------------------
 *   claimed? --no--> fast path takes         dst_sock_watch_claim():
 *      |             whole frames              claimed = true, then
 *      |             |                         lock_sock/release_sock
 *      |             +-- all taken: done        waits out a fast path
 *      |             |                          running now
 *      |             +-- any left              reads until the socket
 *     yes <----------+                          is idle
 *      |                                       dst_sock_watch_ran():
 *      v                                         claimed = false (a
 *   claimed = true; queue the loop               release: its reads
 *                                                come first)
 *
 * The export's loops have no fast path and no claim: the callbacks just
 * queue them.  A watch can also queue a sender when the socket has room
 * again (dst_sock_watch_tx()), for keyed replies sent without blocking.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/topology.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "dst.h"

#define DST_SOCK_QUIET_RUNS	8	/* back to the bytes' CPU after */
#define DST_SOCK_PROBE_MS	100	/* a quiet loop tries the next CPU */

/* The next online CPU after @cpu on its node, or @cpu if it is alone. */
static int dst_sock_neighbour(int cpu)
{
	const struct cpumask *node = cpumask_of_node(cpu_to_node(cpu));
	int next = cpumask_next_and(cpu, node, cpu_online_mask);

	if (next >= nr_cpu_ids)
		next = cpumask_first_and(node, cpu_online_mask);
	return next < nr_cpu_ids ? next : cpu;
}

/*
 * Receive loops do not sleep in recvmsg() between frames: a sleeping
 * worker is bound to the CPU it went to sleep on, and waking it from the
 * CPU where the peer's bytes arrive is a cross-CPU wakeup per frame (an
 * IPI, and on an idle guest a halted vCPU to bring back).  Instead a loop
 * returns when its socket is idle, and these callbacks queue it again on
 * the CPU where the socket's bytes, or the news that it closed, are being
 * processed, as nvme-tcp and nvmet-tcp queue their io_work -- or, for a
 * loop whose peer keeps a queue, on the next CPU (dst_sock_watch_ran()).
 * The socket's own callbacks still run, for a loop that does wait for
 * the rest of a frame that is half received.
 *
 * A watch with a fast path (the client's) first offers the bytes to it,
 * right here, while no receive loop has claimed the socket: a reply that
 * is all there completes in the context that received it -- on loopback
 * the server's own loop, whose send delivered it -- and the I/O costs
 * one context switch less.  Whatever the fast path does not take (a
 * frame that is not all there, anything unusual) claims the socket for
 * the loop, which then reads until the socket is idle and gives it back
 * (dst_sock_watch_ran()).  Only one of them ever reads: the fast path
 * runs either in softirq under the socket's spinlock with no process
 * owning the socket, or in the owner's release_sock() (a sender; the
 * loop has the socket claimed while it owns it), with softirq keeping
 * off; and dst_sock_watch_claim() waits out a run in progress.
 *
 * Called in softirq, or in process context (release_sock(), shutdown)
 * where read_lock_bh() keeps us on this CPU.  @state: the state changed,
 * else data came in.
 */
static void dst_sock_kick(struct sock *sk, bool state)
{
	struct dst_sock_watch *w;

	read_lock_bh(&sk->sk_callback_lock);
	w = sk->sk_user_data;
	if (w) {
		int cpu = smp_processor_id();

		if (READ_ONCE(w->rx_off)) {
			/* dst_sock_unwatch_rx(): the loop is gone. */
		} else if (state || !w->fast || READ_ONCE(w->claimed) ||
			   !w->fast(w, sk)) {
			if (w->fast)
				WRITE_ONCE(w->claimed, true);
			if (READ_ONCE(w->busy))
				cpu = dst_sock_neighbour(cpu);
			queue_work_on(cpu, w->wq, w->work);
		}
		if (state && w->tx_work)
			queue_work(w->tx_wq, w->tx_work);
		(state ? w->state_change : w->data_ready)(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void dst_sock_data_ready(struct sock *sk)
{
	dst_sock_kick(sk, false);
}

static void dst_sock_state_change(struct sock *sk)
{
	dst_sock_kick(sk, true);
}

/*
 * Room to send again (TCP calls this only after a send found none): the
 * sender that gave up with -EAGAIN goes on.
 */
static void dst_sock_write_space(struct sock *sk)
{
	struct dst_sock_watch *w;

	read_lock_bh(&sk->sk_callback_lock);
	w = sk->sk_user_data;
	if (w) {
		if (w->tx_work && sk_stream_is_writeable(sk))
			queue_work(w->tx_wq, w->tx_work);
		w->write_space(sk);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/**
 * dst_sock_watch_tx - also queue a sender when its socket has room again
 * @sock: a socket watched by @w (dst_sock_watch())
 * @w: the watch
 * @wq: where the sender runs
 * @work: the sender, which sends with dst_sock_send_nowait() and returns
 *	on -EAGAIN; it is also queued when the socket's state changes, to
 *	see its sends fail and give up what it holds
 */
void dst_sock_watch_tx(struct socket *sock, struct dst_sock_watch *w,
		       struct workqueue_struct *wq, struct work_struct *work)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	w->tx_wq = wq;
	w->tx_work = work;
	w->write_space = sk->sk_write_space;
	sk->sk_write_space = dst_sock_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
}

/**
 * dst_sock_watch - queue a receive loop whenever its socket has news
 * @sock: a connected socket, not watched yet
 * @w: the watch, to live until dst_sock_unwatch()
 * @wq: a per-CPU workqueue
 * @work: the receive loop
 * @fast: reads whole frames in softirq (see dst_sock_kick()), or NULL
 *
 * Install before the loop first runs: bytes that came before are found
 * by that run, which has the socket to itself until it ends.
 */
void dst_sock_watch(struct socket *sock, struct dst_sock_watch *w,
		    struct workqueue_struct *wq, struct work_struct *work,
		    bool (*fast)(struct dst_sock_watch *w, struct sock *sk))
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	w->wq = wq;
	w->work = work;
	w->fast = fast;
	w->tx_work = NULL;
	w->rx_off = false;
	w->claimed = true;
	w->busy = false;
	w->quiet = DST_SOCK_QUIET_RUNS;
	w->probe_at = jiffies;
	w->data_ready = sk->sk_data_ready;
	w->state_change = sk->sk_state_change;
	sk->sk_user_data = w;
	sk->sk_data_ready = dst_sock_data_ready;
	sk->sk_state_change = dst_sock_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Undo dst_sock_watch(), if @w watches @sock; before the socket is
 * released, since a released TCP socket lives on in the stack for a
 * while.  Once this returns nothing queues the loop through @sock; it
 * may have been queued already.
 */
void dst_sock_unwatch(struct socket *sock, struct dst_sock_watch *w)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == w) {
		sk->sk_data_ready = w->data_ready;
		sk->sk_state_change = w->state_change;
		if (w->tx_work)
			sk->sk_write_space = w->write_space;
		sk->sk_user_data = NULL;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Stop queueing the receive loop, but go on telling the sender of room
 * and state changes (dst_sock_watch_tx()) until dst_sock_unwatch(): a
 * loop that ends still has replies to send.
 */
void dst_sock_unwatch_rx(struct socket *sock, struct dst_sock_watch *w)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == w)
		WRITE_ONCE(w->rx_off, true);
	write_unlock_bh(&sk->sk_callback_lock);
}

/**
 * dst_sock_watch_ran - a run of a watched receive loop has ended
 * @w: the loop's watch
 * @frames: how many frames the run read
 *
 * Where a loop runs decides how much of the two machines' work can
 * overlap.  A run that finds only the frame that woke it means the peer
 * waits for each answer (queue depth 1): the next run stays on the CPU
 * where the bytes arrive, and an I/O costs no cross-CPU wakeup at all.
 * A run that finds several means the peer keeps a queue: the next runs
 * go to a neighbouring CPU, so that this side's work runs beside the
 * peer's instead of after it.  A submitter that keeps a queue in its
 * own hands (fio's libaio ring) looks like depth 1 from here while the
 * loop runs on its CPU, so a quiet loop tries the neighbour for one run
 * every DST_SOCK_PROBE_MS: with a real queue behind it, that run finds
 * several frames and the loop stays there; it comes back after
 * DST_SOCK_QUIET_RUNS runs in a row that found one frame each, so at
 * depth 1 probing costs that many cross-CPU wakeups ten times a second.
 * Measured in docs/benchmarks.md.
 *
 * It also ends the loop's claim on the socket (dst_sock_watch_claim()).
 *
 * Called only from the loop itself, and a work item never runs on two
 * CPUs at once: the placement fields have one writer.
 */
void dst_sock_watch_ran(struct dst_sock_watch *w, unsigned int frames)
{
	/* The loop found the socket idle: the fast path may read again. */
	if (w->fast)
		/* Release: the loop's reads come before the fast path's. */
		smp_store_release(&w->claimed, false);
	if (frames > 1) {
		w->quiet = 0;
	} else if (w->quiet < DST_SOCK_QUIET_RUNS) {
		if (++w->quiet == DST_SOCK_QUIET_RUNS)
			w->probe_at = jiffies +
				      msecs_to_jiffies(DST_SOCK_PROBE_MS);
	} else if (time_after_eq(jiffies, w->probe_at)) {
		w->quiet = 0;
	}
	WRITE_ONCE(w->busy, w->quiet < DST_SOCK_QUIET_RUNS);
}

/*
 * The receive loop of a watch with a fast path takes the socket before
 * it reads: from here until dst_sock_watch_ran() the fast path leaves
 * the bytes alone.  A fast path running right now, in softirq or in the
 * socket owner's release_sock(), is done with them before this returns.
 */
void dst_sock_watch_claim(struct socket *sock, struct dst_sock_watch *w)
{
	WRITE_ONCE(w->claimed, true);
	lock_sock(sock->sk);
	release_sock(sock->sk);
}
