// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: NHI rings in frame mode. The contracts of drivers/thunderbolt/nhi.c:
 * ring numbers 1..hop_count-1 allocated per direction, __tb_ring_enqueue()
 * refusing frames on a stopped ring (-ESHUTDOWN), at most size - 1 RX
 * buffers in the hardware, completion callbacks from the ring work (process
 * context), poll mode (start_poll called from the interrupt, hard IRQ
 * context with the ring lock held; tb_ring_poll(), tb_ring_poll_complete()
 * re-arming the interrupt), tb_ring_stop() completing every posted frame as
 * canceled before it returns, RX descriptor flags for CRC errors and buffer
 * overruns, E2E flow control, and the NHI's framing: a frame crosses as
 * 256-byte transport packets tagged with its SOF and EOF PDFs, the receiver
 * frames them by its RX ring's sof_mask/eof_mask and reports the closing PDF
 * with SOF 0 (rx_deliver_strict; ideal_frames=1: whole frames, for A/B), and
 * the NHI's interrupt throttle (one per 128 us, tbsim_rx_interrupt).
 *
 * E2E is credit based end to end, as in hardware: an RX ring with
 * RING_FLAG_E2E grants the peer credits for its HopID over the cable (the
 * next frame it expects and how many from there on have a posted buffer, at
 * most tbsim_e2e_window (parameter e2e_window, TBSIM_E2E_WINDOW by default),
 * so the cable, a UDP socket and a virtio queue, never holds more than it can
 * take; a lossless cable, a QEMU stream socket, holds whatever is sent, and
 * a larger window there stops the stand-in's cable from deciding a
 * transfer's pace instead of its rings, as on hardware, where the window is
 * the RX ring's posted buffers),
 * and a TX ring that has been granted credits
 * puts no frame on the cable beyond them: the frame waits in the TX ring, as
 * the DMA engine stalls. A TX ring allocated with RING_FLAG_E2E (nhi.c
 * enables its flow control) sends nothing before its first grant; a TX ring
 * without it ignores credits, as the hardware does. So with E2E on both ends
 * no frame is lost for lack of a buffer or room on the cable. Without E2E
 * frames go out at once and are dropped when no buffer is posted. Frames
 * carry their TX ring's count: the receiver counts the ones that never
 * arrived (rx_lost).
 *
 * Unlike a Thunderbolt link, the cable can lose packets (a fault knob, a
 * host that drops UDP under load). Credits are granted again every link
 * period (cable.c), so a lost grant costs a quarter second. Lost frames are
 * worse: the receiver grants from the next frame it expects, so a sender
 * whose whole window was lost would wait forever. An RX ring that has heard
 * nothing for TBSIM_E2E_QUIET_KICKS grants in a row and at least
 * TBSIM_E2E_QUIET (both: a VM that was descheduled runs its timer before
 * its NIC) tells the sender to count from what it sent ("resync").
 *
 * The "DMA engine" copies between the cable's packets and the buffers at the
 * bus addresses the driver mapped against the NHI's PCI device (dma-direct:
 * the bus address is translated back to the CPU's physical address).
 *
 * This file: the ring API, TX (credits, lane pacing, the cable), the stats;
 * ring_rx.c: RX (framing, the interrupt throttle, E2E grants).
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "ring.h"

struct tbsim_ring_cnt tbsim_ring_cnt;

static unsigned long blackout_until;	/* jiffies; fault_blackout_ms */

/*
 * A rate cap per lane, as a cable's lane moves at most its signalling rate
 * and a DMA path's packets take one lane (so one path, thunderbolt-net's,
 * gets one lane of a 2-lane cable, and rails on two paths two): TX ring
 * hop N sends on lane (N - 1) % lanes of the cable its path leads to, each
 * lane at most lane_mbps (0: uncapped, the default). The lanes are the
 * cable's (tbsim_cable.lane_busy), as a USB4 port's two lane adapters are
 * its link's (drivers/thunderbolt/tb.h struct tb_port: dual_link_port,
 * link_nr): a second cable brings two lanes of its own.
 */
static unsigned int tbsim_lane_mbps;
module_param_named(lane_mbps, tbsim_lane_mbps, uint, 0644);
MODULE_PARM_DESC(lane_mbps, "rate cap per lane of each cable in Mb/s, TX rings paced (0: none)");
/*
 * A ring may run ahead of its lane by lane_burst_us, so its pace timer may
 * wake it that late (the ring work runs on a CPU, a DMA engine does not)
 * with no idle time on the lane; a later wake-up leaves the lane idle while
 * a frame waits for it, which is counted (lane_late_us in stats).
 */
static unsigned int tbsim_lane_burst_us = 200;
module_param_named(lane_burst_us, tbsim_lane_burst_us, uint, 0644);
MODULE_PARM_DESC(lane_burst_us, "how far a TX ring may run ahead of its lane's rate, us (lane_mbps)");

/* TX: @n frames in one packet on cable @c, counted. rcu_read_lock held. */
static void ring_tx_packet(struct tbsim_cable *c, const struct tbsim_rec *recs, unsigned int n)
{
	if (tbsim_cable_xmitv(c, recs, n)) {
		atomic_add(n, &tbsim_ring_cnt.tx_dropped);
	} else {
		atomic_add(n, &tbsim_ring_cnt.tx_frames);
		atomic_inc(&tbsim_ring_cnt.tx_packets);
	}
}

/*
 * TX: the frames of @list (the first with count @seq) onto the cable the
 * ring's path leads to (or nowhere), in as few packets as the cable takes.
 * Process context; no lock held.
 */
static void ring_tx(struct tb_ring *ring, struct list_head *list, u32 seq)
{
	struct tbsim_rec recs[TBSIM_BUNDLE_FRAMES];
	static atomic_t nth_drop, nth_crc;
	struct tbsim_cable *c = NULL;
	size_t room = 0, bytes = 0;
	struct ring_frame *f;
	unsigned int n = 0;
	int hopid = 0;

	rcu_read_lock();
	if (tbsim_xd_path_of(ring->hop, true, &c, &hopid))
		room = tbsim_cable_room(c);
	list_for_each_entry(f, list, list) {
		struct tbsim_rec r = {
			.w = { .kind = TBSIM_WIRE_FRAME, .sof = f->sof, .eof = f->eof,
			       .seq = cpu_to_le32(seq++), .hopid = cpu_to_le16(hopid) },
			.data = frame_va(ring, f), .len = frame_len(f->size),
		};

		f->flags = RING_DESC_COMPLETED;
		if ((tbsim_fault_drop && atomic_inc_return(&nth_drop) % tbsim_fault_drop == 0) ||
		    time_before(jiffies, READ_ONCE(blackout_until)) || !room) {
			atomic_inc(&tbsim_ring_cnt.tx_dropped);	/* lost, or no path: the adapter drops it */
			continue;
		}
		if (tbsim_fault_crc && atomic_inc_return(&nth_crc) % tbsim_fault_crc == 0)
			r.w.flags = TBSIM_WIRE_CRC;	/* the receiver's CRC check fails */
		if (n && (n == TBSIM_BUNDLE_FRAMES || bytes + sizeof(r.w) + r.len > room)) {
			ring_tx_packet(c, recs, n);
			n = bytes = 0;
		}
		recs[n++] = r;
		bytes += sizeof(r.w) + r.len;
	}
	if (n)
		ring_tx_packet(c, recs, n);
	rcu_read_unlock();
}

static void callbacks(struct tb_ring *ring, struct list_head *list, bool canceled)
{
	struct ring_frame *f, *tmp;
	unsigned long flags;
	unsigned int n = 0;

	list_for_each_entry_safe(f, tmp, list, list) {
		list_del_init(&f->list);
		if (f->callback)
			f->callback(ring, f, canceled);
		n++;
	}
	if (ring->is_tx && n) {
		spin_lock_irqsave(&ring->lock, flags);
		to_sr(ring)->tx_posted -= n;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
}

/*
 * TX ring @hop is running with frames posted that did not complete yet (cm.c
 * counts a path disabled under such a ring). Process context.
 */
bool tbsim_ring_tx_busy(int hop)
{
	struct tb_nhi *nhi = &tbsim.nhi;
	struct tb_ring *ring;
	bool busy = false;

	spin_lock_irq(&nhi->lock);
	ring = nhi->tx_rings && hop > 0 && hop < nhi->hop_count ? nhi->tx_rings[hop] : NULL;
	if (ring) {
		spin_lock(&ring->lock);
		busy = ring->running && to_sr(ring)->tx_posted;
		spin_unlock(&ring->lock);
	}
	spin_unlock_irq(&nhi->lock);
	return busy;
}

/*
 * Reserve @ring's lane of cable @c (NULL: no path, not paced) for a frame of
 * @bytes: 0, or the ns until it may go (lane_mbps). ring.lock held,
 * rcu_read_lock held.
 */
static u64 lane_take(struct tb_ring *ring, struct tbsim_cable *c, size_t bytes)
{
	u32 mbps = READ_ONCE(tbsim_lane_mbps);
	struct tbsim_ring *sr = to_sr(ring);
	u64 now, *busy, burst, wait = 0;

	if (!mbps || !c)
		return 0;
	burst = (u64)READ_ONCE(tbsim_lane_burst_us) * NSEC_PER_USEC;
	now = ktime_get_ns();
	spin_lock(&c->lane_lock);
	busy = &c->lane_busy[(ring->hop - 1) % clamp(READ_ONCE(c->lanes), 1U, 2U)];
	if (*busy > now + burst) {
		wait = *busy - now - burst;
	} else {
		if (sr->paced && now > *busy)
			atomic_add(div_u64(now - *busy, NSEC_PER_USEC), &tbsim_ring_cnt.lane_late_us);
		sr->paced = false;
		*busy = max(*busy, now) + div_u64((u64)bytes * 8000, mbps);
	}
	spin_unlock(&c->lane_lock);
	return wait;
}

static enum hrtimer_restart ring_pace_timer(struct hrtimer *t)
{
	struct tbsim_ring *sr = container_of(t, struct tbsim_ring, pace);

	queue_work(tbsim.ring_wq, &sr->ring.work);
	return HRTIMER_NORESTART;
}

/* The ring work: TX transmission and completion, RX completion (no poll), stop. */
static void ring_work(struct work_struct *work)
{
	struct tb_ring *ring = container_of(work, struct tb_ring, work);
	struct tbsim_ring *sr = to_sr(ring);
	struct ring_frame *f;
	unsigned long flags;
	LIST_HEAD(list);
	struct tbsim_cable *c = NULL;
	int hopid;
	u64 wait;
	u32 seq;

	/* lane_mbps: the cable whose lanes pace this TX ring (RCU, to the end) */
	rcu_read_lock();
	if (ring->is_tx && READ_ONCE(tbsim_lane_mbps) &&
	    !tbsim_xd_path_of(ring->hop, true, &c, &hopid))
		c = NULL;
	spin_lock_irqsave(&ring->lock, flags);
	if (!ring->running) {
		list_splice_tail_init(&sr->done, &list);
		list_splice_tail_init(&ring->in_flight, &list);
		list_splice_tail_init(&ring->queue, &list);
		spin_unlock_irqrestore(&ring->lock, flags);
		rcu_read_unlock();
		callbacks(ring, &list, true);
		return;
	}
	seq = sr->tx_seq;
	if (ring->is_tx) {
		/* E2E: what the credits allow goes out, the rest waits for more */
		while ((f = list_first_entry_or_null(&ring->queue, struct ring_frame, list))) {
			if ((ring->flags & RING_FLAG_E2E) &&
			    (s32)(sr->tx_limit - sr->tx_seq) <= 0) {
				atomic_inc(&tbsim_ring_cnt.tx_waits);
				break;
			}
			wait = lane_take(ring, c, frame_len(f->size));
			if (wait) {	/* the lane is busy: go on when it is free */
				atomic_inc(&tbsim_ring_cnt.tx_paced);
				sr->paced = true;
				hrtimer_start(&sr->pace, ns_to_ktime(wait), HRTIMER_MODE_REL);
				break;
			}
			list_move_tail(&f->list, &list);
			sr->tx_seq++;
		}
	} else {
		list_splice_tail_init(&sr->done, &list);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	rcu_read_unlock();
	if (ring->is_tx)
		ring_tx(ring, &list, seq);
	callbacks(ring, &list, false);
}

/*
 * E2E: credits from the peer for its input HopID w->hopid (softirq). A
 * receiver that saw none of our frames yet, or expects more than we sent
 * (an older TX ring of ours), counts from what we sent.
 */
void tbsim_ring_credit(struct tbsim_xd *sxd, const struct tbsim_wire *w,
		       const struct tbsim_credit *cr)
{
	struct tb_nhi *nhi = &tbsim.nhi;
	struct tbsim_ring *sr;
	struct tb_ring *ring;
	unsigned long flags;
	u32 next, limit;
	int hop;

	if (!tbsim_xd_path_credit(sxd, le16_to_cpu(w->hopid), &hop))
		return;
	atomic_inc(&tbsim_ring_cnt.credits_rx);
	spin_lock_irqsave(&nhi->lock, flags);
	ring = nhi->tx_rings && hop > 0 && hop < nhi->hop_count ? nhi->tx_rings[hop] : NULL;
	if (ring) {
		sr = to_sr(ring);
		spin_lock(&ring->lock);
		next = le32_to_cpu(w->seq);
		if (!le32_to_cpu(cr->synced) || (s32)(next - sr->tx_seq) > 0)
			next = sr->tx_seq;
		limit = next + le32_to_cpu(cr->room);
		if (!sr->credited || (s32)(limit - sr->tx_limit) > 0) {
			sr->tx_resynced += sr->credited && !le32_to_cpu(cr->synced);
			sr->tx_limit = limit;
		}
		sr->credited = true;
		if (ring->running && (ring->flags & RING_FLAG_E2E) && !list_empty(&ring->queue))
			queue_work(tbsim.ring_wq, &ring->work);
		spin_unlock(&ring->lock);
	}
	spin_unlock_irqrestore(&nhi->lock, flags);
}

int __tb_ring_enqueue(struct tb_ring *ring, struct ring_frame *frame)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&ring->lock, flags);
	if (!ring->running) {
		ret = -ESHUTDOWN;
	} else if (ring->is_tx) {
		list_add_tail(&frame->list, &ring->queue);
		to_sr(ring)->tx_posted++;
		queue_work(tbsim.ring_wq, &ring->work);
	} else {
		list_add_tail(&frame->list, &ring->queue);
		tbsim_rx_refill(ring);
		tbsim_rx_backlog(to_sr(ring));
		tbsim_rx_credit_check(to_sr(ring));
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	return ret;
}

struct ring_frame *tb_ring_poll(struct tb_ring *ring)
{
	struct tbsim_ring *sr = to_sr(ring);
	struct ring_frame *f = NULL;
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	if (ring->running) {
		f = list_first_entry_or_null(&sr->done, struct ring_frame, list);
		if (f)
			list_del_init(&f->list);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	return f;
}

/* Re-arm the interrupt; frames completed meanwhile raise it at once. */
void tb_ring_poll_complete(struct tb_ring *ring)
{
	struct tbsim_ring *sr = to_sr(ring);
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	if (ring->running) {
		sr->irq_on = true;
		if (!list_empty(&sr->done))
			tbsim_rx_interrupt(sr);
	} else {
		/* nhi.c unmasks the interrupt of a stopped ring all the same */
		atomic_inc(&tbsim_cm_late_poll);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
}

static struct tb_ring *ring_alloc(struct tb_nhi *nhi, int hop, int size, bool tx,
				  unsigned int flags, int e2e_tx_hop, u16 sof_mask,
				  u16 eof_mask, void (*start_poll)(void *), void *poll_data)
{
	struct tb_ring **slots;
	struct tbsim_ring *sr;
	struct tb_ring *ring;
	int i;

	if (size < 2 || size > 4096)
		return NULL;
	sr = kzalloc(sizeof(*sr), GFP_KERNEL);
	if (!sr)
		return NULL;
	ring = &sr->ring;
	spin_lock_init(&ring->lock);
	INIT_LIST_HEAD(&ring->queue);
	INIT_LIST_HEAD(&ring->in_flight);
	INIT_LIST_HEAD(&sr->done);
	INIT_WORK(&ring->work, ring_work);
	init_irq_work(&sr->irq, tbsim_rx_irq);
	hrtimer_init(&sr->irq_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	sr->irq_timer.function = tbsim_rx_irq_timer;
	hrtimer_init(&sr->pace, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	sr->pace.function = ring_pace_timer;
	INIT_WORK(&sr->credit_work, tbsim_rx_credit_work);
	skb_queue_head_init(&sr->backlog);
	ring->nhi = nhi;
	ring->hop = hop;
	ring->is_tx = tx;
	ring->size = size;
	ring->flags = flags;
	ring->e2e_tx_hop = e2e_tx_hop;
	ring->sof_mask = sof_mask;
	ring->eof_mask = eof_mask;
	ring->start_poll = start_poll;
	ring->poll_data = poll_data;

	spin_lock_irq(&nhi->lock);
	slots = tx ? nhi->tx_rings : nhi->rx_rings;
	if (!slots || nhi->going_away)
		goto err;
	if (ring->hop < 0) {
		for (i = 1; i < nhi->hop_count && ring->hop < 0; i++)
			if (!slots[i])
				ring->hop = i;
	}
	if (ring->hop <= 0 || ring->hop >= nhi->hop_count) {
		dev_warn(&nhi->pdev->dev, "invalid hop: %d\n", ring->hop);
		goto err;
	}
	if (slots[ring->hop]) {
		dev_warn(&nhi->pdev->dev, "%s hop %d already allocated\n",
			 tx ? "TX" : "RX", ring->hop);
		goto err;
	}
	slots[ring->hop] = ring;
	spin_unlock_irq(&nhi->lock);
	atomic_inc(&tbsim_cm_rings);
	return ring;
err:
	spin_unlock_irq(&nhi->lock);
	kfree(sr);
	return NULL;
}

struct tb_ring *tb_ring_alloc_tx(struct tb_nhi *nhi, int hop, int size, unsigned int flags)
{
	tbsim_fault_step(TBSIM_STEP_RING_ALLOC, NULL, 0);
	return ring_alloc(nhi, hop, size, true, flags, 0, 0, 0, NULL, NULL);
}

struct tb_ring *tb_ring_alloc_rx(struct tb_nhi *nhi, int hop, int size,
				 unsigned int flags, int e2e_tx_hop, u16 sof_mask,
				 u16 eof_mask, void (*start_poll)(void *), void *poll_data)
{
	return ring_alloc(nhi, hop, size, false, flags, e2e_tx_hop, sof_mask,
			  eof_mask, start_poll, poll_data);
}

void tb_ring_start(struct tb_ring *ring)
{
	unsigned long flags;

	tbsim_fault_step(TBSIM_STEP_RING_START, NULL, 0);
	spin_lock_irqsave(&ring->lock, flags);
	if (ring->running) {
		dev_WARN(&ring->nhi->pdev->dev, "ring already started\n");
		goto out;
	}
	ring->running = true;
	to_sr(ring)->irq_on = true;
	to_sr(ring)->rx_last = jiffies;
	if (!ring->is_tx)
		tbsim_rx_refill(ring);
out:
	spin_unlock_irqrestore(&ring->lock, flags);
}

/* Every frame still posted comes back canceled before this returns. */
void tb_ring_stop(struct tb_ring *ring)
{
	struct tbsim_ring *sr = to_sr(ring);
	unsigned long flags;

	tbsim_fault_step(TBSIM_STEP_RING_STOP, NULL, 0);
	spin_lock_irqsave(&ring->lock, flags);
	if (!ring->running) {
		dev_WARN(&ring->nhi->pdev->dev, "%s %d already stopped\n",
			 ring->is_tx ? "TX ring" : "RX ring", ring->hop);
		spin_unlock_irqrestore(&ring->lock, flags);
		return;
	}
	ring->running = false;
	sr->irq_on = false;
	ring->head = 0;
	sr->rx_open = false;
	__skb_queue_purge(&sr->backlog);
	spin_unlock_irqrestore(&ring->lock, flags);
	hrtimer_cancel(&sr->irq_timer);
	hrtimer_cancel(&sr->pace);
	irq_work_sync(&sr->irq);
	queue_work(tbsim.ring_wq, &ring->work);
	flush_work(&ring->work);
}

void tb_ring_free(struct tb_ring *ring)
{
	struct tbsim_ring *sr = to_sr(ring);
	struct tb_nhi *nhi = ring->nhi;

	tbsim_fault_step(TBSIM_STEP_RING_FREE, NULL, 0);
	spin_lock_irq(&nhi->lock);
	if (ring->is_tx)
		nhi->tx_rings[ring->hop] = NULL;
	else
		nhi->rx_rings[ring->hop] = NULL;
	if (ring->running)
		dev_WARN(&nhi->pdev->dev, "RX ring %d is still running\n", ring->hop);
	spin_unlock_irq(&nhi->lock);
	hrtimer_cancel(&sr->irq_timer);
	hrtimer_cancel(&sr->pace);
	irq_work_sync(&sr->irq);
	flush_work(&ring->work);
	cancel_work_sync(&sr->credit_work);
	skb_queue_purge(&sr->backlog);
	kfree(sr);
	atomic_dec(&tbsim_cm_rings);
}

/* /sys/module/thunderbolt/parameters/stats */
static int stats_get(char *buf, const struct kernel_param *kp)
{
	const struct tbsim_ring_cnt *c = &tbsim_ring_cnt;

	return sysfs_emit(buf, "tx_frames=%d tx_dropped=%d rx_frames=%d rx_dropped=%d "
			  "rx_crc=%d rx_overrun=%d rx_lost=%d rx_nobuf=%d tx_waits=%d "
			  "credits_tx=%d credits_rx=%d resyncs=%d rx_gap=%d tx_packets=%d "
			  "rx_packets=%d rx_cut=%d rx_pdf_dropped=%d irq_throttled=%d tx_paced=%d "
			  "lane_late_us=%d\n",
			  atomic_read(&c->tx_frames), atomic_read(&c->tx_dropped),
			  atomic_read(&c->rx_frames), atomic_read(&c->rx_dropped),
			  atomic_read(&c->rx_crc), atomic_read(&c->rx_overrun),
			  atomic_read(&c->rx_lost), atomic_read(&c->rx_nobuf),
			  atomic_read(&c->tx_waits), atomic_read(&c->credits_tx),
			  atomic_read(&c->credits_rx), atomic_read(&c->resyncs),
			  atomic_read(&c->rx_gap), atomic_read(&c->tx_packets),
			  atomic_read(&c->rx_packets), atomic_read(&c->rx_cut),
			  atomic_read(&c->rx_pdf_dropped), atomic_read(&c->irq_throttled),
			  atomic_read(&c->tx_paced), atomic_read(&c->lane_late_us));
}

static const struct kernel_param_ops stats_ops = { .get = stats_get };
module_param_cb(stats, &stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "ring frame counters (read only)");

/*
 * /sys/module/thunderbolt/parameters/rings: each ring's state, one line each
 * (test-only, for a stuck transfer's report): TX, its queue, the frames sent
 * and the E2E limit; RX, its posted buffers, the frames completed and not
 * polled, the backlog, the next frame expected and the limit granted.
 */
static void rings_emit(char *buf, int *len, struct tb_ring *ring)
{
	struct tbsim_ring *sr = to_sr(ring);
	unsigned int queued = 0, done = 0;
	struct ring_frame *f;

	spin_lock(&ring->lock);
	list_for_each_entry(f, &ring->queue, list)
		queued++;
	if (ring->is_tx) {
		*len += sysfs_emit_at(buf, *len, "tx hop=%d running=%d e2e=%d queued=%u posted=%u seq=%u limit=%u credited=%d resynced=%u\n",
				      ring->hop, ring->running, !!(ring->flags & RING_FLAG_E2E),
				      queued, sr->tx_posted, sr->tx_seq, sr->tx_limit, sr->credited,
				      sr->tx_resynced);
	} else {
		list_for_each_entry(f, &sr->done, list)
			done++;
		*len += sysfs_emit_at(buf, *len, "rx hop=%d running=%d e2e=%d queued=%u head=%d done=%u backlog=%u next=%u granted=%u synced=%d quiet=%u irq_on=%d open=%d taken=%u backs=%u last_back=%u->%u\n",
				      ring->hop, ring->running, !!(ring->flags & RING_FLAG_E2E),
				      queued, ring->head, done, skb_queue_len(&sr->backlog),
				      sr->rx_next, sr->granted, sr->rx_synced, sr->rx_quiet,
				      sr->irq_on, sr->rx_open, sr->rx_taken, sr->rx_backs,
				      sr->back_from, sr->back_to);
	}
	spin_unlock(&ring->lock);
}

static int rings_get(char *buf, const struct kernel_param *kp)
{
	struct tb_nhi *nhi = &tbsim.nhi;
	int hop, len = 0;

	spin_lock_irq(&nhi->lock);
	for (hop = 1; nhi->tx_rings && hop < nhi->hop_count; hop++) {
		if (nhi->tx_rings[hop])
			rings_emit(buf, &len, nhi->tx_rings[hop]);
		if (nhi->rx_rings[hop])
			rings_emit(buf, &len, nhi->rx_rings[hop]);
	}
	spin_unlock_irq(&nhi->lock);
	return len;
}

static const struct kernel_param_ops rings_ops = { .get = rings_get };
module_param_cb(rings, &rings_ops, NULL, 0444);
MODULE_PARM_DESC(rings, "each ring's queue and E2E state (read only)");

/* /sys/module/thunderbolt/parameters/fault_blackout_ms: lose every frame for N ms from now */
static int blackout_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret = kstrtouint(val, 0, &ms);

	if (ret)
		return ret;
	if (ms > 60000)
		return -ERANGE;
	WRITE_ONCE(blackout_until, jiffies + msecs_to_jiffies(ms));
	return 0;
}

static int blackout_get(char *buf, const struct kernel_param *kp)
{
	long left = (long)(READ_ONCE(blackout_until) - jiffies);

	return sysfs_emit(buf, "%u\n", left > 0 ? jiffies_to_msecs(left) : 0);
}

static const struct kernel_param_ops blackout_ops = { .set = blackout_set, .get = blackout_get };
module_param_cb(fault_blackout_ms, &blackout_ops, NULL, 0644);
MODULE_PARM_DESC(fault_blackout_ms, "lose every transmitted ring frame for the next N ms");
