// SPDX-License-Identifier: GPL-2.0
/*
 * DST export node: data pages kept for reuse.
 *
 * Each connection keeps the pages of its finished requests, single pages
 * and 64 KiB segments, in two small rings, for the next requests; a
 * shrinker gives them back under memory pressure (why, below).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>

#include "export.h"

/*
 * Debian's kernel zeroes every page it hands out (init_on_alloc), and a
 * request's pages are then overwritten whole by the disk or the client:
 * for 1 MiB reads clearing them was a third of the server's CPU time.
 * A connection therefore keeps the pages of its finished requests and
 * gives them to the next ones.  They only ever held this connection's
 * data, which is all they can show again.
 *
 * A page sent with sendpage is still referenced by the socket buffers
 * until the peer has it, so a spare is reused only once its count is
 * down to our own reference: nobody else can write to it or read it.
 * Spares are bounded per connection and per export, and a shrinker
 * gives them back when the kernel runs short of memory.
 */
static struct dst_spares *dst_spares_of(struct dst_sconn *conn,
					unsigned int order)
{
	if (order == 0)
		return &conn->spares[0];
	if (order == DST_SRV_SEG_ORDER)
		return &conn->spares[1];
	return NULL;
}

/* The ring's ends; under spare_lock. */
static void dst_spares_push(struct dst_spares *sp, struct page *page)
{
	sp->page[(sp->head + sp->nr++) % DST_SRV_SPARES] = page;
}

static struct page *dst_spares_pop(struct dst_spares *sp)
{
	struct page *page = sp->page[sp->head];

	sp->head = (sp->head + 1) % DST_SRV_SPARES;
	sp->nr--;
	return page;
}

struct page *dst_spare_get(struct dst_sconn *conn, unsigned int order)
{
	struct dst_spares *sp = dst_spares_of(conn, order);
	struct page *page = NULL;
	unsigned int i;

	if (!sp || !READ_ONCE(sp->nr))
		return NULL;
	spin_lock(&conn->spare_lock);
	/*
	 * The oldest spare is the likeliest to be out of the socket
	 * buffers; one still in them goes to the back of the ring, so a
	 * page held long (a slow peer, retransmissions) blocks nothing.
	 */
	for (i = 0; i < min(sp->nr, DST_SRV_SPARE_TRIES); i++) {
		struct page *p = dst_spares_pop(sp);

		if (page_count(p) == 1) {
			page = p;
			break;
		}
		dst_spares_push(sp, p);
	}
	spin_unlock(&conn->spare_lock);
	if (page)
		atomic_sub(1 << order, &conn->exp->spare_pages);
	return page;
}

void dst_spare_put(struct dst_sconn *conn, struct page *page)
{
	unsigned int n = 1 << compound_order(page);
	struct dst_spares *sp = dst_spares_of(conn, compound_order(page));
	atomic_t *budget = &conn->exp->spare_pages;

	if (sp) {
		spin_lock(&conn->spare_lock);
		if (sp->nr < DST_SRV_SPARES) {
			if (atomic_add_return(n, budget) <= DST_SRV_SPARE_PAGES) {
				dst_spares_push(sp, page);
				page = NULL;
			} else {
				atomic_sub(n, budget);
			}
		}
		spin_unlock(&conn->spare_lock);
	}
	if (page)
		put_page(page);
}

/*
 * Give back up to @max pages of @conn's spares, oldest first; returns
 * how many.  A page still in a socket buffer is freed when TCP lets go.
 */
static unsigned long dst_spares_drop(struct dst_sconn *conn,
				     unsigned long max)
{
	unsigned long done = 0;
	unsigned int i;

	spin_lock(&conn->spare_lock);
	for (i = 0; i < ARRAY_SIZE(conn->spares); i++) {
		struct dst_spares *sp = &conn->spares[i];

		while (sp->nr && done < max) {
			struct page *page = dst_spares_pop(sp);
			unsigned int n = 1 << compound_order(page);

			atomic_sub(n, &conn->exp->spare_pages);
			put_page(page);
			done += n;
		}
	}
	spin_unlock(&conn->spare_lock);
	return done;
}

/* The connection is gone: its spares go back to the page allocator. */
void dst_spares_free(struct dst_sconn *conn)
{
	dst_spares_drop(conn, ULONG_MAX);
}

static unsigned long dst_spares_count(struct shrinker *sh,
				      struct shrink_control *sc)
{
	struct dst_export *exp = container_of(sh, struct dst_export,
					      spare_shrinker);

	return atomic_read(&exp->spare_pages) ?: SHRINK_EMPTY;
}

static unsigned long dst_spares_scan(struct shrinker *sh,
				     struct shrink_control *sc)
{
	struct dst_export *exp = container_of(sh, struct dst_export,
					      spare_shrinker);
	unsigned long done = 0;
	struct dst_sconn *conn;

	/*
	 * Reclaim may run on behalf of whoever holds conns_lock (it
	 * allocates with GFP_KERNEL): never wait for it here.
	 */
	if (!mutex_trylock(&exp->conns_lock))
		return SHRINK_STOP;
	list_for_each_entry(conn, &exp->conns, entry) {
		if (done >= sc->nr_to_scan)
			break;
		done += dst_spares_drop(conn, sc->nr_to_scan - done);
	}
	mutex_unlock(&exp->conns_lock);
	return done;
}

/* The spares' shrinker; undoing it is a no-op if it never registered. */
int dst_export_spares_init(struct dst_export *exp)
{
	exp->spare_shrinker.count_objects = dst_spares_count;
	exp->spare_shrinker.scan_objects = dst_spares_scan;
	exp->spare_shrinker.seeks = DEFAULT_SEEKS;
	return register_shrinker(&exp->spare_shrinker, "dst-%s",
				 exp->node->name);
}

void dst_export_spares_exit(struct dst_export *exp)
{
	unregister_shrinker(&exp->spare_shrinker);
}
