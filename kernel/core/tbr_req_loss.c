// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_req_loss.c - the requester's loss detection: RTT and delivery
 * tracking from SACKs, the reordering window (RACK-style, adapted by DSACKs)
 * and the verdicts that send frames again, for data frames and for READ/
 * ATOMIC requests whose responses have holes.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

/*
 * Loss detection under reordering (docs/protocol.md 3.4), after RACK (RFC
 * 8985): the rails reorder frames by design, so a hole in the SACK bitmap
 * means nothing by itself. A frame is deemed lost only when a frame sent
 * after it has been delivered and the reordering window has passed since:
 * now >= xts + rack_rtt + reo_wnd. The window is the larger of
 *  - reo_mult * min_rtt / 4 (at most srtt): reo_mult starts at
 *    TBR_REO_MULT_INIT and grows by one per flight in which the responder
 *    reports a fast-retransmitted frame as a duplicate (DSACK), decaying
 *    back after TBR_REO_PERSIST rounds with losses and no DSACK;
 *  - the reordering measured directly: a frame sent once and delivered
 *    after a later-sent one was late by (its RTT - rack_rtt); the largest
 *    such lateness (+1/2) is kept, widened by half (at least srtt/4) on a
 *    DSACK, and halved after TBR_REO_PERSIST rounds with losses and no
 *    DSACK (without losses its size costs nothing).
 * Verdicts start TBR_RACK_WARMUP first-RTTs after the first RTT sample:
 * the first flights are where the reordering of the rails gets measured.
 * clamped to [reo_wnd_min_ns, reo_wnd_max_ns]. The constants are in
 * tbr_priv.h (tbr_req_reset() starts from them).
 */

/* The widest reordering window: reo_wnd_max_ns, by default timeout / 2. */
static u64 tbr_req_reo_max(const struct tbr_tqp *qp)
{
	if (qp->conn.reo_wnd_max_ns)
		return qp->conn.reo_wnd_max_ns;
	return qp->conn.timeout_ns ? qp->conn.timeout_ns / 2 : 1000000000ull;
}

u64 tbr_req_reo_wnd(const struct tbr_tqp *qp)
{
	u64 r = 0, max = tbr_req_reo_max(qp);

	if (qp->min_rtt != TBR_NO_DEADLINE) {
		r = (qp->min_rtt / 4) * qp->reo_mult;
		if (r > qp->srtt)
			r = qp->srtt;
	}
	if (r < qp->reo_meas)
		r = qp->reo_meas;
	if (r < qp->conn.reo_wnd_min_ns)
		r = qp->conn.reo_wnd_min_ns;
	return r < max ? r : max;
}

/*
 * PSNs [base, base + 64) with bits @nv became done now (acknowledged or
 * answered). Feed RACK with the ones sent only once (Karn: a retransmitted
 * PSN's delivery is ambiguous).
 */
void tbr_req_delivered(struct tbr_tqp *qp, u32 base, u64 nv, u64 now)
{
	u32 w = tbr_win(qp);
	u64 rtxd = tbr_bm_get64(qp->rtxd, w, base), rt = nv & rtxd;
	u32 lo, hi;
	u64 sure, rtt;

	/*
	 * A retransmission delivered at least min_rtt after it went is its
	 * own answer, not the original's (RFC 8985 6.2): RACK's newest send
	 * time known delivered moves to it, so that a retransmission sent
	 * before it and still missing can be judged lost (tbr_req_rack()).
	 */
	for (; rt; rt &= rt - 1) {
		u64 x = qp->xts[tbr_psn_add(base, tbr_ctz64(rt)) & qp->wmask];

		if (qp->min_rtt != TBR_NO_DEADLINE && x > qp->rack_ts &&
		    now >= x + qp->min_rtt)
			qp->rack_ts = x;
	}
	nv &= ~rtxd;
	if (!nv)
		return;
	/* Resent by a timeout sweep: good for ordering, not for timing. */
	sure = qp->untimed ? 0 : nv & ~tbr_bm_get64(qp->amb, w, base);
	if (sure && qp->rack_valid) {
		/* Delivered after a later-sent frame: measured reordering. */
		lo = tbr_psn_add(base, tbr_ctz64(sure));
		if (tbr_psn_diff(lo, qp->rack_psn) < 0) {
			u64 t = qp->xts[lo & qp->wmask] + qp->rack_rtt;

			if (now > t) {
				u64 late = now - t;

				late += late / 2;
				if (late > tbr_req_reo_max(qp))
					late = tbr_req_reo_max(qp);
				if (late > qp->reo_meas)
					qp->reo_meas = late;
			}
		}
	}
	hi = tbr_psn_add(base, tbr_msb64(nv));
	if (qp->rack_valid && tbr_psn_diff(hi, qp->rack_psn) <= 0)
		return;
	qp->rack_valid = 1;
	qp->rack_psn = hi;
	qp->rack_ts = qp->xts[hi & qp->wmask];
	if (!((sure >> (tbr_msb64(nv))) & 1))
		return;
	rtt = now - qp->rack_ts;
	qp->rack_rtt = rtt;
	if (rtt < qp->min_rtt)
		qp->min_rtt = rtt;
	if (rtt > qp->rtt_hi)
		qp->rtt_hi = rtt;
	else
		qp->rtt_hi -= (qp->rtt_hi - rtt) / 32;
	if (!qp->srtt) {
		qp->srtt = rtt;
		qp->rack_arm_at = now + TBR_RACK_WARMUP * rtt;
	} else
		qp->srtt = qp->srtt - qp->srtt / 8 + rtt / 8;
}

/*
 * The ACK reports PSNs [base, base + 64) with bits @v received. Those of a
 * READ/ATOMIC still unanswered say that its request arrived: ordering for
 * RACK, so that the frames sent before it and still missing can be judged
 * lost, and no timing (its responses are still to come). Without it, a
 * data frame lost before the last READ of a flight waited for the timeout:
 * the READ's responses wait behind it at the responder, nothing else was
 * sent after it, and the probes went to the READ. RACK's newest delivered
 * PSN moves to the first PSN of the request's chunk only, so that the
 * chunk's own responses, still streaming, are not judged by it. Requests
 * sent again are left out: the report may be of the first copy.
 */
void tbr_req_requested(struct tbr_tqp *qp, u32 base, u64 v)
{
	u32 w = tbr_win(qp), p;
	u64 x;

	if (!qp->rd_out)
		return;		/* no READ/ATOMIC unanswered (rdm clear) */
	v &= tbr_bm_get64(qp->rdm, w, base) & ~tbr_bm_get64(qp->done, w, base) &
	     ~tbr_bm_get64(qp->rtxd, w, base);
	if (!v)
		return;
	p = tbr_psn_add(base, tbr_msb64(v));
	p = tbr_rd_chunk_start(qp, tbr_wr(qp, qp->psn_msn[p & qp->wmask]), p);
	if (qp->rack_valid && tbr_psn_diff(p, qp->rack_psn) <= 0)
		return;
	x = qp->xts[p & qp->wmask];
	qp->rack_valid = 1;
	qp->rack_psn = p;
	if (x > qp->rack_ts)
		qp->rack_ts = x;
}

/* una moved: close a round (one flight acknowledged) if it passed it. */
void tbr_req_round(struct tbr_tqp *qp)
{
	if (tbr_psn_diff(qp->una, qp->reo_round) <= 0)
		return;
	qp->reo_round = qp->snd_nxt;
	if (qp->rack_lost) {
		/* Losses and no DSACK for a while: the window may be too wide. */
		qp->rack_lost = 0;
		if (!--qp->reo_persist) {
			qp->reo_persist = TBR_REO_PERSIST;
			qp->reo_mult = TBR_REO_MULT_INIT;
			qp->reo_meas /= 2;
		}
	}
}

/*
 * Congestion window (docs/protocol.md 3.9), after TCP's (RFC 5681) with
 * Linux's undo: rails may drop frames when the peer or a switch cannot keep
 * up (Ethernet, a QEMU socket), and a requester that keeps a whole window
 * of frames in flight into a queue that overflows loses more of each burst
 * the more it resends. cwnd starts at the whole window (a lossless link
 * never shrinks it; no slow start: a QP's first burst goes at full speed),
 * or where an earlier QP over the same link ended (conn.cwnd_init, kept by
 * the kernel per link), halves when more than 1/TBR_CWND_LOSS_DIV of a
 * flight sent after the last cut is found lost (RACK, READ response holes:
 * the scattered losses of a noisy link are not taken for congestion),
 * never below cwnd_min (a retransmit timeout cuts nothing; nor do fewer
 * than TBR_CWND_LOSS_MIN losses), and grows back by an eighth per window
 * of PSNs acknowledged. A cut whose fast retransmits all come back as
 * duplicates (DSACK: reordering on the rails, nothing was lost) is undone.
 */
void tbr_req_cwnd_reset(struct tbr_tqp *qp)
{
	u32 w = tbr_win(qp), init = qp->conn.cwnd_init;

	if (init < qp->conn.cwnd_min)
		init = qp->conn.cwnd_min;
	/*
	 * The whole window, or what the link was found to carry (cwnd_init):
	 * from there it grows as after a cut.
	 */
	qp->cwnd = qp->conn.cwnd_init && qp->conn.cwnd_min &&
		   qp->cfg.type == TBR_QPT_RC && init < w ? init : w;
	qp->cwnd_acc = 0;
	qp->cwnd_mark = qp->conn.sq_psn;
	qp->cwnd_lo = qp->conn.sq_psn;
	qp->cwnd_undo = 0;
	qp->cwnd_prior = qp->cwnd;
	qp->loss_mark = qp->conn.sq_psn;
	qp->loss_lo = qp->conn.sq_psn;
	qp->loss_n = 0;
	qp->loss_span = 0;
}

/*
 * @psn was found lost (RACK, a READ hole). A retransmit timeout cuts
 * nothing: on these rails it follows a lost retransmission or a lost tail
 * (scattered losses), while a queue that overflows drops bursts, which RACK
 * sees first; a window cut to its floor at every timeout of a noisy link
 * was measured 3.6x slower there (docs/bench-speed.md section 12).
 */
void tbr_req_cwnd_cut(struct tbr_tqp *qp, u32 psn)
{
	u32 w = tbr_win(qp), min = qp->conn.cwnd_min, half;

	if (!min || qp->cfg.type != TBR_QPT_RC)
		return;
	if (min > w)
		min = w;
	if (tbr_psn_diff(psn, qp->cwnd_mark) < 0) {
		/* this flight was cut already: one more to undo */
		if (qp->cwnd_undo && tbr_psn_diff(psn, qp->cwnd_lo) >= 0)
			qp->cwnd_undo++;
		return;
	}
	if (tbr_psn_diff(psn, qp->loss_mark) >= 0) {
		/* the first loss of a flight: what is in flight now */
		qp->loss_mark = qp->snd_nxt;
		qp->loss_lo = psn;
		qp->loss_n = 0;
		qp->loss_span = (u32)tbr_psn_diff(qp->snd_nxt, qp->una);
	}
	if (++qp->loss_n < TBR_CWND_LOSS_MIN ||
	    qp->loss_n * TBR_CWND_LOSS_DIV <= qp->loss_span)
		return;
	if (qp->cwnd_undo) {
		/* the last cut may still be undone: one episode, undone whole */
		qp->cwnd_undo += qp->loss_n;
	} else {
		qp->cwnd_prior = qp->cwnd;
		qp->cwnd_lo = qp->loss_lo;
		qp->cwnd_undo = qp->loss_n;
	}
	half = qp->cwnd / 2;
	qp->cwnd = half > min ? half : min;
	qp->cwnd_acc = 0;
	qp->cwnd_mark = qp->snd_nxt;	/* the next loss starts a flight */
	qp->cnt.cwnd_cuts++;
}

void tbr_req_cwnd_grow(struct tbr_tqp *qp, u32 n)
{
	u32 w = tbr_win(qp);

	/* an eighth more per window acknowledged (one PSN per eighth) */
	qp->cwnd_acc += n * TBR_CWND_LOSS_DIV;
	while (qp->cwnd_acc >= qp->cwnd) {
		qp->cwnd_acc -= qp->cwnd;
		qp->cwnd++;
	}
	if (qp->cwnd >= w) {
		qp->cwnd = w;
		qp->cwnd_acc = 0;
	}
}

/* The fast retransmit of @psn was a duplicate at the peer (DSACK). */
static void tbr_req_cwnd_spurious(struct tbr_tqp *qp, u32 psn)
{
	if (qp->loss_n && tbr_psn_diff(psn, qp->loss_lo) >= 0 &&
	    tbr_psn_diff(psn, qp->loss_mark) < 0)
		qp->loss_n--;	/* not lost: no count towards a cut */
	if (!qp->cwnd_undo || tbr_psn_diff(psn, qp->cwnd_lo) < 0 ||
	    tbr_psn_diff(psn, qp->cwnd_mark) >= 0 || --qp->cwnd_undo)
		return;
	if (qp->cwnd < qp->cwnd_prior)
		qp->cwnd = qp->cwnd_prior;
}

/*
 * The responder saw PSN @psn twice (DSACK). If we fast-retransmitted it,
 * the original was only late: widen the reordering window, at most once
 * per flight. frx has 2 * win bits so the answer may come back after the
 * PSN's window slot was reused.
 */
void tbr_req_dsack(struct tbr_tqp *qp, u32 psn)
{
	u32 fw = 2 * tbr_win(qp), i = psn & (fw - 1);
	s32 o = tbr_psn_diff(psn, qp->snd_nxt);
	u64 cap;

	if (o >= 0 || o < -(s32)fw || !tbr_bm_test(qp->frx, i))
		return;
	qp->frx[i >> 6] &= ~(1ull << (i & 63));
	qp->cnt.spurious_retransmits++;
	tbr_req_cwnd_spurious(qp, psn);
	if (tbr_psn_diff(psn, qp->reo_mark) < 0)
		return;
	qp->reo_mark = qp->snd_nxt;
	if (qp->reo_mult < TBR_REO_MULT_MAX)
		qp->reo_mult++;
	qp->reo_persist = TBR_REO_PERSIST;
	/*
	 * Widen by half (at least srtt / 4), up to the slowest recent RTT: a
	 * DSACK says the original was late, not by how much (nor whether the
	 * wire duplicated the retransmission instead), and a frame is never
	 * later than its own RTT. Unbounded, a wire that duplicates frames
	 * grew it 1.5x per flight until it overflowed (bench-speed.md 16).
	 */
	cap = qp->rtt_hi > qp->srtt ? qp->rtt_hi : qp->srtt;
	if (cap > tbr_req_reo_max(qp))
		cap = tbr_req_reo_max(qp);
	if (qp->reo_meas >= cap)
		return;
	qp->reo_meas += qp->reo_meas / 2 > qp->srtt / 4 ?
			qp->reo_meas / 2 : qp->srtt / 4;
	if (qp->reo_meas > cap)
		qp->reo_meas = cap;
}

/*
 * The request for READ/ATOMIC response PSNs [@psn, @next) went again at
 * @now: RACK judges them by it from now on.
 */
static void tbr_req_rd_resent(struct tbr_tqp *qp, u32 psn, u32 next, u64 now)
{
	for (; psn != next; psn = tbr_psn_add(psn, 1)) {
		qp->xts[psn & qp->wmask] = now;
		tbr_bm_set(qp->rtxd, psn & qp->wmask);
	}
	qp->cnt.read_hole_rtx++;
}

/*
 * RACK loss detection, run when an ACK or response arrives: every hole (not
 * done) sent before the last delivered PSN is lost once now >= xts +
 * rack_rtt + reo_wnd. A READ/ATOMIC response slot counts as sent with its
 * request (responses come in request order), and its request goes again
 * for the rest of its chunk. Sent once, xts grows with the PSN, so the scan
 * stops at the first such hole that is not due yet.
 * That hole arms the reordering timer for its due time plus srtt: when no
 * ACK comes any more (the frames after the hole were the last of a burst)
 * the verdict is taken there; the extra srtt keeps a peer that stalls for a
 * moment with frames still queued on some rails from looking like loss,
 * since its next ACK carries the measurement (rack_rtt, reo_meas) that
 * explains the delay. A hole already fast-retransmitted (rtxd) is judged by
 * its retransmission's time (xts is set when it goes again, as RFC 8985
 * does): lost again once a frame sent after it was delivered (its xts
 * before rack_ts) and the same window passed. Without that, a lost
 * retransmission (one in twenty on a 5% lossy rail) waited for the
 * retransmit timeout. Tail losses with nothing delivered after them are
 * found by the tail loss probe (tbr_req_tlp()). tbr_req_rd_hole() still
 * checks a READ chunk's holes as its responses arrive.
 */
void tbr_req_rack(struct tbr_tqp *qp, u64 now)
{
	u32 w = tbr_win(qp);
	u32 p = qp->una;
	s32 span;
	u64 due0;

	qp->rack_deadline = TBR_NO_DEADLINE;
	if (!qp->rack_valid || qp->rtx_active || qp->error ||
	    qp->rnr_until != TBR_NO_DEADLINE)
		return;
	if (now < qp->rack_arm_at) {
		/* still learning the rails: decide at the end of it */
		qp->rack_deadline = qp->rack_arm_at;
		return;
	}
	span = tbr_psn_diff(qp->rack_psn, p);
	if (span <= 0)
		return;
	due0 = qp->rack_rtt + tbr_req_reo_wnd(qp);
	while (span > 0) {
		u32 k = span < 64 ? (u32)span : 64;
		u64 v = tbr_low_mask(k) & ~tbr_bm_get64(qp->done, w, p);
		u64 again = tbr_bm_get64(qp->rtxd, w, p);

		for (; v; v &= v - 1) {
			u32 b = tbr_ctz64(v);
			u32 q = tbr_psn_add(p, b);
			u32 qi = q & qp->wmask;
			u64 due = qp->xts[qi] + due0;
			bool re = (again >> b) & 1;
			u32 next, n;

			if (re && qp->xts[qi] >= qp->rack_ts)
				continue;	/* nothing sent after it arrived */
			if (now < due) {
				if (due + qp->srtt < qp->rack_deadline)
					qp->rack_deadline = due + qp->srtt;
				if (re)
					continue;
				return;
			}
			if (qp->halted &&
			    (s32)(qp->psn_msn[qi] - qp->halt_msn) >= 0)
				return;
			if ((u32)tbr_psn_diff(q, qp->una) >= qp->cwnd) {
				/*
				 * Beyond the congestion window: resent when an
				 * ACK moves una (each runs this again); with no
				 * ACK left to come the probe or the timeout
				 * does. No timer: nothing changes before an ACK.
				 */
				return;
			}
			next = tbr_req_resend(qp, q);
			if (next == q) {
				/* tx full: again once progress is called */
				qp->rack_deadline = now;
				return;
			}
			qp->rack_lost = 1;
			if (!re)
				tbr_req_cwnd_cut(qp, q);
			if (!tbr_bm_test(qp->rdm, qi)) {
				qp->xts[qi] = now;
				tbr_bm_set(qp->rtxd, qi);
				tbr_bm_set(qp->frx, q & (2 * w - 1));
				qp->cnt.fast_retransmits++;
				continue;
			}
			/*
			 * A READ or ATOMIC response: its request went again
			 * for the rest of the chunk (tbr_req_resend()); skip
			 * those PSNs in this word (bits beyond b up to next).
			 */
			tbr_req_rd_resent(qp, q, next, now);
			n = (u32)tbr_psn_diff(next, q);
			v &= ~(tbr_low_mask(b + n) & ~tbr_low_mask(b + 1));
		}
		p = tbr_psn_add(p, k);
		span -= (s32)k;
	}
}

/*
 * READ responses of one request chunk are sent in PSN order, so a missing
 * response with a later one of the same chunk delivered is lost once the
 * reordering window passed: re-request the missing part of the chunk then
 * (checked when later responses arrive, like tbr_req_rack()) instead of
 * waiting for the retransmit timeout.
 */
void tbr_req_rd_hole_check(struct tbr_tqp *qp, struct tbr_swqe *w,
			   u32 psn, u64 now)
{
	u32 bw = tbr_win(qp);
	u32 p = tbr_rd_chunk_start(qp, w, psn);
	s32 span;

	if (qp->rd_hole_deadline != TBR_NO_DEADLINE || now < qp->rack_arm_at)
		return;
	if (tbr_psn_diff(p, qp->una) < 0)
		p = qp->una;
	span = tbr_psn_diff(psn, p);
	while (span > 0) {
		u32 k = span < 64 ? (u32)span : 64;
		u64 v = tbr_low_mask(k) & ~(tbr_bm_get64(qp->done, bw, p) |
					    tbr_bm_get64(qp->rtxd, bw, p));

		if (v) {
			qp->rd_hole_psn = tbr_psn_add(p, tbr_ctz64(v));
			qp->rd_hole_deadline = now + tbr_req_reo_wnd(qp);
			return;
		}
		p = tbr_psn_add(p, k);
		span -= (s32)k;
	}
}

void tbr_req_rd_hole(struct tbr_tqp *qp, u64 now)
{
	u32 q = qp->rd_hole_psn, qi = q & qp->wmask, next;

	qp->rd_hole_deadline = TBR_NO_DEADLINE;
	if (qp->rtx_active || qp->error || qp->rnr_until != TBR_NO_DEADLINE ||
	    tbr_psn_diff(q, qp->una) < 0 ||
	    tbr_psn_diff(qp->snd_nxt, q) <= 0 ||
	    tbr_bm_test(qp->done, qi) || tbr_bm_test(qp->rtxd, qi) ||
	    !tbr_bm_test(qp->rdm, qi))
		return;
	if (qp->halted && (s32)(qp->psn_msn[qi] - qp->halt_msn) >= 0)
		return;
	next = tbr_req_resend(qp, q);
	if (next == q) {
		qp->rd_hole_deadline = now;
		qp->rd_hole_retry = 1;
		return;
	}
	tbr_req_cwnd_cut(qp, q);
	tbr_req_rd_resent(qp, q, next, now);
}

/*
 * Tail loss probe (after RACK-TLP, RFC 8985 section 7). RACK needs a frame
 * sent after a hole to be delivered; when the last frames of a flight are
 * lost (a ping-pong's only frame, or its ACK) nothing is, and only the
 * retransmit timer (2.1 s with rdma_cm's default) would end the wait. So a
 * probe timeout after the first transmission since the last progress (or
 * after that progress, with frames outstanding) without further progress
 * resends the last not-done PSN (armed once, like the retransmit timer, so
 * a stream does not move the timer per frame); its ACK (a DSACK when only
 * the ACK had been lost) or the SACK hole it reveals restarts loss
 * detection. RFC 8985 sends one probe and leaves the rest to the RTO, a
 * few RTTs away on one path; here the RTO is the QP's local ACK timeout,
 * thousands of RTTs (67 ms to 2.1 s against ~100 us), so a lost probe (or
 * its lost ACK: one in ten on a 5% lossy rail) would cost all of it. Up to
 * TBR_TLP_MAX probes go out per flight, each PTO twice the one before.
 *
 * PTO = max(2 srtt, rtt_hi + srtt / 2) + reo_meas (+ ack_delay when the
 * newest frame did not ask for an immediate ACK), doubled while RACK still
 * learns the rails (TBR_RACK_WARMUP). RFC 8985's 2 SRTT assumes one path whose RTT
 * varies little around its mean. Here frames and ACKs are sprayed over
 * rails of different latency: a frame and its ACK may both ride the slowest
 * rails, and a message's frames (a READ's responses) arrive spread over the
 * rails' skew, so the mean says little about when the last answer is due.
 * rtt_hi, the largest recent RTT sample (decaying 1/32 per smaller one),
 * covers the slowest pair of rails, srtt / 2 a margin, and reo_meas (the
 * lateness measured between frames, tbr_req_delivered()) the spread on top;
 * a slow rail is not taken for a lost frame.
 * Armed only with an RTT measured, or else one an earlier QP over the same
 * link measured (conn.srtt_init, then doubled), and when it expires before
 * the retransmit timer (RFC 8985: PTO = min(PTO, RTO)); the n-th probe after
 * 2^(n-1) PTO.
 *
 * A probe is no timeout: it spends no retry (tbr_req_rtx_count() leaves it
 * out), and the retransmit timer keeps running, so a dead peer fails the QP
 * after exactly retry_cnt + 1 timeouts, probe or not.
 */
void tbr_req_tlp_set(struct tbr_tqp *qp, u64 now)
{
	u64 pto, hi, srtt = qp->srtt, rtt_hi = qp->rtt_hi;

	if (!srtt)
		srtt = rtt_hi = qp->conn.srtt_init;
	if (!srtt || !qp->conn.tail_probe || qp->cfg.type != TBR_QPT_RC)
		return;
	pto = 2 * srtt;
	hi = rtt_hi + srtt / 2;
	if (hi > pto)
		pto = hi;
	pto += qp->reo_meas;
	/*
	 * READ/ATOMIC requests are answered at once, ACKREQ or not; else the
	 * ACK may be coalesced, or, asked for, held for the answer by a peer
	 * in a ping-pong (3.3)
	 */
	if (!tbr_wr(qp, qp->psn_msn[(qp->snd_nxt - 1) & qp->wmask])->rd) {
		if (!(qp->tail_flags & TBR_F_ACKREQ))
			pto += qp->conn.ack_delay_ns;
		else if (qp->acked_by_ride)
			pto += TBR_ACK_DEFER_MAX_NS;
	}
	if (pto < TBR_PTO_MIN_NS)
		pto = TBR_PTO_MIN_NS;
	if (now < qp->rack_arm_at || !qp->srtt)
		pto *= 2;
	pto <<= qp->tlp_sent;
	if (qp->rto_deadline != TBR_NO_DEADLINE &&
	    now + pto >= qp->rto_deadline)
		return;
	qp->pto_deadline = now + pto;
}

/*
 * The first PSN not done in [una, snd_nxt) that the responder takes only
 * once every PSN before it is in: a READ/ATOMIC response (responses come
 * in order) or a frame of a WRITE that follows one (ORDERED); snd_nxt if
 * none. Walks the WRs in flight (probe time only).
 */
static u32 tbr_req_first_blocked(struct tbr_tqp *qp)
{
	u32 msn = qp->psn_msn[qp->una & qp->wmask];

	for (; msn != qp->sq_tail; msn++) {
		struct tbr_swqe *wr = tbr_wr(qp, msn);
		u32 p = wr->first_psn, run;
		s32 n;

		if (tbr_psn_diff(p, qp->snd_nxt) >= 0)
			break;
		if (wr->opcode == TBR_WR_LOCAL || (!wr->rd && !wr->ordered))
			continue;
		if (tbr_psn_diff(p, qp->una) < 0)
			p = qp->una;
		n = tbr_psn_diff(tbr_psn_add(wr->first_psn, wr->npsn), p);
		if (tbr_psn_diff(qp->snd_nxt, p) < n)
			n = tbr_psn_diff(qp->snd_nxt, p);
		run = tbr_bm_run(qp->done, tbr_win(qp), p, (u32)n);
		if (run < (u32)n)
			return tbr_psn_add(p, run);
	}
	return qp->snd_nxt;
}

void tbr_req_tlp(struct tbr_tqp *qp, u64 now)
{
	u32 p, qi, next;

	qp->pto_deadline = TBR_NO_DEADLINE;
	if (qp->una == qp->snd_nxt || qp->tlp_sent >= TBR_TLP_MAX ||
	    qp->rtx_active || qp->error || qp->rnr_until != TBR_NO_DEADLINE)
		return;
	/*
	 * The last PSN not done, whose answer reveals the holes before it;
	 * but a READ or ATOMIC is answered, and a WRITE flagged ORDERED
	 * taken, only once every PSN before it is in: a probe of a PSN
	 * behind a hole and such a PSN is answered by nothing (or refused)
	 * while the hole stays unseen, so the probe goes to the last hole
	 * before the first such PSN not done, or to that PSN when it is una
	 * (a READ/ATOMIC: its request).
	 */
	p = tbr_req_first_blocked(qp);
	if (p != qp->una)
		p = tbr_req_last_missing(qp, qp->una, p);
	qi = p & qp->wmask;
	if (tbr_bm_test(qp->rdm, qi)) {
		struct tbr_swqe *w = tbr_wr(qp, qp->psn_msn[qi]);

		if (w->opcode == TBR_WR_READ) {
			/*
			 * A READ request always starts at the first response
			 * of its chunk not received yet, as the timeout sweep
			 * and the hole check send it: the responder takes the
			 * PSNs a request covers as received, so a request for
			 * only the chunk's tail, taken before the lost request
			 * for all of it, would make every later request for
			 * the chunk overlap taken PSNs and be refused for good.
			 */
			u32 c = tbr_rd_chunk_start(qp, w, p);

			if (tbr_psn_diff(c, qp->una) < 0)
				c = qp->una;
			p = tbr_psn_add(c, tbr_bm_run(qp->done, tbr_win(qp), c,
						      (u32)tbr_psn_diff(p, c)));
			qi = p & qp->wmask;
		}
	}
	if (qp->halted && (s32)(qp->psn_msn[qi] - qp->halt_msn) >= 0)
		return;
	next = tbr_req_resend(qp, p);
	if (next == p)
		return;		/* tx full: no lost tail, a busy path */
	qp->tlp_sent++;
	qp->cnt.tail_probes++;
	/* RACK times these from now on; their delivery is ambiguous (Karn) */
	for (; p != next; p = tbr_psn_add(p, 1)) {
		qp->xts[p & qp->wmask] = now;
		tbr_bm_set(qp->amb, p & qp->wmask);
	}
	if (qp->tlp_sent < TBR_TLP_MAX)
		tbr_req_tlp_set(qp, now);
}
