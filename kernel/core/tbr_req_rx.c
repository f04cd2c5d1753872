// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_req_rx.c - requester half of the transport core, receive direction:
 * ACKs and NAKs (with their SACK words and riders), READ and ATOMIC
 * responses, sliding una and retiring WRs in posting order with their send
 * completions. Sending: tbr_req.c; loss detection: tbr_req_loss.c.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

static const u8 tbr_wr_wc_op[] = {
	[TBR_WR_SEND]		= TBR_WC_SEND,
	[TBR_WR_SEND_IMM]	= TBR_WC_SEND,
	[TBR_WR_SEND_INV]	= TBR_WC_SEND,
	[TBR_WR_WRITE]		= TBR_WC_RDMA_WRITE,
	[TBR_WR_WRITE_IMM]	= TBR_WC_RDMA_WRITE,
	[TBR_WR_READ]		= TBR_WC_RDMA_READ,
	[TBR_WR_CMP_SWAP]	= TBR_WC_COMP_SWAP,
	[TBR_WR_FETCH_ADD]	= TBR_WC_FETCH_ADD,
	[TBR_WR_LOCAL]		= TBR_WC_LOCAL,
};

/*
 * Mark [psn, psn + n) done, except READ/ATOMIC response PSNs; @now !=
 * TBR_NO_DEADLINE: they were delivered (acknowledged) at @now.
 */
bool tbr_req_mark(struct tbr_tqp *qp, u32 psn, u32 n, u64 now)
{
	u32 w = tbr_win(qp);
	bool progress = false;

	while (n) {
		u32 k = n < 64 ? n : 64;
		u64 v = tbr_low_mask(k) & ~tbr_bm_get64(qp->rdm, w, psn) &
			~tbr_bm_get64(qp->done, w, psn);

		if (v) {
			tbr_bm_or64(qp->done, w, psn, v);
			if (now != TBR_NO_DEADLINE)
				tbr_req_delivered(qp, psn, v, now);
			progress = true;
		}
		psn += k;
		n -= k;
	}
	return progress;
}

static __always_inline void tbr_wc_send(struct tbr_tqp *qp, struct tbr_swqe *w,
					 u32 status)
{
	struct tbr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = w->wr_id;
	c.status = status;
	c.opcode = tbr_wr_wc_op[w->opcode];
	c.byte_len = w->length;
	c.src_qp = qp->cfg.qpn;
	qp->ops->complete(qp->ctx, &c);
}

/* Slide una over done PSNs and retire finished WRs in posting order. */
bool tbr_req_advance(struct tbr_tqp *qp)
{
	u32 w = tbr_win(qp);
	u32 out = (u32)tbr_psn_diff(qp->snd_nxt, qp->una);
	u32 n = tbr_bm_run(qp->done, w, qp->una, out);
	u32 i, psn = qp->una, una, head, head0, mask = qp->sq_mask;
	struct tbr_swqe *sq = qp->sq;
	const struct tbr_ops *ops = qp->ops;
	void *ctx = qp->ctx;
	bool cqe;		/* a WR retired */
	struct tbr_cqe c;

	for (i = 0; i < n;) {
		u32 k = n - i < 64 ? n - i : 64;
		u64 m = tbr_low_mask(k);

		tbr_bm_clr64(qp->done, w, psn, m);
		tbr_bm_clr64(qp->rdm, w, psn, m);
		tbr_bm_clr64(qp->rtxd, w, psn, m);
		tbr_bm_clr64(qp->amb, w, psn, m);
		psn += k;
		i += k;
	}
	una = tbr_psn_add(qp->una, n);
	qp->una = una;
	if (n) {
		tbr_req_round(qp);
		tbr_req_cwnd_open(qp, n);
	}

	/*
	 * The sent WRs una passed, in order: the queue's state in locals (the
	 * compiler reloaded it after every completion call), sq_head stored
	 * before each call as before.
	 */
	head0 = qp->sq_head;
	/* what every success completion of the QP shares, once */
	memset(&c, 0, sizeof(c));
	c.status = TBR_WC_SUCCESS;
	c.src_qp = qp->cfg.qpn;
	for (head = head0; head != qp->sq_next; head++) {
		struct tbr_swqe *wr = &sq[head & mask];

		if (wr->status ||
		    tbr_psn_diff(una, tbr_psn_add(wr->first_psn, wr->npsn)) < 0)
			break;
		qp->sq_head = head + 1;
		if (wr->rd)
			qp->rd_out--;
		if (wr->flags & TBR_WR_SIGNALED) {
			c.wr_id = wr->wr_id;
			c.opcode = tbr_wr_wc_op[wr->opcode];
			c.byte_len = wr->length;
			ops->complete(ctx, &c);
		}
	}
	cqe = head != head0;
	/* the oldest WR failed (sent or not): it completes, the QP fails */
	if (head != qp->sq_tail && sq[head & mask].status) {
		struct tbr_swqe *wr = &sq[head & mask];
		u32 st = wr->status;

		if (cqe)
			qp->rnr_left = qp->conn.rnr_retry;
		qp->sq_head = head + 1;
		if (wr->rd)
			qp->rd_out--;
		tbr_wc_send(qp, wr, st);
		tbr_tqp_fatal(qp, st);
		return n > 0;
	}
	/* a WR retired: the RNR budget is whole again */
	if (cqe)
		qp->rnr_left = qp->conn.rnr_retry;
	return n > 0;
}

/*
 * Forward progress: reset the retry budget and the tail loss probe. The
 * retransmit timer restarts only when @una_moved (the oldest PSN was
 * acknowledged, as TCP restarts its RTO, RFC 6298 5.3): a PSN delivered
 * past a hole is no news of the hole, and a stream of such deliveries (tail
 * probes filling the holes of a flight one by one from its end, each
 * answered) kept the timer, the only thing that resends a lost fast
 * retransmit, from firing: 19 s for a few hundred PSNs after a cable cut
 * (docs/bench-speed.md section 13, tests/unit/test_cwnd.c).
 */
static void tbr_req_progress_made(struct tbr_tqp *qp, u64 now, bool una_moved)
{
	qp->retries_left = qp->conn.retry_cnt;
	qp->rtx_mark = tbr_req_rtx_count(qp);
	qp->blocked_rtos = 0;
	if (una_moved)
		qp->rto_deadline = TBR_NO_DEADLINE;
	qp->pto_deadline = TBR_NO_DEADLINE;
	qp->tlp_sent = 0;
	if (qp->una != qp->snd_nxt) {
		tbr_req_arm(qp, now);
		tbr_req_tlp_arm(qp, now);
	}
}

static u32 tbr_syn_status(u8 syn)
{
	switch (syn) {
	case TBR_SYN_NAK_INV_REQ:
		return TBR_WC_REM_INV_REQ_ERR;
	case TBR_SYN_NAK_REM_ACCESS:
		return TBR_WC_REM_ACCESS_ERR;
	default:
		return TBR_WC_REM_OP_ERR;
	}
}

static int tbr_req_ack(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now)
{
	u32 w = tbr_win(qp);
	s32 out = tbr_psn_diff(qp->snd_nxt, qp->una);
	s32 d = tbr_psn_diff(h->epsn, qp->una);
	u32 una0 = qp->una;
	bool progress = false;
	u32 j;

	/* A stale (delayed) ACK is fine; one beyond snd_nxt is bogus. */
	if (d > out) {
		qp->cnt.rx_invalid++;
		return -EINVAL;
	}
	qp->acked_by_ride = h->opcode != TBR_OP_ACK;
	if (qp->acked_by_ride)
		qp->cnt.acks_pb_rcvd++;
	else
		qp->cnt.acks_rcvd++;
	if (d > 0) {
		progress |= tbr_req_mark(qp, qp->una, (u32)d, now);
		tbr_req_requested(qp, tbr_psn_add(h->epsn, TBR_PSN_MASK), 1);
	}
	for (j = 0; j < h->nwords; j++) {
		u32 base = tbr_psn_add(h->epsn, 64 * j);
		s32 o = tbr_psn_diff(base, qp->una);
		u64 v = tbr_ack_word(h, j), nv;

		if (o >= out)
			break;
		if (o < 0)
			v = o <= -64 ? 0 : v & ~tbr_low_mask((u32)-o);
		if (out - o < 64)
			v &= tbr_low_mask((u32)(out - o));
		if (!v)
			continue;
		tbr_req_requested(qp, base, v);
		nv = v & ~tbr_bm_get64(qp->rdm, w, base) &
		     ~tbr_bm_get64(qp->done, w, base);
		if (nv) {
			tbr_bm_or64(qp->done, w, base, nv);
			tbr_req_delivered(qp, base, nv, now);
			progress = true;
		}
	}
	if (h->syndrome == TBR_SYN_ACK && (h->aux & TBR_ACK_DSACK))
		tbr_req_dsack(qp, h->aux & TBR_PSN_MASK);

	if (h->syndrome != TBR_SYN_ACK) {
		s32 o = tbr_psn_diff(h->psn, qp->una);
		u32 msn;
		struct tbr_swqe *wr;

		if (o < 0 || o >= out)
			goto out;
		msn = qp->psn_msn[h->psn & qp->wmask];
		wr = tbr_wr(qp, msn);
		if (h->syndrome == TBR_SYN_RNR_NAK) {
			qp->cnt.rnr_naks_rcvd++;
			if (qp->rnr_until != TBR_NO_DEADLINE ||
			    tbr_bm_test(qp->done, h->psn & qp->wmask))
				goto out;
			if (qp->conn.rnr_retry != 7) {
				if (!qp->rnr_left) {
					tbr_req_fail(qp, wr, msn,
						     TBR_WC_RNR_RETRY_EXC_ERR);
					goto out;
				}
				qp->rnr_left--;
			}
			qp->rnr_until = now + (h->aux ? (u64)h->aux * 1000 : 1);
			qp->rto_deadline = TBR_NO_DEADLINE;
			qp->rtx_active = 0;
		} else {
			qp->cnt.naks_rcvd++;
			progress |= tbr_req_mark(qp, qp->una, (u32)o,
						 TBR_NO_DEADLINE);
			tbr_req_fail(qp, wr, msn, tbr_syn_status(h->syndrome));
		}
	}
out:
	progress |= tbr_req_advance(qp);
	if (qp->error)
		return 0;
	if (progress && qp->rnr_until == TBR_NO_DEADLINE)
		tbr_req_progress_made(qp, now, qp->una != una0);
	if (h->syndrome == TBR_SYN_ACK)
		tbr_req_rack(qp, now);
	return 0;
}

/* READ response or ATOMIC response. */
static int tbr_req_resp(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now)
{
	u32 idx = h->psn & qp->wmask;
	s32 o = tbr_psn_diff(h->psn, qp->una);
	struct tbr_swqe *w;
	u32 msn, off, len, una0;
	int ret;

	if (o < 0) {
		qp->cnt.duplicates++;
		return 0;
	}
	if (o >= tbr_psn_diff(qp->snd_nxt, qp->una) ||
	    !tbr_bm_test(qp->rdm, idx))
		goto invalid;
	msn = qp->psn_msn[idx];
	w = tbr_wr(qp, msn);
	if (h->msn != w->wmsn)
		goto invalid;
	if (h->opcode == TBR_OP_READ_RESP) {
		if (w->opcode != TBR_WR_READ)
			goto invalid;
		off = (u32)tbr_psn_diff(h->psn, w->first_psn) * qp->cfg.mtu;
		len = w->length - off;
		if (len > qp->cfg.mtu)
			len = qp->cfg.mtu;
		if (h->offset != off || h->paylen != len)
			goto invalid;
	} else {
		if (!tbr_wr_is_atomic(w->opcode) || h->psn != w->first_psn ||
		    h->paylen)
			goto invalid;
		off = 0;
		len = 8;
	}
	if (tbr_bm_test(qp->done, idx)) {
		qp->cnt.duplicates++;
		return 0;
	}
	if (!w->status && len) {
		if (h->opcode == TBR_OP_READ_RESP) {
			ret = qp->ops->sgl_write(qp->ctx, w->sge, w->num_sge,
						 off, h->payload, len);
		} else {
			u64 orig = h->orig;

			ret = qp->ops->sgl_write(qp->ctx, w->sge, w->num_sge,
						 0, &orig, 8);
		}
		if (ret)
			tbr_req_fail(qp, w, msn, TBR_WC_LOC_PROT_ERR);
	}
	tbr_bm_set(qp->done, idx);
	tbr_req_delivered(qp, h->psn, 1, now);
	/* Responses are generated in order: all earlier requests arrived. */
	o = tbr_psn_diff(w->first_psn, qp->una);
	if (o > 0)
		tbr_req_mark(qp, qp->una, (u32)o, now);
	if (now >= qp->rd_hole_deadline)
		tbr_req_rd_hole(qp, now);
	if (w->opcode == TBR_WR_READ)
		tbr_req_rd_hole_check(qp, w, h->psn, now);
	una0 = qp->una;
	tbr_req_advance(qp);
	if (!qp->error && qp->rnr_until == TBR_NO_DEADLINE) {
		tbr_req_progress_made(qp, now, qp->una != una0);
		tbr_req_rack(qp, now);
	}
	return 0;

invalid:
	qp->cnt.rx_invalid++;
	return -EINVAL;
}

int tbr_req_rx(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now)
{
	int ret;

	if (qp->cfg.type != TBR_QPT_RC) {
		qp->cnt.rx_invalid++;
		return -EINVAL;
	}
	/*
	 * An ACK that a retransmitted frame made (RETRANS), or a response to
	 * a request sent again, may be the first news of PSNs whose own ACK
	 * was lost long before: good for ordering, not for timing.
	 */
	if (h->opcode == TBR_OP_ACK) {
		qp->untimed = !!(h->flags & TBR_F_RETRANS);
		ret = tbr_req_ack(qp, h, now);
	} else {
		qp->untimed = tbr_bm_test(qp->rtxd, h->psn & qp->wmask);
		ret = tbr_req_resp(qp, h, now);
	}
	qp->untimed = 0;
	return ret;
}

/*
 * The ACK a SEND or WRITE frame carried (TBR_F_ACK), before the frame goes
 * to the responder: an ACK saying epsn and nothing else (@h's syndrome,
 * bitmap words and aux are 0). 0, or -EINVAL (counted) and the frame is
 * dropped: a QP without acknowledgements, or an epsn beyond what was sent.
 */
int tbr_req_rx_ack_rider(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now)
{
	int ret;

	if (qp->cfg.type != TBR_QPT_RC) {
		qp->cnt.rx_invalid++;
		return -EINVAL;
	}
	qp->untimed = !!(h->flags & TBR_F_RETRANS);
	ret = tbr_req_ack(qp, h, now);
	qp->untimed = 0;
	return ret;
}

void tbr_req_flush(struct tbr_tqp *qp)
{
	while (qp->sq_head != qp->sq_tail) {
		struct tbr_swqe *w = tbr_wr(qp, qp->sq_head);

		qp->sq_head++;
		tbr_wc_send(qp, w, TBR_WC_WR_FLUSH_ERR);
	}
	qp->sq_next = qp->sq_tail;
	qp->rd_out = 0;
	qp->una = qp->snd_nxt = qp->cur_psn = qp->next_psn;
	memset(qp->done, 0, tbr_win(qp) / 8);
	memset(qp->rdm, 0, tbr_win(qp) / 8);
	memset(qp->rtxd, 0, tbr_win(qp) / 8);
	memset(qp->frx, 0, tbr_win(qp) / 4);
	memset(qp->amb, 0, tbr_win(qp) / 8);
	qp->rto_deadline = TBR_NO_DEADLINE;
	qp->pto_deadline = TBR_NO_DEADLINE;
	qp->tlp_sent = 0;
	qp->rnr_until = TBR_NO_DEADLINE;
	qp->rack_deadline = TBR_NO_DEADLINE;
	qp->rd_hole_deadline = TBR_NO_DEADLINE;
	qp->rd_hole_retry = 0;
	qp->rtx_active = 0;
}
