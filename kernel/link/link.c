// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the link layer. Links (one per peer GUID) holding rails,
 * receive demultiplexing (transport frames to the transport, every other
 * code to the observers), counters, and the
 * observer list (netlink, sysfs, tbrN hear of links, rails and carrier
 * through it). The interfaces and their contexts are described in link.h
 * (transport, observers) and rail.h (backends). A link that comes up
 * claiming a host the forwarding table reaches through another neighbour is
 * held (enum tbr_link_trust in link.h, docs/sweep.md "Trust"). The transmit
 * side is tx.c, the choice of a rail for a frame stripe.c.
 *
 * Locks: tbr_ctl_mutex (process) serializes all control-plane changes:
 * device list, link list, rail add/remove/up/down. link->lock (a spinlock
 * taken with IRQs saved, since the transport may transmit with IRQs off)
 * protects the link's rail table, each rail's up flag and frame pools and
 * the round-robin cursor. Backend locks nest inside link->lock (ops->tx and
 * ops->rx are called with it held); callbacks from backends come with no
 * backend lock held. Links are found under RCU and freed after a grace
 * period, so tbr_link_get_*() work from any context.
 */
#include <linux/completion.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "link/route.h"

DEFINE_MUTEX(tbr_ctl_mutex);

static unsigned int rail_remove_ms = 5000;
module_param(rail_remove_ms, uint, 0644);
MODULE_PARM_DESC(rail_remove_ms, "ms a rail removal waits for TX frames a transport still holds (10..60000); then the rail is unlisted and its memory leaked");
static bool fault_rail_stuck;
module_param(fault_rail_stuck, bool, 0600);
MODULE_PARM_DESC(fault_rail_stuck, "test only: the next rail removal finds a TX frame that never comes back (one shot)");

/* ---- observers ---------------------------------------------------------- */

/* Changed under tbr_ctl_mutex, read under it or (rx) under RCU. */
static LIST_HEAD(tbr_observers);

void tbr_link_observer_add(struct tbr_link_observer *obs)
{
	mutex_lock(&tbr_ctl_mutex);
	list_add_tail_rcu(&obs->node, &tbr_observers);
	mutex_unlock(&tbr_ctl_mutex);
}

void tbr_link_observer_del(struct tbr_link_observer *obs)
{
	mutex_lock(&tbr_ctl_mutex);
	list_del_rcu(&obs->node);
	mutex_unlock(&tbr_ctl_mutex);
	synchronize_rcu();
}

/* tbr_ctl_mutex held: NEW, UP, DOWN in registration order, DEL reversed. */
#define tbr_obs_for_each(obs, ev)					\
	for (obs = (ev) == TBR_OBS_DEL ?					\
		list_last_entry(&tbr_observers, typeof(*obs), node) :	\
		list_first_entry(&tbr_observers, typeof(*obs), node);	\
	     &obs->node != &tbr_observers;				\
	     obs = (ev) == TBR_OBS_DEL ? list_prev_entry(obs, node) :	\
		list_next_entry(obs, node))

void tbr_link_notify_dev(struct tbr_dev *tdev, enum tbr_obs_event ev)
{
	struct tbr_link_observer *obs;

	lockdep_assert_held(&tbr_ctl_mutex);
	tbr_obs_for_each(obs, ev)
		if (obs->dev_event)
			obs->dev_event(tdev, ev);
}

static void tbr_notify_link(struct tbr_link *link, enum tbr_obs_event ev)
{
	struct tbr_link_observer *obs;

	tbr_obs_for_each(obs, ev)
		if (obs->link_event)
			obs->link_event(link, ev);
}

static void tbr_notify_rail(struct tbr_rail *rail, enum tbr_obs_event ev)
{
	struct tbr_link_observer *obs;

	tbr_obs_for_each(obs, ev)
		if (obs->rail_event)
			obs->rail_event(rail, ev);
}

static void tbr_notify_carrier(struct tbr_dev *tdev, bool on)
{
	struct tbr_link_observer *obs;

	list_for_each_entry(obs, &tbr_observers, node)
		if (obs->carrier)
			obs->carrier(tdev, on);
}

/* Context "bh". */
void tbr_notify_rx(struct tbr_rail *rail, u64 src, u8 pdf, const void *data, u32 len)
{
	struct tbr_link_observer *obs;

	rcu_read_lock();
	list_for_each_entry_rcu(obs, &tbr_observers, node)
		if (obs->rx)
			obs->rx(rail, src, pdf, data, len);
	rcu_read_unlock();
}

/* Context "bh". */
void tbr_notify_tx_ready(struct tbr_link *link)
{
	struct tbr_link_observer *obs;

	rcu_read_lock();
	list_for_each_entry_rcu(obs, &tbr_observers, node)
		if (obs->tx_ready)
			obs->tx_ready(link);
	rcu_read_unlock();
}

/* ---- counters ---------------------------------------------------------- */

void tbr_link_count(struct tbr_link *link, enum tbr_cnt c, u64 n)
{
	atomic64_add(n, &link->cnt[c]);
	atomic64_add(n, &link->tdev->rails.cnt[c]);
}

void tbr_rail_count(struct tbr_rail *rail, enum tbr_cnt c, u64 n)
{
	atomic64_add(n, &rail->cnt[c]);
	tbr_link_count(rail->link, c, n);
}

/* ---- links ------------------------------------------------------------- */

static void tbr_link_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct tbr_link, rcu));
}

static void tbr_link_release(struct kref *ref)
{
	struct tbr_link *link = container_of(ref, struct tbr_link, ref);

	call_rcu(&link->rcu, tbr_link_free_rcu);
}

void tbr_link_hold(struct tbr_link *link)
{
	kref_get(&link->ref);
}

void tbr_link_put(struct tbr_link *link)
{
	kref_put(&link->ref, tbr_link_release);
}

struct tbr_link *tbr_link_get_by_guid(struct tbr_dev *tdev, u64 peer_guid)
{
	struct tbr_link *link, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(link, &tdev->rails.links, node) {
		if (link->peer_guid == peer_guid &&
		    kref_get_unless_zero(&link->ref)) {
			found = link;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

struct tbr_link *tbr_link_get_route(struct tbr_dev *tdev, u64 guid)
{
	const struct tbr_link_router *router = READ_ONCE(tdev->rails.router);
	struct tbr_link *link = tbr_link_get_by_guid(tdev, guid), *rl;

	if (link && tbr_link_in_use(link))
		return link;
	/*
	 * no cable, or its rails are down (a cut in a ring), or it is held
	 * (it claims a host the fabric reaches elsewhere): the long way
	 */
	rl = router ? router->link_get(tdev, guid) : NULL;
	if (link && (rl || READ_ONCE(link->trust) != TBR_TRUST_USED)) {
		tbr_link_put(link);
		link = NULL;
	}
	return rl ?: link;
}

struct tbr_link *tbr_link_get_by_id(struct tbr_dev *tdev, u32 id)
{
	struct tbr_link *link, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(link, &tdev->rails.links, node) {
		if (link->id == id && kref_get_unless_zero(&link->ref)) {
			found = link;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* tbr_ctl_mutex held. Returns the link (list reference, not a new one). */
static struct tbr_link *tbr_link_lookup_or_create(struct tbr_dev *tdev,
						  u64 peer_guid)
{
	struct tbr_link *link;

	list_for_each_entry(link, &tdev->rails.links, node)
		if (link->peer_guid == peer_guid)
			return link;
	link = kzalloc(sizeof(*link), GFP_KERNEL);
	if (!link)
		return ERR_PTR(-ENOMEM);
	link->tdev = tdev;
	link->id = ++tdev->rails.next_link_id;
	link->peer_guid = peer_guid;
	kref_init(&link->ref);		/* the device's list reference */
	spin_lock_init(&link->lock);
	list_add_tail_rcu(&link->node, &tdev->rails.links);
	tbr_notify_link(link, TBR_OBS_NEW);
	return link;
}

bool tbr_link_has_other_backend(struct tbr_dev *tdev, u64 peer_guid,
				const struct tbr_backend *backend)
{
	struct tbr_link *link;
	unsigned int i;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(link, &tdev->rails.links, node) {
		if (link->peer_guid != peer_guid)
			continue;
		for (i = 0; i < TBR_LINK_MAX_RAILS; i++)
			if (link->rails[i] && link->rails[i]->backend != backend)
				return true;
	}
	return false;
}

void tbr_link_set_trust(struct tbr_link *link, enum tbr_link_trust trust)
{
	unsigned long flags;
	bool up;

	lockdep_assert_held(&tbr_ctl_mutex);
	spin_lock_irqsave(&link->lock, flags);
	link->judged = true;	/* a decision stands for the link's life */
	WRITE_ONCE(link->trust, trust);
	up = link->rails_up;
	spin_unlock_irqrestore(&link->lock, flags);
	pr_info("tbrdma: %s link %u to %016llx: %s\n", tbr_dev_name(link->tdev),
		link->id, link->peer_guid, trust == TBR_TRUST_USED ? "confirmed" :
		trust == TBR_TRUST_HELD ? "held" : "rejected");
	if (up)
		tbr_notify_link(link, TBR_OBS_UP);
}

u32 tbr_link_peer_feat(struct tbr_link *link)
{
	u32 i, feat = TBR_PEER_FEAT_ALL, n = 0;
	unsigned long flags;

	if (link->ops)
		return link->ops->peer_feat ? link->ops->peer_feat(link) : 0;
	spin_lock_irqsave(&link->lock, flags);
	for (i = 0; i < TBR_LINK_MAX_RAILS; i++) {
		if (link->rails[i]) {
			feat &= link->rails[i]->peer_feat;
			n++;
		}
	}
	spin_unlock_irqrestore(&link->lock, flags);
	return n ? feat : 0;
}

/* tbr_ctl_mutex held; the link has no rail left. */
static void tbr_link_unlink(struct tbr_link *link)
{
	unsigned long flags;

	spin_lock_irqsave(&link->lock, flags);
	link->gone = true;
	spin_unlock_irqrestore(&link->lock, flags);
	list_del_rcu(&link->node);
	tbr_notify_link(link, TBR_OBS_DEL);
	tbr_link_put(link);
}

/* ---- upper layer (transport) hooks -------------------------------------- */

void tbr_rails_set_upper(struct tbr_dev *tdev,
			 const struct tbr_link_upper_ops *ops, void *ctx)
{
	if (ops) {
		tdev->rails.upper_ctx = ctx;
		rcu_assign_pointer(tdev->rails.upper, ops);
	} else {
		RCU_INIT_POINTER(tdev->rails.upper, NULL);
		synchronize_rcu();
		tdev->rails.upper_ctx = NULL;
	}
}

/* tbr_ctl_mutex held, so the hooks cannot change meanwhile. */
static void tbr_upper_link_change(struct tbr_link *link, unsigned int up)
{
	struct tbr_dev *tdev = link->tdev;
	const struct tbr_link_upper_ops *ops;

	ops = rcu_dereference_protected(tdev->rails.upper,
					lockdep_is_held(&tbr_ctl_mutex));
	if (ops && ops->link_change)
		ops->link_change(tdev->rails.upper_ctx, link, up);
}

/* ---- carrier ------------------------------------------------------------ */

/* tbr_ctl_mutex held */
static void tbr_dev_rails_changed(struct tbr_dev *tdev, int delta)
{
	unsigned int before = tdev->rails.rails_up;

	tdev->rails.rails_up += delta;
	if (!before != !tdev->rails.rails_up)
		tbr_notify_carrier(tdev, tdev->rails.rails_up);
}

/* ---- receive ------------------------------------------------------------ */

static void tbr_rx_done(struct tbr_rail *rail, struct tbr_frame *f, bool canceled);

/* link->lock held. Re-post or park one RX frame (at @now, ring occupancy). */
static void tbr_rx_post_locked(struct tbr_rail *rail, struct tbr_frame *f,
			       u64 now)
{
	f->callback = tbr_rx_done;
	f->size = TBR_FRAME_SIZE_MAX;
	f->flags = 0;
	if (!rail->up_rx || rail->ops->rx(rail, f)) {
		list_add_tail(&f->list, &rail->rx_idle);
		return;
	}
	rail->rx_posted++;
	tbr_rail_rx_acct_locked(rail, now);
}

/*
 * A received frame of @size bytes at @buf (an RX frame's buffer, or a
 * backend's own memory, tbr_rail_rx_data()): up to its reader by PDF.
 * Context "bh"; the readers may write the frame (the backend hands it
 * only if it is its own: eth, tbe_rx_inplace()); the router only reads it.
 */
static void tbr_rx_dispatch(struct tbr_rail *rail, void *buf, u32 size,
			    u8 eof, u8 flags)
{
	struct tbr_link *link = rail->link;
	const struct tbr_link_upper_ops *ops;
	const struct tbr_link_router *router;

	if ((flags & TBR_FRAME_CRC_ERROR) || !size || size > TBR_FRAME_SIZE_MAX) {
		tbr_rail_count(rail, TBR_CNT_RX_ERRORS, 1);
		return;
	}
	if (static_branch_unlikely(&tbr_link_tap_key))
		tbr_tap_rx(rail, eof, buf, size);
	if (unlikely(READ_ONCE(link->trust) != TBR_TRUST_USED)) {
		/* held: not to a QP, tbrN, tbrdmad or the next hop */
		tbr_rail_count(rail, TBR_CNT_HELD_DROPS, 1);
		return;
	}
	switch (eof) {
	case TBR_PDF_DATA:
		rcu_read_lock();
		ops = rcu_dereference(link->tdev->rails.upper);
		if (ops && ops->rx) {
			tbr_rail_count(rail, TBR_CNT_RX_FRAMES, 1);
			tbr_rail_count(rail, TBR_CNT_RX_BYTES, size);
			ops->rx(link->tdev->rails.upper_ctx, link, buf, size);
		} else {
			tbr_rail_count(rail, TBR_CNT_RX_ERRORS, 1);
		}
		rcu_read_unlock();
		break;
	case TBR_PDF_MGMT:
		tbr_rail_count(rail, TBR_CNT_MGMT_RX, 1);
		fallthrough;
	case TBR_PDF_NET:
	case TBR_PDF_NETX:
		tbr_rail_count(rail, TBR_CNT_RX_FRAMES, 1);
		tbr_rail_count(rail, TBR_CNT_RX_BYTES, size);
		tbr_notify_rx(rail, link->peer_guid, eof, buf, size);
		break;
	case TBR_PDF_ROUTED:
		tbr_rail_count(rail, TBR_CNT_RX_FRAMES, 1);
		tbr_rail_count(rail, TBR_CNT_RX_BYTES, size);
		router = READ_ONCE(link->tdev->rails.router);
		if (router)
			router->rx(rail, buf, size);
		else
			tbr_rail_count(rail, TBR_CNT_RX_ERRORS, 1);
		break;
	default:
		tbr_rail_count(rail, TBR_CNT_RX_ERRORS, 1);
		break;
	}
}

/*
 * Context "bh": @f read, or @f's reception stood for one (tbr_rail_rx_data);
 * the backend gave it back at @back (ring occupancy: not posted since).
 */
static void tbr_rx_repost(struct tbr_rail *rail, struct tbr_frame *f, u64 back)
{
	struct tbr_link *link = rail->link;
	unsigned long flags;

	spin_lock_irqsave(&link->lock, flags);
	rail->rx_posted--;
	tbr_rail_rx_acct_locked(rail, back);
	tbr_rx_post_locked(rail, f, ktime_get_ns());
	spin_unlock_irqrestore(&link->lock, flags);
}

static void tbr_rx_done(struct tbr_rail *rail, struct tbr_frame *f, bool canceled)
{
	struct tbr_link *link = rail->link;
	u64 now = ktime_get_ns();
	unsigned long flags;

	if (canceled || (f->flags & TBR_FRAME_CANCELED)) {
		spin_lock_irqsave(&link->lock, flags);
		rail->rx_posted--;
		tbr_rail_rx_acct_locked(rail, now);
		list_add_tail(&f->list, &rail->rx_idle);
		spin_unlock_irqrestore(&link->lock, flags);
		return;
	}
	tbr_rx_dispatch(rail, f->buf, f->size, f->eof, f->flags);
	tbr_rx_repost(rail, f, now);
}

void tbr_rail_rx_data(struct tbr_rail *rail, struct tbr_frame *f, void *data,
		      u32 size, u8 eof)
{
	u64 now = ktime_get_ns();

	tbr_rx_dispatch(rail, data, size, eof, 0);
	tbr_rx_repost(rail, f, now);
}

void tbr_rail_rx_recycle(struct tbr_rail *rail, struct tbr_frame *f)
{
	tbr_rx_repost(rail, f, ktime_get_ns());
}

/* ---- rails (backend side) ---------------------------------------------- */

struct tbr_rail *tbr_rail_add(struct tbr_dev *tdev, u64 peer_guid,
			      const struct tbr_backend *backend, void *priv,
			      u32 tx_depth, u32 rx_depth)
{
	struct tbr_link *link;
	struct tbr_rail *rail;
	unsigned long flags;
	unsigned int slot;
	int err;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (!tx_depth || !rx_depth || tdev->rails.dying)
		return ERR_PTR(-EINVAL);
	link = tbr_link_lookup_or_create(tdev, peer_guid);
	if (IS_ERR(link))
		return ERR_CAST(link);
	for (slot = 0; slot < TBR_LINK_MAX_RAILS; slot++)
		if (!link->rails[slot])
			break;
	if (slot == TBR_LINK_MAX_RAILS) {
		err = -ENOSPC;
		goto err_link;
	}
	rail = kzalloc(sizeof(*rail), GFP_KERNEL);
	if (!rail) {
		err = -ENOMEM;
		goto err_link;
	}
	rail->link = link;
	rail->id = slot;
	rail->backend = backend;
	rail->ops = backend->rail_ops;
	rail->priv = priv;
	rail->tx_depth = tx_depth;
	rail->rx_depth = rx_depth;
	rail->max_frame = TBR_FRAME_SIZE_MAX;
	rail->tx_max = TBR_FRAME_SIZE_MAX;
	INIT_LIST_HEAD(&rail->tx_pool);
	INIT_LIST_HEAD(&rail->rx_idle);
	init_completion(&rail->tx_idle);
	err = tbr_rail_alloc_frames(rail);
	if (err)
		goto err_free;

	spin_lock_irqsave(&link->lock, flags);
	link->rails[slot] = rail;
	link->nrails++;
	spin_unlock_irqrestore(&link->lock, flags);
	tbr_notify_rail(rail, TBR_OBS_NEW);
	return rail;

err_free:
	tbr_rail_free_frames(rail);
	kfree(rail);
err_link:
	if (!link->nrails)
		tbr_link_unlink(link);
	return ERR_PTR(err);
}

void tbr_rail_set_max_frame(struct tbr_rail *rail, u32 max_frame, u32 tx_max)
{
	unsigned long flags;

	lockdep_assert_held(&tbr_ctl_mutex);
	max_frame = clamp_t(u32, max_frame, 1, TBR_FRAME_SIZE_MAX);
	spin_lock_irqsave(&rail->link->lock, flags);
	rail->max_frame = max_frame;
	rail->tx_max = clamp_t(u32, tx_max, max_frame, TBR_FRAME_SIZE_MAX);
	spin_unlock_irqrestore(&rail->link->lock, flags);
}

void tbr_rail_set_peer_feat(struct tbr_rail *rail, u32 feat)
{
	unsigned long flags;

	lockdep_assert_held(&tbr_ctl_mutex);
	spin_lock_irqsave(&rail->link->lock, flags);
	rail->peer_feat = feat & TBR_PEER_FEAT_ALL;
	spin_unlock_irqrestore(&rail->link->lock, flags);
}

/* Post every parked RX buffer; the rail's rings must be running. */
void tbr_rail_post_rx(struct tbr_rail *rail)
{
	struct tbr_link *link = rail->link;
	struct tbr_frame *f, *tmp;
	unsigned long flags;
	LIST_HEAD(idle);

	spin_lock_irqsave(&link->lock, flags);
	rail->up_rx = true;
	list_splice_init(&rail->rx_idle, &idle);
	list_for_each_entry_safe(f, tmp, &idle, list) {
		list_del(&f->list);
		tbr_rx_post_locked(rail, f, ktime_get_ns());
	}
	spin_unlock_irqrestore(&link->lock, flags);
}

/*
 * tbr_ctl_mutex held (the table cannot change meanwhile): whether a link to
 * @guid coming up now claims a host the forwarding table reaches through
 * another neighbour (route.c made a routed link for it: hops > 1).
 */
static bool tbr_link_claims_routed(struct tbr_dev *tdev, u64 guid)
{
	const struct tbr_link_router *router = READ_ONCE(tdev->rails.router);
	struct tbr_link *rl = router ? router->link_get(tdev, guid) : NULL;

	if (!rl)
		return false;
	tbr_link_put(rl);
	return true;
}

void tbr_rail_up(struct tbr_rail *rail)
{
	struct tbr_link *link = rail->link;
	bool judge, held = false;
	unsigned long flags;
	unsigned int up;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (rail->up)
		return;
	judge = !link->judged;
	/* a peer that proved the fabric key for its GUID is never held */
	if (judge && !rail->auth)
		held = tbr_link_claims_routed(link->tdev, link->peer_guid);
	tbr_rail_post_rx(rail);
	spin_lock_irqsave(&link->lock, flags);
	if (judge) {		/* before any frame can go or be taken */
		link->judged = true;
		WRITE_ONCE(link->trust, held ? TBR_TRUST_HELD : TBR_TRUST_USED);
	}
	rail->up = true;
	up = ++link->rails_up;
	tbr_rail_ring_acct_start_locked(rail);
	tbr_stripe_reset(&rail->stripe);	/* a cable may come back at another speed */
	spin_unlock_irqrestore(&link->lock, flags);

	if (held) {
		tbr_link_count(link, TBR_CNT_HELD, 1);
		pr_warn_ratelimited("tbrdma: %s link %u claims GUID %016llx, which the fabric reaches through another neighbour: held until the sweep confirms it\n",
				    tbr_dev_name(link->tdev), link->id,
				    link->peer_guid);
	}
	tbr_dev_rails_changed(link->tdev, 1);
	tbr_notify_rail(rail, TBR_OBS_UP);
	if (up == 1)
		tbr_notify_link(link, TBR_OBS_UP);
	tbr_upper_link_change(link, up);
}

void tbr_rail_down(struct tbr_rail *rail)
{
	struct tbr_link *link = rail->link;
	unsigned long flags;
	unsigned int up;

	lockdep_assert_held(&tbr_ctl_mutex);
	spin_lock_irqsave(&link->lock, flags);
	rail->up_rx = false;
	if (!rail->up) {
		spin_unlock_irqrestore(&link->lock, flags);
		return;
	}
	rail->up = false;
	up = --link->rails_up;
	spin_unlock_irqrestore(&link->lock, flags);

	tbr_dev_rails_changed(link->tdev, -1);
	tbr_notify_rail(rail, TBR_OBS_DOWN);
	if (!up)
		tbr_notify_link(link, TBR_OBS_DOWN);
	tbr_upper_link_change(link, up);
}

/*
 * What a rail whose removal timed out runs on: its backend state is gone, so
 * a frame a transport still sends on it comes straight back (counted lost).
 */
static int tbr_rail_gone_post(struct tbr_rail *rail, struct tbr_frame *f)
{
	return -ESHUTDOWN;
}

static const struct tbr_rail_ops tbr_rail_gone_ops = {
	.tx = tbr_rail_gone_post,
	.rx = tbr_rail_gone_post,
};

void tbr_rail_remove(struct tbr_rail *rail)
{
	struct tbr_link *link = rail->link;
	unsigned long flags, timeout;
	struct tbr_frame *f;
	bool idle;

	lockdep_assert_held(&tbr_ctl_mutex);
	tbr_rail_down(rail);
	timeout = msecs_to_jiffies(clamp(READ_ONCE(rail_remove_ms), 10U, 60000U));
	spin_lock_irqsave(&link->lock, flags);
	if (fault_rail_stuck && rail->tx_free) {
		/* as if a transport had reserved a frame and hung */
		fault_rail_stuck = false;
		f = list_first_entry(&rail->tx_pool, struct tbr_frame, list);
		list_del(&f->list);
		rail->tx_free--;
	}
	rail->removing = true;
	idle = rail->tx_free == rail->tx_depth;
	spin_unlock_irqrestore(&link->lock, flags);
	/* a transport may still hold a reserved frame for a moment */
	if (!idle)
		idle = wait_for_completion_timeout(&rail->tx_idle, timeout);

	spin_lock_irqsave(&link->lock, flags);
	link->rails[rail->id] = NULL;
	link->nrails--;
	if (!idle) {
		/*
		 * The backend frees its state (rail->priv) after this: a late
		 * frame must not reach it, and the link must outlive the rail.
		 */
		WRITE_ONCE(rail->ops, &tbr_rail_gone_ops);
		rail->priv = NULL;
		tbr_link_hold(link);
	}
	spin_unlock_irqrestore(&link->lock, flags);
	tbr_notify_rail(rail, TBR_OBS_DEL);
	if (!idle) {
		/* never free memory a transport still writes into */
		pr_err("tbrdma: %s link %u rail %u: TX frames never returned, leaking the rail\n",
		       tbr_dev_name(link->tdev), link->id, rail->id);
	} else {
		tbr_rail_free_frames(rail);
		kfree(rail);
	}
	if (!link->nrails)
		tbr_link_unlink(link);
}
