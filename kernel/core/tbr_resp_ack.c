// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_resp_ack.c - what the responder tells the requester: ACK/SACK frames,
 * coalesced or at once, ACKs riding on the data frames going back and held
 * for a ping-pong's answer (docs/protocol.md 3.3), RNR and fatal NAKs.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

/* Send an ACK (or NAK) carrying the receive window state. */
bool tbr_resp_send_ack(struct tbr_tqp *qp, u8 syn, u32 psn, u32 aux)
{
	u32 w = tbr_win(qp);
	u32 span = (u32)tbr_psn_diff(qp->rcv_hi, qp->epsn);
	u32 nwords = (span + 63) / 64;
	u32 hl, j;
	u8 *buf, *e;

	if (nwords > w / 64)
		nwords = w / 64;
	if (nwords > TBR_ACK_MAX_WORDS)
		nwords = TBR_ACK_MAX_WORDS;
	hl = tbr_hdr_len(TBR_OP_ACK);
	buf = tbr_tx_get(qp, hl + 8 * nwords);
	if (!buf)
		return false;
	/* what tbr_hdr_build() writes for an ACK, without a struct tbr_hdr */
	e = buf + TBR_BASE_HDR_LEN;
	tbr_put_base(buf, TBR_OP_ACK,
		     qp->ack_rtx ? TBR_F_RETRANS : 0,	/* no timing from it */
		     qp->conn.conn_id, (u16)(8 * nwords), qp->conn.dest_qpn,
		     psn, tbr_tqp_pkey(qp));
	e[0] = syn;
	e[1] = (u8)nwords;
	e[2] = 0;
	e[3] = 0;
	tbr_put_be32(qp->epsn & TBR_PSN_MASK, e + 4);
	tbr_put_be32(syn == TBR_SYN_ACK ? qp->dsack : aux, e + 8);
	for (j = 0; j < nwords; j++)
		tbr_put_be64(tbr_bm_get64(qp->rcvd, w,
					  tbr_psn_add(qp->epsn, 64 * j)),
			     buf + hl + 8 * j);
	tbr_tx_put(qp, buf, hl + 8 * nwords, 0);
	if (syn == TBR_SYN_ACK) {
		qp->cnt.acks_sent++;
		qp->hole_acked = span != 0;
		qp->hole_hi = qp->rcv_hi;
		qp->dsack = 0;
		tbr_resp_ack_settled(qp);
	} else if (syn == TBR_SYN_RNR_NAK) {
		qp->cnt.rnr_naks_sent++;
	} else {
		qp->cnt.naks_sent++;
	}
	return true;
}

/*
 * What an ACK owed now would say, an epsn alone can: the window has no
 * hole, no duplicate is to be reported and the ACK does not answer a
 * retransmission (whose ACK the requester must not take timing from).
 */
static inline bool tbr_resp_ack_plain(const struct tbr_tqp *qp)
{
	return !qp->dsack && !qp->ack_rtx && qp->rcv_hi == qp->epsn;
}

/*
 * The urgent ACK a message's end asked for, in a ping-pong: wait for the
 * answer to carry it, at most twice the longest recent answer time (and
 * ack_delay_ns more), never beyond TBR_ACK_DEFER_MAX_NS, which stays below
 * the requester's shortest tail probe timeout (TBR_PTO_MIN_NS). Returns
 * false when the ACK must go now: no ping-pong, more to say than an epsn,
 * or the last ACK reported holes (the one saying they are filled goes at
 * once, before the requester's RACK takes a late frame for lost).
 */
static bool tbr_resp_ack_defer(struct tbr_tqp *qp, u64 now)
{
	u64 wait;

	qp->ack_owed_at = now;
	if (!qp->conn.ack_piggyback || qp->pp_score < TBR_PP_SCORE_MIN ||
	    !tbr_resp_ack_plain(qp) || qp->hole_acked)
		return false;
	wait = 2 * qp->pp_gap + qp->conn.ack_delay_ns;
	if (wait > TBR_ACK_DEFER_MAX_NS)
		wait = TBR_ACK_DEFER_MAX_NS;
	if (qp->ack_deadline > now + wait)
		qp->ack_deadline = now + wait;
	qp->ack_deferred = 1;
	return true;
}

/*
 * A message of ours was posted at @now: does it answer the last message
 * received, within TBR_ACK_DEFER_MAX_NS of its end? An answer in time counts
 * up, a late one down; further messages before the next one is received
 * say nothing.
 */
void tbr_resp_pp_answer(struct tbr_tqp *qp, u64 now)
{
	u64 gap = now - qp->ack_owed_at;

	if (qp->ack_owed_at == TBR_NO_DEADLINE)
		return;
	if (now < qp->ack_owed_at || gap > TBR_ACK_DEFER_MAX_NS) {
		if (qp->pp_score)
			qp->pp_score--;
	} else {
		if (qp->pp_score < TBR_PP_SCORE_MAX)
			qp->pp_score++;
		/* the longest recent answer time: up at once, down slowly */
		if (gap >= qp->pp_gap)
			qp->pp_gap = gap;
		else
			qp->pp_gap -= (qp->pp_gap - gap) / 8;
	}
	qp->ack_owed_at = TBR_NO_DEADLINE;
}

/*
 * A data frame of ours is about to go out: when an ACK is owed and its epsn
 * says all of it, the frame carries it (@epsn) and nothing is owed any more.
 */
bool tbr_resp_ack_ride(struct tbr_tqp *qp, u32 *epsn)
{
	if (!qp->ack_pending || !tbr_resp_ack_plain(qp) || qp->error)
		return false;
	*epsn = qp->epsn;
	qp->cnt.acks_piggybacked++;
	qp->hole_acked = 0;
	qp->hole_hi = qp->rcv_hi;
	tbr_resp_ack_settled(qp);
	return true;
}

/*
 * RC: acknowledge now, or schedule a coalesced ACK. Never once the QP failed:
 * the fatal NAK went out with the responder's epsn past the failed message,
 * and an ACK overtaking it (another rail) would complete that message.
 */
void tbr_resp_ack(struct tbr_tqp *qp, u64 now, bool urgent)
{
	if (qp->cfg.type != TBR_QPT_RC || qp->error)
		return;
	qp->ack_pending = 1;
	if (urgent && tbr_resp_ack_defer(qp, now))
		return;
	if (urgent || qp->ack_count >= qp->conn.ack_every) {
		if (tbr_resp_send_ack(qp, TBR_SYN_ACK, qp->epsn, 0))
			return;
		qp->ack_deadline = now;
		return;
	}
	if (qp->ack_deadline == TBR_NO_DEADLINE)
		qp->ack_deadline = now + qp->conn.ack_delay_ns;
}

/* A fatal responder error in message order: NAK it and fail the QP. */
void tbr_resp_fatal(struct tbr_tqp *qp, u8 syn, u32 psn, u32 status)
{
	/* Repeated by tbr_resp_error_rx() if lost. */
	qp->fatal_syn = syn;
	qp->fatal_psn = psn;
	tbr_resp_send_ack(qp, syn, psn, 0);
	tbr_tqp_fatal(qp, status);
}

void tbr_resp_error_rx(struct tbr_tqp *qp, const struct tbr_hdr *h)
{
	if (qp->fatal_syn && qp->cfg.type == TBR_QPT_RC &&
	    h->opcode != TBR_OP_ACK && h->opcode != TBR_OP_READ_RESP &&
	    h->opcode != TBR_OP_ATOMIC_RESP)
		tbr_resp_send_ack(qp, qp->fatal_syn, qp->fatal_psn, 0);
}

/*
 * When the QP stops, its last ACK goes (again) TBR_ACK_FLUSH_COPIES times,
 * owed or not, if the QP received anything: once the QP is gone no
 * retransmission of the peer is answered, so an ACK lost just before (a
 * held ACK of a ping-pong's last answer, or the one sent at once for it:
 * stripe-tlp's ibv_rc_pingpong under 5% loss) would leave the peer's last
 * message to run out of retries. All copies are lost once in 8,000 at 5%
 * loss per frame; the requester takes the ones it does not need as stale
 * ACKs.
 */
void tbr_resp_ack_flush(struct tbr_tqp *qp)
{
	int i;

	if (qp->cfg.type != TBR_QPT_RC ||
	    (!qp->ack_pending && qp->epsn == qp->conn.rq_psn))
		return;
	for (i = 0; i < TBR_ACK_FLUSH_COPIES; i++)
		if (!tbr_resp_send_ack(qp, TBR_SYN_ACK, qp->epsn, 0))
			break;
}
