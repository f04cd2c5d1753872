// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_req.c - requester half of the transport core, send direction: the
 * send queue's WRs framed into the PSN window, retransmission (the timeout
 * sweep and SACK-driven resends), RNR backoff and the requester's timers.
 * Posting WRs: tbr_req_post.c; ACKs, responses and send completions:
 * tbr_req_rx.c; loss detection: tbr_req_loss.c.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

void tbr_req_reset(struct tbr_tqp *qp)
{
	u32 w = tbr_win(qp);

	qp->sq_head = 0;
	qp->sq_next = 0;
	qp->sq_tail = 0;
	qp->next_rmsn = 0;
	qp->next_wmsn = 0;
	qp->cur_psn = qp->conn.sq_psn;
	qp->next_psn = qp->conn.sq_psn;
	qp->una = qp->conn.sq_psn;
	qp->snd_nxt = qp->conn.sq_psn;
	memset(qp->done, 0, w / 8);
	memset(qp->rdm, 0, w / 8);
	memset(qp->rtxd, 0, w / 8);
	memset(qp->frx, 0, w / 4);
	memset(qp->amb, 0, w / 8);
	qp->rd_out = 0;
	qp->retries_left = qp->conn.retry_cnt;
	qp->rtx_mark = tbr_req_rtx_count(qp);
	qp->blocked_rtos = 0;
	qp->rack_valid = 0;
	qp->rack_ts = 0;
	qp->rack_rtt = 0;
	qp->rack_psn = qp->conn.sq_psn;
	qp->min_rtt = TBR_NO_DEADLINE;
	qp->srtt = 0;
	qp->rtt_hi = 0;
	qp->reo_meas = 0;
	qp->reo_mult = TBR_REO_MULT_INIT;
	qp->reo_persist = TBR_REO_PERSIST;
	qp->reo_mark = qp->conn.sq_psn;
	qp->reo_round = qp->conn.sq_psn;
	qp->rack_lost = 0;
	qp->rack_arm_at = TBR_NO_DEADLINE;
	qp->rack_deadline = TBR_NO_DEADLINE;
	qp->rd_hole_deadline = TBR_NO_DEADLINE;
	qp->rd_hole_retry = 0;
	qp->rnr_left = qp->conn.rnr_retry;
	qp->rto_deadline = TBR_NO_DEADLINE;
	qp->pto_deadline = TBR_NO_DEADLINE;
	qp->tlp_sent = 0;
	qp->tail_flags = 0;
	qp->acked_by_ride = 0;
	qp->rnr_until = TBR_NO_DEADLINE;
	qp->rtx_active = 0;
	qp->halted = 0;
	tbr_req_cwnd_reset(qp);
}

static const u8 tbr_wr_wire_op[] = {
	[TBR_WR_SEND]		= TBR_OP_SEND,
	[TBR_WR_SEND_IMM]	= TBR_OP_SEND_IMM,
	[TBR_WR_SEND_INV]	= TBR_OP_SEND_INV,
	[TBR_WR_WRITE]		= TBR_OP_WRITE,
	[TBR_WR_WRITE_IMM]	= TBR_OP_WRITE_IMM,
	[TBR_WR_READ]		= TBR_OP_READ_REQ,
	[TBR_WR_CMP_SWAP]	= TBR_OP_CMP_SWAP,
	[TBR_WR_FETCH_ADD]	= TBR_OP_FETCH_ADD,
};

/*
 * Fill the payload of the frame in @buf (header of @hl bytes) with @paylen
 * bytes from offset @off of @w and send it. Returns 0, or -EIO when the
 * local SGE list cannot be read (w->status is set, @buf given back).
 */
static inline int tbr_req_emit(struct tbr_tqp *qp, struct tbr_swqe *w,
			       u8 *buf, u32 hl, u32 off, u32 paylen, u8 flags,
			       bool retrans)
{
	int ret;

	if (paylen) {
		if (w->flags & TBR_WR_INLINE) {
			memcpy(buf + hl, w->inline_data + off, paylen);
		} else {
			ret = qp->ops->sgl_read(qp->ctx, w->sge, w->num_sge,
						off, buf + hl, paylen);
			if (ret) {
				qp->ops->tx_abort(qp->ctx, buf);
				w->status = ret < 0 && -ret <= TBR_WC_RNR_RETRY_EXC_ERR ?
					    (u8)-ret : TBR_WC_LOC_PROT_ERR;
				return -EIO;
			}
		}
	}
	tbr_tx_put(qp, buf, hl + paylen, paylen);
	if (retrans)
		qp->cnt.retransmits++;
	else
		qp->tail_flags = flags;
	return 0;
}

/*
 * tbr_req_xmit() for a READ or ATOMIC request or a UD datagram (op 0),
 * through tbr_hdr_build(): out of line, its struct tbr_hdr stays off the
 * data frames' path.
 */
static tbr_noinline int tbr_req_xmit_hdr(struct tbr_tqp *qp,
					 struct tbr_swqe *w, u32 psn,
					 u32 nresp, bool retrans, u8 flags)
{
	u8 op = qp->cfg.type == TBR_QPT_UD ? 0 : tbr_wr_wire_op[w->opcode];
	u32 mtu = qp->cfg.mtu;
	u32 idx = (u32)tbr_psn_diff(psn, w->first_psn);
	struct tbr_hdr h;
	u32 hl, paylen = 0;
	u8 *buf;

	/*
	 * tbr_hdr_build() reads only the fields of h.opcode, all set below,
	 * and h.offset is where the payload starts.
	 */
	h.psn = psn;
	h.npkey = (u16)~tbr_tqp_pkey(qp);
	h.conn_id = qp->conn.conn_id;
	h.dqpn = qp->conn.dest_qpn;
	h.msn = w->wmsn;
	h.flags = flags;
	h.opcode = op;
	h.offset = 0;
	if (!op) {
		h.opcode = w->opcode == TBR_WR_SEND_IMM ? TBR_OP_UD_SEND_IMM :
							   TBR_OP_UD_SEND;
		h.conn_id = w->conn_id;
		h.dqpn = w->remote_qpn;
		/* QP1 sends in the partition its WR names */
		if (qp->cfg.gsi)
			h.npkey = (u16)~tbr_pkey_get(qp->cfg.pkeys,
						      w->pkey_index);
		h.qkey = w->qkey;
		h.src_qpn = qp->cfg.qpn;
		h.imm = w->imm;
		paylen = w->length;
	} else if (op == TBR_OP_READ_REQ) {
		h.offset = idx * mtu;
		h.msg_len = w->length;
		h.req_len = w->length - h.offset;
		if (h.req_len > nresp * mtu)
			h.req_len = nresp * mtu;
		h.rkey = w->rkey;
		h.va = w->remote_addr;
	} else {
		h.rkey = w->rkey;
		h.va = w->remote_addr;
		if (h.opcode == TBR_OP_CMP_SWAP) {
			h.compare = w->compare_add;
			h.swap_add = w->swap;
		} else {
			h.swap_add = w->compare_add;
			h.compare = 0;
		}
	}
	h.paylen = (u16)paylen;

	hl = tbr_hdr_len(h.opcode);
	buf = tbr_tx_get(qp, hl + paylen);
	if (!buf)
		return -EAGAIN;
	tbr_hdr_build(buf, &h);
	return tbr_req_emit(qp, w, buf, hl, h.offset, paylen, h.flags, retrans);
}

/*
 * Build and transmit the frame(s) starting at PSN @psn of @w: a data frame,
 * a READ request covering @nresp response PSNs, or an ATOMIC request.
 * Returns 0, -EAGAIN when no tx buffer is available, or -EIO when the local
 * SGE list cannot be read (w->status is set). Inlined into its three
 * callers: out of line, the call cost ~35 instructions per frame (register
 * saves and spills around the ops calls, @retrans and @nresp not constant).
 */
static __always_inline int tbr_req_xmit(struct tbr_tqp *qp,
					 struct tbr_swqe *w, u32 psn,
					 u32 nresp, bool retrans)
{
	u8 flags = retrans ? TBR_F_RETRANS | TBR_F_ACKREQ : 0;
	u32 hl, off, paylen, epsn, idx, mtu;
	u8 op, *buf;
	bool ride;
	int ret;

	if (!(psn & qp->ackreq_mask))
		flags |= TBR_F_ACKREQ;
	op = w->data_op;
	if (!op)
		return tbr_req_xmit_hdr(qp, w, psn, nresp, retrans, flags);

	/* SEND*, WRITE*: straight into the frame (tbr_wire.h) */
	if (w->npsn == 1) {
		/* a message in one frame (the common one): all of it */
		off = 0;
		paylen = w->length;
		idx = 0;
	} else {
		mtu = qp->cfg.mtu;
		idx = (u32)tbr_psn_diff(psn, w->first_psn);
		off = idx * mtu;
		paylen = w->length - off;
		if (paylen > mtu)
			paylen = mtu;
	}
	if (idx + 1 == w->npsn && !(w->flags & TBR_WR_MORE))
		flags |= TBR_F_ACKREQ;
	if (w->ordered && (op == TBR_OP_WRITE || op == TBR_OP_WRITE_IMM))
		flags |= TBR_F_ORDERED;
	if ((w->flags & TBR_WR_SOLICITED) && op != TBR_OP_WRITE)
		flags |= TBR_F_SOLICITED;
	/* an ACK owed to the peer rides along (docs/protocol.md 3.3) */
	ride = qp->ack_pending && qp->conn.ack_piggyback && !retrans &&
	       tbr_op_takes_ack(op);
	hl = TBR_BASE_HDR_LEN + tbr_ext_len[op];	/* tbr_hdr_len(): op is valid */
	buf = tbr_tx_get(qp, hl + (ride ? TBR_PB_ACK_LEN : 0) + paylen);
	if (!buf)
		return -EAGAIN;
	if (ride && tbr_resp_ack_ride(qp, &epsn)) {
		flags |= TBR_F_ACK;
		tbr_put_be32(epsn, buf + hl);
		hl += TBR_PB_ACK_LEN;
	}
	tbr_put_base(buf, op, flags, qp->conn.conn_id, (u16)paylen,
		     qp->conn.dest_qpn, psn, tbr_tqp_pkey(qp));
	tbr_put_data_ext(buf, op, w->wmsn, off, w->length, w->rmsn, w->imm,
			 w->rkey, w->remote_addr);
	ret = tbr_req_emit(qp, w, buf, hl, off, paylen, flags, retrans);
	if (ret && (flags & TBR_F_ACK)) {
		/* the frame did not go: the ACK is owed again, at once */
		qp->ack_pending = 1;
		qp->ack_deadline = 0;
	}
	return ret;
}

/* Last not-done PSN in [psn, end), which holds at least @psn itself. */
u32 tbr_req_last_missing(struct tbr_tqp *qp, u32 psn, u32 end)
{
	u32 p = tbr_psn_add(end, TBR_PSN_MASK);

	while (p != psn && tbr_bm_test(qp->done, p & qp->wmask))
		p = tbr_psn_add(p, TBR_PSN_MASK);
	return p;
}

/* Some PSN of [@psn, @end) is done. */
static bool tbr_req_any_done(struct tbr_tqp *qp, u32 psn, u32 end)
{
	u32 w = tbr_win(qp);
	s32 span = tbr_psn_diff(end, psn);

	while (span > 0) {
		u32 k = span < 64 ? (u32)span : 64;

		if (tbr_low_mask(k) & tbr_bm_get64(qp->done, w, psn))
			return true;
		psn = tbr_psn_add(psn, k);
		span -= (s32)k;
	}
	return false;
}

/*
 * PSNs before @next went again, the responder perhaps never got them: a
 * READ/ATOMIC response after them still to come may have waited there for
 * them (a request runs only once every PSN before it arrived). Its delivery
 * then times the recovery, not the path: ambiguous, as after a sweep, so
 * that it neither inflates the RTT nor counts as reordering (which widened
 * the window for everything after). Not when a READ chunk that already
 * had a response delivered was asked for again (its request had arrived,
 * nothing waited for it): on a clean wire with jitter that is most of them.
 */
static void tbr_req_taint_after(struct tbr_tqp *qp, u32 next)
{
	u32 w = tbr_win(qp), p = next;
	s32 span = tbr_psn_diff(qp->snd_nxt, p);

	if (!qp->rd_out)
		return;
	while (span > 0) {
		u32 k = span < 64 ? (u32)span : 64;
		u64 v = tbr_low_mask(k) & tbr_bm_get64(qp->rdm, w, p) &
			~tbr_bm_get64(qp->done, w, p);

		if (v)
			tbr_bm_or64(qp->amb, w, p, v);
		p = tbr_psn_add(p, k);
		span -= (s32)k;
	}
}

/*
 * Retransmit the not-done PSN @psn (for a READ: the missing part of its
 * request chunk). Returns the PSN after what was covered, or @psn when the
 * transmit path is full.
 */
u32 tbr_req_resend(struct tbr_tqp *qp, u32 psn)
{
	struct tbr_swqe *w = tbr_wr(qp, qp->psn_msn[psn & qp->wmask]);
	u32 next = tbr_psn_add(psn, 1);
	int ret;

	if (w->opcode == TBR_WR_READ) {
		u32 idx = (u32)tbr_psn_diff(psn, w->first_psn);
		u32 cend = (idx / qp->read_chunk + 1) * qp->read_chunk;
		u32 end, last;

		if (cend > w->npsn)
			cend = w->npsn;
		end = tbr_psn_add(w->first_psn, cend);
		if (tbr_psn_diff(end, qp->snd_nxt) > 0)
			end = qp->snd_nxt;
		last = tbr_req_last_missing(qp, psn, end);
		ret = tbr_req_xmit(qp, w, psn,
				   (u32)tbr_psn_diff(last, psn) + 1, true);
		if (ret != -EAGAIN &&
		    !tbr_req_any_done(qp, tbr_rd_chunk_start(qp, w, psn), end))
			tbr_req_taint_after(qp, end);
		next = end;
	} else {
		ret = tbr_req_xmit(qp, w, psn, 1, true);
		if (ret != -EAGAIN)
			tbr_req_taint_after(qp, next);
	}
	if (ret == -EAGAIN)
		return psn;
	return next;
}

/* Continue the retransmission sweep; false when stalled on transmit. */
static bool tbr_req_sweep(struct tbr_tqp *qp, u64 now)
{
	u32 w = tbr_win(qp);

	while (qp->rtx_active && !qp->error) {
		u32 p = qp->rtx_next, next;
		s32 left;

		if (tbr_psn_diff(p, qp->una) < 0)
			p = qp->una;
		left = tbr_psn_diff(qp->rtx_end, p);
		if (left <= 0)
			break;
		p = tbr_psn_add(p, tbr_bm_run(qp->done, w, p, (u32)left));
		if (tbr_psn_diff(qp->rtx_end, p) <= 0)
			break;
		/* no more than the congestion window: on as una moves */
		if ((u32)tbr_psn_diff(p, qp->una) >= qp->cwnd)
			return false;
		if (qp->halted &&
		    (s32)(qp->psn_msn[p & qp->wmask] - qp->halt_msn) >= 0)
			break;
		next = tbr_req_resend(qp, p);
		if (next == p)
			return false;
		/* RACK times these from now on; their delivery is ambiguous. */
		for (; p != next; p = tbr_psn_add(p, 1)) {
			qp->xts[p & qp->wmask] = now;
			tbr_bm_set(qp->amb, p & qp->wmask);
		}
		qp->rtx_next = next;
	}
	qp->rtx_active = 0;
	return true;
}

static void tbr_req_start_sweep(struct tbr_tqp *qp)
{
	qp->rtx_active = 1;
	qp->rtx_next = qp->una;
	qp->rtx_end = qp->snd_nxt;
	memset(qp->rtxd, 0, tbr_win(qp) / 8);
	memset(qp->amb, 0, tbr_win(qp) / 8);
}

/*
 * Run the local operation @w at the head of the unsent WRs (sq_next); a
 * fenced one once every earlier WR has retired. False: wait (fence).
 */
static bool tbr_req_local(struct tbr_tqp *qp, struct tbr_swqe *w)
{
	int ret;

	if ((w->flags & TBR_WR_FENCE) && qp->sq_head != qp->sq_next) {
		tbr_req_advance(qp);
		if (qp->sq_head != qp->sq_next || qp->error)
			return false;
	}
	ret = w->status ? -TBR_WC_LOC_QP_OP_ERR :
			  qp->ops->local(qp->ctx, w->remote_addr);
	if (ret) {
		/* Fails in order once the WRs before it retire. */
		w->status = ret < 0 && -ret <= TBR_WC_RNR_RETRY_EXC_ERR ?
			    (u8)-ret : TBR_WC_LOC_QP_OP_ERR;
		qp->halted = 1;
		qp->halt_msn = qp->sq_next;
	}
	qp->sq_next++;
	return !ret;
}

void tbr_req_pump(struct tbr_tqp *qp, u64 now)
{
	u32 win = tbr_win(qp);
	bool unacked = qp->cfg.type != TBR_QPT_RC;
	u32 next0 = qp->sq_next, snd0 = qp->snd_nxt, wmask = qp->wmask;
	u32 *psn_msn = qp->psn_msn;
	u64 *xts = qp->xts, *frx = qp->frx;

	if (!qp->connected || qp->error || qp->rnr_until != TBR_NO_DEADLINE)
		return;
	if (qp->rtx_active && !tbr_req_sweep(qp, now))
		return;

	while (qp->sq_next != qp->sq_tail && !qp->halted && !qp->error) {
		struct tbr_swqe *w = tbr_wr(qp, qp->sq_next);
		u32 n = 1, i, fi, out, psn, msn;
		bool rd;
		int ret;

		if (w->opcode == TBR_WR_LOCAL) {
			if (!tbr_req_local(qp, w))
				break;
			continue;
		}
		if (qp->cur_psn == w->first_psn && !w->rd && !w->status) {
			/*
			 * SEND_INV is fenced too: a READ response lost after
			 * the key was invalidated could not be served again.
			 */
			if (!qp->rd_out) {
				w->ordered = 0;
			} else if (w->flags & TBR_WR_FENCE ||
				   w->opcode == TBR_WR_SEND_INV) {
				break;
			} else {
				w->ordered = 1;
			}
			if (tbr_wr_is_rd(w->opcode)) {
				if (qp->rd_out >= qp->cfg.max_rd_atomic)
					break;
				w->rd = 1;
				qp->rd_out++;
			}
		}
		if (w->opcode == TBR_WR_READ) {
			u32 idx = (u32)tbr_psn_diff(qp->cur_psn, w->first_psn);

			n = w->npsn - idx;
			if (n > qp->read_chunk)
				n = qp->read_chunk;
		}
		/* the window, and the congestion window once a PSN is out */
		out = (u32)tbr_psn_diff(qp->cur_psn, qp->una);
		if (out + n > win || (out && out + n > qp->cwnd))
			break;
		/* in locals: the stores below could alias them for the compiler */
		psn = qp->cur_psn;
		msn = qp->sq_next;
		rd = tbr_wr_is_rd(w->opcode);
		if (n == 1) {
			/* one PSN (all but a READ): no loop around it */
			u32 p = psn & wmask;

			psn_msn[p] = msn;
			xts[p] = now;
			fi = psn & (2 * win - 1);
			frx[fi >> 6] &= ~(1ull << (fi & 63));
			if (rd)
				tbr_bm_set(qp->rdm, p);
		} else {
			for (i = 0; i < n; i++, psn = tbr_psn_add(psn, 1)) {
				u32 p = psn & wmask;

				psn_msn[p] = msn;
				xts[p] = now;
				fi = psn & (2 * win - 1);
				frx[fi >> 6] &= ~(1ull << (fi & 63));
				tbr_bm_set(qp->rdm, p);	/* a READ's */
			}
		}
		ret = w->status ? -EIO : tbr_req_xmit(qp, w, qp->cur_psn, n,
						       false);
		if (ret == -EAGAIN)
			break;
		if (ret == -EIO) {
			/* Fails in order once the WRs before it retire. */
			qp->halted = 1;
			qp->halt_msn = qp->sq_next;
			qp->cur_psn = tbr_psn_add(w->first_psn, w->npsn);
			qp->sq_next++;
			break;
		}
		if (unacked)
			tbr_req_mark(qp, qp->cur_psn, n, TBR_NO_DEADLINE);
		qp->cur_psn = tbr_psn_add(qp->cur_psn, n);
		qp->snd_nxt = qp->cur_psn;
		if (qp->cur_psn == tbr_psn_add(w->first_psn, w->npsn))
			qp->sq_next++;
	}
	/*
	 * What tbr_req_advance() looks at changed here (WRs or PSNs sent), or
	 * the oldest WR failed: a resend that could not read its SGEs, here
	 * or in the tbr_req_rack() before. Whoever else marks PSNs done or
	 * fails a WR advances itself.
	 */
	if (qp->snd_nxt != snd0) {
		if (!qp->error)
			tbr_req_arm(qp, now);	/* once for what went out */
		tbr_req_tlp_arm(qp, now);
	}
	if (qp->sq_next != next0 || qp->snd_nxt != snd0 ||
	    tbr_req_head_failed(qp))
		tbr_req_advance(qp);
}

void tbr_req_fail(struct tbr_tqp *qp, struct tbr_swqe *w, u32 msn,
		  u32 status)
{
	if (!w->status)
		w->status = (u8)status;
	if (!qp->halted || (s32)(msn - qp->halt_msn) < 0) {
		qp->halted = 1;
		qp->halt_msn = msn;
	}
}

void tbr_req_timer(struct tbr_tqp *qp, u64 now)
{
	/* Reordering timer, or verdicts that found the tx path full. */
	if (now >= qp->rack_deadline)
		tbr_req_rack(qp, now);
	if (qp->rd_hole_retry) {
		qp->rd_hole_retry = 0;
		tbr_req_rd_hole(qp, now);
	}
	if (qp->rnr_until != TBR_NO_DEADLINE && now >= qp->rnr_until) {
		qp->rnr_until = TBR_NO_DEADLINE;
		tbr_req_start_sweep(qp);
		tbr_req_arm(qp, now);
	}
	if (now >= qp->pto_deadline)
		tbr_req_tlp(qp, now);
	if (qp->rto_deadline == TBR_NO_DEADLINE || now < qp->rto_deadline)
		return;
	qp->rto_deadline = TBR_NO_DEADLINE;
	if (qp->una == qp->snd_nxt) {
		qp->pto_deadline = TBR_NO_DEADLINE;
		return;
	}
	qp->cnt.timeouts++;
	/* dynamic debug: what the timeout found (docs/bench-speed.md 16) */
	tbr_dbg("qp %u: timeout, %d PSNs out, una %s%s, srtt %llu rtt_hi %llu reo %llu ns, %u probes, probe %s\n",
		qp->cfg.qpn, tbr_psn_diff(qp->snd_nxt, qp->una),
		tbr_bm_test(qp->rdm, qp->una & qp->wmask) ? "response" : "frame",
		tbr_bm_test(qp->rtxd, qp->una & qp->wmask) ? " resent" : "",
		(unsigned long long)qp->srtt, (unsigned long long)qp->rtt_hi,
		(unsigned long long)qp->reo_meas, qp->tlp_sent,
		qp->pto_deadline == TBR_NO_DEADLINE ? "not armed" : "armed");
	qp->pto_deadline = TBR_NO_DEADLINE;
	/*
	 * Nothing could be sent again since the last counted timeout because
	 * the rails' rings stayed full (a slow peer or path, not a lossy one):
	 * that is no retry, for up to TBR_BLOCKED_RTO_MAX such timeouts since
	 * the last progress or retransmission, so a peer that stopped draining
	 * its rings still fails the QP in the end.
	 */
	if (tbr_req_rtx_count(qp) != qp->rtx_mark) {
		qp->blocked_rtos = 0;		/* frames did go out again */
	} else if (qp->tx_blocked && qp->blocked_rtos < TBR_BLOCKED_RTO_MAX) {
		qp->blocked_rtos++;
		tbr_req_start_sweep(qp);
		tbr_req_arm(qp, now);
		return;
	}
	qp->rtx_mark = tbr_req_rtx_count(qp);
	if (!qp->retries_left) {
		struct tbr_swqe *w = tbr_wr(qp, qp->sq_head);

		tbr_req_fail(qp, w, qp->sq_head, TBR_WC_RETRY_EXC_ERR);
		tbr_req_advance(qp);
		return;
	}
	qp->retries_left--;
	tbr_req_start_sweep(qp);
	tbr_req_arm(qp, now);
}

u64 tbr_req_deadline(const struct tbr_tqp *qp)
{
	u64 d = qp->rto_deadline;

	/* A verdict blocked on tx waits for tbr_tqp_progress() (tbr_core.h). */
	if (!qp->tx_blocked && qp->rack_deadline < d)
		d = qp->rack_deadline;
	if (qp->rnr_until < d)
		d = qp->rnr_until;
	if (!qp->tx_blocked && qp->pto_deadline < d)
		d = qp->pto_deadline;
	return d;
}
