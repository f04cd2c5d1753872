// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the transport glue. Joins the verbs QPs (qp.c), the OS-independent
 * transport core (core/, one struct tbr_tqp per QP) and the links (link/).
 *
 *   SQ ring --tbr_sq_fetch--> tbr_tqp_post_send --tx_alloc/tx_send--> link
 *   link --rx (bh, xport_rx.c)--> tbr_frame_peek -> QP by number -> tbr_tqp_rx
 *   core --complete--> tbr_cq_post (+ tbr_sq_retire for send WQEs)
 *   core --get_recv--> tbr_rq_fetch (RQ or SRQ)
 *   core --mr_* and sgl_* callbacks--> tbr_mr_get + tbr_mr_copy
 *
 * The peer of a connected QP is the device that owns the destination MAC the
 * RDMA core resolved for its GID (ah_attr.roce.dmac): our node GUID is the
 * EUI-64 of the netdev's MAC, so the MAC names the peer's link. Our own MAC
 * (a GID of this device: rdma_cm resolves a local address to it) names the
 * loopback link (loop.c): same-device RC/UC/UD/QP1 traffic goes through the
 * core as over a rail, delivered by a work item, never from inside a send.
 *
 * UD and GSI (QP1) QPs have no fixed peer: each send names an address handle
 * (ah.c) whose MAC picks the link. Every datagram carries a TBR_UD_ADDR_LEN
 * address block (source/destination GID, flow label, traffic class, hop
 * limit; docs/protocol.md) ahead of its payload: the sender adds it as a
 * pseudo SGE; the receiving core (cfg.ud_addr) strips it and writes the
 * RoCE v2 GRH (IPv6 header, or 20 zero bytes + IPv4 header for IPv4-mapped
 * GIDs) into the first 40 bytes of the receive buffer, and checks the Q_Key
 * against the QP's current one (tbr_tqp_set_qkey at modify_qp). Frames of
 * one core send queue go to one link, so a UD send to another peer waits
 * ("held") until the core has sent what it holds.
 *
 * Locking: every call into the core for a QP happens with qp->lock held
 * (spin_lock_irqsave), as the core requires; core callbacks run inside those
 * calls. The retransmit/ACK timer is an hrtimer in softirq mode armed at the
 * core's next deadline.
 */
#include <linux/hrtimer.h>
#include <rdma/ib_mad.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "link/link.h"
#include "tbrdma.h"
#include "core/tbr_core.h"
#include "xport/xport.h"
#include "tbr_trace.h"

/* docs/protocol.md 3.4; off only to measure what the probe changes */
static bool tail_probe = true;
module_param(tail_probe, bool, 0644);
MODULE_PARM_DESC(tail_probe, "RC tail loss probes for QPs connected from now on (default 1)");

/*
 * docs/protocol.md 3.9: the RC congestion window's floor, 16 (TBR_CWND_MIN)
 * to turn it on; off by default, as it costs time on randomly lossy rails
 * and gains little over a lossy Ethernet rail since lost retransmissions
 * are found by RACK (docs/bench-speed.md section 13)
 */
static uint cwnd_min;
module_param(cwnd_min, uint, 0644);
MODULE_PARM_DESC(cwnd_min, "RC congestion window floor in frames for QPs connected from now on, 0 = no congestion window (default 0; 16 for lossy Ethernet rails)");

/*
 * docs/protocol.md 3.3: ACKs ride on data frames going back to peers that
 * take them; off only to measure what that changes (or to talk to a peer
 * that says it takes them and does not)
 */
static bool ack_piggyback = true;
module_param(ack_piggyback, bool, 0644);
MODULE_PARM_DESC(ack_piggyback, "RC ACKs riding on data frames to peers that take them, for QPs connected from now on (default 1)");

/* ---- receive WQEs and completions ---------------------------------------- */

static int tbr_x_get_recv(void *ctx, struct tbr_tqp_recv *out)
{
	struct tbr_xqp *x = ctx;
	struct tbr_recv_wqe wqe;
	int err;

	err = tbr_rq_fetch(x->qp, &wqe);
	if (err == -EIO)
		x->error_pending = true;	/* the user broke the ring */
	if (err)
		return -ENOENT;
	out->wr_id = wqe.wr_id;
	/* a WQE with too many SGEs holds no bytes: the SEND fails with LEN_ERR */
	out->num_sge = wqe.status == IB_WC_SUCCESS ? wqe.num_sge : 0;
	BUILD_BUG_ON(sizeof(out->sge[0]) != sizeof(wqe.sge[0]));
	memcpy(out->sge, wqe.sge, out->num_sge * sizeof(out->sge[0]));
	return 0;
}

static void tbr_x_complete_send(struct tbr_xqp *x, const struct tbr_cqe *c)
{
	struct tbr_qp *qp = x->qp;
	struct tbr_xsend *s;
	struct ib_wc wc = {};

	if (WARN_ON_ONCE(x->sent_head == x->sent_tail))
		return;
	s = &x->sent[x->sent_tail++ & qp->sq.mask];
	if (x->discard)
		return;
	/*
	 * The slot is free before its CQE is visible: a consumer that polled
	 * the CQE may post into it at once (a 1-entry SQ does just that).
	 */
	tbr_sq_retire(qp);
	if (c->status != TBR_WC_SUCCESS || qp->sig_all ||
	    (s->flags & TBRDMA_WQE_SIGNALED)) {
		wc.wr_id = s->wr_id;
		wc.status = c->status;
		wc.opcode = s->wc_opcode;
		wc.byte_len = c->byte_len;
		wc.qp = &qp->ibqp;
		wc.port_num = 1;
		tbr_cq_post(qp->scq, &wc, false);
	}
}

static void tbr_x_complete(void *ctx, const struct tbr_cqe *c)
{
	struct tbr_xqp *x = ctx;
	struct tbr_qp *qp = x->qp;
	struct ib_wc wc = {};

	if (!c->recv) {
		tbr_x_complete_send(x, c);
		return;
	}
	if (x->discard)
		return;
	wc.wr_id = c->wr_id;
	wc.status = c->status;
	wc.opcode = c->opcode == TBR_WC_RECV_RDMA_WITH_IMM ?
		    IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
	wc.byte_len = c->byte_len;
	wc.qp = &qp->ibqp;
	wc.src_qp = c->src_qp;
	wc.port_num = 1;
	if (c->net_type) {	/* UD: the core wrote the GRH */
		wc.wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc.network_hdr_type = c->net_type == TBR_NET_IPV4 ?
				      RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	}
	if (c->flags & TBR_WC_WITH_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(c->imm);
	} else if (c->flags & TBR_WC_WITH_INV) {
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = c->imm;
	}
	tbr_cq_post(qp->rcq, &wc, c->flags & TBR_WC_SOLICITED);
}

static void tbr_x_qp_error(void *ctx, u32 status)
{
	((struct tbr_xqp *)ctx)->error_pending = true;
}

static const struct tbr_ops tbr_x_core_ops = {
	.sgl_read = tbr_x_sgl_read,
	.sgl_write = tbr_x_sgl_write,
	.mr_write = tbr_x_mr_write,
	.mr_read = tbr_x_mr_read,
	.mr_check = tbr_x_mr_check,
	.mr_atomic = tbr_x_mr_atomic,
	.invalidate = tbr_x_invalidate,
	.local = tbr_x_local,
	.get_recv = tbr_x_get_recv,
	.complete = tbr_x_complete,
	.tx_alloc = tbr_x_tx_alloc,
	.tx_send = tbr_x_tx_send,
	.tx_abort = tbr_x_tx_abort,
	.qp_error = tbr_x_qp_error,
};

/* ---- send queue ------------------------------------------------------------- */

static enum tbr_wr_opcode tbr_x_wr_opcode(u32 uverbs_op, bool *ok)
{
	*ok = true;
	switch (uverbs_op) {
	case IB_UVERBS_WR_SEND:			return TBR_WR_SEND;
	case IB_UVERBS_WR_SEND_WITH_IMM:	return TBR_WR_SEND_IMM;
	case IB_UVERBS_WR_RDMA_WRITE:		return TBR_WR_WRITE;
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:	return TBR_WR_WRITE_IMM;
	case IB_UVERBS_WR_RDMA_READ:		return TBR_WR_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:	return TBR_WR_CMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:	return TBR_WR_FETCH_ADD;
	case IB_UVERBS_WR_SEND_WITH_INV:	return TBR_WR_SEND_INV;
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:			return TBR_WR_LOCAL;
	}
	*ok = false;
	return TBR_WR_SEND;
}

/* Complete one WQE the core never saw, with @status, then error the QP. */
static void tbr_x_reject(struct tbr_xqp *x, const struct tbr_send_wqe *w,
			 enum ib_wc_status status)
{
	tbr_qp_complete_send(x->qp, w, status);
	x->error_pending = true;
}

/*
 * REG_MR / LOCAL_INV / BIND_MW: the core runs them in order (tbr_x_local,
 * with the sent slot as cookie); an invalidation waits for every earlier WR
 * to complete (TBR_WR_FENCE on a local WR), so none still reads the memory.
 * A bind (the WQE's fields: tbrdma-abi.h) is fenced only if the user asked.
 */
static void tbr_x_local_prep(struct tbr_xqp *x, const struct tbr_send_wqe *w,
			     struct tbr_xsend *s, struct tbr_send_wr *wr)
{
	s->local_op = w->hdr.opcode;
	s->mr = NULL;
	s->key = w->hdr.imm_data;
	switch (w->hdr.opcode) {
	case IB_WR_REG_MR:
		s->mr = to_tbr_mr((struct ib_mr *)(uintptr_t)w->hdr.remote_addr);
		s->key = w->hdr.rkey;
		s->access = w->hdr.compare_add;
		break;
	case IB_WR_BIND_MW:
		s->bind.mw_rkey = w->hdr.rkey;
		s->bind.new_rkey = w->hdr.imm_data;
		s->bind.mr_lkey = w->hdr.mr_lkey;
		s->bind.access = w->hdr.mw_access;
		s->bind.addr = w->hdr.remote_addr;
		s->bind.length = w->hdr.compare_add;
		break;
	default:
		wr->flags |= TBR_WR_FENCE;
	}
	wr->remote_addr = x->sent_head;
	wr->num_sge = 0;
	wr->flags &= ~TBR_WR_INLINE;
}

/*
 * Hand one fetched WQE to the core; @more: another one follows in this pass
 * (TBR_WR_MORE, the caller ends the chain). Returns false when the QP must
 * stop.
 */
static bool tbr_x_post(struct tbr_xqp *x, const struct tbr_send_wqe *w,
		       bool more, u64 now)
{
	struct tbr_sge sgl[TBR_MAX_SGE];
	u8 ibuf[TBR_MAX_INLINE];
	struct tbr_send_wr wr = {};
	struct tbr_xsend *s;
	bool ok;
	int err;

	if (w->status != IB_WC_SUCCESS) {
		tbr_x_reject(x, w, w->status);
		return false;
	}
	wr.opcode = tbr_x_wr_opcode(w->hdr.opcode, &ok);
	if (!ok || w->hdr.num_sge > TBR_MAX_SGE) {
		tbr_x_reject(x, w, IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	wr.wr_id = w->hdr.wr_id;
	/* every WR completes in the core; the CQE is ours to post or not */
	wr.flags = TBR_WR_SIGNALED;
	if (w->hdr.flags & TBRDMA_WQE_SOLICITED)
		wr.flags |= TBR_WR_SOLICITED;
	if (w->hdr.flags & TBRDMA_WQE_FENCE)
		wr.flags |= TBR_WR_FENCE;
	if (more)
		wr.flags |= TBR_WR_MORE;
	if (w->hdr.flags & TBRDMA_WQE_INLINE) {
		wr.flags |= TBR_WR_INLINE;
		wr.inline_data = w->inline_data;
		wr.inline_len = w->hdr.inline_len;
	} else {
		BUILD_BUG_ON(sizeof(sgl[0]) != sizeof(w->sge[0]));
		memcpy(sgl, w->sge, w->hdr.num_sge * sizeof(sgl[0]));
		wr.sgl = sgl;
		wr.num_sge = w->hdr.num_sge;
	}
	wr.remote_addr = w->hdr.remote_addr;
	wr.rkey = w->hdr.rkey;
	/* SEND_WITH_INV: the rkey, in host order (qp.c) */
	wr.imm = wr.opcode == TBR_WR_SEND_INV ? w->hdr.imm_data :
		 be32_to_cpu((__force __be32)w->hdr.imm_data);
	wr.compare_add = w->hdr.compare_add;
	wr.swap = w->hdr.swap;
	if (x->ud) {
		err = tbr_x_ud_route(x, w, &wr, sgl, ibuf);
		if (err == TBR_X_HOLD) {
			x->held = true;	/* tbr_x_kick posts it again */
			return false;
		}
		if (err) {
			tbr_x_reject(x, w, -err);
			return false;
		}
	}

	s = &x->sent[x->sent_head & x->qp->sq.mask];
	s->wr_id = w->hdr.wr_id;
	s->flags = w->hdr.flags;
	s->wc_opcode = w->wc_opcode;
	if (wr.opcode == TBR_WR_LOCAL)
		tbr_x_local_prep(x, w, s, &wr);
	x->sent_head++;
	err = tbr_tqp_post_send(x->tqp, &wr, now);
	if (!err)
		return true;
	x->sent_head--;
	tbr_x_reject(x, w, err == -EIO ? IB_WC_WR_FLUSH_ERR :
		     IB_WC_LOC_QP_OP_ERR);
	return false;
}

/* Out of budget with WQEs waiting: kick_work goes on (core/tbr_kick.h). */
static void tbr_x_defer(struct tbr_xqp *x, bool asked)
{
	int delay = tbr_kick_next(&x->kick, true);

	if (delay > 0)
		tbr_sq_set_need_doorbell(x->qp, true);
	else if (asked)
		tbr_sq_set_need_doorbell(x->qp, false);
	queue_delayed_work(system_unbound_wq, &x->kick_work, delay);
}

/*
 * Move WQEs from the SQ ring into the core while it has room. When the ring
 * is empty, ask userspace for a doorbell and look once more (the provider
 * does the mirror image: prod, full barrier, flags). At most
 * TBR_XPORT_KICK_BUDGET WQEs per call: userspace may refill the ring as fast
 * as WQEs complete (a UD datagram with no route completes at once), so the
 * rest, if any waits, is left to kick_work (tbr_x_defer; returns true). A
 * WQE with another behind it in the ring and in the budget is posted as part
 * of a chain (TBR_WR_MORE), which tbr_x_kick ends. Context: qp->lock held.
 */
static bool tbr_x_fill(struct tbr_xqp *x, u64 now)
{
	struct tbr_qp *qp = x->qp;
	unsigned int budget = TBR_XPORT_KICK_BUDGET;
	bool asked = false;
	int err;

	while (!x->error_pending) {
		if (!budget) {
			if (x->held || tbr_sq_peek(qp)) {
				tbr_x_defer(x, asked);
				return true;
			}
			/* nothing waits: ask for a doorbell below */
		} else {
			budget--;
		}
		if (!tbr_tqp_sq_space(x->tqp)) {
			/* completions free space and call us again */
			tbr_sq_set_need_doorbell(qp, false);
			return false;
		}
		if (x->held) {
			/* UD: waited for the core to drain before a new peer */
			x->held = false;
			if (!tbr_x_post(x, &x->scratch,
					budget && tbr_sq_peek(qp), now))
				return false;
			continue;
		}
		err = tbr_sq_fetch(qp, &x->scratch);
		if (err == -ENOENT) {
			if (asked)
				return false;
			tbr_sq_set_need_doorbell(qp, true);
			asked = true;
			continue;
		}
		if (err) {
			x->error_pending = true;	/* corrupt producer index */
			return false;
		}
		if (asked) {
			tbr_sq_set_need_doorbell(qp, false);
			asked = false;
		}
		if (!tbr_x_post(x, &x->scratch, budget && tbr_sq_peek(qp),
				now))
			return false;
	}
	return false;
}

/* Fill the core from the SQ ring and transmit the chain posted. */
static void tbr_x_kick(struct tbr_xqp *x, u64 now)
{
	if (!x->connected || x->qp->state != IB_QPS_RTS)
		return;
	if (!tbr_x_fill(x, now))
		tbr_kick_idle(&x->kick);
	tbr_tqp_end_chain(x->tqp, now);
}

/*
 * Arm the timer for the core's next deadline, lazily: a queued timer due no
 * later is left alone. It fires first, finds the deadline not yet passed and
 * arms itself again from its callback, where re-arming is cheap. The deadline
 * moves later with every message of a ping-pong (the probe timeout runs from
 * each one), and moving a queued hrtimer reprograms the CPU's timer
 * whenever it was queued on another CPU: the RX path and the doorbell run on
 * different CPUs. Under QEMU (TCG) each reprogramming cost 10-25 us, twice a
 * round trip (docs/bench-speed.md). Context: qp->lock held.
 */
static void tbr_x_arm(struct tbr_xqp *x)
{
	u64 at = tbr_tqp_next_deadline(x->tqp);

	if (at == TBR_NO_DEADLINE)
		return;	/* an armed timer may fire for nothing: harmless */
	if (hrtimer_is_queued(&x->timer) && x->timer_at <= at)
		return;
	x->timer_at = at;
	hrtimer_start(&x->timer, ns_to_ktime(at), HRTIMER_MODE_ABS_SOFT);
}

/*
 * What the core counted since the last call, as tracepoints: each event
 * reports the change of its counters since the QP's previous event of that
 * kind (the first one after tracing started: since the QP was created).
 * Context: qp->lock held.
 */
static noinline void tbr_x_trace(struct tbr_xqp *x)
{
	const struct tbr_tqp_counters *c = tbr_tqp_counters(x->tqp);
	const char *dev = tbr_dev_name(xqp_dev(x));
	u32 qpn = x->qp->ibqp.qp_num;
	u64 peer = x->link ? x->link->peer_guid : 0;

	if (c->retransmits != x->tr_rtx && trace_tbr_qp_retransmit_enabled()) {
		trace_tbr_qp_retransmit(dev, qpn, peer, c->retransmits - x->tr_rtx,
					c->retransmits);
		x->tr_rtx = c->retransmits;
	}
	if (c->fast_retransmits != x->tr_fast && trace_tbr_qp_fast_retransmit_enabled()) {
		trace_tbr_qp_fast_retransmit(dev, qpn, peer, c->fast_retransmits - x->tr_fast,
					     c->fast_retransmits);
		x->tr_fast = c->fast_retransmits;
	}
	if (c->timeouts != x->tr_timeouts && trace_tbr_qp_timeout_enabled()) {
		trace_tbr_qp_timeout(dev, qpn, peer, c->timeouts - x->tr_timeouts,
				     c->timeouts);
		x->tr_timeouts = c->timeouts;
	}
	if (c->rnr_naks_sent != x->tr_rnr_sent && trace_tbr_qp_rnr_sent_enabled()) {
		trace_tbr_qp_rnr_sent(dev, qpn, peer, c->rnr_naks_sent - x->tr_rnr_sent,
				      c->rnr_naks_sent);
		x->tr_rnr_sent = c->rnr_naks_sent;
	}
	if (c->rnr_naks_rcvd != x->tr_rnr_rcvd && trace_tbr_qp_rnr_rcvd_enabled()) {
		trace_tbr_qp_rnr_rcvd(dev, qpn, peer, c->rnr_naks_rcvd - x->tr_rnr_rcvd,
				      c->rnr_naks_rcvd);
		x->tr_rnr_rcvd = c->rnr_naks_rcvd;
	}
}

/*
 * After every call into the core: errors, more WQEs, the timer, the
 * tracepoints (static keys: one patched-out jump each while nobody traces).
 */
void tbr_x_after(struct tbr_xqp *x, u64 now)
{
	if (trace_tbr_qp_retransmit_enabled() || trace_tbr_qp_fast_retransmit_enabled() ||
	    trace_tbr_qp_timeout_enabled() || trace_tbr_qp_rnr_sent_enabled() ||
	    trace_tbr_qp_rnr_rcvd_enabled())
		tbr_x_trace(x);
	if (!x->error_pending)
		tbr_x_kick(x, now);
	if (x->error_pending) {
		x->error_pending = false;
		tbr_qp_set_error(x->qp);	/* calls tbr_x_flush */
		return;
	}
	tbr_x_arm(x);
}

/*
 * Context: process. Go on where tbr_x_kick ran out of budget; with BH off,
 * so the backend's transmit tasklet runs here on local_bh_enable() (as for
 * a doorbell, tbr_post_send), not in ksoftirqd.
 */
static void tbr_x_kick_work(struct work_struct *work)
{
	struct tbr_xqp *x = container_of(to_delayed_work(work), struct tbr_xqp,
					 kick_work);
	unsigned long flags;

	local_bh_disable();
	spin_lock_irqsave(&x->qp->lock, flags);
	if (x->connected)
		tbr_x_after(x, ktime_get_ns());
	spin_unlock_irqrestore(&x->qp->lock, flags);
	local_bh_enable();
}

static enum hrtimer_restart tbr_x_timer(struct hrtimer *t)
{
	struct tbr_xqp *x = container_of(t, struct tbr_xqp, timer);
	unsigned long flags;
	u64 now = ktime_get_ns();

	spin_lock_irqsave(&x->qp->lock, flags);
	if (x->connected) {
		tbr_tqp_progress(x->tqp, now);
		tbr_x_after(x, now);
	}
	spin_unlock_irqrestore(&x->qp->lock, flags);
	return HRTIMER_NORESTART;
}

/* ---- tbr_xport_ops: called by qp.c ------------------------------------------ */

static int tbr_x_qp_create(struct tbr_qp *qp)
{
	struct tbr_tqp_cfg cfg = {
		.qpn = qp->ibqp.qp_num,
		.sq_depth = min_t(u32, qp->sq.entries, TBR_SQ_DEPTH_MAX),
		.win = TBR_XPORT_WIN,
		.mtu = TBR_XPORT_MTU,
		.max_rd_atomic = TBR_ATOMIC_CACHE,
		.pkeys = &to_tbr_dev(qp->ibqp.device)->pkeys,
		.gsi = qp->ibqp.qp_type == IB_QPT_GSI,
	};
	struct tbr_xqp *x;

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		cfg.type = TBR_QPT_RC;
		break;
	case IB_QPT_UC:
		cfg.type = TBR_QPT_UC;
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		cfg.type = TBR_QPT_UD;
		cfg.qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY : 0;
		cfg.ud_addr = true;
		break;
	default:
		return -EOPNOTSUPP;
	}
	x = kzalloc(sizeof(*x), TBR_GFP_USER);
	if (!x)
		return -ENOMEM;
	x->sent = kvcalloc(qp->sq.entries, sizeof(*x->sent), TBR_GFP_USER);
	if (!x->sent)
		goto err_free;
	x->txvoid = kmalloc(TBR_FRAME_MAX, TBR_GFP_USER);
	if (!x->txvoid)
		goto err_sent;
	if (cfg.type == TBR_QPT_UD) {
		x->ud = true;
		x->uda = kvcalloc(qp->sq.entries, sizeof(*x->uda), TBR_GFP_USER);
		if (!x->uda)
			goto err_sent;
	}
	x->qp = qp;
	x->tqp = tbr_tqp_create(&cfg, &tbr_x_core_ops, x);
	if (!x->tqp)
		goto err_sent;
	hrtimer_init(&x->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	x->timer.function = tbr_x_timer;
	INIT_DELAYED_WORK(&x->kick_work, tbr_x_kick_work);
	INIT_LIST_HEAD(&x->stall_node);
	qp->xport_priv = x;
	return 0;

err_sent:
	kfree(x->txvoid);
	kvfree(x->uda);
	kvfree(x->sent);
err_free:
	kfree(x);
	return -ENOMEM;
}

void tbr_xport_qp_counters(struct tbr_qp *qp, u64 *v)
{
	struct tbr_xqp *x = qp->xport_priv;
	const struct tbr_tqp_counters *c;

	if (!x)
		return;
	c = tbr_tqp_counters(x->tqp);
	v[TBR_XCNT_TX_FRAMES] += c->tx_frames;
	v[TBR_XCNT_TX_BYTES] += c->tx_bytes;
	v[TBR_XCNT_RX_FRAMES] += c->rx_frames;
	v[TBR_XCNT_RX_BYTES] += c->rx_bytes;
	v[TBR_XCNT_RETRANSMITS] += c->retransmits;
	v[TBR_XCNT_FAST_RETRANSMITS] += c->fast_retransmits;
	v[TBR_XCNT_SPURIOUS_RETRANSMITS] += c->spurious_retransmits;
	v[TBR_XCNT_TIMEOUTS] += c->timeouts;
	v[TBR_XCNT_TAIL_PROBES] += c->tail_probes;
	v[TBR_XCNT_CWND_CUTS] += c->cwnd_cuts;
	v[TBR_XCNT_PKEY_VIOLATIONS] += c->pkey_violations;
	v[TBR_XCNT_DUPLICATES] += c->duplicates;
	v[TBR_XCNT_OUT_OF_WINDOW] += c->out_of_window;
	v[TBR_XCNT_RX_MALFORMED] += c->rx_malformed;
	v[TBR_XCNT_RX_INVALID] += c->rx_invalid;
	v[TBR_XCNT_NAKS_SENT] += c->naks_sent;
	v[TBR_XCNT_NAKS_RCVD] += c->naks_rcvd;
	v[TBR_XCNT_RNR_NAKS_SENT] += c->rnr_naks_sent;
	v[TBR_XCNT_RNR_NAKS_RCVD] += c->rnr_naks_rcvd;
	v[TBR_XCNT_TX_STALLS] += c->tx_stalls;
	v[TBR_XCNT_ACKS_PIGGYBACKED] += c->acks_piggybacked;
	v[TBR_XCNT_BUSY_POLLS] += x->busy_polls;
	v[TBR_XCNT_BUSY_POLL_RX] += x->busy_poll_rx;
	v[TBR_XCNT_BUSY_POLL_FRAMES] += x->busy_poll_frames;
	v[TBR_XCNT_KICK_REQUEUES] += x->kick.requeues;
	v[TBR_XCNT_KICK_BACKOFFS] += x->kick.backoffs;
}

bool tbr_xport_qp_path(struct tbr_qp *qp, struct tbr_tqp_path *p)
{
	struct tbr_xqp *x = qp->xport_priv;

	return x && x->connected && tbr_tqp_path(x->tqp, p);
}

bool tbr_xport_qp_tx_stalled(struct tbr_qp *qp, bool *listed)
{
	struct tbr_xqp *x = qp->xport_priv;
	struct tbr_dev *tdev;

	*listed = false;
	if (!x)
		return false;
	tdev = xqp_dev(x);
	spin_lock(&tdev->xstall_lock);
	*listed = !list_empty(&x->stall_node);
	spin_unlock(&tdev->xstall_lock);
	return x->stalled;
}

/*
 * Congestion window and RTT per link (docs/protocol.md 3.9, 3.4): an RC QP
 * starts where the last one over the same link ended, so a lossy link does
 * not make each new QP (a perftest run, an rdma_cm connection) lose its
 * first bursts again, a lossless one keeps giving the whole window, and a
 * first flight that is lost is probed within a few RTTs instead of waiting
 * for the retransmit timeout. Context: process, QP not running (its timer
 * and work are stopped or not started).
 */
static void tbr_x_keep_hints(struct tbr_xqp *x)
{
	struct tbr_tqp_path p;

	if (!x->link || !tbr_tqp_path(x->tqp, &p))	/* no connected RC QP */
		return;
	if (p.cwnd)	/* 0: no window */
		WRITE_ONCE(x->link->cwnd_hint, p.cwnd);
	if (p.srtt)	/* 0: nothing measured */
		WRITE_ONCE(x->link->srtt_hint, p.srtt);
}

/* What the link tells a new connection: hints, and what its peer takes. */
static void tbr_x_conn_hints(struct tbr_xqp *x, struct tbr_tqp_conn *conn)
{
	struct tbr_link *link = tbr_x_link(x);	/* the core uses them for RC only */

	conn->cwnd_init = link ? READ_ONCE(link->cwnd_hint) : 0;
	conn->srtt_init = link ? READ_ONCE(link->srtt_hint) : 0;
	conn->ack_piggyback = link && READ_ONCE(ack_piggyback) &&
			      (tbr_link_peer_feat(link) & TBR_PEER_ACK_RIDE);
}

/* Context: process; no frame or timer can reach the QP any more. */
static void tbr_x_qp_destroy(struct tbr_qp *qp)
{
	struct tbr_xqp *x = qp->xport_priv;
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);
	u64 v[TBR_XCNT_MAX] = {};
	int i;

	if (!x)
		return;
	/* neither the timer nor kick_work touch an unconnected QP */
	spin_lock_irq(&qp->lock);
	/* the peer's last message acknowledged (again: protocol.md 3.3) */
	if (x->connected)
		tbr_tqp_ack_final(x->tqp);
	x->connected = false;
	spin_unlock_irq(&qp->lock);
	hrtimer_cancel(&x->timer);
	cancel_delayed_work_sync(&x->kick_work);
	spin_lock_irq(&tdev->xstall_lock);
	list_del_init(&x->stall_node);
	spin_unlock_irq(&tdev->xstall_lock);
	tbr_xport_qp_counters(qp, v);
	for (i = 0; i < TBR_XCNT_MAX; i++)
		atomic64_add(v[i], &tdev->xcnt_retired[i]);
	tbr_x_keep_hints(x);
	if (x->link)
		tbr_link_put(x->link);
	tbr_tqp_destroy(x->tqp);
	kfree(x->txvoid);
	kvfree(x->uda);
	kvfree(x->sent);
	kfree(x);
	qp->xport_priv = NULL;
}

/* IBTA 9.7.5.2.8 minimum RNR NAK timer field -> nanoseconds */
static u64 tbr_rnr_timer_ns(u8 field)
{
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return (u64)us[field & 31] * NSEC_PER_USEC;
}

static void tbr_x_conn(struct tbr_xqp *x, struct tbr_tqp_conn *conn)
{
	struct tbr_qp *qp = x->qp;

	tbr_tqp_conn_defaults(conn);
	conn->dest_qpn = qp->attr.dest_qp_num;
	/* the same on both ends without negotiation */
	conn->conn_id = (qp->ibqp.qp_num ^ qp->attr.dest_qp_num) & 0xffff;
	conn->sq_psn = qp->attr.sq_psn;
	conn->rq_psn = qp->attr.rq_psn;
	/* IBTA local ACK timeout: 4.096 us * 2^timeout, 0 = infinite */
	conn->timeout_ns = qp->attr.timeout ?
			   4096ULL << min_t(u8, qp->attr.timeout, 31) : 0;
	conn->retry_cnt = qp->attr.retry_cnt;
	conn->rnr_retry = qp->attr.rnr_retry;
	conn->min_rnr_timer_ns = tbr_rnr_timer_ns(qp->attr.min_rnr_timer);
	conn->tail_probe = READ_ONCE(tail_probe);
	conn->cwnd_min = READ_ONCE(cwnd_min);
}

/*
 * RC/UC frame payload: what the link's smallest rail frame carries (both ends
 * of a link see the same rails and frame sizes), at most TBR_XPORT_MTU. With
 * no link yet, TBR_XPORT_MTU. A link whose frames cannot carry TBR_MTU_MIN
 * bytes fails the QP. Context: qp->lock held.
 */
static int tbr_x_conn_mtu(struct tbr_xqp *x, struct tbr_tqp_conn *conn)
{
	struct tbr_link *link;
	u32 frame;

	conn->mtu = TBR_XPORT_MTU;
	if (x->ud)
		return 0;
	link = tbr_x_link(x);
	if (!link)
		return 0;
	frame = tbr_link_max_frame(link);
	if (frame < TBR_HDR_MAX + TBR_MTU_MIN) {
		pr_warn_ratelimited("tbrdma: QP %u: link frames of %u bytes cannot carry RC/UC (%u needed)\n",
				    x->qp->ibqp.qp_num, frame, TBR_HDR_MAX + TBR_MTU_MIN);
		return -EINVAL;
	}
	conn->mtu = min_t(u32, TBR_XPORT_MTU, frame - TBR_HDR_MAX);
	return 0;
}

/*
 * RTR: the QP answers its peer from now on (a passive side may stay in RTR
 * for good); RTS: it starts sending.
 */
static void tbr_x_connect(struct tbr_xqp *x, enum ib_qp_state old)
{
	struct tbr_qp *qp = x->qp;
	struct tbr_tqp_conn conn;
	int err = 0;

	tbr_x_conn(x, &conn);
	if (qp->state == IB_QPS_RTR && old == IB_QPS_INIT) {
		err = tbr_x_conn_mtu(x, &conn);
		if (!err) {
			tbr_x_conn_hints(x, &conn);
			err = tbr_tqp_connect(x->tqp, &conn);
		}
		x->sent_head = x->sent_tail = 0;
		x->connected = !err;
	} else if (qp->state == IB_QPS_RTS && old == IB_QPS_RTR) {
		err = tbr_tqp_start_send(x->tqp, &conn);
	}
	if (err)
		x->error_pending = true;
}

static void tbr_x_modify(struct tbr_qp *qp, enum ib_qp_state old, int mask)
{
	struct tbr_xqp *x = qp->xport_priv;
	u64 now = ktime_get_ns();

	if (mask & IB_QP_QKEY)
		tbr_tqp_set_qkey(x->tqp, qp->attr.qkey);
	/* checked against the table's length by modify_qp */
	if (mask & IB_QP_PKEY_INDEX)
		tbr_tqp_set_pkey_index(x->tqp, qp->attr.pkey_index);
	if (qp->state == IB_QPS_RESET && old != IB_QPS_RESET) {
		/* every WQE is discarded without a completion */
		x->discard = true;
		tbr_tqp_flush(x->tqp);
		x->discard = false;
		x->connected = false;
		x->held = false;
		x->sent_head = x->sent_tail = 0;
		tbr_x_keep_hints(x);
		if (x->link) {
			tbr_link_put(x->link);
			x->link = NULL;
		}
		hrtimer_try_to_cancel(&x->timer);
		return;
	}
	tbr_x_connect(x, old);
	if (x->connected)
		tbr_x_after(x, now);
}

static void tbr_x_doorbell(struct tbr_qp *qp)
{
	struct tbr_xqp *x = qp->xport_priv;

	/* the user made a system call: kick_work may go on at once again */
	tbr_kick_doorbell(&x->kick);
	tbr_x_after(x, ktime_get_ns());
}

static void tbr_x_flush(struct tbr_qp *qp)
{
	struct tbr_xqp *x = qp->xport_priv;

	x->connected = false;
	x->error_pending = false;
	tbr_tqp_flush(x->tqp);
	if (x->held) {	/* taken from the SQ after everything the core held */
		x->held = false;
		tbr_qp_complete_send(qp, &x->scratch, IB_WC_WR_FLUSH_ERR);
	}
	hrtimer_try_to_cancel(&x->timer);
}

const struct tbr_xport_ops tbr_xport_ops = {
	.qp_create = tbr_x_qp_create,
	.qp_destroy = tbr_x_qp_destroy,
	.modify = tbr_x_modify,
	.sq_doorbell = tbr_x_doorbell,
	.busy_poll = tbr_x_busy_poll,
	.flush = tbr_x_flush,
};
