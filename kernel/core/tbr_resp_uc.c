// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_resp_uc.c - the UC responder's loss handling: messages dropped for a
 * lost frame, receive WQEs reused for later messages (IBTA UC semantics), the
 * hole timer and resynchronisation on a frame far beyond the window.
 * tbr_resp.c calls it.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

void tbr_uc_drop(struct tbr_tqp *qp, struct tbr_rmsg *s)
{
	s->state = TBR_RMSG_DROPPED;
	qp->cnt.uc_msgs_dropped++;
}

/* Move the bytes of a message from one receive WQE to another. */
static int tbr_uc_move(struct tbr_tqp *qp, struct tbr_rwqe *from,
		       struct tbr_rwqe *to, u32 len)
{
	u32 off = 0;
	int ret;

	if (len > from->total || len > to->total)
		return -EINVAL;
	while (off < len) {
		u32 k = len - off < TBR_FRAME_MAX ? len - off : TBR_FRAME_MAX;

		ret = qp->ops->sgl_read(qp->ctx, from->wqe.sge,
					from->wqe.num_sge, off, qp->bounce, k);
		if (!ret)
			ret = qp->ops->sgl_write(qp->ctx, to->wqe.sge,
						 to->wqe.num_sge, off,
						 qp->bounce, k);
		if (ret)
			return ret;
		off += k;
	}
	return 0;
}

/*
 * UC: @k receive WQEs starting at rq_head belong to lost messages. They are
 * reused (IBTA UC semantics): every receive-consuming message from emsn +
 * @first on moves down @k WQEs, with the bytes already placed for it; one
 * that no longer fits is dropped too. Cost: one copy of the data in flight,
 * paid only on loss.
 */
void tbr_uc_shift(struct tbr_tqp *qp, u32 first, u32 k)
{
	u32 i;

	for (i = first; i < tbr_win(qp); i++) {
		struct tbr_rmsg *t = tbr_resp_slot_of(qp, qp->emsn + i);

		if (t->state == TBR_RMSG_FREE || t->msn != qp->emsn + i ||
		    !tbr_op_recv(t->opcode))
			continue;
		if (t->bound && t->state == TBR_RMSG_ACTIVE &&
		    t->opcode != TBR_OP_WRITE_IMM &&
		    tbr_uc_move(qp, &qp->rq[t->rmsn & qp->rq_mask],
				&qp->rq[(t->rmsn - k) & qp->rq_mask],
				t->msg_len))
			tbr_uc_drop(qp, t);
		t->rmsn -= k;
	}
	qp->rq_skew += k;
}

/* UC: the head message @s is lost; its receive WQE is reused. */
void tbr_uc_drop_head(struct tbr_tqp *qp, struct tbr_rmsg *s)
{
	if (s->state == TBR_RMSG_ACTIVE)
		tbr_uc_drop(qp, s);
	if (tbr_op_recv(s->opcode))
		tbr_uc_shift(qp, 1, 1);
}

/* UC: resynchronise on a frame far beyond the window. */
void tbr_uc_resync(struct tbr_tqp *qp, const struct tbr_hdr *h)
{
	u32 i, w = tbr_win(qp);

	if (h->msn - qp->emsn < w) {
		qp->uc_dropping = 1;
		qp->uc_drop_msn = h->msn;
		tbr_resp_retire(qp);
	} else {
		/* Everything in flight is lost; WQEs bound so far are reused. */
		for (i = 0; i < w; i++) {
			if (qp->msg[i].state == TBR_RMSG_ACTIVE)
				qp->cnt.uc_msgs_dropped++;
			qp->msg[i].state = TBR_RMSG_FREE;
		}
		qp->rq_skew = qp->rmsn_hi - qp->rq_head;
		qp->uc_dropping = 0;
		qp->emsn = h->msn;
		qp->msn_hi = h->msn;
	}
	memset(qp->rcvd, 0, tbr_win(qp) / 8);
	qp->epsn = h->psn;
	qp->rcv_hi = h->psn;
	qp->uc_hole_deadline = TBR_NO_DEADLINE;
}

/* UC: (re)arm the hole timer after the receive window moved. */
void tbr_uc_arm(struct tbr_tqp *qp, u64 now)
{
	if (qp->epsn == qp->rcv_hi) {
		qp->uc_hole_deadline = TBR_NO_DEADLINE;
	} else if (qp->uc_hole_deadline == TBR_NO_DEADLINE ||
		   tbr_psn_diff(qp->epsn, qp->uc_hole_mark) >= 0) {
		qp->uc_hole_deadline = now + qp->conn.uc_reorder_ns;
		qp->uc_hole_mark = qp->rcv_hi;
	}
}

/* UC: give up on the hole at epsn: drop what it cuts into. */
static void tbr_uc_skip_one(struct tbr_tqp *qp)
{
	u32 w = tbr_win(qp);
	u32 span = (u32)tbr_psn_diff(qp->rcv_hi, qp->epsn);
	u32 n = 0, msn;

	while (n < span) {
		u64 v = tbr_bm_get64(qp->rcvd, w, tbr_psn_add(qp->epsn, n));

		if (v) {
			n += tbr_ctz64(v);
			break;
		}
		n += 64;
	}
	if (n >= span) {
		msn = qp->msn_hi;
		qp->epsn = qp->rcv_hi;
	} else {
		u32 psn = tbr_psn_add(qp->epsn, n);
		struct tbr_rmsg *s;

		msn = qp->rpsn_msn[psn & qp->wmask];
		s = tbr_resp_slot_of(qp, msn);
		/* the message resuming after the hole lost its start */
		if (s->state == TBR_RMSG_ACTIVE && s->msn == msn &&
		    s->first_psn != psn)
			tbr_uc_drop(qp, s);
		qp->epsn = psn;
	}
	qp->uc_dropping = 1;
	qp->uc_drop_msn = msn;
	tbr_resp_advance(qp);
}

/*
 * UC hole timer expired: every hole below the mark taken when the timer was
 * armed has been open for uc_reorder_ns: its frames are lost.
 */
void tbr_uc_skip(struct tbr_tqp *qp, u64 now)
{
	qp->uc_hole_deadline = TBR_NO_DEADLINE;
	while (!qp->error && qp->epsn != qp->rcv_hi &&
	       tbr_psn_diff(qp->uc_hole_mark, qp->epsn) > 0)
		tbr_uc_skip_one(qp);
	tbr_uc_arm(qp, now);
}
