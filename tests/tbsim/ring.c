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
 * the NHI's interrupt throttle (one per 128 us, rx_interrupt).
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
 */
#include <linux/dma-direct.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "tbsim.h"

static atomic_t tx_frames, rx_frames, rx_dropped, tx_dropped, rx_crc, rx_overrun;
static atomic_t rx_lost, rx_nobuf, tx_waits, credits_tx, credits_rx, resyncs, rx_gap, tx_packets;
static atomic_t rx_packets, rx_cut, rx_pdf_dropped, irq_throttled;

static unsigned int irq_throttle_us = 128;
module_param(irq_throttle_us, uint, 0644);
/* nhi.c nhi_enable_int_throttling: 128 us */
MODULE_PARM_DESC(irq_throttle_us, "microseconds between a ring's interrupts at least (0: none)");

static bool tbsim_ideal_frames;
module_param_named(ideal_frames, tbsim_ideal_frames, bool, 0444);
MODULE_PARM_DESC(ideal_frames, "test only, A/B: whole frames with the sender's PDFs, no packets");

static unsigned long blackout_until;	/* jiffies; fault_blackout_ms */

/*
 * A rate cap per lane, as a cable's lane moves at most its signalling rate
 * and a DMA path's packets take one lane (so one path, thunderbolt-net's,
 * gets one lane of a 2-lane cable, and rails on two paths two): TX ring
 * hop N sends on lane (N - 1) % lanes, each lane at most lane_mbps (0:
 * uncapped, the default). The lanes are this host's, shared by its cables.
 */
static unsigned int tbsim_lane_mbps;
module_param_named(lane_mbps, tbsim_lane_mbps, uint, 0644);
MODULE_PARM_DESC(lane_mbps, "rate cap per lane in Mb/s, TX rings paced (0: none)");
static DEFINE_SPINLOCK(lane_lock);
static u64 lane_busy[2];		/* ns: the lane's wire is busy until */
static atomic_t tx_paced;
#define TBSIM_LANE_BURST_NS	(200 * NSEC_PER_USEC)

static struct tbsim_ring *to_sr(struct tb_ring *ring)
{
	return container_of(ring, struct tbsim_ring, ring);
}

static void *frame_va(struct tb_ring *ring, struct ring_frame *f)
{
	return phys_to_virt(dma_to_phys(&ring->nhi->pdev->dev, f->buffer_phy));
}

static size_t frame_len(u32 size)
{
	return size ? size : TBSIM_FRAME_MAX;
}

/* TX: @n frames in one packet on cable @c, counted. rcu_read_lock held. */
static void ring_tx_packet(struct tbsim_cable *c, const struct tbsim_rec *recs, unsigned int n)
{
	if (tbsim_cable_xmitv(c, recs, n)) {
		atomic_add(n, &tx_dropped);
	} else {
		atomic_add(n, &tx_frames);
		atomic_inc(&tx_packets);
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
			atomic_inc(&tx_dropped);	/* lost, or no path: the adapter drops it */
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
 * Reserve @ring's lane for a frame of @bytes: 0, or the ns until it may go
 * (lane_mbps). ring.lock held.
 */
static u64 lane_take(struct tb_ring *ring, size_t bytes)
{
	u32 mbps = READ_ONCE(tbsim_lane_mbps);
	u64 now, *busy, wait = 0;

	if (!mbps)
		return 0;
	now = ktime_get_ns();
	spin_lock(&lane_lock);
	busy = &lane_busy[(ring->hop - 1) % clamp(tbsim_lanes, 1U, 2U)];
	if (*busy > now + TBSIM_LANE_BURST_NS)
		wait = *busy - now - TBSIM_LANE_BURST_NS;
	else
		*busy = max(*busy, now) + div_u64((u64)bytes * 8000, mbps);
	spin_unlock(&lane_lock);
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
	u64 wait;
	u32 seq;

	spin_lock_irqsave(&ring->lock, flags);
	if (!ring->running) {
		list_splice_tail_init(&sr->done, &list);
		list_splice_tail_init(&ring->in_flight, &list);
		list_splice_tail_init(&ring->queue, &list);
		spin_unlock_irqrestore(&ring->lock, flags);
		callbacks(ring, &list, true);
		return;
	}
	seq = sr->tx_seq;
	if (ring->is_tx) {
		/* E2E: what the credits allow goes out, the rest waits for more */
		while ((f = list_first_entry_or_null(&ring->queue, struct ring_frame, list))) {
			if ((ring->flags & RING_FLAG_E2E) &&
			    (s32)(sr->tx_limit - sr->tx_seq) <= 0) {
				atomic_inc(&tx_waits);
				break;
			}
			wait = lane_take(ring, frame_len(f->size));
			if (wait) {	/* the lane is busy: go on when it is free */
				atomic_inc(&tx_paced);
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
	if (ring->is_tx)
		ring_tx(ring, &list, seq);
	callbacks(ring, &list, false);
}

/* start_poll in hard IRQ context with the ring lock held, as nhi.c calls it */
static void ring_irq(struct irq_work *w)
{
	struct tbsim_ring *sr = container_of(w, struct tbsim_ring, irq);
	struct tb_ring *ring = &sr->ring;

	spin_lock(&ring->lock);
	if (ring->running && ring->start_poll)
		ring->start_poll(ring->poll_data);
	spin_unlock(&ring->lock);
}

/* E2E: the limit an RX ring can grant now (see the top). ring->lock held. */
static u32 credit_limit(struct tbsim_ring *sr)
{
	int room = sr->ring.head - skb_queue_len(&sr->backlog);

	return sr->rx_next + clamp_t(int, room, 0, tbsim_e2e_window);
}

/*
 * E2E: grant again once a quarter window is free, or at once if the peer
 * has used every credit. ring->lock held.
 */
static void credit_check(struct tbsim_ring *sr)
{
	s32 more = credit_limit(sr) - sr->granted;

	if (!(sr->ring.flags & RING_FLAG_E2E) || !sr->ring.running)
		return;
	if (more >= tbsim_e2e_window / 4 || (more > 0 && sr->rx_next == sr->granted))
		queue_work(tbsim.ring_wq, &sr->credit_work);
}

/* E2E: a credit packet to the peer on the cable of this RX ring's path */
static void credit_work(struct work_struct *work)
{
	struct tbsim_ring *sr = container_of(work, struct tbsim_ring, credit_work);
	struct tbsim_wire w = { .kind = TBSIM_WIRE_CREDIT };
	struct tb_ring *ring = &sr->ring;
	struct tbsim_credit cr;
	struct tbsim_cable *c;
	unsigned long flags;
	u32 limit, next;
	bool resync;
	int hopid;

	spin_lock_irqsave(&ring->lock, flags);
	if (!(ring->flags & RING_FLAG_E2E) || !ring->running) {
		spin_unlock_irqrestore(&ring->lock, flags);
		return;
	}
	next = sr->rx_next;
	limit = credit_limit(sr);
	resync = sr->rx_synced && sr->rx_quiet >= TBSIM_E2E_QUIET_KICKS &&
		 time_after(jiffies, sr->rx_last + TBSIM_E2E_QUIET);
	cr.synced = cpu_to_le32(sr->rx_synced && !resync);
	spin_unlock_irqrestore(&ring->lock, flags);
	if (resync)
		atomic_inc(&resyncs);
	cr.room = cpu_to_le32(limit - next);
	w.seq = cpu_to_le32(next);
	rcu_read_lock();
	if (tbsim_xd_path_of(ring->hop, false, &c, &hopid)) {
		w.hopid = cpu_to_le16(hopid);
		if (!tbsim_cable_xmit(c, &w, &cr, sizeof(cr))) {
			atomic_inc(&credits_tx);
			spin_lock_irqsave(&ring->lock, flags);
			if ((s32)(limit - sr->granted) > 0)
				sr->granted = limit;
			spin_unlock_irqrestore(&ring->lock, flags);
		}
	}
	rcu_read_unlock();
}

/*
 * E2E: (re)send the credits of our RX ring @hop, if it has E2E; @periodic:
 * the link period's grant, which counts towards a resync. Any context.
 */
void tbsim_ring_credit_kick(int hop, bool periodic)
{
	struct tb_nhi *nhi = &tbsim.nhi;
	struct tb_ring *ring;
	unsigned long flags;

	spin_lock_irqsave(&nhi->lock, flags);
	ring = nhi->rx_rings && hop > 0 && hop < nhi->hop_count ? nhi->rx_rings[hop] : NULL;
	if (ring && ring->running && (ring->flags & RING_FLAG_E2E)) {
		if (periodic) {
			spin_lock(&ring->lock);
			to_sr(ring)->rx_quiet++;
			spin_unlock(&ring->lock);
		}
		queue_work(tbsim.ring_wq, &to_sr(ring)->credit_work);
	}
	spin_unlock_irqrestore(&nhi->lock, flags);
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
	atomic_inc(&credits_rx);
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

/* RX buffers the hardware may fill: at most size - 1. ring->lock held. */
static void rx_refill(struct tb_ring *ring)
{
	struct ring_frame *f;

	while (ring->head < ring->size - 1 &&
	       (f = list_first_entry_or_null(&ring->queue, struct ring_frame, list))) {
		list_move_tail(&f->list, &ring->in_flight);
		ring->head++;
	}
}

/*
 * Poll mode: raise the ring's interrupt if armed, throttled as nhi.c
 * programs every vector (nhi_enable_int_throttling: at most one interrupt
 * per 128 us, parameter irq_throttle_us): an interrupt due sooner fires
 * when that time is up. ring->lock held.
 */
static void rx_interrupt(struct tbsim_ring *sr)
{
	ktime_t now = ktime_get();

	if (!sr->irq_on)
		return;
	sr->irq_on = false;
	if (ktime_before(now, sr->irq_next)) {
		atomic_inc(&irq_throttled);
		hrtimer_start(&sr->irq_timer, sr->irq_next, HRTIMER_MODE_ABS_HARD);
		return;
	}
	sr->irq_next = ktime_add_us(now, READ_ONCE(irq_throttle_us));
	irq_work_queue(&sr->irq);
}

/* the throttled interrupt, now due (hard IRQ) */
static enum hrtimer_restart rx_irq_timer(struct hrtimer *t)
{
	struct tbsim_ring *sr = container_of(t, struct tbsim_ring, irq_timer);

	spin_lock(&sr->ring.lock);
	sr->irq_next = ktime_add_us(ktime_get(), READ_ONCE(irq_throttle_us));
	irq_work_queue(&sr->irq);
	spin_unlock(&sr->ring.lock);
	return HRTIMER_NORESTART;
}

/* RX descriptor flags the record's frames get from the cable. ring->lock held. */
static u32 rx_wire_flags(const struct tbsim_wire *w)
{
	if (w->flags & TBSIM_WIRE_CRC) {
		atomic_inc(&rx_crc);
		return RING_DESC_CRC_ERROR;
	}
	if (w->flags & TBSIM_WIRE_GAP) {
		atomic_inc(&rx_gap);
		return RING_DESC_CRC_ERROR;
	}
	return 0;
}

/*
 * The RX buffer at the head of in_flight completes with @len bytes, PDFs
 * @sof/@eof (as the RX descriptor reports them) and @flags: to the driver
 * (the poll interrupt, or the ring work). ring->lock held.
 */
static void rx_complete(struct tbsim_ring *sr, size_t len, u8 sof, u8 eof, u32 flags)
{
	struct tb_ring *ring = &sr->ring;
	struct ring_frame *f = list_first_entry(&ring->in_flight, struct ring_frame, list);
	static atomic_t nth_overrun;

	if (tbsim_fault_overrun && atomic_inc_return(&nth_overrun) % tbsim_fault_overrun == 0)
		flags |= RING_DESC_BUFFER_OVERRUN;
	if (flags & RING_DESC_BUFFER_OVERRUN)
		atomic_inc(&rx_overrun);
	f->size = len & 0xfff;
	f->sof = sof;
	f->eof = eof;
	f->flags = RING_DESC_COMPLETED | flags;
	list_move_tail(&f->list, &sr->done);
	ring->head--;
	rx_refill(ring);
	atomic_inc(&rx_frames);
	if (ring->start_poll)
		rx_interrupt(sr);
	else
		queue_work(tbsim.ring_wq, &ring->work);
}

/*
 * Ideal framing (parameter ideal_frames, for A/B only): the sender's frame
 * arrives whole in one RX buffer, with the sender's SOF and EOF PDFs, if
 * both are in the ring's masks (tbsim_ring_rx checked them). False if no
 * buffer is posted. ring->lock held.
 */
static bool rx_deliver_ideal(struct tbsim_ring *sr, const void *data, size_t len,
			     const struct tbsim_wire *w)
{
	struct tb_ring *ring = &sr->ring;
	struct ring_frame *f;
	u32 flags = 0;

	f = list_first_entry_or_null(&ring->in_flight, struct ring_frame, list);
	if (!f)
		return false;
	if (len > TBSIM_FRAME_MAX) {
		flags |= RING_DESC_BUFFER_OVERRUN;
		len = TBSIM_FRAME_MAX;
	}
	memcpy(frame_va(ring, f), data, len);
	rx_complete(sr, len, w->sof, w->eof, flags | rx_wire_flags(w));
	return true;
}

/* PDF of transport packet @i of the @n a frame crosses the cable as */
static u8 packet_pdf(const struct tbsim_wire *w, unsigned int i, unsigned int n)
{
	return i == n - 1 ? w->eof : w->sof;
}

/*
 * RX buffers the packets of a frame of @len bytes would open (see
 * rx_deliver_strict). ring->lock held.
 */
static unsigned int rx_buffers_needed(struct tbsim_ring *sr, size_t len,
				      const struct tbsim_wire *w)
{
	unsigned int i, n = DIV_ROUND_UP(len, TBSIM_PACKET_MAX), need = 0;
	bool open = sr->rx_open;
	u8 pdf;

	for (i = 0; i < n; i++) {
		pdf = packet_pdf(w, i, n);
		if (sr->ring.eof_mask & BIT(pdf)) {
			need += !open;
			open = false;
		} else if (!open && (sr->ring.sof_mask & BIT(pdf))) {
			need++;
			open = true;
		}
	}
	return need;
}

/*
 * Strict framing, as the NHI does it (docs/thunderbolt.md, "Frames and
 * PDFs"). The sending NHI cuts a frame into transport packets of at most
 * TBSIM_PACKET_MAX bytes: the last carries the descriptor's EOF PDF, every
 * other one its SOF PDF (a one-packet frame carries only the EOF PDF). The
 * receiving NHI, per packet: with no frame open, a packet whose PDF is in
 * the ring's eof_mask is a whole frame, one in its sof_mask opens a frame in
 * the next RX buffer, any other is dropped; with a frame open, the packet's
 * bytes are appended and a PDF in the eof_mask closes it. The completed
 * descriptor reports the closing PDF as EOF and 0 as SOF; bytes beyond the
 * buffer set RING_DESC_BUFFER_OVERRUN. So a sender whose SOF PDF is also in
 * the receiver's eof_mask (sof == eof) has every frame cut after its first
 * packet. False, with nothing done, if the buffers the frame needs are not
 * all posted. ring->lock held.
 */
static bool rx_deliver_strict(struct tbsim_ring *sr, const u8 *data, size_t len,
			      const struct tbsim_wire *w)
{
	unsigned int i, n = DIV_ROUND_UP(len, TBSIM_PACKET_MAX);
	struct tb_ring *ring = &sr->ring;
	u32 flags = rx_wire_flags(w);
	size_t chunk, room;
	u8 pdf;

	if (rx_buffers_needed(sr, len, w) > ring->head - sr->rx_open)
		return false;
	atomic_add(n, &rx_packets);
	for (i = 0; i < n; i++, data += chunk, len -= chunk) {
		chunk = min_t(size_t, len, TBSIM_PACKET_MAX);
		pdf = packet_pdf(w, i, n);
		if (!sr->rx_open) {
			if (!(ring->eof_mask & BIT(pdf)) && !(ring->sof_mask & BIT(pdf))) {
				atomic_inc(&rx_pdf_dropped);
				continue;
			}
			sr->rx_open = true;
			sr->open_len = 0;
			sr->open_flags = 0;
		}
		sr->open_flags |= flags;
		room = TBSIM_FRAME_MAX - sr->open_len;
		if (chunk > room)
			sr->open_flags |= RING_DESC_BUFFER_OVERRUN;
		memcpy((u8 *)frame_va(ring, list_first_entry(&ring->in_flight,
							     struct ring_frame, list)) +
		       sr->open_len, data, min(chunk, room));
		sr->open_len += min(chunk, room);
		if (ring->eof_mask & BIT(pdf)) {
			if (i != n - 1)
				atomic_inc(&rx_cut);	/* the sender's frame goes on */
			sr->rx_open = false;
			rx_complete(sr, sr->open_len, 0, pdf, sr->open_flags);
		}
	}
	return true;
}

/* One frame into the RX buffers; false if they are not posted. ring->lock held. */
static bool rx_deliver(struct tbsim_ring *sr, const void *data, size_t len,
		       const struct tbsim_wire *w)
{
	if (tbsim_ideal_frames)
		return rx_deliver_ideal(sr, data, len, w);
	return rx_deliver_strict(sr, data, len, w);
}

/* E2E: frames that waited for buffers, in order. ring->lock held. */
static void rx_backlog(struct tbsim_ring *sr)
{
	struct sk_buff *skb;

	while ((skb = skb_peek(&sr->backlog))) {
		if (!rx_deliver(sr, skb->data, skb->len, (void *)skb->cb))
			return;
		__skb_unlink(skb, &sr->backlog);
		kfree_skb(skb);
	}
}

/*
 * A frame from the cable for our RX ring @hop (softirq). Dropped when the
 * ring is not there or stopped, when its PDFs are outside the ring's masks,
 * or, without E2E, when no buffer is posted.
 *
 * A Thunderbolt link loses no frame of an E2E ring; this cable can (UDP, a
 * fault knob). The first frame the ring takes after frames were lost, on
 * the cable or here, arrives with a CRC error, the damage hardware reports,
 * so a driver that pairs consecutive frames (tbrdma's split frames) never
 * pairs across a gap (rx_gap counts them).
 */
void tbsim_ring_rx(struct tbsim_xd *sxd, int hop, const void *data, size_t len,
		   const struct tbsim_wire *w_in)
{
	struct tb_nhi *nhi = &tbsim.nhi;
	struct tbsim_wire wire = *w_in, *w = &wire;
	struct tbsim_ring *sr;
	struct tb_ring *ring;
	unsigned long flags;
	bool ok = false, nobuf = false;
	u32 seq = le32_to_cpu(w->seq);

	spin_lock_irqsave(&nhi->lock, flags);
	ring = nhi->rx_rings ? nhi->rx_rings[hop] : NULL;
	if (!ring)
		goto out;
	sr = to_sr(ring);
	spin_lock(&ring->lock);
	/* frames the peer's ring sent before this one never arrived: lost on the cable */
	if (sr->rx_synced && (s32)(seq - sr->rx_next) > 0) {
		atomic_add(seq - sr->rx_next, &rx_lost);
		sr->rx_gap = true;
	}
	if (sr->rx_gap)
		w->flags |= TBSIM_WIRE_GAP;
	if (sr->rx_synced && (s32)(seq + 1 - sr->rx_next) < 0) {
		sr->rx_backs++;
		sr->back_from = sr->rx_next;
		sr->back_to = seq + 1;
		pr_info_ratelimited("tbsim: RX ring %d: frame %u behind %u, the next expected\n",
				    hop, seq, sr->rx_next);
	}
	sr->rx_taken++;
	sr->rx_next = seq + 1;	/* a step back: the peer's TX ring is a new one */
	sr->rx_synced = true;
	sr->rx_quiet = 0;
	sr->rx_last = jiffies;
	if (ring->running && (!tbsim_ideal_frames ||
			      ((ring->sof_mask & BIT(w->sof)) && (ring->eof_mask & BIT(w->eof))))) {
		if (skb_queue_empty(&sr->backlog))
			ok = rx_deliver(sr, data, len, w);
		if (!ok && (ring->flags & RING_FLAG_E2E) &&
		    skb_queue_len(&sr->backlog) < TBSIM_E2E_BACKLOG) {
			struct sk_buff *copy = alloc_skb(len, GFP_ATOMIC);

			if (copy) {
				skb_put_data(copy, data, len);
				memcpy(copy->cb, w, sizeof(*w));
				__skb_queue_tail(&sr->backlog, copy);
				ok = true;
			}
		}
		nobuf = !ok;
	}
	sr->rx_gap = !ok;
	credit_check(sr);
	spin_unlock(&ring->lock);
out:
	spin_unlock_irqrestore(&nhi->lock, flags);
	if (nobuf)
		atomic_inc(&rx_nobuf);
	if (!ok)
		atomic_inc(&rx_dropped);
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
		rx_refill(ring);
		rx_backlog(to_sr(ring));
		credit_check(to_sr(ring));
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
			rx_interrupt(sr);
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
	init_irq_work(&sr->irq, ring_irq);
	hrtimer_init(&sr->irq_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	sr->irq_timer.function = rx_irq_timer;
	hrtimer_init(&sr->pace, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	sr->pace.function = ring_pace_timer;
	INIT_WORK(&sr->credit_work, credit_work);
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
		rx_refill(ring);
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
	return sysfs_emit(buf, "tx_frames=%d tx_dropped=%d rx_frames=%d rx_dropped=%d "
			  "rx_crc=%d rx_overrun=%d rx_lost=%d rx_nobuf=%d tx_waits=%d "
			  "credits_tx=%d credits_rx=%d resyncs=%d rx_gap=%d tx_packets=%d "
			  "rx_packets=%d rx_cut=%d rx_pdf_dropped=%d irq_throttled=%d tx_paced=%d\n",
			  atomic_read(&tx_frames), atomic_read(&tx_dropped),
			  atomic_read(&rx_frames), atomic_read(&rx_dropped),
			  atomic_read(&rx_crc), atomic_read(&rx_overrun),
			  atomic_read(&rx_lost), atomic_read(&rx_nobuf),
			  atomic_read(&tx_waits), atomic_read(&credits_tx),
			  atomic_read(&credits_rx), atomic_read(&resyncs),
			  atomic_read(&rx_gap), atomic_read(&tx_packets),
			  atomic_read(&rx_packets), atomic_read(&rx_cut),
			  atomic_read(&rx_pdf_dropped), atomic_read(&irq_throttled),
			  atomic_read(&tx_paced));
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
