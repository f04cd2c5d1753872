/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_resp_fast.h - the responder's receive entry and its one-frame WRITE
 * fast paths, inlined into tbr_tqp.c's receive path (no call per frame for
 * the common frame): from the frame's bytes (tbr_resp_write_raw()) and from
 * a parsed header; tbr_resp.c uses the same helpers for its multi-frame fast
 * paths.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#ifndef TBR_RESP_FAST_H
#define TBR_RESP_FAST_H

#include "tbr_priv.h"

/*
 * RC fast paths: a WRITE frame at the next PSN, of the next message
 * expected, with nothing received beyond it and no READ/ATOMIC job pending.
 * What the general path does with one (check it against the message's slot,
 * or create the slot; place it; move the window by one; retire the message
 * after its last frame) reduces to: place, move epsn and rcv_hi by one, and
 * after the last frame free the slot and move emsn. They return true when
 * done, false (nothing changed) when the frame takes the general path, which
 * also rejects a frame that does not fit its slot and reports a failed
 * placement.
 */
static inline bool tbr_resp_write_next(const struct tbr_tqp *qp,
				       const struct tbr_hdr *h)
{
	return h->opcode == TBR_OP_WRITE && qp->cfg.type == TBR_QPT_RC &&
	       h->psn == qp->epsn && qp->rcv_hi == qp->epsn &&
	       h->msn == qp->emsn && !qp->njobs;
}

/* Place @len bytes of @h at its offset; false if that fails (or wraps). */
static inline bool tbr_resp_write_place(struct tbr_tqp *qp,
					const struct tbr_hdr *h, u32 len)
{
	u64 va = h->va + h->offset;

	return !len || (va >= h->va && va + len >= va &&
			!qp->ops->mr_write(qp->ctx, h->rkey, va, h->payload,
					   len));
}

/* After a fast path's frame: tbr_resp_ack(), or only note the ACK owed. */
static inline void tbr_resp_fast_ack(struct tbr_tqp *qp, u8 flags, u64 now)
{
	qp->ack_count++;
	if (!(flags & TBR_F_ACKREQ) &&
	    qp->ack_count < qp->conn.ack_every &&
	    qp->ack_deadline != TBR_NO_DEADLINE)
		qp->ack_pending = 1;
	else
		tbr_resp_ack(qp, now, flags & TBR_F_ACKREQ);
}

/* A whole message in one frame (msg_len == paylen): it never takes a slot. */
static inline bool tbr_resp_write_fast(struct tbr_tqp *qp,
				       const struct tbr_hdr *h, u64 now)
{
	u32 len = h->paylen;

	if (!tbr_resp_write_next(qp, h) || h->offset || len > qp->cfg.mtu ||
	    tbr_resp_slot_of(qp, h->msn)->state != TBR_RMSG_FREE ||
	    !tbr_resp_write_place(qp, h, len))
		return false;
	/* rpsn_msn and msn_hi serve UC only */
	qp->epsn = tbr_psn_add(h->psn, 1);
	qp->rcv_hi = qp->epsn;
	qp->emsn++;
	tbr_resp_fast_ack(qp, h->flags, now);
	return true;
}

/* tbr_resp.c: what tbr_resp_rx() does with a frame its fast path did not take */
int tbr_resp_rx_more(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now);

/*
 * A request frame for the responder (SEND*, WRITE*, READ_REQ, ATOMIC*) of
 * the QP's connection: place it, answer it, complete what it ends.
 */
static __always_inline int tbr_resp_rx(struct tbr_tqp *qp,
				       const struct tbr_hdr *h, u64 now)
{
	if (h->flags & TBR_F_RETRANS)
		qp->ack_rtx = 1;
	if (h->msg_len == h->paylen && tbr_resp_write_fast(qp, h, now))
		return 0;
	return tbr_resp_rx_more(qp, h, now);
}

/* tbr_resp_rx() for a frame whose fast placement failed (TBR_RAW_UNPLACED) */
static inline int tbr_resp_rx_unplaced(struct tbr_tqp *qp,
				       const struct tbr_hdr *h, u64 now)
{
	if (h->flags & TBR_F_RETRANS)
		qp->ack_rtx = 1;
	return tbr_resp_rx_more(qp, h, now);
}

/*
 * tbr_tqp_rx()'s first try, on the frame's bytes before any struct tbr_hdr
 * is filled: a WRITE that tbr_resp_write_fast() would take (a whole message
 * in one frame, at the next PSN and MSN, nothing beyond it received, no job
 * pending, no ACK riding on it), checked as tbr_frame_parse() and
 * tbr_tqp_rx() check it. The caller has seen a frame of at least a WRITE's
 * header, opcode WRITE, PSN qp->epsn, qp->rcv_hi == qp->epsn and a message
 * length equal to the payload length; here the rest: length, version, flags, QPN, connection, the opcodes the QP takes,
 * P_Key (tbr_tqp_pkey_ok() of a QP other than QP1), error state.
 * TBR_RAW_DONE: placed and accounted, as the full path would have;
 * TBR_RAW_NO: not such a frame, nothing changed (the full path decides);
 * TBR_RAW_UNPLACED: such a frame whose placement failed, nothing changed:
 * the full path takes it without trying the fast placement again.
 */
enum { TBR_RAW_NO, TBR_RAW_DONE, TBR_RAW_UNPLACED };

static __always_inline int tbr_resp_write_raw(struct tbr_tqp *qp,
					      const u8 *p, u32 len, u64 now)
{
	const u32 hl = TBR_BASE_HDR_LEN + TBR_EXT_WRITE_LEN;
	const u8 *e = p + TBR_BASE_HDR_LEN;
	u32 paylen;
	u64 va;
	u8 flags;

	/* seen by the caller: len >= hl, WRITE, PSN, rcv_hi, msg_len == paylen */
	if (len > TBR_FRAME_MAX || p[0] != TBR_WIRE_VERSION)
		return TBR_RAW_NO;
	flags = p[2];
	paylen = tbr_get_be16(p + 6);
	/* unknown flags or a rider; the length; QPN, connection, opcode */
	if ((flags & (~TBR_F_ALL | TBR_F_ACK)) || len != hl + paylen ||
	    !qp->connected || qp->cfg.type != TBR_QPT_RC ||
	    tbr_get_be32(p + 8) != qp->cfg.qpn ||
	    (qp->cfg.qpn & ~TBR_QPN_MASK) ||
	    !((qp->rx_ops >> TBR_OP_WRITE) & 1) ||
	    tbr_get_be16(p + 4) != qp->conn.conn_id ||
	    qp->cfg.gsi || !tbr_pkey_match(tbr_tqp_pkey(qp), tbr_get_pkey(p)) ||
	    qp->error)
		return TBR_RAW_NO;
	/* tbr_resp_write_fast()'s conditions */
	if (qp->njobs ||
	    tbr_get_be32(e) != qp->emsn || tbr_get_be32(e + 4) ||
	    paylen > qp->cfg.mtu ||
	    tbr_resp_slot_of(qp, qp->emsn)->state != TBR_RMSG_FREE)
		return TBR_RAW_NO;
	/*
	 * Counted before the placement and uncounted if it fails: fewer
	 * values live across the call (psn is qp->epsn, which it leaves).
	 */
	qp->cnt.rx_frames++;
	qp->cnt.rx_bytes += paylen;
	va = tbr_get_be64(e + 16);
	if (paylen && (va + paylen < va ||
		       qp->ops->mr_write(qp->ctx, tbr_get_be32(e + 12), va,
					 p + hl, paylen))) {
		qp->cnt.rx_frames--;
		qp->cnt.rx_bytes -= tbr_get_be16(p + 6);
		return TBR_RAW_UNPLACED;
	}
	if (flags & TBR_F_RETRANS)
		qp->ack_rtx = 1;
	qp->epsn = tbr_psn_add(qp->epsn, 1);
	qp->rcv_hi = qp->epsn;
	qp->emsn++;
	tbr_resp_fast_ack(qp, flags, now);
	return TBR_RAW_DONE;
}

#endif /* TBR_RESP_FAST_H */
