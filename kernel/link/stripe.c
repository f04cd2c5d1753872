// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: which rail of a link a TX frame goes on. Rails of one link may be
 * of very different speed (emu rails rate-capped 1:4, a Thunderbolt rail and
 * an Ethernet one to the same peer), so frames are striped by each rail's
 * measured drain rate (core/tbr_stripe.h, docs/architecture.md "Striping by
 * drain rate"); the management reserve holds whatever the rates say.
 * Locks: link->lock held throughout (link.c).
 */
#include <linux/moduleparam.h>

#include "tbrdma.h"
#include "link/rail.h"

static bool stripe_by_rate = true;
module_param(stripe_by_rate, bool, 0644);
MODULE_PARM_DESC(stripe_by_rate, "stripe TX frames by each rail's measured drain rate (default); N: the rail with the most free descriptors, as before issue 49 (for comparison)");

/* A data frame never takes a rail's last descriptors (docs/architecture.md "Management keeps descriptors"). */
static unsigned int tbr_rail_keep(const struct tbr_rail *r, bool mgmt)
{
	return mgmt ? 0 : min(TBR_LINK_MGMT_TX_RESERVE, r->tx_depth / 4);
}

/* Before issue 49: round robin from the cursor, the most free descriptors wins. */
static struct tbr_rail *tbr_link_pick_even(struct tbr_link *link, u32 len,
					   bool mgmt, bool *fits)
{
	struct tbr_rail *best = NULL, *r;
	unsigned int i;

	for (i = 0; i < TBR_LINK_MAX_RAILS; i++) {
		r = link->rails[(link->rr + i) % TBR_LINK_MAX_RAILS];
		if (!r || !r->up || len > r->tx_max)
			continue;
		*fits = true;
		if (r->tx_free > tbr_rail_keep(r, mgmt) &&
		    (!best || r->tx_free > best->tx_free))
			best = r;
	}
	return best;
}

static u32 tbr_rail_rate_locked(const struct tbr_rail *r)
{
	return tbr_stripe_rate(&r->stripe, (u64)READ_ONCE(r->lane_mbps) *
					   READ_ONCE(r->lanes));
}

struct tbr_rail *tbr_link_pick_locked(struct tbr_link *link, u32 len, bool mgmt,
				      u64 now, int *err)
{
	struct tbr_stripe_pick p;
	struct tbr_rail *r;
	bool fits = false, credit, waitable;
	unsigned int i, slot;

	if (!READ_ONCE(stripe_by_rate)) {
		r = tbr_link_pick_even(link, len, mgmt, &fits);
		goto out;
	}
	tbr_stripe_pick_init(&p);
	for (i = 0; i < TBR_LINK_MAX_RAILS; i++) {
		slot = (link->rr + i) % TBR_LINK_MAX_RAILS;
		r = link->rails[slot];
		if (!r || !r->up || len > r->tx_max)
			continue;
		fits = true;
		credit = r->tx_free > tbr_rail_keep(r, mgmt);
		/* a descriptor of it frees soon: frames out, completions coming */
		waitable = r->tx_free < r->tx_depth && r->stripe.last_done &&
			   now - r->stripe.last_done < TBR_STRIPE_STUCK_NS;
		tbr_stripe_expire(&r->stripe, now);
		tbr_stripe_consider(&p, slot, r->stripe.out, tbr_rail_rate_locked(r),
				    len, credit, waitable);
	}
	if (p.best >= 0 && !mgmt && !tbr_stripe_go(&p, len)) {
		*err = -EAGAIN;		/* a faster rail's descriptor frees first */
		return NULL;
	}
	r = p.best >= 0 ? link->rails[p.best] : NULL;
out:
	if (!fits)
		*err = -EMSGSIZE;	/* no up rail carries frames this big */
	else if (!r)
		*err = -ENOBUFS;
	return r;
}

void tbr_rail_tx_done_locked(struct tbr_rail *rail, struct tbr_frame *f, u64 now)
{
	tbr_stripe_done(&rail->stripe, f->lk_time, f->size, now);
}

u32 tbr_rail_drain_rate(struct tbr_rail *rail)
{
	unsigned long flags;
	u32 rate;

	spin_lock_irqsave(&rail->link->lock, flags);
	rate = rail->stripe.rate;
	spin_unlock_irqrestore(&rail->link->lock, flags);
	return rate;
}
