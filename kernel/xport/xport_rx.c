// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the transport glue's receive side, the link layer's upper ops
 * (tbr_link_upper_ops, called by link/link.c in bh): a transport frame to
 * the QP it names (or to every member of a multicast group), and TX
 * descriptors come free on a link: the QPs stalled on it go on. Attaching
 * the transport to a device lives here too. The QP side is xport.c.
 */
#include "link/link.h"
#include "tbrdma.h"
#include "core/tbr_core.h"
#include "xport/xport.h"

static void tbr_x_rx_qp(struct tbr_dev *tdev, struct tbr_link *link, u32 qpn,
			const void *frame, u32 len, struct tbr_link *from);

/*
 * Context: bh. A multicast datagram from @from: a copy to every QP of this
 * device attached to the group its address block names (each checks its
 * Q_Key and P_Key).
 */
static void tbr_x_rx_mcast(struct tbr_dev *tdev, struct tbr_link *from,
			   const void *frame, u32 len)
{
	u32 qpn[TBR_MAX_MCG_QP], n, i;
	const u8 *mgid;

	mgid = tbr_ud_frame_dgid(frame, len);
	if (!mgid)
		return;
	n = tbr_mcast_members(tdev, mgid, qpn);
	for (i = 0; i < n; i++)
		tbr_x_rx_qp(tdev, NULL, qpn[i], frame, len, from);
}

/* Context: bh. One transport frame from @link. */
static void tbr_x_rx(void *ctx, struct tbr_link *link, const void *frame,
		     u32 len)
{
	struct tbr_dev *tdev = ctx;
	u16 conn_id;
	u32 dqpn;

	if (tbr_frame_peek(frame, len, &conn_id, &dqpn))
		return;
	if (dqpn == TBR_QPN_MCAST) {
		tbr_x_rx_mcast(tdev, link, frame, len);
		return;
	}
	tbr_x_rx_qp(tdev, link, dqpn, frame, len, link);
}

/*
 * Context: bh. One frame for QP @qpn, if it exists and may take it: a UD QP
 * from anyone, a connected one from its own peer's @link only (@link NULL:
 * a multicast copy, for UD QPs only); one no QP takes is counted
 * (rx_no_qp). A frame the QP refuses for its P_Key is counted on @from,
 * the link it came in on (genl stats, PortCounters).
 */
static void tbr_x_rx_qp(struct tbr_dev *tdev, struct tbr_link *link, u32 qpn,
			const void *frame, u32 len, struct tbr_link *from)
{
	struct tbr_xqp *x;
	struct tbr_qp *qp;
	unsigned long flags;
	bool taken = true;
	int ret = 0;
	u64 now;

	qp = tbr_qp_get(tdev, qpn);
	if (!qp) {
		atomic64_inc(&tdev->xcnt_retired[TBR_XCNT_RX_NO_QP]);
		return;
	}
	now = ktime_get_ns();
	spin_lock_irqsave(&qp->lock, flags);
	x = qp->xport_priv;
	if (x && x->connected && x->ud) {
		/* datagrams: any peer */
		ret = tbr_tqp_rx(x->tqp, frame, len, now);
		tbr_x_after(x, now);
	} else if (link && x && x->connected && tbr_x_link(x) == link) {
		/* only the QP's own peer may talk to it */
		ret = tbr_tqp_rx(x->tqp, frame, len, now);
		tbr_x_after(x, now);
		/* pulled in by the QP's own busy poll (xport_poll.c) */
		if (unlikely(x->poller == current && !in_serving_softirq()))
			x->busy_poll_frames++;
	} else {
		taken = false;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	tbr_qp_put(qp);
	if (!taken)
		atomic64_inc(&tdev->xcnt_retired[TBR_XCNT_RX_NO_QP]);
	if (ret == -EACCES && from)
		tbr_link_count(from, TBR_CNT_PKEY_VIOLATIONS, 1);
}

/*
 * Context: bh. TX descriptors came free on @link: resume the QPs stalled on
 * it, and only those (a wake costs the stalled QPs, not every QP of the
 * device). Each is taken off the list with a reference and chained through
 * wake_next, all under xstall_lock; waking keeps a QP that stalls again
 * meanwhile (listed again) off another wake's chain, but that wake is not
 * lost: it sets rewake, and the chain that holds the QP wakes it once more
 * (descriptors may have come free after its last try, and the link's
 * stalled flag that would bring the next wake is cleared by now).
 * destroy_qp takes a QP off the list after its last reference, so it waits
 * for each one held here.
 */
static void tbr_x_tx_ready(void *ctx, struct tbr_link *link)
{
	struct tbr_dev *tdev = ctx;
	struct tbr_xqp *x, *next, *head = NULL, **tail = &head;
	unsigned long flags;

	spin_lock_irqsave(&tdev->xstall_lock, flags);
	list_for_each_entry_safe(x, next, &tdev->xstalled, stall_node) {
		if (READ_ONCE(x->link) != link)
			continue;
		if (x->waking) {
			x->rewake = true;	/* its chain wakes it again */
			continue;
		}
		list_del_init(&x->stall_node);
		if (!refcount_inc_not_zero(&x->qp->ref))
			continue;	/* being destroyed */
		x->waking = true;
		x->wake_next = NULL;
		*tail = x;
		tail = &x->wake_next;
	}
	spin_unlock_irqrestore(&tdev->xstall_lock, flags);

	while (head) {
		struct tbr_qp *qp;
		bool again = false;
		u64 now;

		x = head;
		head = x->wake_next;
		qp = x->qp;
		do {
			now = ktime_get_ns();
			spin_lock_irqsave(&qp->lock, flags);
			if (x->connected && x->stalled) {
				/* a rewake: whichever link it is on now (a spurious try stalls again) */
				if (again || x->link == link) {
					x->stalled = false;
					tbr_tqp_progress(x->tqp, now);
					tbr_x_after(x, now);
				} else {
					tbr_x_stall(x);	/* on another link now */
				}
			}
			spin_unlock_irqrestore(&qp->lock, flags);
			spin_lock_irqsave(&tdev->xstall_lock, flags);
			again = x->rewake;
			x->rewake = false;
			if (again)	/* off the list again, as the walk takes it */
				list_del_init(&x->stall_node);
			else
				x->waking = false;
			spin_unlock_irqrestore(&tdev->xstall_lock, flags);
		} while (again);
		tbr_qp_put(qp);
	}
}

static const struct tbr_link_upper_ops tbr_x_upper_ops = {
	.rx = tbr_x_rx,
	.tx_ready = tbr_x_tx_ready,
};

/* Context: process. Attach the transport to a new device. */
void tbr_xport_attach(struct tbr_dev *tdev)
{
	spin_lock_init(&tdev->xstall_lock);
	INIT_LIST_HEAD(&tdev->xstalled);
	tdev->xport = &tbr_xport_ops;
	tbr_rails_set_upper(tdev, &tbr_x_upper_ops, tdev);
}

/* Context: process. Detach before the device goes (waits for callbacks). */
void tbr_xport_detach(struct tbr_dev *tdev)
{
	tbr_rails_set_upper(tdev, NULL, NULL);
}
