// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: forwarding over a multi-hop fabric (docs/protocol.md 7,
 * docs/sweep.md "Routes"). Three parts:
 *
 *  - The forwarding table of a device: destination GUID -> next hop (the
 *    GUID of a neighbour, i.e. a rail link) and hop count, sorted by
 *    destination, replaced whole by tbr_route_set() (generic netlink
 *    ROUTE_SET, from tbrdmad) under RCU: a reader sees one table.
 *  - Routed links: for every destination more than one hop away a struct
 *    tbr_link in no device list (no dump, event or sysfs object) whose
 *    transmit API (struct tbr_link_ops) reserves a frame on the next hop's
 *    rail link, writes the 24-byte routing header in front and sends the
 *    frame with code TBR_PDF_ROUTED. The transport and tbrN find it with
 *    tbr_link_get_route() as they find a neighbour's link, so a QP or an IP
 *    packet to a far host goes the routed way with no other change; the
 *    routed link for the source of a received frame is the @link the
 *    transport sees, so a connected QP accepts frames from its far peer
 *    only. A routed link whose destination leaves the table is gone: the
 *    transport looks again (as after a cable is unplugged).
 *  - Receive (softirq, no trip to user space): a routed frame must come in
 *    on the link the table goes to its source by (reverse-path check) with
 *    a hop limit of at most TBR_ROUTE_HOPS_MAX; then one for us is
 *    delivered (DATA to the transport, NET to tbrN) and one for another
 *    host of the table leaves on the next hop's link, a copy with its hop
 *    limit decremented; every drop is counted on the link it came in on
 *    with its reason.
 *
 * Locks: tbr_ctl_mutex for the table's writers and the routed list; RCU
 * for readers (the table is freed by kvfree_rcu, routed links by their
 * reference count and call_rcu like every link).
 */
#include <linux/mm.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "tbrdma.h"
#include "tbr_trace.h"
#include "link/rail.h"
#include "link/route.h"
#include "core/tbr_route_wire.h"

struct tbr_fwd_table {
	struct rcu_head rcu;
	u32 version;
	u32 n;
	struct tbr_route_entry e[];
};

static_assert(TBR_PDF_ROUTED == TBR_ROUTE_PDF && TBR_PDF_DATA == TBR_ROUTE_INNER_DATA &&
	      TBR_PDF_MGMT == TBR_ROUTE_INNER_MGMT && TBR_PDF_NET == TBR_ROUTE_INNER_NET);

/* ---- lookups ----------------------------------------------------------- */

/* The rail link of the next hop to @dst, with a reference, or NULL. "any" */
static struct tbr_link *tbr_route_next(struct tbr_dev *tdev, u64 dst)
{
	const struct tbr_route_entry *e;
	struct tbr_fwd_table *t;
	u64 next_hop = 0;

	rcu_read_lock();
	t = rcu_dereference(tdev->rails.fwd);
	e = t ? tbr_route_table_find(t->e, t->n, dst) : NULL;
	if (e)
		next_hop = e->next_hop;
	rcu_read_unlock();
	return next_hop ? tbr_link_get_by_guid(tdev, next_hop) : NULL;
}

/* RCU read lock or tbr_ctl_mutex held; no reference taken. */
static struct tbr_link *tbr_route_link_find(struct tbr_dev *tdev, u64 guid)
{
	struct tbr_link *rl;

	list_for_each_entry_rcu(rl, &tdev->rails.routed, node,
				lockdep_is_held(&tbr_ctl_mutex))
		if (rl->peer_guid == guid)
			return rl;
	return NULL;
}

static struct tbr_link *tbr_route_link_get(struct tbr_dev *tdev, u64 guid)
{
	struct tbr_link *rl;

	rcu_read_lock();
	rl = tbr_route_link_find(tdev, guid);
	if (rl && !kref_get_unless_zero(&rl->ref))
		rl = NULL;
	rcu_read_unlock();
	return rl;
}

/* ---- routed links: transmit ------------------------------------------ */

/*
 * Reserve a frame on the next hop towards @rl's host with room for the
 * routing header and @len bytes of an inner frame with code @pdf; returns
 * where the inner frame goes (header written), or an ERR_PTR: -ENETUNREACH
 * (no route, next hop gone), -ENOBUFS (its rings are full: tx_ready
 * follows), -ENETDOWN, -EMSGSIZE.
 */
static void *tbr_route_alloc(struct tbr_link *rl, u8 pdf, u32 len)
{
	struct tbr_route_hdr h = {
		.version = TBR_ROUTE_VERSION,
		.pdf = pdf,
		.hop_limit = TBR_ROUTE_HOPS_MAX,
		.dst = rl->peer_guid,
		.src = tbr_dev_guid(rl->tdev),
	};
	struct tbr_link *next;
	u8 *buf;

	if (!len || len > TBR_FRAME_SIZE_MAX - TBR_ROUTE_HDR_LEN)
		return ERR_PTR(-EMSGSIZE);
	if (READ_ONCE(rl->gone))
		return ERR_PTR(-ENETUNREACH);
	next = tbr_route_next(rl->tdev, rl->peer_guid);
	if (!next)
		return ERR_PTR(-ENETUNREACH);
	buf = tbr_link_tx_alloc(next, len + TBR_ROUTE_HDR_LEN);
	tbr_link_put(next);	/* a reserved frame keeps its rail and link */
	if (IS_ERR(buf)) {
		if (PTR_ERR(buf) == -ENOBUFS)
			WRITE_ONCE(rl->stalled, true);
		return buf;
	}
	tbr_route_hdr_build(buf, &h);
	return buf + TBR_ROUTE_HDR_LEN;
}

static void *tbr_route_tx_alloc(struct tbr_link *rl, u32 len)
{
	return tbr_route_alloc(rl, TBR_PDF_DATA, len);
}

static void tbr_route_tx_send(struct tbr_link *rl, void *buf, u32 len)
{
	tbr_link_tx_send_pdf((u8 *)buf - TBR_ROUTE_HDR_LEN, TBR_PDF_ROUTED,
			     len + TBR_ROUTE_HDR_LEN);
}

static void tbr_route_tx_abort(struct tbr_link *rl, void *buf)
{
	tbr_link_tx_abort_buf((u8 *)buf - TBR_ROUTE_HDR_LEN);
}

static unsigned int tbr_route_tx_credits(struct tbr_link *rl)
{
	struct tbr_link *next = tbr_route_next(rl->tdev, rl->peer_guid);
	unsigned int n = 0;

	if (next) {
		n = tbr_link_tx_credits(next);
		tbr_link_put(next);
	}
	return n;
}

/*
 * What the first hop carries less the routing header (later hops are
 * assumed to carry as much: the fabric's cables are alike, docs/sweep.md).
 */
static u32 tbr_route_max_frame(struct tbr_link *rl)
{
	struct tbr_link *next = tbr_route_next(rl->tdev, rl->peer_guid);
	u32 max = TBR_FRAME_SIZE_MAX;

	if (next) {
		max = tbr_link_max_frame(next);
		tbr_link_put(next);
	}
	return max > TBR_ROUTE_HDR_LEN ? max - TBR_ROUTE_HDR_LEN : 1;
}

/* IP (tbrN) and management datagrams to a far host */
static int tbr_route_xmit(struct tbr_link *rl, u8 pdf, const void *data, u32 len)
{
	void *buf;

	if (pdf != TBR_PDF_NET && pdf != TBR_PDF_MGMT)
		return -EINVAL;
	buf = tbr_route_alloc(rl, pdf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	memcpy(buf, data, len);
	tbr_route_tx_send(rl, buf, len);
	return 0;
}

static const struct tbr_link_ops tbr_route_link_ops = {
	.tx_alloc = tbr_route_tx_alloc,
	.tx_send = tbr_route_tx_send,
	.tx_abort = tbr_route_tx_abort,
	.tx_credits = tbr_route_tx_credits,
	.max_frame = tbr_route_max_frame,
	.xmit = tbr_route_xmit,
};

static void tbr_route_tx_ready(struct tbr_link *link)
{
	struct tbr_dev *tdev = link->tdev;
	const struct tbr_link_upper_ops *ops;
	struct tbr_link *rl;

	rcu_read_lock();
	ops = rcu_dereference(tdev->rails.upper);
	list_for_each_entry_rcu(rl, &tdev->rails.routed, node) {
		/* (any routed link: a spurious wake-up costs one retry) */
		if (!READ_ONCE(rl->stalled))
			continue;
		WRITE_ONCE(rl->stalled, false);
		if (ops && ops->tx_ready)
			ops->tx_ready(tdev->rails.upper_ctx, rl);
	}
	rcu_read_unlock();
}

/* ---- receive ------------------------------------------------------------ */

/*
 * The reverse-path check (tbr_route_rpf()): did the routed frame from @src
 * come in on @link, the way this device's table goes to @src (or from @src
 * itself)? Context "bh".
 */
static bool tbr_route_from_src(struct tbr_link *link, u64 src)
{
	struct tbr_fwd_table *t;
	bool ok;

	rcu_read_lock();
	t = rcu_dereference(link->tdev->rails.fwd);
	ok = tbr_route_rpf(t ? t->e : NULL, t ? t->n : 0, src, link->peer_guid);
	rcu_read_unlock();
	return ok;
}

/* A routed frame for us from @h->src: @data is the inner frame. */
static void tbr_route_deliver(struct tbr_rail *rail, const struct tbr_route_hdr *h,
			      const void *data, u32 len)
{
	struct tbr_link *link = rail->link, *rl;
	struct tbr_dev *tdev = link->tdev;
	const struct tbr_link_upper_ops *ops;

	rcu_read_lock();
	rl = tbr_route_link_find(tdev, h->src);
	if (!rl || READ_ONCE(rl->gone)) {
		/* no route back: a connection could not answer, IP neither */
		tbr_link_count(link, TBR_CNT_FWD_DROP_NOROUTE, 1);
		goto out;
	}
	tbr_link_count(link, TBR_CNT_ROUTED_RX, 1);
	switch (h->pdf) {
	case TBR_PDF_DATA:
		ops = rcu_dereference(tdev->rails.upper);
		if (ops && ops->rx)
			ops->rx(tdev->rails.upper_ctx, rl, data, len);
		else
			tbr_link_count(link, TBR_CNT_RX_ERRORS, 1);
		break;
	case TBR_PDF_NET:
		tbr_notify_rx(rail, h->src, TBR_PDF_NET, data, len);
		break;
	default:
		/* management datagrams travel neighbour to neighbour only */
		tbr_link_count(link, TBR_CNT_RX_ERRORS, 1);
		break;
	}
out:
	rcu_read_unlock();
}

/*
 * A frame with code TBR_PDF_ROUTED came in on @rail. Context "bh". The
 * frame at @buf is only read: it may be a backend's own memory (an skb's
 * page, tbr_rail_rx_data()), so a frame sent on is a copy in a frame of
 * the next hop, whose hop limit is decremented there.
 */
static void tbr_route_rx(struct tbr_rail *rail, void *buf, u32 len)
{
	struct tbr_link *link = rail->link, *next;
	struct tbr_dev *tdev = link->tdev;
	struct tbr_route_hdr h;
	enum tbr_route_verdict v;
	enum tbr_cnt drop;
	u8 *out;

	if (tbr_route_hdr_parse(buf, len, &h)) {
		tbr_rail_count(rail, TBR_CNT_RX_ERRORS, 1);
		return;
	}
	v = tbr_route_decide(&h, tbr_dev_guid(tdev));
	switch (v) {
	case TBR_ROUTE_LOCAL:
	case TBR_ROUTE_FORWARD:
		break;
	case TBR_ROUTE_DROP_HOPS:
		drop = TBR_CNT_FWD_DROP_HOPS;
		goto drop;
	default:
		drop = TBR_CNT_FWD_DROP_LOOP;
		goto drop;
	}
	/* delivered or forwarded, a frame must come from where its source is */
	if (!tbr_route_from_src(link, h.src)) {
		drop = TBR_CNT_FWD_DROP_RPF;
		goto drop;
	}
	if (v == TBR_ROUTE_LOCAL) {
		tbr_route_deliver(rail, &h, (u8 *)buf + TBR_ROUTE_HDR_LEN,
				  len - TBR_ROUTE_HDR_LEN);
		return;
	}
	/* forwarded for the fabric's hosts only: a destination in the table */
	next = tbr_route_next(tdev, h.dst);
	if (!next) {
		drop = TBR_CNT_FWD_DROP_NOROUTE;
		goto drop;
	}
	if (next == link) {	/* back where it came from: tables disagree */
		tbr_link_put(next);
		drop = TBR_CNT_FWD_DROP_LOOP;
		goto drop;
	}
	out = tbr_link_tx_alloc(next, len);
	if (IS_ERR(out)) {
		tbr_link_put(next);
		drop = PTR_ERR(out) == -ENOBUFS ? TBR_CNT_FWD_DROP_FULL :
						   TBR_CNT_FWD_DROP_NOROUTE;
		goto drop;
	}
	memcpy(out, buf, len);
	tbr_route_hop_dec(out);
	tbr_link_tx_send_pdf(out, TBR_PDF_ROUTED, len);
	tbr_link_count(next, TBR_CNT_FWD, 1);
	tbr_link_put(next);	/* the frame sent keeps its rail and link */
	return;
drop:
	tbr_link_count(link, drop, 1);
}

/* ---- the table (control plane) -------------------------------------- */

static const struct tbr_link_router tbr_router = {
	.rx = tbr_route_rx,
	.tx_ready = tbr_route_tx_ready,
	.link_get = tbr_route_link_get,
};

void tbr_route_init(struct tbr_dev *tdev)
{
	INIT_LIST_HEAD(&tdev->rails.routed);
	WRITE_ONCE(tdev->rails.router, &tbr_router);
}

/* tbr_ctl_mutex held */
static void tbr_route_link_unlink(struct tbr_link *rl)
{
	unsigned long flags;

	spin_lock_irqsave(&rl->lock, flags);
	rl->gone = true;
	spin_unlock_irqrestore(&rl->lock, flags);
	list_del_rcu(&rl->node);
	tbr_link_put(rl);
}

static struct tbr_link *tbr_route_link_new(struct tbr_dev *tdev, u64 guid)
{
	struct tbr_link *rl = kzalloc(sizeof(*rl), GFP_KERNEL);

	if (!rl)
		return NULL;
	rl->tdev = tdev;
	rl->peer_guid = guid;
	kref_init(&rl->ref);		/* the routed list's */
	spin_lock_init(&rl->lock);
	rl->ops = &tbr_route_link_ops;
	return rl;
}

/*
 * Trace every destination whose entry differs between @old and @new (either
 * may be NULL; both sorted by destination). tbr_ctl_mutex held.
 */
static void tbr_route_trace(struct tbr_dev *tdev, const struct tbr_fwd_table *old,
			    const struct tbr_fwd_table *new)
{
	static const struct tbr_route_entry none;
	u32 i = 0, j = 0, no = old ? old->n : 0, nn = new ? new->n : 0;
	const struct tbr_route_entry *a, *b;

	while (i < no || j < nn) {
		a = i < no ? &old->e[i] : NULL;
		b = j < nn ? &new->e[j] : NULL;
		if (a && b && a->dst != b->dst) {
			if (a->dst < b->dst)
				b = NULL;
			else
				a = NULL;
		}
		i += !!a;
		j += !!b;
		if (a && b && a->next_hop == b->next_hop && a->hops == b->hops)
			continue;
		if (!a)
			a = &none;
		if (!b)
			b = &none;
		trace_tbr_route(tbr_dev_name(tdev), new ? new->version : 0,
				a->dst | b->dst, b->next_hop, b->hops,
				a->next_hop, a->hops);
	}
}

int tbr_route_set(struct tbr_dev *tdev, const struct tbr_route_entry *e,
		  u32 n, u32 version)
{
	struct tbr_fwd_table *t, *old;
	struct tbr_link *rl, *tmp;
	const struct tbr_route_entry *x;
	LIST_HEAD(fresh);
	u32 i;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (!version || tbr_route_table_check(e, n, tbr_dev_guid(tdev)))
		return -EINVAL;
	t = kvmalloc(struct_size(t, e, n), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->version = version;
	t->n = n;
	memcpy(t->e, e, n * sizeof(*e));
	/* routed links for the new far destinations first: may fail */
	for (i = 0; i < n; i++) {
		if (e[i].hops == 1 || tbr_route_link_find(tdev, e[i].dst))
			continue;
		rl = tbr_route_link_new(tdev, e[i].dst);
		if (!rl)
			goto err;
		list_add_tail(&rl->node, &fresh);
	}
	list_for_each_entry_safe(rl, tmp, &fresh, node) {
		list_del(&rl->node);
		list_add_tail_rcu(&rl->node, &tdev->rails.routed);
	}
	old = rcu_replace_pointer(tdev->rails.fwd, t, lockdep_is_held(&tbr_ctl_mutex));
	if (trace_tbr_route_enabled())
		tbr_route_trace(tdev, old, t);
	/* the far destinations that left, or are neighbours now */
	list_for_each_entry_safe(rl, tmp, &tdev->rails.routed, node) {
		x = tbr_route_table_find(t->e, t->n, rl->peer_guid);
		if (!x || x->hops == 1)
			tbr_route_link_unlink(rl);
	}
	if (old)
		kvfree_rcu(old, rcu);
	return 0;

err:
	list_for_each_entry_safe(rl, tmp, &fresh, node)
		kfree(rl);
	kvfree(t);
	return -ENOMEM;
}

int tbr_route_walk(struct tbr_dev *tdev,
		   int (*fn)(void *arg, u32 version, u32 n,
			     const struct tbr_route_entry *e), void *arg)
{
	struct tbr_fwd_table *t;
	int err;
	u32 i;

	lockdep_assert_held(&tbr_ctl_mutex);
	t = rcu_dereference_protected(tdev->rails.fwd, lockdep_is_held(&tbr_ctl_mutex));
	err = fn(arg, t ? t->version : 0, t ? t->n : 0, NULL);
	for (i = 0; !err && t && i < t->n; i++)
		err = fn(arg, t->version, t->n, &t->e[i]);
	return err;
}

void tbr_route_flush(struct tbr_dev *tdev)
{
	struct tbr_link *rl, *tmp;
	struct tbr_fwd_table *old;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry_safe(rl, tmp, &tdev->rails.routed, node)
		tbr_route_link_unlink(rl);
	old = rcu_replace_pointer(tdev->rails.fwd, NULL, lockdep_is_held(&tbr_ctl_mutex));
	if (trace_tbr_route_enabled())
		tbr_route_trace(tdev, old, NULL);
	if (old)
		kvfree_rcu(old, rcu);
}
