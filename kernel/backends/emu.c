// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the emu rail backend, an "emulated cable" between two tbrdma
 * devices of this kernel. A cable has R rails; each rail is a pair of ends,
 * each end a TX ring and an RX ring of fixed depth, like an NHI ring pair.
 *
 * A frame posted on one end's TX ring waits there until the wire takes it
 * (after the configured delay, at the configured rate), then is copied into
 * the first RX buffer posted on the other end, whose callback runs, and
 * then the TX frame completes. No RX buffer posted: the frame is dropped
 * and counted (rx_nobuf on the receiving rail), as on real hardware. The
 * TX descriptor stays busy until the frame has left the wire, so delay
 * times rate bounds what is in flight (credits), as E2E flow control would.
 *
 * Faults, per rail, both directions or one end's (RAIL_SET's ONE_WAY: the
 * frames that end sends): drop and duplicate (parts per million,
 * counted as drops/dups on the sending rail), reorder (the wire takes a
 * random one of the first N queued frames), delay, rate cap, a slow
 * receiver (rx_hold_us: a buffer handed up is taken back only at the end's
 * next drain, every rx_hold_us, as by a host slow to refill its ring; the
 * rail layer parks it meanwhile, and the wire waits for a posted buffer
 * instead of dropping, as E2E flow control holds the sender), and cut: both
 * ends go down, every frame queued on either end is completed as canceled
 * (lost), RX buffers come back canceled, until restore.
 *
 * Each end has a work item (on an ordered-per-item workqueue) that moves
 * its TX ring over the wire; an hrtimer wakes it for delayed frames.
 * Callbacks into the rail layer run from that work item with BH disabled
 * and no emu lock held.
 *
 * Cables are made, deleted and listed with the genl commands EMU_CABLE_NEW,
 * _DEL and _GET (docs/netlink.md), which live here.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "tbrdma.h"
#include "ctl/ctl.h"
#include "backends/backends.h"
#include "uapi/tbrdma-netlink.h"

#define EMU_BUDGET	64	/* frames per work run before yielding */
#define EMU_PPM		1000000U

struct emu_pair;

struct emu_end {
	struct emu_pair *pair;
	struct emu_end *peer;
	struct tbr_rail *rail;
	spinlock_t lock;		/* everything below */
	bool running;			/* false: cut, or being removed */
	struct list_head txq;
	unsigned int txn;
	struct list_head rxq;
	unsigned int rxn;
	unsigned int depth;
	u64 busy_until;			/* rate cap: wire busy until (ns) */
	struct tbr_rail_fault fault;
	bool rx_drain;			/* rx_work gives buffers back now */
	struct work_struct work;
	struct hrtimer timer;
	struct work_struct rx_work;	/* rx_hold_us: the receiver's drain */
	struct hrtimer rx_timer;
};

struct emu_pair {
	struct emu_end end[2];
	bool cut;			/* tbr_ctl_mutex */
};

struct emu_cable {
	struct list_head node;		/* emu_cables, tbr_ctl_mutex */
	u32 id;
	struct tbr_dev *dev[2];
	u32 nrails;
	struct emu_pair pair[];
};

static LIST_HEAD(emu_cables);
static u32 emu_next_id;
static struct workqueue_struct *emu_wq;

static bool emu_chance(u32 ppm)
{
	if (!ppm)
		return false;
	if (ppm >= EMU_PPM)
		return true;
	return get_random_u32() % EMU_PPM < ppm;
}

/*
 * Copy @src into the first RX buffer posted on @dst and return that buffer
 * (its callback not run yet), or NULL: no buffer posted (counted) or @dst
 * stopped. BH disabled.
 */
static struct tbr_frame *emu_land(struct emu_end *dst, const struct tbr_frame *src)
{
	struct tbr_frame *f;
	unsigned long flags;

	spin_lock_irqsave(&dst->lock, flags);
	if (!dst->running) {
		spin_unlock_irqrestore(&dst->lock, flags);
		return NULL;
	}
	f = list_first_entry_or_null(&dst->rxq, struct tbr_frame, list);
	if (!f) {
		spin_unlock_irqrestore(&dst->lock, flags);
		tbr_rail_count(dst->rail, TBR_CNT_RX_NOBUF, 1);
		return NULL;
	}
	list_del(&f->list);
	dst->rxn--;
	spin_unlock_irqrestore(&dst->lock, flags);

	memcpy(f->buf, src->buf, src->size);
	f->size = src->size;
	f->eof = src->eof;
	f->flags = 0;
	return f;
}

static void emu_work(struct work_struct *work)
{
	struct emu_end *end = container_of(work, struct emu_end, work);
	unsigned int budget, i, n, pick;
	struct tbr_frame *f, *rx[2];
	unsigned long flags;
	u64 now, t;
	int copies;

	for (budget = EMU_BUDGET; budget; budget--) {
		spin_lock_irqsave(&end->lock, flags);
		if (!end->running || list_empty(&end->txq)) {
			spin_unlock_irqrestore(&end->lock, flags);
			return;
		}
		n = min(end->txn, max(end->fault.reorder, 1U));
		pick = n > 1 ? get_random_u32() % n : 0;
		i = 0;
		list_for_each_entry(f, &end->txq, list)
			if (i++ == pick)
				break;
		/* a slow receiver: the wire waits for a buffer (its drain kicks us) */
		if (end->fault.rx_hold_us && !READ_ONCE(end->peer->rxn)) {
			spin_unlock_irqrestore(&end->lock, flags);
			return;
		}
		now = ktime_get_ns();
		t = f->bk_time;
		if (end->fault.rate_bps)
			t = max(t, end->busy_until);
		if (t > now) {
			hrtimer_start(&end->timer, ns_to_ktime(t), HRTIMER_MODE_ABS);
			spin_unlock_irqrestore(&end->lock, flags);
			return;
		}
		if (end->fault.rate_bps)
			end->busy_until = t + div64_u64((u64)f->size * 8 * NSEC_PER_SEC,
							end->fault.rate_bps);
		list_del(&f->list);
		end->txn--;
		copies = 1;
		if (emu_chance(end->fault.drop_ppm))
			copies = 0;
		else if (emu_chance(end->fault.dup_ppm))
			copies = 2;
		spin_unlock_irqrestore(&end->lock, flags);

		/*
		 * Data lands in the peer's RX buffers, then the TX descriptor
		 * completes (the sender may reuse the buffer), then the
		 * receiver is told, in the order of a real DMA ring pair.
		 */
		local_bh_disable();
		if (!copies)
			tbr_rail_count(end->rail, TBR_CNT_DROPS, 1);
		if (copies == 2)
			tbr_rail_count(end->rail, TBR_CNT_DUPS, 1);
		for (i = 0; i < copies; i++)
			rx[i] = emu_land(end->peer, f);
		f->flags = 0;
		f->callback(end->rail, f, false);
		for (i = 0; i < copies; i++)
			if (rx[i])
				rx[i]->callback(end->peer->rail, rx[i], false);
		local_bh_enable();
	}
	queue_work(emu_wq, &end->work);
}

static enum hrtimer_restart emu_timer(struct hrtimer *timer)
{
	struct emu_end *end = container_of(timer, struct emu_end, timer);

	queue_work(emu_wq, &end->work);
	return HRTIMER_NORESTART;
}

/*
 * rx_hold_us: the receiver drains. The buffers the rail layer parked since
 * the last drain (emu_rx() refused them) are posted again, and the peer's
 * wire, which may wait for one, runs. Also run when the knobs change.
 */
static void emu_rx_work(struct work_struct *work)
{
	struct emu_end *end = container_of(work, struct emu_end, rx_work);
	unsigned long flags;

	spin_lock_irqsave(&end->lock, flags);
	if (!end->running) {
		spin_unlock_irqrestore(&end->lock, flags);
		return;
	}
	end->rx_drain = true;
	spin_unlock_irqrestore(&end->lock, flags);
	tbr_rail_post_rx(end->rail);
	spin_lock_irqsave(&end->lock, flags);
	end->rx_drain = false;
	spin_unlock_irqrestore(&end->lock, flags);
	queue_work(emu_wq, &end->peer->work);
}

static enum hrtimer_restart emu_rx_timer(struct hrtimer *timer)
{
	struct emu_end *end = container_of(timer, struct emu_end, rx_timer);

	queue_work(emu_wq, &end->rx_work);
	return HRTIMER_NORESTART;
}

/* ---- rail ops ----------------------------------------------------------- */

static int emu_tx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct emu_end *end = rail->priv;
	unsigned long flags;

	if (!f->size || f->size > TBR_FRAME_SIZE_MAX)
		return -EINVAL;
	spin_lock_irqsave(&end->lock, flags);
	if (!end->running) {
		spin_unlock_irqrestore(&end->lock, flags);
		return -ESHUTDOWN;
	}
	if (end->txn >= end->depth) {
		spin_unlock_irqrestore(&end->lock, flags);
		return -ENOBUFS;
	}
	f->bk_time = ktime_get_ns() + (u64)end->fault.delay_us * NSEC_PER_USEC;
	list_add_tail(&f->list, &end->txq);
	end->txn++;
	spin_unlock_irqrestore(&end->lock, flags);
	queue_work(emu_wq, &end->work);
	return 0;
}

static int emu_rx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct emu_end *end = rail->priv;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&end->lock, flags);
	if (!end->running) {
		err = -ESHUTDOWN;
	} else if (end->rxn >= end->depth) {
		err = -ENOBUFS;
	} else if (end->fault.rx_hold_us && !end->rx_drain) {
		/* a slow receiver: parked by the rail layer until the next drain */
		if (!hrtimer_is_queued(&end->rx_timer))
			hrtimer_start(&end->rx_timer,
				      ns_to_ktime(ktime_get_ns() +
						  (u64)end->fault.rx_hold_us * NSEC_PER_USEC),
				      HRTIMER_MODE_ABS);
		err = -EAGAIN;
	} else {
		list_add_tail(&f->list, &end->rxq);
		end->rxn++;
	}
	spin_unlock_irqrestore(&end->lock, flags);
	return err;
}

static struct emu_pair *emu_pair_of(struct emu_end *end)
{
	return end->pair;
}

static int emu_set_fault(struct tbr_rail *rail, const struct tbr_rail_fault *fault,
			 bool one_way)
{
	struct emu_pair *pair = emu_pair_of(rail->priv);
	unsigned long flags;
	int i;

	for (i = 0; i < 2; i++) {
		struct emu_end *e = &pair->end[i];
		bool running;

		if (one_way && e != rail->priv)
			continue;
		spin_lock_irqsave(&e->lock, flags);
		e->fault = *fault;
		e->busy_until = 0;
		running = e->running;
		spin_unlock_irqrestore(&e->lock, flags);
		if (running) {	/* new timing applies to what is queued */
			queue_work(emu_wq, &e->work);
			queue_work(emu_wq, &e->rx_work);	/* parked buffers */
		}
	}
	return 0;
}

static void emu_get_fault(struct tbr_rail *rail, struct tbr_rail_fault *fault)
{
	struct emu_end *end = rail->priv;
	unsigned long flags;

	spin_lock_irqsave(&end->lock, flags);
	*fault = end->fault;
	spin_unlock_irqrestore(&end->lock, flags);
}

/* Stop both ends and complete everything posted on them as canceled. */
static void emu_pair_stop(struct emu_pair *pair)
{
	struct tbr_frame *f, *tmp;
	unsigned long flags;
	LIST_HEAD(tx);
	LIST_HEAD(rx);
	int i;

	for (i = 0; i < 2; i++) {
		spin_lock_irqsave(&pair->end[i].lock, flags);
		pair->end[i].running = false;
		spin_unlock_irqrestore(&pair->end[i].lock, flags);
	}
	/* nothing re-arms once running is false (checked under the lock) */
	/* a drain under way may still kick the peer's wire: drains first */
	for (i = 0; i < 2; i++) {
		hrtimer_cancel(&pair->end[i].rx_timer);
		cancel_work_sync(&pair->end[i].rx_work);
	}
	for (i = 0; i < 2; i++) {
		hrtimer_cancel(&pair->end[i].timer);
		cancel_work_sync(&pair->end[i].work);
	}
	for (i = 0; i < 2; i++) {
		struct emu_end *e = &pair->end[i];

		spin_lock_irqsave(&e->lock, flags);
		list_splice_init(&e->txq, &tx);
		list_splice_init(&e->rxq, &rx);
		e->txn = 0;
		e->rxn = 0;
		spin_unlock_irqrestore(&e->lock, flags);

		local_bh_disable();
		list_for_each_entry_safe(f, tmp, &tx, list) {
			list_del(&f->list);
			f->flags = TBR_FRAME_CANCELED;
			f->callback(e->rail, f, true);
		}
		list_for_each_entry_safe(f, tmp, &rx, list) {
			list_del(&f->list);
			f->flags = TBR_FRAME_CANCELED;
			f->callback(e->rail, f, true);
		}
		local_bh_enable();
	}
}

static void emu_pair_start(struct emu_pair *pair)
{
	unsigned long flags;
	int i;

	for (i = 0; i < 2; i++) {
		spin_lock_irqsave(&pair->end[i].lock, flags);
		pair->end[i].running = true;
		pair->end[i].busy_until = 0;
		spin_unlock_irqrestore(&pair->end[i].lock, flags);
	}
	/* both RX rings filled before either end is announced up */
	for (i = 0; i < 2; i++)
		tbr_rail_post_rx(pair->end[i].rail);
	for (i = 0; i < 2; i++)
		tbr_rail_up(pair->end[i].rail);
}

static int emu_set_cut(struct tbr_rail *rail, bool cut)
{
	struct emu_pair *pair = emu_pair_of(rail->priv);
	int i;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (cut == pair->cut)
		return 0;
	pair->cut = cut;
	if (cut) {
		emu_pair_stop(pair);
		for (i = 0; i < 2; i++)
			tbr_rail_down(pair->end[i].rail);
	} else {
		emu_pair_start(pair);
	}
	return 0;
}

/* RAIL_GET: the fault knobs and the cut state. tbr_ctl_mutex held. */
static int emu_fill_info(struct tbr_rail *rail, struct sk_buff *msg)
{
	struct tbr_rail_fault fault;

	emu_get_fault(rail, &fault);
	if (nla_put_u32(msg, TBRDMA_ATTR_DROP_PPM, fault.drop_ppm) ||
	    nla_put_u32(msg, TBRDMA_ATTR_DUP_PPM, fault.dup_ppm) ||
	    nla_put_u32(msg, TBRDMA_ATTR_REORDER, fault.reorder) ||
	    nla_put_u32(msg, TBRDMA_ATTR_DELAY_US, fault.delay_us) ||
	    nla_put_u64_64bit(msg, TBRDMA_ATTR_RATE_BPS, fault.rate_bps,
			      TBRDMA_ATTR_PAD) ||
	    nla_put_u32(msg, TBRDMA_ATTR_RX_HOLD_US, fault.rx_hold_us) ||
	    nla_put_u8(msg, TBRDMA_ATTR_CUT_STATE, emu_pair_of(rail->priv)->cut))
		return -EMSGSIZE;
	return 0;
}

static const struct tbr_rail_ops emu_rail_ops = {
	.tx = emu_tx,
	.rx = emu_rx,
	.set_fault = emu_set_fault,
	.get_fault = emu_get_fault,
	.set_cut = emu_set_cut,
};


/* ---- cables ------------------------------------------------------------- */

static void emu_end_init(struct emu_pair *pair, int i, u32 depth)
{
	struct emu_end *e = &pair->end[i];

	e->pair = pair;
	e->peer = &pair->end[!i];
	spin_lock_init(&e->lock);
	INIT_LIST_HEAD(&e->txq);
	INIT_LIST_HEAD(&e->rxq);
	e->depth = depth;
	INIT_WORK(&e->work, emu_work);
	hrtimer_init(&e->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	e->timer.function = emu_timer;
	INIT_WORK(&e->rx_work, emu_rx_work);
	hrtimer_init(&e->rx_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	e->rx_timer.function = emu_rx_timer;
}

static void emu_cable_free(struct emu_cable *c)
{
	u32 r;
	int i;

	for (r = 0; r < c->nrails; r++) {
		struct emu_pair *pair = &c->pair[r];

		emu_pair_stop(pair);	/* also when cut: no work may be left */
		for (i = 0; i < 2; i++)
			if (pair->end[i].rail)
				tbr_rail_down(pair->end[i].rail);
		for (i = 0; i < 2; i++)
			if (pair->end[i].rail)
				tbr_rail_remove(pair->end[i].rail);
	}
	kfree(c);
}

/*
 * @claim: nonzero, the GUID @b presents to @a on this cable instead of its
 * own (test only: a neighbour claiming another host's identity).
 */
static int emu_cable_new(struct tbr_dev *a, struct tbr_dev *b, u32 rails,
			 u32 depth, u64 claim, u32 *id)
{
	struct emu_cable *c;
	struct tbr_rail *rail;
	u32 r;
	int i;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (a == b || !rails || rails > TBR_LINK_MAX_RAILS)
		return -EINVAL;
	c = kzalloc(struct_size(c, pair, rails), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->dev[0] = a;
	c->dev[1] = b;
	for (r = 0; r < rails; r++) {
		struct emu_pair *pair = &c->pair[r];

		emu_end_init(pair, 0, depth);
		emu_end_init(pair, 1, depth);
		c->nrails = r + 1;
		for (i = 0; i < 2; i++) {
			rail = tbr_rail_add(c->dev[i], i == 0 && claim ? claim :
					    tbr_dev_guid(c->dev[!i]),
					    &tbr_emu_backend, &pair->end[i], depth, depth);
			if (IS_ERR(rail)) {
				pair->cut = true;	/* never started */
				emu_cable_free(c);
				return PTR_ERR(rail);
			}
			pair->end[i].rail = rail;
			/* both ends run this module */
			tbr_rail_set_peer_feat(rail, TBR_PEER_FEAT_ALL);
		}
	}
	for (r = 0; r < rails; r++)
		emu_pair_start(&c->pair[r]);
	c->id = ++emu_next_id;
	list_add_tail(&c->node, &emu_cables);
	*id = c->id;
	return 0;
}

static int emu_cable_del(u32 id)
{
	struct emu_cable *c;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(c, &emu_cables, node) {
		if (c->id == id) {
			list_del(&c->node);
			emu_cable_free(c);
			return 0;
		}
	}
	return -ENOENT;
}

/* The device goes: its cables go. tbr_ctl_mutex held. */
static void emu_dev_gone(struct tbr_dev *tdev)
{
	struct emu_cable *c, *tmp;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry_safe(c, tmp, &emu_cables, node) {
		if (c->dev[0] == tdev || c->dev[1] == tdev) {
			list_del(&c->node);
			emu_cable_free(c);
		}
	}
}

static int emu_init(void)
{
	emu_wq = alloc_workqueue("tbrdma_emu", WQ_HIGHPRI, 0);
	return emu_wq ? 0 : -ENOMEM;
}

static void emu_exit(void)
{
	destroy_workqueue(emu_wq);
}

/* ---- genl commands (docs/netlink.md) -------------------------------------- */

static int emu_nl_cable_new(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_dev *a, *b;
	struct sk_buff *msg;
	u32 id, rails, depth = 128;
	u64 claim = 0;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_RAIL_COUNT))
		return -EINVAL;
	rails = nla_get_u32(info->attrs[TBRDMA_ATTR_RAIL_COUNT]);
	if (info->attrs[TBRDMA_ATTR_DEPTH])
		depth = nla_get_u32(info->attrs[TBRDMA_ATTR_DEPTH]);
	if (info->attrs[TBRDMA_ATTR_PEER_GUID])	/* test only, see emu_cable_new */
		claim = nla_get_u64(info->attrs[TBRDMA_ATTR_PEER_GUID]);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&tbr_ctl_mutex);
	a = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	b = IS_ERR(a) ? a : tbr_nl_dev(info, TBRDMA_ATTR_PEER_DEV_NAME);
	if (IS_ERR(b)) {
		err = PTR_ERR(b);
		goto out;
	}
	if (a == b) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TBRDMA_ATTR_PEER_DEV_NAME],
				    "a cable joins two different devices");
		err = -EINVAL;
		goto out;
	}
	if (claim && (claim == tbr_dev_guid(a) || claim == tbr_dev_guid(b))) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TBRDMA_ATTR_PEER_GUID],
				    "a claimed GUID is another host's");
		err = -EINVAL;
		goto out;
	}
	err = emu_cable_new(a, b, rails, depth, claim, &id);
	if (err == -ENOSPC) {
		GENL_SET_ERR_MSG(info, "too many rails between these devices");
		goto out;
	} else if (err) {
		GENL_SET_ERR_MSG(info, "creating the cable failed");
		goto out;
	}
	hdr = tbr_nl_reply_put(msg, info, TBRDMA_CMD_EMU_CABLE_NEW);
	if (hdr && !nla_put_u32(msg, TBRDMA_ATTR_CABLE_ID, id)) {
		genlmsg_end(msg, hdr);
		genlmsg_reply(msg, info);
		msg = NULL;
	}
out:
	mutex_unlock(&tbr_ctl_mutex);
	nlmsg_free(msg);
	return err;
}

static int emu_nl_cable_del(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_CABLE_ID))
		return -EINVAL;
	mutex_lock(&tbr_ctl_mutex);
	err = emu_cable_del(nla_get_u32(info->attrs[TBRDMA_ATTR_CABLE_ID]));
	if (err)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TBRDMA_ATTR_CABLE_ID],
				    "no such cable");
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

static int emu_nl_cable_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long i = 0;
	struct emu_cable *c;
	void *hdr;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry(c, &emu_cables, node) {
		if (i++ < cb->args[0])
			continue;
		hdr = tbr_nl_msg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				     NLM_F_MULTI, TBRDMA_CMD_EMU_CABLE_GET);
		if (!hdr)
			goto full;
		if (nla_put_u32(skb, TBRDMA_ATTR_CABLE_ID, c->id) ||
		    nla_put_string(skb, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(c->dev[0])) ||
		    nla_put_string(skb, TBRDMA_ATTR_PEER_DEV_NAME, tbr_dev_name(c->dev[1])) ||
		    nla_put_u32(skb, TBRDMA_ATTR_RAIL_COUNT, c->nrails)) {
			genlmsg_cancel(skb, hdr);
			goto full;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = i;
	}
	mutex_unlock(&tbr_ctl_mutex);
	return 0;	/* complete: see "Dumps" in ctl/netlink.c */
full:
	mutex_unlock(&tbr_ctl_mutex);
	return skb->len;
}

static const struct genl_small_ops emu_nl_ops[] = {
	{
		.cmd = TBRDMA_CMD_EMU_CABLE_NEW,
		.doit = emu_nl_cable_new,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_EMU_CABLE_DEL,
		.doit = emu_nl_cable_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_EMU_CABLE_GET,
		.dumpit = emu_nl_cable_get_dumpit,
	},
};

static const struct tbr_backend_ctl emu_ctl = {
	.nl_ops = emu_nl_ops,
	.n_nl_ops = ARRAY_SIZE(emu_nl_ops),
	.fill_rail = emu_fill_info,
};

const struct tbr_backend tbr_emu_backend = {
	.kind = "emu",
	.rail_ops = &emu_rail_ops,
	.init = emu_init,
	.dev_gone = emu_dev_gone,
	.exit = emu_exit,
	.ctl = &emu_ctl,
};
