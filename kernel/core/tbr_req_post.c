// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_req_post.c - requester half of the transport core: posting send WRs
 * (checks, the WQE, chains of posts); tbr_req.c sends them.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

u32 tbr_tqp_sq_space(const struct tbr_tqp *qp)
{
	return qp->cfg.sq_depth - (qp->sq_tail - qp->sq_head);
}

static int tbr_wr_check(const struct tbr_tqp *qp, const struct tbr_send_wr *wr,
			u64 *lenp)
{
	u64 len = 0;
	u32 i;

	switch (qp->cfg.type) {
	case TBR_QPT_UD:
		if (wr->opcode != TBR_WR_SEND && wr->opcode != TBR_WR_SEND_IMM)
			return -EINVAL;
		if (wr->remote_qpn & ~TBR_QPN_MASK)
			return -EINVAL;
		break;
	case TBR_QPT_UC:
		if (wr->opcode != TBR_WR_SEND && wr->opcode != TBR_WR_SEND_IMM &&
		    wr->opcode != TBR_WR_WRITE && wr->opcode != TBR_WR_WRITE_IMM &&
		    wr->opcode != TBR_WR_LOCAL)
			return -EINVAL;
		break;
	case TBR_QPT_RC:
		if (wr->opcode > TBR_WR_LOCAL)
			return -EINVAL;
		break;
	}
	if (wr->opcode == TBR_WR_LOCAL) {
		if (!qp->ops->local || wr->num_sge || (wr->flags & TBR_WR_INLINE))
			return -EINVAL;
		*lenp = 0;
		return 0;
	}
	if (wr->flags & ~(TBR_WR_SIGNALED | TBR_WR_SOLICITED | TBR_WR_INLINE |
			  TBR_WR_FENCE | TBR_WR_MORE))
		return -EINVAL;
	if (wr->flags & TBR_WR_INLINE) {
		if (tbr_wr_is_rd(wr->opcode) || wr->inline_len > TBR_MAX_INLINE ||
		    (wr->inline_len && !wr->inline_data))
			return -EINVAL;
		len = wr->inline_len;
	} else {
		if (wr->num_sge > TBR_MAX_SGE || (wr->num_sge && !wr->sgl))
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sgl[i].length;
	}
	if (len > TBR_MSG_MAX)
		return -EINVAL;
	/* Frame index must stay unambiguous in 24-bit PSN space. */
	if (tbr_frames((u32)len, qp->cfg.mtu) >= (1u << (TBR_PSN_BITS - 1)))
		return -EINVAL;
	if (tbr_wr_is_atomic(wr->opcode) &&
	    (len != 8 || (wr->remote_addr & 7)))
		return -EINVAL;
	if (qp->cfg.type == TBR_QPT_UD && len > qp->cfg.mtu)
		return -EINVAL;
	*lenp = len;
	return 0;
}

void tbr_tqp_end_chain(struct tbr_tqp *qp, u64 now)
{
	struct tbr_swqe *w;

	if (qp->sq_next == qp->sq_tail)
		return;
	w = tbr_wr(qp, qp->sq_tail - 1);
	if (!(w->flags & TBR_WR_MORE))
		return;
	w->flags &= ~TBR_WR_MORE;
	tbr_req_pump(qp, now);
}

/*
 * The common shape of a send WR: RC or UC, SEND or WRITE, one SGE, no
 * inline data. It needs only the length checks of tbr_wr_check(), and of
 * the WQE only what such a WR uses (the UD and ATOMIC fields are not read).
 */
static bool tbr_post_fast(const struct tbr_tqp *qp,
			  const struct tbr_send_wr *wr)
{
	return qp->cfg.type != TBR_QPT_UD && wr->num_sge == 1 && wr->sgl &&
	       (wr->opcode == TBR_WR_WRITE || wr->opcode == TBR_WR_SEND) &&
	       !(wr->flags & ~(TBR_WR_SIGNALED | TBR_WR_SOLICITED |
			       TBR_WR_FENCE | TBR_WR_MORE));
}

/* The WQE fields every send WR sets from its WR. */
static inline void tbr_wqe_fill(struct tbr_swqe *w,
				const struct tbr_send_wr *wr, u32 len)
{
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->flags;
	w->length = len;
	w->remote_addr = wr->remote_addr;
	w->rkey = wr->rkey;
	w->imm = wr->imm;
}

/*
 * A WQE is in the send queue and there may be work: answer a ping-pong,
 * then transmit unless the chain goes on (TBR_WR_MORE) and the queue has
 * room for its next WR.
 */
static tbr_noinline int tbr_post_kick(struct tbr_tqp *qp, struct tbr_swqe *w,
				      u64 now)
{
	if (qp->conn.ack_piggyback && w->opcode != TBR_WR_LOCAL)
		tbr_resp_pp_answer(qp, now);	/* an answer (ping-pong)? */
	if (w->flags & TBR_WR_MORE) {
		if (qp->sq_tail - qp->sq_head <= qp->sq_mask)
			return 0;	/* the next post transmits it */
		w->flags &= ~TBR_WR_MORE;
	}
	tbr_req_pump(qp, now);
	return 0;
}

/*
 * A WQE is in the send queue. A chained post with nothing to answer and
 * room for the next WR returns at once; the rest is tbr_post_kick(), a
 * tail call, so that the chained post saves and restores no registers.
 */
static inline int tbr_post_queued(struct tbr_tqp *qp, struct tbr_swqe *w,
				  u64 now)
{
	qp->sq_tail++;
	if (!qp->conn.ack_piggyback && (w->flags & TBR_WR_MORE) &&
	    qp->sq_tail - qp->sq_head <= qp->sq_mask)
		return 0;	/* the next post transmits it */
	return tbr_post_kick(qp, w, now);
}

/* A WR refused: a chain cut short goes out at once (TBR_WR_MORE). */
static tbr_noinline int tbr_post_refused(struct tbr_tqp *qp, u64 now)
{
	tbr_tqp_end_chain(qp, now);
	return -EINVAL;
}

/*
 * Any other WR (tbr_post_fast() false): out of line, so that the common
 * shape's path saves and restores no registers for it.
 */
static tbr_noinline int tbr_post_general(struct tbr_tqp *qp,
					 const struct tbr_send_wr *wr, u64 now)
{
	struct tbr_swqe *w;
	u64 len;
	int ret;

	ret = tbr_wr_check(qp, wr, &len);
	if (ret) {
		/* a chain cut short goes out at once (TBR_WR_MORE) */
		tbr_tqp_end_chain(qp, now);
		return ret;
	}
	w = tbr_wr(qp, qp->sq_tail);
	/* the SGEs / inline bytes: only the num_sge / length posted are read */
	memset(w, 0, offsetof(struct tbr_swqe, sge));
	tbr_wqe_fill(w, wr, (u32)len);
	w->compare_add = wr->compare_add;
	w->swap = wr->swap;
	w->remote_qpn = wr->remote_qpn;
	w->qkey = (wr->remote_qkey & 0x80000000u) ? qp->cfg.qkey :
						      wr->remote_qkey;
	w->conn_id = wr->conn_id;
	w->pkey_index = wr->pkey_index;
	if (wr->flags & TBR_WR_INLINE) {
		if (wr->inline_len)
			memcpy(w->inline_data, wr->inline_data, wr->inline_len);
	} else {
		w->num_sge = (u8)wr->num_sge;
		if (wr->num_sge == 1)
			w->sge[0] = wr->sgl[0];
		else if (wr->num_sge)
			memcpy(w->sge, wr->sgl, sizeof(*w->sge) * wr->num_sge);
	}
	if (qp->cfg.type != TBR_QPT_UD)
		w->data_op = tbr_wr_data_op(w->opcode);
	if (w->opcode == TBR_WR_LOCAL)
		w->npsn = 0;	/* retires once the PSNs before it are done */
	else
		w->npsn = tbr_wr_is_atomic(w->opcode) ? 1 :
			  tbr_frames(w->length, qp->cfg.mtu);
	w->first_psn = qp->next_psn;
	qp->next_psn = tbr_psn_add(qp->next_psn, w->npsn);
	if (w->opcode == TBR_WR_SEND || w->opcode == TBR_WR_SEND_IMM ||
	    w->opcode == TBR_WR_SEND_INV || w->opcode == TBR_WR_WRITE_IMM)
		w->rmsn = qp->next_rmsn++;
	if (w->opcode != TBR_WR_LOCAL)
		w->wmsn = qp->next_wmsn++;
	return tbr_post_queued(qp, w, now);
}

int tbr_tqp_post_send(struct tbr_tqp *qp, const struct tbr_send_wr *wr, u64 now)
{
	struct tbr_swqe *w;
	u32 npsn = 0, tail, used;
	u64 len;

	if (!qp->connected)
		return -EINVAL;
	if (qp->error)
		return -EIO;
	tail = qp->sq_tail;
	used = tail - qp->sq_head;
	if (used > qp->sq_mask)
		return -ENOSPC;
	if (!tbr_post_fast(qp, wr))
		return tbr_post_general(qp, wr, now);
	/*
	 * The WQE first, straight from the WR (the slot past sq_tail is free;
	 * a refused WR leaves it unqueued), then tbr_wr_check()'s length
	 * checks on it: fewer values live at once, no registers saved.
	 */
	w = tbr_wr(qp, tail);
	w->sge[0] = wr->sgl[0];
	tbr_wqe_fill(w, wr, wr->sgl[0].length);
	w->num_sge = 1;
	w->status = 0;
	w->rd = 0;
	w->ordered = 0;
	w->data_op = w->opcode == TBR_WR_WRITE ? TBR_OP_WRITE : TBR_OP_SEND;
	len = w->length;
	if (len <= qp->cfg.mtu) {
		npsn = 1;	/* tbr_frames(), no division */
	} else {
		if (len > TBR_MSG_MAX)
			return tbr_post_refused(qp, now);
		npsn = tbr_frames((u32)len, qp->cfg.mtu);
		if (npsn >= (1u << (TBR_PSN_BITS - 1)))
			return tbr_post_refused(qp, now);
	}
	w->npsn = npsn;
	w->first_psn = qp->next_psn;
	qp->next_psn = tbr_psn_add(qp->next_psn, npsn);
	w->rmsn = w->opcode == TBR_WR_SEND ? qp->next_rmsn++ : 0;
	w->wmsn = qp->next_wmsn++;
	qp->sq_tail = tail + 1;
	/*
	 * tbr_post_queued()'s test, from what is still in registers: a chain
	 * going on with room for its next WR and no answer to give returns
	 * here, saving no registers; anything else is a tail call.
	 */
	if ((w->flags & TBR_WR_MORE) && used < qp->sq_mask &&
	    !qp->conn.ack_piggyback)
		return 0;	/* the next post transmits it */
	return tbr_post_kick(qp, w, now);
}
