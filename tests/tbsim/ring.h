/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tbsim: between ring.c (the ring API, TX, pacing, E2E limits of TX rings)
 * and ring_rx.c (RX framing, the interrupt throttle, E2E grants of RX
 * rings). Locks as in tbsim.h: each ring's tb_ring.lock.
 */
#ifndef TBSIM_RING_H
#define TBSIM_RING_H

#include <linux/dma-direct.h>

#include "tbsim.h"

/* the counters of /sys/module/thunderbolt/parameters/stats (ring.c) */
struct tbsim_ring_cnt {
	atomic_t tx_frames, rx_frames, rx_dropped, tx_dropped, rx_crc, rx_overrun;
	atomic_t rx_lost, rx_nobuf, tx_waits, credits_tx, credits_rx, resyncs, rx_gap;
	atomic_t tx_packets, rx_packets, rx_cut, rx_pdf_dropped, irq_throttled, tx_paced;
	atomic_t lane_late_us;	/* a paced ring woke after its lane fell idle: idle us */
};
extern struct tbsim_ring_cnt tbsim_ring_cnt;

static inline struct tbsim_ring *to_sr(struct tb_ring *ring)
{
	return container_of(ring, struct tbsim_ring, ring);
}

static inline void *frame_va(struct tb_ring *ring, struct ring_frame *f)
{
	return phys_to_virt(dma_to_phys(&ring->nhi->pdev->dev, f->buffer_phy));
}

static inline size_t frame_len(u32 size)
{
	return size ? size : TBSIM_FRAME_MAX;
}

/* ring_rx.c, for ring.c; ring->lock held unless said */
void tbsim_rx_refill(struct tb_ring *ring);
void tbsim_rx_backlog(struct tbsim_ring *sr);
void tbsim_rx_credit_check(struct tbsim_ring *sr);
void tbsim_rx_interrupt(struct tbsim_ring *sr);
/* the ring's irq_work, irq_timer and credit_work (no lock held) */
void tbsim_rx_irq(struct irq_work *w);
enum hrtimer_restart tbsim_rx_irq_timer(struct hrtimer *t);
void tbsim_rx_credit_work(struct work_struct *work);

#endif /* TBSIM_RING_H */
