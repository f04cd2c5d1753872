// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the poll mode (module parameter busy_poll_us; default -1: auto).
 *
 * A user doorbell (ibv_post_send) of a QP that then waits for its peer
 * (tbr_tqp_waiting: WRs not retired) busy-polls the receive path of the
 * QP's rails, as a socket with SO_BUSY_POLL does, instead of leaving the
 * next frame to the NIC's interrupt and softirq: the doorbell syscall
 * returns once a frame other than an ACK reached the QP (the answer a
 * ping-pong waits for: a WRITE, SEND, READ or ATOMIC response, placed and
 * completed by then) or after busy_poll_us, or at a signal. ACKs alone do
 * not end it (nor the QP going idle with them), since the peer acknowledges
 * before its application answers. Rails that can be polled: eth (the NIC's
 * NAPI) and tb (the RX ring, without waiting for its throttled interrupt);
 * others (veth, emu) end it at once. The cost is the
 * poster's CPU for up to busy_poll_us per doorbell.
 *
 * busy_poll_us -1 (auto, the default): only a doorbell that starts a round
 * trip (its WR the QP's only one not retired: a ping-pong, not a stream)
 * polls, for as long as the rails' backend says (busy_poll_auto_us): tb
 * rails 128 us, the NHI's interrupt throttle, within which an interrupt-
 * driven receive would wait for it (docs/bench-speed.md); others not at
 * all. 0: off. 1..10000: every doorbell of a waiting QP, that long. Counters
 * (`rdma statistic`): busy_polls, the doorbells that polled; busy_poll_rx,
 * those an answer ended; busy_poll_frames, the QP's frames the poll itself
 * took in (not the interrupt path meanwhile: xport.c's receive counts a
 * frame that reaches the QP in its poller's task outside softirq).
 *
 * Context: process (the post_send syscall), no lock held, BH on.
 */
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>

#include "link/link.h"
#include "tbrdma.h"
#include "core/tbr_core.h"
#include "xport/xport.h"

#define TBR_BUSY_POLL_MAX_US	10000	/* QEMU TCG round trips take ~1 ms */

static int busy_poll_us = -1;
module_param(busy_poll_us, int, 0644);
MODULE_PARM_DESC(busy_poll_us, "poll mode: after a doorbell, busy-poll the rails' receive path (NICs with NAPI, tb RX rings) up to this many microseconds for the QP's answer (1..10000; 0: off; default -1: auto, a doorbell that starts a round trip polls tb rails for the NHI's 128 us interrupt throttle)");

struct tbr_x_poll {
	struct tbr_xqp *x;
	u64 until;		/* ktime_get_ns() deadline */
	u64 heard;		/* frames other than ACKs when it began */
	bool rx;		/* one came in meanwhile */
};

/* frames other than ACKs the QP took in; qp->lock held */
static u64 tbr_x_heard(struct tbr_xqp *x)
{
	const struct tbr_tqp_counters *c = tbr_tqp_counters(x->tqp);

	return c->rx_frames - c->acks_rcvd;
}

/* The end test between passes: an answer, the QP disconnected, time, signal. */
static bool tbr_x_poll_end(void *arg)
{
	struct tbr_x_poll *p = arg;
	struct tbr_xqp *x = p->x;
	unsigned long flags;
	bool end;

	spin_lock_irqsave(&x->qp->lock, flags);
	p->rx = tbr_x_heard(x) != p->heard;
	end = p->rx || !x->connected;
	spin_unlock_irqrestore(&x->qp->lock, flags);
	return end || signal_pending(current) || ktime_get_ns() >= p->until;
}

void tbr_x_busy_poll(struct tbr_qp *qp)
{
	int param = READ_ONCE(busy_poll_us);
	unsigned int us = min_t(unsigned int, param, TBR_BUSY_POLL_MAX_US);
	struct tbr_xqp *x = qp->xport_priv;
	struct tbr_x_poll p = { .x = x };
	struct tbr_link *link;
	unsigned long flags;
	bool polled;

	if (!param || !x)
		return;
	spin_lock_irqsave(&qp->lock, flags);
	link = x->link;
	if (!x->connected || !link || !tbr_tqp_waiting(x->tqp) ||
	    (param < 0 && tbr_tqp_sq_queued(x->tqp) != 1)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return;
	}
	tbr_link_hold(link);	/* x->link may change while we poll */
	p.heard = tbr_x_heard(x);
	x->poller = current;
	spin_unlock_irqrestore(&qp->lock, flags);

	polled = tbr_link_busy_poll(link, param < 0 ? -1 : (int)us, &p.until,
				    tbr_x_poll_end, &p);
	tbr_link_put(link);
	spin_lock_irqsave(&qp->lock, flags);
	x->poller = NULL;
	if (!polled) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return;
	}
	x->busy_polls++;
	x->busy_poll_rx += p.rx;
	spin_unlock_irqrestore(&qp->lock, flags);
}
