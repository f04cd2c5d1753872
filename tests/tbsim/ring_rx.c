// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: the receive side of the NHI rings (see ring.c for the contracts):
 * frames from the cable into the RX ring's posted buffers, framed as the
 * NHI frames 256-byte transport packets by the ring's sof_mask/eof_mask
 * (rx_deliver_strict; ideal_frames=1: whole frames, for A/B), the poll
 * interrupt and its throttle (one per 128 us, tbsim_rx_interrupt), and the
 * E2E credits an RX ring grants its peer (the backlog of frames that wait
 * for a buffer, the grant, the resync).
 */
#include <linux/module.h>

#include "ring.h"

static unsigned int irq_throttle_us = 128;
module_param(irq_throttle_us, uint, 0644);
/* nhi.c nhi_enable_int_throttling: 128 us */
MODULE_PARM_DESC(irq_throttle_us, "microseconds between a ring's interrupts at least (0: none)");

static bool tbsim_ideal_frames;
module_param_named(ideal_frames, tbsim_ideal_frames, bool, 0444);
MODULE_PARM_DESC(ideal_frames, "test only, A/B: whole frames with the sender's PDFs, no packets");

/* start_poll in hard IRQ context with the ring lock held, as nhi.c calls it */
void tbsim_rx_irq(struct irq_work *w)
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
void tbsim_rx_credit_check(struct tbsim_ring *sr)
{
	s32 more = credit_limit(sr) - sr->granted;

	if (!(sr->ring.flags & RING_FLAG_E2E) || !sr->ring.running)
		return;
	if (more >= tbsim_e2e_window / 4 || (more > 0 && sr->rx_next == sr->granted))
		queue_work(tbsim.ring_wq, &sr->credit_work);
}

/* E2E: a credit packet to the peer on the cable of this RX ring's path */
void tbsim_rx_credit_work(struct work_struct *work)
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
		atomic_inc(&tbsim_ring_cnt.resyncs);
	cr.room = cpu_to_le32(limit - next);
	w.seq = cpu_to_le32(next);
	rcu_read_lock();
	if (tbsim_xd_path_of(ring->hop, false, &c, &hopid)) {
		w.hopid = cpu_to_le16(hopid);
		if (!tbsim_cable_xmit(c, &w, &cr, sizeof(cr))) {
			atomic_inc(&tbsim_ring_cnt.credits_tx);
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

/* RX buffers the hardware may fill: at most size - 1. ring->lock held. */
void tbsim_rx_refill(struct tb_ring *ring)
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
void tbsim_rx_interrupt(struct tbsim_ring *sr)
{
	ktime_t now = ktime_get();

	if (!sr->irq_on)
		return;
	sr->irq_on = false;
	if (ktime_before(now, sr->irq_next)) {
		atomic_inc(&tbsim_ring_cnt.irq_throttled);
		hrtimer_start(&sr->irq_timer, sr->irq_next, HRTIMER_MODE_ABS_HARD);
		return;
	}
	sr->irq_next = ktime_add_us(now, READ_ONCE(irq_throttle_us));
	irq_work_queue(&sr->irq);
}

/* the throttled interrupt, now due (hard IRQ) */
enum hrtimer_restart tbsim_rx_irq_timer(struct hrtimer *t)
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
		atomic_inc(&tbsim_ring_cnt.rx_crc);
		return RING_DESC_CRC_ERROR;
	}
	if (w->flags & TBSIM_WIRE_GAP) {
		atomic_inc(&tbsim_ring_cnt.rx_gap);
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
		atomic_inc(&tbsim_ring_cnt.rx_overrun);
	f->size = len & 0xfff;
	f->sof = sof;
	f->eof = eof;
	f->flags = RING_DESC_COMPLETED | flags;
	list_move_tail(&f->list, &sr->done);
	ring->head--;
	tbsim_rx_refill(ring);
	atomic_inc(&tbsim_ring_cnt.rx_frames);
	if (ring->start_poll)
		tbsim_rx_interrupt(sr);
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
	atomic_add(n, &tbsim_ring_cnt.rx_packets);
	for (i = 0; i < n; i++, data += chunk, len -= chunk) {
		chunk = min_t(size_t, len, TBSIM_PACKET_MAX);
		pdf = packet_pdf(w, i, n);
		if (!sr->rx_open) {
			if (!(ring->eof_mask & BIT(pdf)) && !(ring->sof_mask & BIT(pdf))) {
				atomic_inc(&tbsim_ring_cnt.rx_pdf_dropped);
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
				atomic_inc(&tbsim_ring_cnt.rx_cut);	/* the sender's frame goes on */
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
void tbsim_rx_backlog(struct tbsim_ring *sr)
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
		atomic_add(seq - sr->rx_next, &tbsim_ring_cnt.rx_lost);
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
	tbsim_rx_credit_check(sr);
	spin_unlock(&ring->lock);
out:
	spin_unlock_irqrestore(&nhi->lock, flags);
	if (nobuf)
		atomic_inc(&tbsim_ring_cnt.rx_nobuf);
	if (!ok)
		atomic_inc(&tbsim_ring_cnt.rx_dropped);
}
