// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_resp_job.c - the responder's jobs: a READ or ATOMIC request becomes a
 * job when its frame is placed; jobs execute in PSN order once the window
 * has passed every earlier request (so a READ sees every earlier WRITE), and
 * READ responses go out in chunks of read_chunk frames. ATOMIC results are
 * kept in a replay cache so a retransmitted request gets the same answer
 * without executing twice; duplicate READs are answered again from memory.
 *
 * Locking: none; the caller serializes all calls for a QP (tbr_core.h).
 */
#include "tbr_priv.h"

static struct tbr_job *tbr_job_alloc(struct tbr_tqp *qp)
{
	u32 i;

	if (qp->njobs >= TBR_RESP_JOBS)
		return NULL;
	for (i = 0; i < TBR_RESP_JOBS; i++) {
		if (qp->jobs[i].state == TBR_JOB_FREE) {
			memset(&qp->jobs[i], 0, sizeof(qp->jobs[i]));
			qp->njobs++;
			return &qp->jobs[i];
		}
	}
	return NULL;
}

static void tbr_job_free(struct tbr_tqp *qp, struct tbr_job *j)
{
	j->state = TBR_JOB_FREE;
	qp->njobs--;
}

/* A READ/ATOMIC request before @psn has not been fully answered yet. */
bool tbr_resp_job_before(const struct tbr_tqp *qp, u32 psn)
{
	u32 i;

	if (!qp->njobs)
		return false;
	for (i = 0; i < TBR_RESP_JOBS; i++) {
		const struct tbr_job *j = &qp->jobs[i];

		if (j->state != TBR_JOB_FREE && !j->dup &&
		    tbr_psn_diff(psn, j->psn) > 0)
			return true;
	}
	return false;
}

static void tbr_acache_put(struct tbr_tqp *qp, u32 psn, u64 orig)
{
	struct tbr_acache *a = &qp->acache[qp->acache_pos];

	a->psn = psn;
	a->orig = orig;
	a->valid = 1;
	qp->acache_pos = (qp->acache_pos + 1) % TBR_ATOMIC_CACHE;
}

/* Execute (in PSN order) the jobs whose request PSN the window passed. */
void tbr_resp_exec(struct tbr_tqp *qp)
{
	for (;;) {
		struct tbr_job *best = NULL;
		struct tbr_rmsg *s;
		u32 i;
		int ret;

		for (i = 0; i < TBR_RESP_JOBS; i++) {
			struct tbr_job *j = &qp->jobs[i];

			if (j->state != TBR_JOB_WAIT ||
			    tbr_psn_diff(j->psn, qp->epsn) >= 0)
				continue;
			if (!best || tbr_psn_diff(j->psn, best->psn) < 0)
				best = j;
		}
		if (!best)
			return;
		s = tbr_resp_slot_of(qp, best->msn);
		if (best->opcode == TBR_OP_READ_REQ) {
			u64 va = best->va + best->start;
			u32 len = best->end - best->start;

			ret = 0;
			if (va < best->va)
				ret = -TBR_WC_REM_ACCESS_ERR;
			else if (len)
				ret = qp->ops->mr_check(qp->ctx, best->rkey, va,
							len,
							TBR_ACC_REMOTE_READ);
			if (ret) {
				if (!s->nak) {
					s->nak = tbr_resp_mr_nak(ret);
					s->err_psn = best->psn;
				}
				tbr_job_free(qp, best);
				continue;
			}
			best->state = TBR_JOB_READY;
			continue;
		}
		if (best->opcode == TBR_OP_CMP_SWAP)
			ret = qp->ops->mr_atomic(qp->ctx, best->rkey, best->va,
						 TBR_ATOMIC_CMP_SWAP,
						 best->compare, best->swap_add,
						 &best->orig);
		else
			ret = qp->ops->mr_atomic(qp->ctx, best->rkey, best->va,
						 TBR_ATOMIC_FETCH_ADD,
						 best->swap_add, 0, &best->orig);
		if (ret) {
			if (!s->nak) {
				s->nak = tbr_resp_mr_nak(ret);
				s->err_psn = best->psn;
			}
			tbr_job_free(qp, best);
			continue;
		}
		tbr_acache_put(qp, best->psn, best->orig);
		best->state = TBR_JOB_READY;
	}
}

/* A job answering the READ request @h, in @state; NULL when none is free. */
static struct tbr_job *tbr_read_job(struct tbr_tqp *qp, const struct tbr_hdr *h,
				    u8 state)
{
	struct tbr_job *j = tbr_job_alloc(qp);

	if (!j)
		return NULL;
	j->state = state;
	j->opcode = TBR_OP_READ_REQ;
	j->psn = h->psn;
	j->msn = h->msn;
	j->rkey = h->rkey;
	j->va = h->va;
	j->start = h->offset;
	j->offset = h->offset;
	j->end = h->offset + h->req_len;
	return j;
}

/* Returns the number of PSNs taken (> 0), TBR_NOT_TAKEN as 0, or < 0. */
int tbr_resp_read_req(struct tbr_tqp *qp, struct tbr_rmsg *s,
		      const struct tbr_hdr *h, s32 d)
{
	u32 mtu = qp->cfg.mtu, w = tbr_win(qp);
	u32 n = tbr_frames(h->req_len, mtu);
	u32 i;

	if ((u64)h->offset + h->req_len > h->msg_len ||
	    (!h->req_len && h->msg_len) || n > w / 4 || (u32)d + n > w)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (tbr_bm_test(qp->rcvd, tbr_psn_add(h->psn, i) & qp->wmask))
			return -EINVAL;
	if (!tbr_read_job(qp, h, TBR_JOB_WAIT))
		return 0;
	s->rcvd += h->req_len;
	return (int)n;
}

int tbr_resp_atomic(struct tbr_tqp *qp, struct tbr_rmsg *s,
		    const struct tbr_hdr *h)
{
	struct tbr_job *j;

	if (h->paylen || (h->va & 7)) {
		/* IBTA: misaligned atomic is an invalid request. */
		if (!s->nak) {
			s->nak = TBR_SYN_NAK_INV_REQ;
			s->err_psn = h->psn;
		}
		s->rcvd = 8;
		return TBR_TAKEN;
	}
	j = tbr_job_alloc(qp);
	if (!j)
		return TBR_NOT_TAKEN;
	j->state = TBR_JOB_WAIT;
	j->opcode = h->opcode;
	j->psn = h->psn;
	j->msn = h->msn;
	j->rkey = h->rkey;
	j->va = h->va;
	j->swap_add = h->swap_add;
	j->compare = h->compare;
	s->rcvd = 8;
	return TBR_TAKEN;
}

/* RC: a request whose PSN is behind epsn. */
int tbr_resp_dup(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now)
{
	u32 i, mtu = qp->cfg.mtu;
	struct tbr_job *j;

	qp->cnt.duplicates++;
	if (qp->cfg.type != TBR_QPT_RC)
		return 0;
	for (i = 0; i < TBR_RESP_JOBS; i++)
		if (qp->jobs[i].state != TBR_JOB_FREE &&
		    qp->jobs[i].psn == h->psn)
			return 0;	/* still being answered */
	if (h->opcode == TBR_OP_READ_REQ) {
		u32 n = tbr_frames(h->req_len, mtu);

		if (h->offset % mtu ||
		    (u64)h->offset + h->req_len > h->msg_len ||
		    (!h->req_len && h->msg_len) || n > tbr_win(qp) / 4 ||
		    tbr_psn_diff(tbr_psn_add(h->psn, n), qp->epsn) > 0 ||
		    h->va + h->offset < h->va) {
			qp->cnt.rx_invalid++;
			return -EINVAL;
		}
		if (h->req_len && qp->ops->mr_check(qp->ctx, h->rkey,
						    h->va + h->offset,
						    h->req_len,
						    TBR_ACC_REMOTE_READ))
			return 0;
		j = tbr_read_job(qp, h, TBR_JOB_READY);
		if (!j)
			return 0;
		j->dup = 1;
		qp->cnt.read_reexec++;
		return 0;
	}
	if (tbr_op_atomic(h->opcode)) {
		/* Never re-execute: answer from the cache or stay silent. */
		for (i = 0; i < TBR_ATOMIC_CACHE; i++) {
			struct tbr_acache *a = &qp->acache[i];

			if (!a->valid || a->psn != h->psn)
				continue;
			j = tbr_job_alloc(qp);
			if (!j)
				return 0;
			j->state = TBR_JOB_READY;
			j->dup = 1;
			j->opcode = h->opcode;
			j->psn = h->psn;
			j->msn = h->msn;
			j->orig = a->orig;
			qp->cnt.atomic_replays++;
			return 0;
		}
		return 0;
	}
	qp->dsack = TBR_ACK_DSACK | h->psn;
	tbr_resp_ack(qp, now, true);
	return 0;
}

/*
 * A READ or ATOMIC response to a request that ends at @req_end just went
 * out. It tells the requester all that an ACK owed now would: the request
 * arrived and, since a job runs only once the window passed every earlier
 * PSN, so did everything before it (tbr_req_resp() takes them as
 * acknowledged). When nothing arrived after the request, no hole is open
 * and no duplicate is to be reported, that ACK is dropped: a READ or ATOMIC
 * ping-pong sent one more frame per round trip, ack_delay_ns after the
 * response (a timer, its softirq and the requester's receive on the path of
 * the next request).
 */
static void tbr_resp_ack_implied(struct tbr_tqp *qp, u32 req_end)
{
	if (qp->ack_pending && !qp->dsack && qp->epsn == req_end &&
	    qp->rcv_hi == qp->epsn)
		tbr_resp_ack_settled(qp);
}

/* Send READ responses and ATOMIC responses of ready jobs. */
void tbr_resp_send_jobs(struct tbr_tqp *qp)
{
	u32 i, mtu = qp->cfg.mtu;

	for (i = 0; i < TBR_RESP_JOBS && qp->njobs && !qp->error; i++) {
		struct tbr_job *j = &qp->jobs[i];
		struct tbr_hdr h;
		u32 hl, len;
		u8 *buf;
		int ret;

		if (j->state != TBR_JOB_READY)
			continue;
		memset(&h, 0, sizeof(h));
		h.conn_id = qp->conn.conn_id;
		h.dqpn = qp->conn.dest_qpn;
		h.npkey = (u16)~tbr_tqp_pkey(qp);
		h.msn = j->msn;
		if (tbr_op_atomic(j->opcode)) {
			h.opcode = TBR_OP_ATOMIC_RESP;
			h.psn = j->psn;
			h.orig = j->orig;
			hl = tbr_hdr_len(h.opcode);
			buf = tbr_tx_get(qp, hl);
			if (!buf)
				return;
			tbr_hdr_build(buf, &h);
			tbr_tx_put(qp, buf, hl, 0);
			if (!j->dup)
				tbr_resp_ack_implied(qp, tbr_psn_add(j->psn, 1));
			tbr_job_free(qp, j);
			continue;
		}
		h.opcode = TBR_OP_READ_RESP;
		hl = tbr_hdr_len(h.opcode);
		do {
			len = j->end - j->offset;
			if (len > mtu)
				len = mtu;
			h.psn = tbr_psn_add(j->psn, (j->offset - j->start) / mtu);
			h.offset = j->offset;
			h.paylen = (u16)len;
			buf = tbr_tx_get(qp, hl + len);
			if (!buf)
				return;
			tbr_hdr_build(buf, &h);
			ret = len ? qp->ops->mr_read(qp->ctx, j->rkey,
						     j->va + j->offset,
						     buf + hl, len) : 0;
			if (ret) {
				qp->ops->tx_abort(qp->ctx, buf);
				tbr_job_free(qp, j);
				tbr_resp_fatal(qp, TBR_SYN_NAK_REM_ACCESS,
					       h.psn, TBR_WC_REM_ACCESS_ERR);
				return;
			}
			tbr_tx_put(qp, buf, hl + len, len);
			if (!j->dup && j->offset == j->start)
				tbr_resp_ack_implied(qp, tbr_psn_add(j->psn,
					tbr_frames(j->end - j->start, mtu)));
			j->offset += len;
		} while (j->offset < j->end);
		tbr_job_free(qp, j);
	}
}
