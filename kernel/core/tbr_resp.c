// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_resp.c - responder half of the transport core: receive window,
 * out-of-order placement of SEND/WRITE data, in-order message retirement
 * and receive completions, UC loss handling and UD datagrams. READ and
 * ATOMIC requests become jobs: tbr_resp_job.c; ACKs and NAKs:
 * tbr_resp_ack.c.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"
#include "tbr_resp_fast.h"

static u32 tbr_rq_win(const struct tbr_tqp *qp)
{
	return qp->rq_mask + 1;
}

void tbr_resp_reset(struct tbr_tqp *qp)
{
	u32 w = tbr_win(qp);

	qp->epsn = qp->conn.rq_psn;
	qp->rcv_hi = qp->conn.rq_psn;
	qp->emsn = 0;
	qp->msn_hi = 0;
	memset(qp->rcvd, 0, w / 8);
	memset(qp->msg, 0, sizeof(*qp->msg) * w);
	memset(qp->jobs, 0, sizeof(qp->jobs));
	qp->njobs = 0;
	memset(qp->acache, 0, sizeof(qp->acache));
	qp->acache_pos = 0;
	qp->rq_head = 0;
	qp->rq_fetched = 0;
	qp->rq_skew = 0;
	qp->rmsn_hi = 0;
	qp->uc_dropping = 0;
	qp->uc_drop_msn = 0;
	qp->ack_pending = 0;
	qp->ack_rtx = 0;
	qp->dsack = 0;
	qp->hole_acked = 0;
	qp->ack_count = 0;
	qp->ack_deadline = TBR_NO_DEADLINE;
	qp->ack_deferred = 0;
	qp->pp_score = 0;
	qp->ack_owed_at = TBR_NO_DEADLINE;
	qp->pp_gap = 0;
	qp->rnr_nak_valid = 0;
	qp->fatal_syn = 0;
	qp->uc_hole_deadline = TBR_NO_DEADLINE;
}

static void tbr_wc_recv(struct tbr_tqp *qp, const struct tbr_rwqe *r,
			const struct tbr_rmsg *s, u32 status)
{
	struct tbr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = r->wqe.wr_id;
	c.status = status;
	c.recv = 1;
	c.src_qp = qp->conn.dest_qpn;
	if (s) {
		c.byte_len = s->msg_len;
		c.opcode = s->opcode == TBR_OP_WRITE_IMM ?
			   TBR_WC_RECV_RDMA_WITH_IMM : TBR_WC_RECV;
		if (s->opcode == TBR_OP_SEND_IMM ||
		    s->opcode == TBR_OP_WRITE_IMM) {
			c.flags |= TBR_WC_WITH_IMM;
			c.imm = s->imm;
		} else if (s->opcode == TBR_OP_SEND_INV &&
			   status == TBR_WC_SUCCESS) {
			c.flags |= TBR_WC_WITH_INV;
			c.imm = s->imm;
		}
		if (s->solicited)
			c.flags |= TBR_WC_SOLICITED;
	} else {
		c.opcode = TBR_WC_RECV;
	}
	qp->ops->complete(qp->ctx, &c);
}

/* ---- receive WQEs ---- */

/* The receive WQE for local receive index @ri, fetching up to it. */
static struct tbr_rwqe *tbr_resp_wqe(struct tbr_tqp *qp, u32 ri)
{
	while ((u32)(qp->rq_fetched - qp->rq_head) <= (u32)(ri - qp->rq_head)) {
		struct tbr_rwqe *r = &qp->rq[qp->rq_fetched & qp->rq_mask];
		u32 i;

		if (qp->ops->get_recv(qp->ctx, &r->wqe))
			return NULL;
		if (r->wqe.num_sge > TBR_MAX_SGE)
			r->wqe.num_sge = TBR_MAX_SGE;
		r->total = 0;
		for (i = 0; i < r->wqe.num_sge; i++)
			r->total += r->wqe.sge[i].length;
		qp->rq_fetched++;
	}
	return &qp->rq[ri & qp->rq_mask];
}

/* ---- message retirement (in message order) ---- */

static bool tbr_rmsg_complete(const struct tbr_rmsg *s)
{
	return s->seen && s->rcvd == s->msg_len;
}

void tbr_resp_retire(struct tbr_tqp *qp)
{
	bool uc = qp->cfg.type == TBR_QPT_UC;

	while (!qp->error) {
		struct tbr_rmsg *s = tbr_resp_slot_of(qp, qp->emsn);
		bool mine = s->state != TBR_RMSG_FREE && s->msn == qp->emsn;
		bool dropping = uc && qp->uc_dropping &&
				(s32)(qp->emsn - qp->uc_drop_msn) < 0;

		if (!mine) {
			if (!dropping)
				break;
			/* UC: a message none of whose frames arrived. */
			qp->cnt.uc_msgs_dropped++;
			qp->emsn++;
			continue;
		}
		if (s->state == TBR_RMSG_DROPPED) {
			if (tbr_op_recv(s->opcode))
				tbr_uc_drop_head(qp, s);
			s->state = TBR_RMSG_FREE;
			qp->emsn++;
			continue;
		}
		if (!tbr_rmsg_complete(s)) {
			if (!dropping)
				break;
			tbr_uc_drop_head(qp, s);
			s->state = TBR_RMSG_FREE;
			qp->emsn++;
			continue;
		}
		if (uc && tbr_op_recv(s->opcode) && s->rmsn != qp->rq_head &&
		    (u32)(s->rmsn - qp->rq_head) < tbr_rq_win(qp))
			/* UC: receive-consuming messages lost without trace */
			tbr_uc_shift(qp, 0, s->rmsn - qp->rq_head);
		if (tbr_op_recv(s->opcode) && s->rmsn != qp->rq_head) {
			/* Receive sequence out of message order: bogus peer. */
			if (!s->nak)
				s->nak = TBR_SYN_NAK_INV_REQ;
		}
		/*
		 * SEND_INV: every earlier message is placed, so no access the
		 * requester made with the key before is cut off. On failure:
		 * IBTA class J, as rxe.
		 */
		if (!s->nak && s->opcode == TBR_OP_SEND_INV &&
		    qp->ops->invalidate(qp->ctx, s->imm)) {
			s->nak = TBR_SYN_NAK_INV_REQ;
			s->wc_status = TBR_WC_REM_INV_REQ_ERR;
		}
		if (s->nak) {
			bool bound = tbr_op_recv(s->opcode) &&
				     s->rmsn == qp->rq_head &&
				     qp->rq_fetched != qp->rq_head;

			if (uc) {
				/* UC: no NAK; a bound WQE completes in error. */
				if (bound && s->wc_status) {
					tbr_wc_recv(qp, &qp->rq[qp->rq_head &
							qp->rq_mask], s,
						    s->wc_status);
					qp->rq_head++;
				} else {
					tbr_uc_drop_head(qp, s);
				}
				s->state = TBR_RMSG_FREE;
				qp->emsn++;
				continue;
			}
			if (bound && s->wc_status) {
				tbr_wc_recv(qp, &qp->rq[qp->rq_head &
						qp->rq_mask], s, s->wc_status);
				qp->rq_head++;
			}
			/*
			 * A WRITE or SEND is NAKed at its last PSN: an ACK
			 * may already have covered the frame that failed
			 * (the requester ignores a NAK below its una), never
			 * the last one, which only retiring lets epsn pass. A
			 * READ or ATOMIC at the PSN that failed: ACKs do not
			 * complete them, and a READ's later PSNs may not
			 * have been requested yet.
			 */
			tbr_resp_fatal(qp, s->nak,
				       s->opcode == TBR_OP_READ_REQ ||
				       tbr_op_atomic(s->opcode) ? s->err_psn :
				       tbr_psn_add(s->first_psn, s->npsn - 1),
				       s->nak == TBR_SYN_NAK_REM_ACCESS ?
				       TBR_WC_REM_ACCESS_ERR :
				       s->nak == TBR_SYN_NAK_INV_REQ ?
				       TBR_WC_REM_INV_REQ_ERR :
				       TBR_WC_REM_OP_ERR);
			return;
		}
		if (tbr_op_recv(s->opcode)) {
			tbr_wc_recv(qp, &qp->rq[qp->rq_head & qp->rq_mask], s,
				    TBR_WC_SUCCESS);
			qp->rq_head++;
		}
		s->state = TBR_RMSG_FREE;
		qp->emsn++;
	}
	if (uc && qp->uc_dropping && (s32)(qp->emsn - qp->uc_drop_msn) >= 0)
		qp->uc_dropping = 0;
}

/* epsn moved (or may have): run jobs that became in order, retire. */
static void tbr_resp_moved(struct tbr_tqp *qp)
{
	if (qp->njobs)
		tbr_resp_exec(qp);
	tbr_resp_retire(qp);
}

/* Slide epsn over received PSNs, run jobs that became in order, retire. */
void tbr_resp_advance(struct tbr_tqp *qp)
{
	u32 w = tbr_win(qp);
	u32 span = (u32)tbr_psn_diff(qp->rcv_hi, qp->epsn);
	u32 n = tbr_bm_run(qp->rcvd, w, qp->epsn, span);
	u32 i, psn = qp->epsn;

	for (i = 0; i < n;) {
		u32 k = n - i < 64 ? n - i : 64;

		tbr_bm_clr64(qp->rcvd, w, psn, tbr_low_mask(k));
		psn += k;
		i += k;
	}
	qp->epsn = tbr_psn_add(qp->epsn, n);
	tbr_resp_moved(qp);
}

/* ---- request frames ---- */

/* Start the slot @s of the message whose first frame seen is @h. */
static inline void tbr_rmsg_open(struct tbr_rmsg *s, const struct tbr_hdr *h,
				 u32 msg_len, u32 first, u32 npsn)
{
	memset(s, 0, sizeof(*s));
	s->state = TBR_RMSG_ACTIVE;
	s->msn = h->msn;
	s->opcode = h->opcode;
	s->msg_len = msg_len;
	s->first_psn = first;
	s->npsn = npsn;
	s->imm = h->imm;
}

/*
 * Check a data/READ/ATOMIC frame against its message slot, creating the
 * slot for the first frame of a message seen. Returns 0 or -EINVAL.
 */
static int tbr_resp_slot(struct tbr_tqp *qp, struct tbr_rmsg *s,
			 const struct tbr_hdr *h)
{
	u32 mtu = qp->cfg.mtu;
	u32 msg_len, first, npsn;

	if (tbr_op_atomic(h->opcode)) {
		msg_len = 8;
		first = h->psn;
		npsn = 1;
	} else {
		msg_len = h->msg_len;
		if (msg_len > TBR_MSG_MAX || h->offset % mtu ||
		    (h->offset && h->offset >= msg_len))
			return -EINVAL;
		npsn = tbr_frames(msg_len, mtu);
		first = tbr_psn_add(h->psn, TBR_PSN_MASK + 1 - (h->offset / mtu));
		if (h->opcode != TBR_OP_READ_REQ) {
			u32 len = msg_len - h->offset;

			if (h->paylen != (len < mtu ? len : mtu))
				return -EINVAL;
		} else if (h->paylen) {
			return -EINVAL;
		}
	}
	if (s->state == TBR_RMSG_FREE) {
		tbr_rmsg_open(s, h, msg_len, first, npsn);
		if (tbr_op_recv(h->opcode)) {
			s->rmsn = h->rmsn - qp->rq_skew;
			if ((s32)(h->rmsn - qp->rmsn_hi) >= 0)
				qp->rmsn_hi = h->rmsn + 1;
		}
		if ((s32)(h->msn - qp->msn_hi) >= 0)
			qp->msn_hi = h->msn + 1;
		return 0;
	}
	if (s->msn != h->msn || s->opcode != h->opcode ||
	    s->msg_len != msg_len || s->first_psn != first ||
	    (tbr_op_recv(h->opcode) && s->imm != h->imm))
		return -EINVAL;
	return 0;
}

/* RC: tell the requester there is no receive WQE (throttled). */
static void tbr_resp_rnr(struct tbr_tqp *qp, const struct tbr_rmsg *s,
			 const struct tbr_hdr *h, u64 now)
{
	u64 t = qp->conn.min_rnr_timer_ns;

	if (qp->rnr_nak_valid && qp->rnr_nak_msn == s->msn &&
	    now - qp->rnr_nak_at < t)
		return;
	if (tbr_resp_send_ack(qp, TBR_SYN_RNR_NAK, h->psn,
			      (u32)((t + 999) / 1000))) {
		qp->rnr_nak_valid = 1;
		qp->rnr_nak_msn = s->msn;
		qp->rnr_nak_at = now;
	}
}

/* Bind the receive WQE of a receive-consuming message; NULL: none posted. */
static struct tbr_rwqe *tbr_resp_bind(struct tbr_tqp *qp, struct tbr_rmsg *s,
				      const struct tbr_hdr *h, u64 now,
				      int *disp)
{
	struct tbr_rwqe *r;
	u32 ahead = s->rmsn - qp->rq_head;

	if (ahead >= tbr_win(qp)) {
		*disp = -EINVAL;
		return NULL;
	}
	if (ahead >= tbr_rq_win(qp)) {
		/* Too far ahead of the receive queue: retransmitted later. */
		qp->cnt.order_drops++;
		*disp = TBR_NOT_TAKEN;
		return NULL;
	}
	r = tbr_resp_wqe(qp, s->rmsn);
	if (!r) {
		if (qp->cfg.type == TBR_QPT_RC)
			tbr_resp_rnr(qp, s, h, now);
		*disp = TBR_NOT_TAKEN;
		return NULL;
	}
	s->bound = 1;
	return r;
}

static int tbr_resp_send(struct tbr_tqp *qp, struct tbr_rmsg *s,
			 const struct tbr_hdr *h, u64 now)
{
	struct tbr_rwqe *r;
	int disp = TBR_TAKEN;
	int ret;

	r = tbr_resp_bind(qp, s, h, now, &disp);
	if (!r)
		return disp;
	if (!s->nak && s->msg_len > r->total) {
		s->nak = TBR_SYN_NAK_INV_REQ;
		s->wc_status = TBR_WC_LOC_LEN_ERR;
	}
	/*
	 * SEND_INV: the rkey is invalidated when the message retires
	 * (tbr_resp_retire). A user without ops->invalidate has no key that
	 * could be: reporting one as invalidated while it stays valid would
	 * be a lie, so that is an invalid request.
	 */
	if (!s->nak && h->opcode == TBR_OP_SEND_INV && !qp->ops->invalidate) {
		s->nak = TBR_SYN_NAK_INV_REQ;
		s->wc_status = TBR_WC_REM_INV_REQ_ERR;
	}
	if (!s->nak && h->paylen) {
		ret = qp->ops->sgl_write(qp->ctx, r->wqe.sge, r->wqe.num_sge,
					 h->offset, h->payload, h->paylen);
		if (ret) {
			s->nak = TBR_SYN_NAK_REM_OP;
			s->wc_status = ret < 0 && -ret <= TBR_WC_RNR_RETRY_EXC_ERR ?
				       (u8)-ret : TBR_WC_LOC_PROT_ERR;
		}
	}
	s->rcvd += h->paylen;
	return TBR_TAKEN;
}

static int tbr_resp_write(struct tbr_tqp *qp, struct tbr_rmsg *s,
			  const struct tbr_hdr *h, u64 now)
{
	int disp = TBR_TAKEN;
	u64 va;
	int ret;

	/*
	 * IBTA order: a READ/ATOMIC before this WRITE sees memory first. The
	 * requester flags WRITEs that follow one; they wait for every earlier
	 * PSN and for the responses to be read out.
	 */
	if ((h->flags & TBR_F_ORDERED) &&
	    (tbr_psn_diff(s->first_psn, qp->epsn) > 0 ||
	     tbr_resp_job_before(qp, h->psn))) {
		qp->cnt.order_drops++;
		return TBR_NOT_TAKEN;
	}
	/* WRITE_IMM consumes a receive WQE but not its buffers. */
	if (h->opcode == TBR_OP_WRITE_IMM && !tbr_resp_bind(qp, s, h, now, &disp))
		return disp;
	if (!s->nak && h->paylen) {
		va = h->va + h->offset;
		if (va < h->va || va + h->paylen < va)
			ret = -TBR_WC_REM_ACCESS_ERR;
		else
			ret = qp->ops->mr_write(qp->ctx, h->rkey, va,
						h->payload, h->paylen);
		if (ret)
			s->nak = tbr_resp_mr_nak(ret);
	}
	s->rcvd += h->paylen;
	return TBR_TAKEN;
}

/*
 * UD receive: one datagram, one receive WQE, completed at once. With
 * cfg.ud_addr the payload starts with the address block: it becomes the
 * GRH, the data follows it at TBR_GRH_LEN as without it.
 */
static int tbr_resp_ud(struct tbr_tqp *qp, const struct tbr_hdr *h)
{
	const u8 *data = h->payload;
	u32 len = h->paylen;
	u32 status = TBR_WC_SUCCESS;
	u8 grh[TBR_GRH_LEN];
	struct tbr_rwqe *r;
	struct tbr_cqe c;
	int ret;

	memset(&c, 0, sizeof(c));
	if (qp->cfg.ud_addr) {
		if (len < TBR_UD_ADDR_LEN) {
			qp->cnt.rx_malformed++;
			return -EINVAL;
		}
		data += TBR_UD_ADDR_LEN;
		len -= TBR_UD_ADDR_LEN;
	}
	if (h->qkey != qp->cfg.qkey) {
		qp->cnt.ud_drops++;
		return -EINVAL;
	}
	r = tbr_resp_wqe(qp, qp->rq_head);
	if (!r) {
		qp->cnt.ud_drops++;
		return 0;
	}
	if ((u64)TBR_GRH_LEN + len > r->total) {
		status = TBR_WC_LOC_LEN_ERR;
	} else {
		if (qp->cfg.ud_addr) {
			c.net_type = tbr_ud_grh(h->payload, len,
						h->opcode == TBR_OP_UD_SEND_IMM,
						grh);
			ret = qp->ops->sgl_write(qp->ctx, r->wqe.sge,
						 r->wqe.num_sge, 0, grh,
						 TBR_GRH_LEN);
			if (ret)
				status = TBR_WC_LOC_PROT_ERR;
		}
		if (!status && len) {
			ret = qp->ops->sgl_write(qp->ctx, r->wqe.sge,
						 r->wqe.num_sge, TBR_GRH_LEN,
						 data, len);
			if (ret)
				status = TBR_WC_LOC_PROT_ERR;
		}
	}
	c.wr_id = r->wqe.wr_id;
	c.status = status;
	c.opcode = TBR_WC_RECV;
	c.recv = 1;
	c.byte_len = TBR_GRH_LEN + len;
	c.flags = TBR_WC_GRH;
	if (h->opcode == TBR_OP_UD_SEND_IMM) {
		c.flags |= TBR_WC_WITH_IMM;
		c.imm = h->imm;
	}
	c.src_qp = h->src_qpn;
	c.qkey = h->qkey;
	c.conn_id = h->conn_id;
	c.pkey_index = qp->cfg.gsi ? qp->rx_pkey_index : qp->pkey_index;
	qp->rq_head++;
	qp->ops->complete(qp->ctx, &c);
	return 0;
}

/*
 * A frame of a message of several: the first (a full frame), or the next one
 * at epsn of the message the slot holds, whose earlier frames are all placed:
 * its offset is the slot's byte count. Each of those frames was checked
 * against the slot (offset = (PSN - first PSN) x mtu, full frames but the
 * last), so an offset equal to the count also puts this PSN where it belongs.
 */
static tbr_noinline bool tbr_resp_write_frame(struct tbr_tqp *qp,
					      const struct tbr_hdr *h, u64 now)
{
	u32 len = h->paylen, mtu = qp->cfg.mtu, off = h->offset;
	u32 msg_len = h->msg_len;
	struct tbr_rmsg *s;

	if (!tbr_resp_write_next(qp, h))
		return false;
	s = tbr_resp_slot_of(qp, h->msn);
	if (!off) {
		if (s->state != TBR_RMSG_FREE || len != mtu || msg_len <= mtu ||
		    msg_len > TBR_MSG_MAX)
			return false;
	} else if (s->state != TBR_RMSG_ACTIVE || s->nak ||
		   s->opcode != TBR_OP_WRITE || s->msn != h->msn ||
		   s->msg_len != msg_len || s->rcvd != off ||
		   len != (msg_len - off < mtu ? msg_len - off : mtu)) {
		return false;
	}
	if (!tbr_resp_write_place(qp, h, len))
		return false;
	qp->epsn = tbr_psn_add(h->psn, 1);
	qp->rcv_hi = qp->epsn;
	if (!off) {
		tbr_rmsg_open(s, h, msg_len, h->psn, tbr_frames(msg_len, mtu));
		s->rcvd = len;
		s->seen = 1;
	} else if (off + len == msg_len) {
		/* retired: a WRITE completes nothing here */
		s->state = TBR_RMSG_FREE;
		qp->emsn++;
	} else {
		s->rcvd += len;
	}
	tbr_resp_fast_ack(qp, h->flags, now);
	return true;
}

/*
 * A later frame of a WRITE whose slot is open, out of order: beyond a hole
 * (d > 0) or filling the first one (d = 0, frames received beyond it): what
 * striping over several rails makes of most frames (each rail's batch
 * arrives in turn). What the general path does with one reduces to: check
 * it against the slot, place it, mark its PSN, and only when it filled the
 * first hole advance (tbr_resp_rx_slow). It is never a message's first
 * frame, so it opens no slot. False (nothing changed): the general path.
 */
static tbr_noinline bool tbr_resp_write_ooo(struct tbr_tqp *qp,
					    const struct tbr_hdr *h, u64 now)
{
	u32 mtu = qp->cfg.mtu, off = h->offset, msg_len = h->msg_len;
	u32 d = (u32)tbr_psn_diff(h->psn, qp->epsn), p = h->psn & qp->wmask;
	bool urgent = h->flags & TBR_F_ACKREQ;
	struct tbr_rmsg *s;

	if (h->opcode != TBR_OP_WRITE || qp->cfg.type != TBR_QPT_RC ||
	    (h->flags & TBR_F_ORDERED) || d >= tbr_win(qp) ||
	    (!d && qp->rcv_hi == qp->epsn) ||
	    tbr_bm_test(qp->rcvd, p) ||
	    (u32)(h->msn - qp->emsn) >= tbr_win(qp))
		return false;
	s = tbr_resp_slot_of(qp, h->msn);
	if (s->state != TBR_RMSG_ACTIVE || s->nak || s->msn != h->msn ||
	    s->opcode != TBR_OP_WRITE || s->msg_len != msg_len ||
	    !off || off >= msg_len || off % mtu ||
	    s->first_psn != tbr_psn_add(h->psn, TBR_PSN_MASK + 1 - off / mtu) ||
	    h->paylen != (msg_len - off < mtu ? msg_len - off : mtu) ||
	    !tbr_resp_write_place(qp, h, h->paylen))
		return false;
	s->rcvd += h->paylen;
	s->seen = 1;
	tbr_bm_set(qp->rcvd, p);
	if (tbr_psn_diff(tbr_psn_add(h->psn, 1), qp->rcv_hi) > 0)
		qp->rcv_hi = tbr_psn_add(h->psn, 1);
	qp->ack_count++;
	if (!d) {
		tbr_resp_advance(qp);
		if (qp->hole_acked && tbr_psn_diff(qp->epsn, qp->hole_hi) >= 0)
			urgent = true;	/* as tbr_resp_rx_slow */
		if (qp->error)
			return true;
	}
	tbr_resp_ack(qp, now, urgent);
	return true;
}

/* Everything but the fast path: out of line, its frame set-up is large. */
static tbr_noinline int tbr_resp_rx_slow(struct tbr_tqp *qp,
					 const struct tbr_hdr *h, u64 now)
{
	bool uc = qp->cfg.type == TBR_QPT_UC;
	u32 w = tbr_win(qp), n = 1, i;
	struct tbr_rmsg *s;
	bool fresh, urgent;
	s32 d;
	int ret;

	if (qp->cfg.type == TBR_QPT_UD)
		return tbr_resp_ud(qp, h);

	d = tbr_psn_diff(h->psn, qp->epsn);
	if (d < 0)
		return tbr_resp_dup(qp, h, now);
	if (uc && (s32)(h->msn - qp->emsn) < 0) {
		/* UC: straggler of a dropped or finished message. */
		qp->cnt.duplicates++;
		return 0;
	}
	if (uc && ((u32)d >= w || (u32)(h->msn - qp->emsn) >= w)) {
		qp->cnt.out_of_window++;
		tbr_uc_resync(qp, h);
		d = 0;
	}
	if ((u32)d >= w) {
		qp->cnt.out_of_window++;
		return -ERANGE;
	}
	if (tbr_bm_test(qp->rcvd, h->psn & qp->wmask)) {
		qp->cnt.duplicates++;
		if (!uc)
			qp->dsack = TBR_ACK_DSACK | h->psn;
		tbr_resp_ack(qp, now, true);
		return 0;
	}
	if ((u32)(h->msn - qp->emsn) >= w) {
		qp->cnt.rx_invalid++;
		return -EINVAL;
	}
	s = tbr_resp_slot_of(qp, h->msn);
	fresh = s->state == TBR_RMSG_FREE;
	if (tbr_resp_slot(qp, s, h)) {
		qp->cnt.rx_invalid++;
		return -EINVAL;
	}
	if (s->state == TBR_RMSG_DROPPED) {
		ret = TBR_TAKEN;
	} else {
		switch (h->opcode) {
		case TBR_OP_SEND:
		case TBR_OP_SEND_IMM:
		case TBR_OP_SEND_INV:
			ret = tbr_resp_send(qp, s, h, now);
			break;
		case TBR_OP_WRITE:
		case TBR_OP_WRITE_IMM:
			ret = tbr_resp_write(qp, s, h, now);
			break;
		case TBR_OP_READ_REQ:
			ret = tbr_resp_read_req(qp, s, h, d);
			if (ret > 0) {
				n = (u32)ret;
				ret = TBR_TAKEN;
			} else if (!ret) {
				ret = TBR_NOT_TAKEN;
			}
			break;
		default:
			ret = tbr_resp_atomic(qp, s, h);
			break;
		}
	}
	if (ret < 0) {
		/* A rejected frame leaves no trace (it may be forged). */
		if (fresh)
			s->state = TBR_RMSG_FREE;
		qp->cnt.rx_invalid++;
		return ret;
	}
	if (ret == TBR_NOT_TAKEN) {
		if (uc) {
			/* UC never retransmits: the message is lost. */
			if (s->state == TBR_RMSG_ACTIVE)
				tbr_uc_drop(qp, s);
		} else {
			if (fresh)
				s->state = TBR_RMSG_FREE;
			return 0;
		}
	}
	if ((h->flags & TBR_F_SOLICITED) && tbr_op_recv(h->opcode))
		s->solicited = 1;
	s->seen = 1;
	qp->ack_count++;
	urgent = h->flags & TBR_F_ACKREQ;
	if (!d && qp->rcv_hi == qp->epsn) {
		/* In order, nothing received beyond: the window moves at once. */
		for (i = 0; i < n; i++)
			qp->rpsn_msn[tbr_psn_add(h->psn, i) & qp->wmask] = h->msn;
		qp->epsn = tbr_psn_add(h->psn, n);
		qp->rcv_hi = qp->epsn;
		tbr_resp_moved(qp);
	} else {
		for (i = 0; i < n; i++) {
			u32 p = tbr_psn_add(h->psn, i) & qp->wmask;

			tbr_bm_set(qp->rcvd, p);
			qp->rpsn_msn[p] = h->msn;
		}
		if (tbr_psn_diff(tbr_psn_add(h->psn, n), qp->rcv_hi) > 0)
			qp->rcv_hi = tbr_psn_add(h->psn, n);
		/*
		 * Beyond a hole (d > 0) epsn stays and, RC, no message at
		 * emsn became complete (its frames before this one are not
		 * all in, or epsn would be past them): nothing to advance.
		 * UC retires messages across holes (tbr_uc_drop).
		 */
		if (!d || uc)
			tbr_resp_advance(qp);
		/*
		 * The last ACK reported holes and all of them are filled now:
		 * say so at once, the requester may be waiting on them (its
		 * RACK would take a frame only late on a slow rail for lost
		 * after ~1 RTT, before the coalescing delay ran out). At most
		 * one such ACK per ACK with holes.
		 */
		if (qp->hole_acked && tbr_psn_diff(qp->epsn, qp->hole_hi) >= 0)
			urgent = true;
	}
	if (qp->error)
		return 0;
	if (uc) {
		tbr_uc_arm(qp, now);
		return 0;
	}
	tbr_resp_ack(qp, now, urgent);
	return 0;
}

int tbr_resp_rx_more(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now)
{
	if (h->msg_len != h->paylen &&
	    ((h->psn == qp->epsn && tbr_resp_write_frame(qp, h, now)) ||
	     tbr_resp_write_ooo(qp, h, now)))
		return 0;
	return tbr_resp_rx_slow(qp, h, now);
}

void tbr_resp_pump(struct tbr_tqp *qp, u64 now)
{
	if (qp->error)
		return;
	if (qp->njobs)
		tbr_resp_send_jobs(qp);
	if (!qp->error && qp->ack_pending && now >= qp->ack_deadline) {
		/* no answer came in time: one down (TBR_PP_SCORE_MAX misses in a row
		 * end the ping-pong); a late answer still counts and lengthens the wait
		 */
		if (qp->ack_deferred) {
			if (qp->pp_score)
				qp->pp_score--;
			qp->ack_deferred = 0;
		}
		tbr_resp_send_ack(qp, TBR_SYN_ACK, qp->epsn, 0);
	}
}

void tbr_resp_timer(struct tbr_tqp *qp, u64 now)
{
	if (qp->cfg.type == TBR_QPT_UC && now >= qp->uc_hole_deadline)
		tbr_uc_skip(qp, now);
}

u64 tbr_resp_deadline(const struct tbr_tqp *qp)
{
	u64 d = qp->uc_hole_deadline;

	/* A blocked ACK waits for tbr_tqp_progress() after tx space frees. */
	if (qp->ack_pending && !qp->tx_blocked && qp->ack_deadline < d)
		d = qp->ack_deadline;
	return d;
}

void tbr_resp_flush(struct tbr_tqp *qp)
{
	while (qp->rq_head != qp->rq_fetched) {
		tbr_wc_recv(qp, &qp->rq[qp->rq_head & qp->rq_mask], NULL,
			    TBR_WC_WR_FLUSH_ERR);
		qp->rq_head++;
	}
	memset(qp->jobs, 0, sizeof(qp->jobs));
	qp->njobs = 0;
	qp->ack_pending = 0;
	qp->ack_deadline = TBR_NO_DEADLINE;
	qp->ack_deferred = 0;
	qp->uc_hole_deadline = TBR_NO_DEADLINE;
}
