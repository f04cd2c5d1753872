// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the loopback link. Transport frames a device sends to itself (an
 * RC/UC QP connected to a QP of the same device, a UD or GSI datagram to our
 * own MAC/GID) never touch a rail: the transport glue (xport.c) sends them on
 * this device's loopback link, a struct tbr_link that is in no list (no dump,
 * sysfs device, event or daemon sees it) and has no rails. Its frames wait in
 * a FIFO until a work item hands them to the transport's receive hook, as a
 * rail's RX completion does: BH disabled, no tbrdma lock held.
 *
 * The same semantics as a rail, so the transport core's ordering, RNR,
 * retransmission and error paths are its own: frames arrive once and in
 * order; a fixed pool of TBR_LOOP_DEPTH frames is the credit: when it is
 * empty tbr_link_tx_alloc() fails with -ENOBUFS and the transport's tx_ready
 * follows once the work item has given frames back. No recursion and no lock
 * inversion: a sender holds its QP's lock, which the receive side takes, so
 * transmitting only queues the frame. Bounded work: TBR_LOOP_BUDGET frames
 * per run of the work item, which then queues itself again.
 *
 * Counters: the loopback link's (tx/rx frames and bytes, credit stalls,
 * rx_errors for frames with no transport to take them), shown in the genl
 * DEV_GET reply (TBRDMA_ATTR_LOOP_STATS) and `rdma statistic` (loopback_*).
 *
 * Locks: loop->lock (irqsave: senders may have IRQs off) protects the free
 * pool, the queue and the stalled flag; it is never held across a callback.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "tbrdma.h"
#include "link/rail.h"	/* struct tbr_frame */

#define TBR_LOOP_DEPTH	256	/* frames in flight (1 MiB of 4 KiB frames) */
#define TBR_LOOP_BUDGET	64	/* frames per work run before yielding */

struct tbr_loop {
	struct tbr_link *link;
	spinlock_t lock;		/* everything below */
	struct list_head free;		/* frames the transport may take */
	struct list_head queue;		/* sent, for the work item, in order */
	unsigned int nfree;		/* frames on the free list */
	bool stalled;			/* a tx_alloc found the pool empty */
	bool dead;			/* device going: drop what is sent */
	struct work_struct work;
	struct tbr_frame frames[TBR_LOOP_DEPTH];
};

static inline struct tbr_frame *tbr_loop_frame_of(const void *buf)
{
	return (struct tbr_frame *)page_private(virt_to_page(buf));
}

/*
 * Context: any. A frame (delivered or aborted) goes back to the pool. Returns
 * whether a sender found the pool empty meanwhile (it waits for tx_ready).
 */
static bool tbr_loop_put_frame(struct tbr_loop *lp, struct tbr_frame *f)
{
	unsigned long flags;
	bool stalled;

	spin_lock_irqsave(&lp->lock, flags);
	list_add(&f->list, &lp->free);
	lp->nfree++;
	stalled = lp->stalled;
	spin_unlock_irqrestore(&lp->lock, flags);
	return stalled;
}

/* Context: bh, under rcu_read_lock. The transport may send again. */
static void tbr_loop_tx_ready(struct tbr_loop *lp)
{
	struct tbr_dev *tdev = lp->link->tdev;
	const struct tbr_link_upper_ops *ops;

	ops = rcu_dereference(tdev->rails.upper);
	if (ops && ops->tx_ready)
		ops->tx_ready(tdev->rails.upper_ctx, lp->link);
}

/* Context: process (workqueue). Deliver up to TBR_LOOP_BUDGET frames. */
static void tbr_loop_work(struct work_struct *work)
{
	struct tbr_loop *lp = container_of(work, struct tbr_loop, work);
	struct tbr_link *link = lp->link;
	struct tbr_dev *tdev = link->tdev;
	const struct tbr_link_upper_ops *ops;
	unsigned int budget = TBR_LOOP_BUDGET;
	struct tbr_frame *f;
	unsigned long flags;
	bool wake;

	local_bh_disable();
	rcu_read_lock();
	for (; budget; budget--) {
		spin_lock_irqsave(&lp->lock, flags);
		f = list_first_entry_or_null(&lp->queue, struct tbr_frame, list);
		if (f)
			list_del(&f->list);
		spin_unlock_irqrestore(&lp->lock, flags);
		if (!f)
			break;
		ops = rcu_dereference(tdev->rails.upper);
		if (ops && ops->rx) {
			tbr_link_count(link, TBR_CNT_RX_FRAMES, 1);
			tbr_link_count(link, TBR_CNT_RX_BYTES, f->size);
			ops->rx(tdev->rails.upper_ctx, link, f->buf, f->size);
		} else {
			tbr_link_count(link, TBR_CNT_RX_ERRORS, 1);
		}
		tbr_loop_put_frame(lp, f);
	}
	/* once per run: tx_ready walks every QP of the device */
	spin_lock_irqsave(&lp->lock, flags);
	wake = lp->stalled && lp->nfree;
	if (wake)
		lp->stalled = false;
	spin_unlock_irqrestore(&lp->lock, flags);
	if (wake)
		tbr_loop_tx_ready(lp);
	rcu_read_unlock();
	local_bh_enable();
	if (!budget)	/* more may be queued: yield, then go on */
		queue_work(system_highpri_wq, &lp->work);
}

static void *tbr_loop_tx_alloc(struct tbr_link *link, u32 len)
{
	struct tbr_loop *lp = link->ops_priv;
	struct tbr_frame *f;
	unsigned long flags;

	if (!len || len > TBR_FRAME_SIZE_MAX)
		return ERR_PTR(-EINVAL);
	spin_lock_irqsave(&lp->lock, flags);
	f = list_first_entry_or_null(&lp->free, struct tbr_frame, list);
	if (f) {
		list_del(&f->list);
		lp->nfree--;
	} else {
		lp->stalled = true;
		tbr_link_count(link, TBR_CNT_CREDIT_STALLS, 1);
	}
	spin_unlock_irqrestore(&lp->lock, flags);
	return f ? f->buf : ERR_PTR(-ENOBUFS);
}

static void tbr_loop_tx_send(struct tbr_link *link, void *buf, u32 len)
{
	struct tbr_loop *lp = link->ops_priv;
	struct tbr_frame *f = tbr_loop_frame_of(buf);
	unsigned long flags;
	bool queued;

	if (WARN_ON_ONCE(!len || len > TBR_FRAME_SIZE_MAX))
		len = 1;
	f->size = len;
	spin_lock_irqsave(&lp->lock, flags);
	queued = !lp->dead;
	if (queued) {
		list_add_tail(&f->list, &lp->queue);
	} else {
		list_add(&f->list, &lp->free);
		lp->nfree++;
	}
	spin_unlock_irqrestore(&lp->lock, flags);
	if (!queued) {
		tbr_link_count(link, TBR_CNT_TX_LOST, 1);
		return;
	}
	tbr_link_count(link, TBR_CNT_TX_FRAMES, 1);
	tbr_link_count(link, TBR_CNT_TX_BYTES, len);
	queue_work(system_highpri_wq, &lp->work);
}

static void tbr_loop_tx_abort(struct tbr_link *link, void *buf)
{
	struct tbr_loop *lp = link->ops_priv;

	/* a sender waits for this frame: the work item wakes it (no recursion) */
	if (tbr_loop_put_frame(lp, tbr_loop_frame_of(buf)))
		queue_work(system_highpri_wq, &lp->work);
}

static unsigned int tbr_loop_tx_credits(struct tbr_link *link)
{
	struct tbr_loop *lp = link->ops_priv;
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&lp->lock, flags);
	n = lp->nfree;
	spin_unlock_irqrestore(&lp->lock, flags);
	return n;
}

/* the frames come back to this module: it takes all it sends */
static u32 tbr_loop_peer_feat(struct tbr_link *link)
{
	return TBR_PEER_FEAT_ALL;
}

static const struct tbr_link_ops tbr_loop_ops = {
	.tx_alloc = tbr_loop_tx_alloc,
	.tx_send = tbr_loop_tx_send,
	.tx_abort = tbr_loop_tx_abort,
	.tx_credits = tbr_loop_tx_credits,
	.peer_feat = tbr_loop_peer_feat,
};

struct tbr_link *tbr_loop_get(struct tbr_dev *tdev)
{
	struct tbr_link *link = tdev->rails.loop;

	tbr_link_hold(link);
	return link;
}

static void tbr_loop_free_frames(struct tbr_loop *lp)
{
	unsigned int i;

	for (i = 0; i < TBR_LOOP_DEPTH; i++) {
		if (lp->frames[i].buf)
			tbr_frame_buf_free(lp->frames[i].buf);
	}
}

/* Context: process. Before the device registers (QP1 may send at once). */
int tbr_loop_create(struct tbr_dev *tdev)
{
	struct tbr_link *link;
	struct tbr_loop *lp;
	unsigned int i;

	link = kzalloc(sizeof(*link), GFP_KERNEL);
	lp = kzalloc(sizeof(*lp), GFP_KERNEL);
	if (!link || !lp)
		goto err;
	link->tdev = tdev;
	link->peer_guid = tbr_dev_guid(tdev);
	kref_init(&link->ref);		/* the device's reference */
	spin_lock_init(&link->lock);
	link->ops = &tbr_loop_ops;
	link->ops_priv = lp;
	lp->link = link;
	spin_lock_init(&lp->lock);
	INIT_LIST_HEAD(&lp->free);
	INIT_LIST_HEAD(&lp->queue);
	INIT_WORK(&lp->work, tbr_loop_work);
	for (i = 0; i < TBR_LOOP_DEPTH; i++) {
		struct tbr_frame *f = &lp->frames[i];

		f->buf = tbr_frame_buf_alloc();
		if (!f->buf) {
			tbr_loop_free_frames(lp);
			goto err;
		}
		set_page_private(virt_to_page(f->buf), (unsigned long)f);
		list_add_tail(&f->list, &lp->free);
		lp->nfree++;
	}
	tdev->rails.loop = link;
	return 0;

err:
	kfree(lp);
	kfree(link);
	return -ENOMEM;
}

/*
 * Context: process. After every QP of the device is gone (nothing sends any
 * more) and before the transport detaches: frames still queued are dropped.
 */
void tbr_loop_destroy(struct tbr_dev *tdev)
{
	struct tbr_link *link = tdev->rails.loop;
	struct tbr_loop *lp;
	unsigned long flags;

	if (!link)
		return;
	lp = link->ops_priv;
	spin_lock_irqsave(&lp->lock, flags);
	lp->dead = true;
	spin_unlock_irqrestore(&lp->lock, flags);
	cancel_work_sync(&lp->work);
	tbr_loop_free_frames(lp);
	kfree(lp);
	link->ops = NULL;
	link->ops_priv = NULL;
	link->gone = true;
	tdev->rails.loop = NULL;
	tbr_link_put(link);
}
