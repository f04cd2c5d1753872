// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the link layer's transmit side. A TX frame is reserved on the
 * rail stripe.c picks (tbr_link_tx_alloc*, tbr_link_xmit), filled by its
 * caller, posted to the rail's backend, and comes back at its completion,
 * which wakes a stalled transport, router or tbrN. While tbrN waits for
 * descriptors the other senders leave it TBR_LINK_NET_SHARE of them (the
 * net share, link.h).
 * Locks: link->lock (link.c) protects the rails' pools, the stall flags
 * and the round-robin cursor; backend locks nest inside it (ops->tx).
 */
#include <linux/mm.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "link/route.h"

/* link->lock held. A TX frame is free again; wake a removal waiting for it. */
static void tbr_tx_frame_back_locked(struct tbr_rail *rail, struct tbr_frame *f)
{
	if (rail->ops->tx_release)
		rail->ops->tx_release(rail, f);
	rail->stripe.out -= f->lk_len;
	f->lk_len = 0;
	list_add(&f->list, &rail->tx_pool);
	if (++rail->tx_free == rail->tx_depth && rail->removing)
		complete(&rail->tx_idle);
	tbr_rail_tx_acct_locked(rail, ktime_get_ns());
}

static inline struct tbr_frame *tbr_frame_of(const void *buf)
{
	return (struct tbr_frame *)page_private(virt_to_page(buf));
}

static void tbr_tx_done(struct tbr_rail *rail, struct tbr_frame *f, bool canceled)
{
	struct tbr_link *link = rail->link;
	const struct tbr_link_upper_ops *ops;
	const struct tbr_link_router *router;
	unsigned long flags;
	bool wake, obs_first = false, net_wake = false;

	/* tbrN's frames in flight went below its wake mark (link.h) */
	if (f->eof == TBR_PDF_NETX &&
	    atomic_dec_return(&link->net_inflight) <= READ_ONCE(link->net_wake_at) &&
	    READ_ONCE(link->net_wait)) {
		WRITE_ONCE(link->net_wait, false);
		net_wake = true;
	}
	if (canceled || (f->flags & TBR_FRAME_CANCELED)) {
		tbr_rail_count(rail, TBR_CNT_TX_LOST, 1);
	} else {
		tbr_rail_count(rail, TBR_CNT_TX_FRAMES, 1);
		tbr_rail_count(rail, TBR_CNT_TX_BYTES, f->size);
		if (f->eof == TBR_PDF_MGMT)
			tbr_rail_count(rail, TBR_CNT_MGMT_TX, 1);
	}
	spin_lock_irqsave(&link->lock, flags);
	if (!canceled && !(f->flags & TBR_FRAME_CANCELED))
		tbr_rail_tx_done_locked(rail, f, ktime_get_ns());
	tbr_tx_frame_back_locked(rail, f);
	wake = link->stalled && rail->up;
	if (wake)
		link->stalled = false;
	if (wake) {
		/*
		 * the transport and tbrN (an observer) take turns being woken
		 * first: whoever is first takes the descriptors that came
		 * free, so a fixed order would starve the other
		 */
		obs_first = link->wake_obs_first;
		link->wake_obs_first = !obs_first;
	}
	spin_unlock_irqrestore(&link->lock, flags);

	if (wake) {
		if (obs_first)
			tbr_notify_tx_ready(link);
		rcu_read_lock();
		ops = rcu_dereference(link->tdev->rails.upper);
		if (ops && ops->tx_ready)
			ops->tx_ready(link->tdev->rails.upper_ctx, link);
		rcu_read_unlock();
		router = READ_ONCE(link->tdev->rails.router);
		if (router)
			router->tx_ready(link);
		if (!obs_first)
			tbr_notify_tx_ready(link);
	} else if (net_wake) {
		tbr_notify_tx_ready(link);
	}
}

/*
 * Reserve a TX frame on the rail stripe.c picks (by drain rate; only a
 * management datagram, @mgmt, may take a rail's last
 * TBR_LINK_MGMT_TX_RESERVE descriptors). link->lock held.
 */
static struct tbr_frame *tbr_link_reserve_locked(struct tbr_link *link, u32 len,
						  bool mgmt, int *err)
{
	struct tbr_rail *best;
	struct tbr_frame *f;
	u64 now;

	if (link->gone || !link->rails_up || link->trust != TBR_TRUST_USED) {
		*err = -ENETDOWN;
		return NULL;
	}
	now = ktime_get_ns();
	best = tbr_link_pick_locked(link, len, mgmt, now, err);
	if (!best) {
		if (*err == -EMSGSIZE)
			return NULL;
		/* the next TX completion on an up rail wakes the transport */
		link->stalled = true;
		tbr_link_count(link, *err == -EAGAIN ? TBR_CNT_RATE_WAITS :
						       TBR_CNT_CREDIT_STALLS, 1);
		*err = -ENOBUFS;
		return NULL;
	}
	f = list_first_entry(&best->tx_pool, struct tbr_frame, list);
	list_del(&f->list);
	best->tx_free--;
	f->lk_len = len;
	best->stripe.out += len;
	tbr_rail_tx_acct_locked(best, now);
	link->rr = (best->id + 1) % TBR_LINK_MAX_RAILS;
	return f;
}

/* link->lock held. Post a reserved frame; on failure it goes back, lost. */
static int tbr_frame_send_locked(struct tbr_link *link, struct tbr_frame *f,
				 u8 pdf, u32 len)
{
	struct tbr_rail *rail = f->rail;
	int err;

	f->size = len;
	f->eof = pdf;
	f->flags = 0;
	f->callback = tbr_tx_done;
	rail->stripe.out += len;
	rail->stripe.out -= f->lk_len;
	f->lk_len = len;
	f->lk_time = ktime_get_ns();
	if (pdf == TBR_PDF_NETX)
		atomic_inc(&link->net_inflight);
	if (static_branch_unlikely(&tbr_link_tap_key))
		err = tbr_tap_post(rail, f, pdf, len);
	else
		err = rail->ops->tx(rail, f);
	if (err) {
		if (pdf == TBR_PDF_NETX)
			atomic_dec(&link->net_inflight);
		tbr_tx_frame_back_locked(rail, f);
		tbr_rail_count(rail, err == -ENOBUFS ? TBR_CNT_CREDIT_STALLS :
						       TBR_CNT_TX_LOST, 1);
	}
	return err;
}

/* Free TX descriptors over the up rails. link->lock held. */
static unsigned int tbr_link_free_locked(struct tbr_link *link)
{
	unsigned int i, n = 0;

	for (i = 0; i < TBR_LINK_MAX_RAILS; i++)
		if (link->rails[i] && link->rails[i]->up)
			n += link->rails[i]->tx_free;
	return n;
}

/*
 * @net: tbrN's fragment frame. While tbrN waits for descriptors
 * (net_starving), the other frames leave it TBR_LINK_NET_SHARE of them, so
 * a transport that refills the rings at every completion cannot starve IP.
 */
static void *tbr_link_tx_alloc_one(struct tbr_link *link, u32 len, bool net)
{
	struct tbr_frame *f = NULL;
	unsigned long flags;
	int err = 0;

	if (!len || len > TBR_FRAME_SIZE_MAX)
		return ERR_PTR(-EINVAL);
	spin_lock_irqsave(&link->lock, flags);
	if (!net && link->net_starving && link->rails_up &&
	    tbr_link_free_locked(link) <= TBR_LINK_NET_SHARE) {
		link->stalled = true;
		tbr_link_count(link, TBR_CNT_CREDIT_STALLS, 1);
		err = -ENOBUFS;
	} else {
		f = tbr_link_reserve_locked(link, len, false, &err);
		if (net)
			link->net_starving = !f && err == -ENOBUFS;
	}
	spin_unlock_irqrestore(&link->lock, flags);
	return f ? f->buf : ERR_PTR(err);
}

void *tbr_link_tx_alloc(struct tbr_link *link, u32 len)
{
	if (link->ops)
		return link->ops->tx_alloc(link, len);
	return tbr_link_tx_alloc_one(link, len, false);
}

void *tbr_link_tx_alloc_net(struct tbr_link *link, u32 len)
{
	if (link->ops)
		return ERR_PTR(-EOPNOTSUPP);
	return tbr_link_tx_alloc_one(link, len, true);
}

void tbr_link_tx_send(struct tbr_link *link, void *buf, u32 len)
{
	struct tbr_frame *f = tbr_frame_of(buf);
	unsigned long flags;

	if (link->ops) {
		link->ops->tx_send(link, buf, len);
		return;
	}
	if (WARN_ON_ONCE(f->rail->link != link || !len || len > TBR_FRAME_SIZE_MAX))
		len = 1;
	spin_lock_irqsave(&link->lock, flags);
	tbr_frame_send_locked(link, f, TBR_PDF_DATA, len);
	spin_unlock_irqrestore(&link->lock, flags);
}

void tbr_link_tx_send_pdf(void *buf, u8 pdf, u32 len)
{
	struct tbr_frame *f = tbr_frame_of(buf);
	struct tbr_link *link = f->rail->link;
	unsigned long flags;

	if (WARN_ON_ONCE(!len || len > TBR_FRAME_SIZE_MAX))
		len = 1;
	spin_lock_irqsave(&link->lock, flags);
	tbr_frame_send_locked(link, f, pdf, len);
	spin_unlock_irqrestore(&link->lock, flags);
}

/*
 * The caller owns the reserved frame of @buf: no lock. A removal that times
 * out switches rail->ops to tbr_rail_gone_ops under link->lock
 * (tbr_rail_remove()): read them once, so the check and the call are of
 * one table.
 */
int tbr_link_tx_attach(struct tbr_link *link, void *buf, void *at,
		       struct page *page, u32 page_off, u32 len)
{
	const struct tbr_rail_ops *ops;
	struct tbr_frame *f;

	if (link->ops)
		return -EOPNOTSUPP;
	f = tbr_frame_of(buf);
	ops = READ_ONCE(f->rail->ops);
	if (!ops->tx_attach)
		return -EOPNOTSUPP;
	return ops->tx_attach(f->rail, f, (u8 *)at - (u8 *)buf, page, page_off, len);
}

void tbr_link_tx_abort_buf(void *buf)
{
	tbr_link_tx_abort(tbr_frame_of(buf)->rail->link, buf);
}

void tbr_link_tx_abort(struct tbr_link *link, void *buf)
{
	struct tbr_frame *f = tbr_frame_of(buf);
	unsigned long flags;

	if (link->ops) {
		link->ops->tx_abort(link, buf);
		return;
	}
	spin_lock_irqsave(&link->lock, flags);
	tbr_tx_frame_back_locked(f->rail, f);
	spin_unlock_irqrestore(&link->lock, flags);
}

int tbr_link_xmit(struct tbr_link *link, u8 pdf, const void *data, u32 len)
{
	struct tbr_frame *f;
	unsigned long flags;
	int err = 0;

	if (!len || len > TBR_FRAME_SIZE_MAX || pdf > 15)
		return -EINVAL;
	if (link->ops)	/* management and IP never loop back; routed: route.c */
		return link->ops->xmit ? link->ops->xmit(link, pdf, data, len) :
					 -ENETUNREACH;
	spin_lock_irqsave(&link->lock, flags);
	f = tbr_link_reserve_locked(link, len, pdf == TBR_PDF_MGMT, &err);
	if (f) {
		memcpy(f->buf, data, len);
		err = tbr_frame_send_locked(link, f, pdf, len);
	}
	spin_unlock_irqrestore(&link->lock, flags);
	return err;
}

u32 tbr_link_max_frame(struct tbr_link *link)
{
	u32 i, max = TBR_FRAME_SIZE_MAX;
	unsigned long flags;

	if (link->ops && link->ops->max_frame)
		return link->ops->max_frame(link);
	spin_lock_irqsave(&link->lock, flags);
	for (i = 0; i < TBR_LINK_MAX_RAILS; i++)
		if (link->rails[i])
			max = min(max, link->rails[i]->max_frame);
	spin_unlock_irqrestore(&link->lock, flags);
	return max;
}

unsigned int tbr_link_tx_credits(struct tbr_link *link)
{
	unsigned int i, n = 0;
	unsigned long flags;

	if (link->ops)
		return link->ops->tx_credits(link);
	spin_lock_irqsave(&link->lock, flags);
	for (i = 0; i < TBR_LINK_MAX_RAILS; i++)
		if (link->rails[i] && link->rails[i]->up)
			n += link->rails[i]->tx_free;
	spin_unlock_irqrestore(&link->lock, flags);
	return n;
}
