// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: a rail's frames (link layer): the buffers of its TX and RX rings,
 * allocated when the rail is added and freed when it goes (link.c), and
 * how full those rings were since the rail last came up (ring occupancy,
 * kernel/core/tbr_ring_acct.h). The data path in link.c and tx.c moves the
 * levels under link->lock, a clock read per change; the figures are read here.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "tbrdma.h"
#include "link/rail.h"

struct page *tbr_frame_page_alloc(gfp_t gfp)
{
	return alloc_pages(gfp | __GFP_COMP, TBR_FRAME_ORDER);
}

/* Context "process". */
void *tbr_frame_buf_alloc(void)
{
	struct page *page = tbr_frame_page_alloc(GFP_KERNEL);

	return page ? page_address(page) : NULL;
}

void tbr_frame_buf_free(void *buf)
{
	struct page *page = virt_to_page(buf);

	set_page_private(page, 0);
	put_page(page);
}

void tbr_rail_frame_give_page(struct tbr_frame *f, struct page *page)
{
	set_page_private(virt_to_page(f->buf), 0);
	set_page_private(page, (unsigned long)f);
	f->buf = page_address(page);
}

void tbr_rail_free_frames(struct tbr_rail *rail)
{
	unsigned int i, n = rail->tx_depth + rail->rx_depth;

	if (!rail->frames)
		return;
	for (i = 0; i < n; i++) {
		if (rail->frames[i].buf)
			tbr_frame_buf_free(rail->frames[i].buf);
	}
	kvfree(rail->frames);
	rail->frames = NULL;
}

int tbr_rail_alloc_frames(struct tbr_rail *rail)
{
	unsigned int i, n = rail->tx_depth + rail->rx_depth;

	rail->frames = kvcalloc(n, sizeof(*rail->frames), GFP_KERNEL);
	if (!rail->frames)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct tbr_frame *f = &rail->frames[i];

		f->buf = tbr_frame_buf_alloc();
		if (!f->buf)
			return -ENOMEM;
		f->rail = rail;
		set_page_private(virt_to_page(f->buf), (unsigned long)f);
		if (i < rail->tx_depth) {
			list_add_tail(&f->list, &rail->tx_pool);
			rail->tx_free++;
		} else {
			list_add_tail(&f->list, &rail->rx_idle);
		}
	}
	tbr_rail_ring_acct_start_locked(rail);	/* not listed yet: no lock needed */
	return 0;
}

/*
 * link->lock held (or the rail not listed yet): the figures count from now,
 * at the rings' present levels (tbr_rail_up(): a rail down was not starved).
 */
void tbr_rail_ring_acct_start_locked(struct tbr_rail *rail)
{
	u64 now = ktime_get_ns();

	tbr_ring_acct_init(&rail->tx_acct, rail->tx_depth,
			   rail->tx_depth - rail->tx_free, now);
	tbr_ring_acct_init(&rail->rx_acct, rail->rx_depth,
			   rail->rx_depth - rail->rx_posted, now);
}

bool tbr_rail_ring_occ(struct tbr_rail *rail, struct tbr_ring_occ *tx,
		       struct tbr_ring_occ *rx)
{
	unsigned long flags;
	bool up;
	u64 now;

	spin_lock_irqsave(&rail->link->lock, flags);
	up = rail->up;
	if (up) {
		now = ktime_get_ns();
		tbr_ring_acct_read(&rail->tx_acct, now, tx);
		tbr_ring_acct_read(&rail->rx_acct, now, rx);
	}
	spin_unlock_irqrestore(&rail->link->lock, flags);
	return up;
}
