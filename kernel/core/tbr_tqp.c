// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_tqp.c - QP lifetime, frame dispatch, timers and error handling of the
 * transport core. Locking: none inside; callers serialize per QP (see
 * tbr_core.h).
 */
#include "tbr_priv.h"
#include "tbr_parse.h"
#include "tbr_resp_fast.h"

static bool tbr_is_pow2(u32 v)
{
	return v && !(v & (v - 1));
}

void tbr_tqp_conn_defaults(struct tbr_tqp_conn *conn)
{
	memset(conn, 0, sizeof(*conn));
	conn->timeout_ns = 4096ull * 1000 * 16;	/* IBTA timeout 14: ~67 ms */
	conn->retry_cnt = 7;
	conn->rnr_retry = 7;
	conn->min_rnr_timer_ns = 10000;		/* 10 us */
	conn->ack_delay_ns = 20000;		/* 20 us */
	conn->ack_every = 16;
	conn->reo_wnd_min_ns = 1000;		/* 1 us */
	conn->reo_wnd_max_ns = 0;		/* timeout_ns / 2 */
	conn->uc_reorder_ns = 1000000;		/* 1 ms */
	conn->tail_probe = 1;
	conn->cwnd_min = 0;			/* no congestion window */
}

static bool tbr_op_valid_for(const struct tbr_tqp *qp, u8 op)
{
	switch (qp->cfg.type) {
	case TBR_QPT_UD:
		return op == TBR_OP_UD_SEND || op == TBR_OP_UD_SEND_IMM;
	case TBR_QPT_UC:
		return op == TBR_OP_SEND || op == TBR_OP_SEND_IMM ||
		       op == TBR_OP_WRITE || op == TBR_OP_WRITE_IMM;
	case TBR_QPT_RC:
		return op != TBR_OP_UD_SEND && op != TBR_OP_UD_SEND_IMM;
	}
	return false;
}

struct tbr_tqp *tbr_tqp_create(const struct tbr_tqp_cfg *cfg,
			     const struct tbr_ops *ops, void *ctx)
{
	struct tbr_tqp *qp;
	u32 w, rqw;

	if (!ops || cfg->type > TBR_QPT_UD || (cfg->qpn & ~TBR_QPN_MASK) ||
	    (cfg->gsi && cfg->type != TBR_QPT_UD) ||
	    !tbr_is_pow2(cfg->sq_depth) || cfg->sq_depth > TBR_SQ_DEPTH_MAX ||
	    !tbr_is_pow2(cfg->win) || cfg->win < TBR_WIN_MIN ||
	    cfg->win > TBR_WIN_MAX || cfg->mtu < TBR_MTU_MIN ||
	    cfg->mtu > TBR_MTU_MAX || !cfg->max_rd_atomic ||
	    cfg->max_rd_atomic > TBR_ATOMIC_CACHE)
		return NULL;

	qp = tbr_zalloc(sizeof(*qp));
	if (!qp)
		return NULL;
	qp->cfg = *cfg;
	tbr_tqp_set_pkey_index(qp, 0);
	for (w = 1; w <= TBR_OP_MAX; w++)
		if (tbr_op_valid_for(qp, (u8)w))
			qp->rx_ops |= 1u << w;
	qp->mtu_max = cfg->mtu;
	qp->ops = ops;
	qp->ctx = ctx;
	w = cfg->win;
	qp->wmask = w - 1;
	qp->ackreq_mask = w / 4 - 1;
	/* Requests in flight stay within TBR_RESP_JOBS/2: see protocol.md. */
	qp->read_chunk = w / 16;
	rqw = w < TBR_RQ_WIN_MAX ? w : TBR_RQ_WIN_MAX;
	qp->rq_mask = rqw - 1;

	qp->sq = tbr_zalloc(sizeof(*qp->sq) * cfg->sq_depth);
	if (!qp->sq)
		goto err_qp;
	qp->sq_mask = cfg->sq_depth - 1;
	qp->done = tbr_zalloc(w / 8);
	if (!qp->done)
		goto err_sq;
	qp->rdm = tbr_zalloc(w / 8);
	if (!qp->rdm)
		goto err_done;
	qp->rtxd = tbr_zalloc(w / 8);
	if (!qp->rtxd)
		goto err_rdm;
	qp->psn_msn = tbr_zalloc(sizeof(u32) * w);
	if (!qp->psn_msn)
		goto err_rtxd;
	qp->xts = tbr_zalloc(sizeof(u64) * w);
	if (!qp->xts)
		goto err_psn_msn;
	qp->frx = tbr_zalloc(w / 4);
	if (!qp->frx)
		goto err_xts;
	qp->amb = tbr_zalloc(w / 8);
	if (!qp->amb)
		goto err_frx;
	qp->rcvd = tbr_zalloc(w / 8);
	if (!qp->rcvd)
		goto err_amb;
	qp->rpsn_msn = tbr_zalloc(sizeof(u32) * w);
	if (!qp->rpsn_msn)
		goto err_rcvd;
	qp->msg = tbr_zalloc(sizeof(*qp->msg) * w);
	if (!qp->msg)
		goto err_rpsn_msn;
	qp->rq = tbr_zalloc(sizeof(*qp->rq) * rqw);
	if (!qp->rq)
		goto err_msg;
	if (cfg->type == TBR_QPT_UC) {
		qp->bounce = tbr_zalloc(TBR_FRAME_MAX);
		if (!qp->bounce)
			goto err_rq;
	}
	tbr_tqp_conn_defaults(&qp->conn);
	return qp;

err_rq:
	tbr_free(qp->rq);
err_msg:
	tbr_free(qp->msg);
err_rpsn_msn:
	tbr_free(qp->rpsn_msn);
err_rcvd:
	tbr_free(qp->rcvd);
err_amb:
	tbr_free(qp->amb);
err_frx:
	tbr_free(qp->frx);
err_xts:
	tbr_free(qp->xts);
err_psn_msn:
	tbr_free(qp->psn_msn);
err_rtxd:
	tbr_free(qp->rtxd);
err_rdm:
	tbr_free(qp->rdm);
err_done:
	tbr_free(qp->done);
err_sq:
	tbr_free(qp->sq);
err_qp:
	tbr_free(qp);
	return NULL;
}

void tbr_tqp_destroy(struct tbr_tqp *qp)
{
	if (!qp)
		return;
	tbr_free(qp->bounce);
	tbr_free(qp->rq);
	tbr_free(qp->msg);
	tbr_free(qp->rpsn_msn);
	tbr_free(qp->rcvd);
	tbr_free(qp->amb);
	tbr_free(qp->frx);
	tbr_free(qp->xts);
	tbr_free(qp->psn_msn);
	tbr_free(qp->rtxd);
	tbr_free(qp->rdm);
	tbr_free(qp->done);
	tbr_free(qp->sq);
	tbr_free(qp);
}

int tbr_tqp_connect(struct tbr_tqp *qp, const struct tbr_tqp_conn *conn)
{
	if ((conn->dest_qpn & ~TBR_QPN_MASK) ||
	    (conn->sq_psn & ~TBR_PSN_MASK) || (conn->rq_psn & ~TBR_PSN_MASK) ||
	    conn->retry_cnt > 7 || conn->rnr_retry > 7 ||
	    (conn->mtu && (conn->mtu < TBR_MTU_MIN || conn->mtu > qp->mtu_max)))
		return -EINVAL;
	if (qp->connected && qp->sq_head != qp->sq_tail)
		return -EINVAL;
	qp->conn = *conn;
	if (qp->cfg.type != TBR_QPT_RC)
		qp->conn.ack_piggyback = 0;	/* only RC has ACKs */
	qp->cfg.mtu = conn->mtu ? conn->mtu : qp->mtu_max;
	if (!qp->conn.ack_every)
		qp->conn.ack_every = 1;
	qp->error = 0;
	tbr_req_reset(qp);
	tbr_resp_reset(qp);
	qp->connected = 1;
	return 0;
}

int tbr_tqp_start_send(struct tbr_tqp *qp, const struct tbr_tqp_conn *conn)
{
	if (!qp->connected || qp->sq_head != qp->sq_tail ||
	    (conn->sq_psn & ~TBR_PSN_MASK) || conn->retry_cnt > 7 ||
	    conn->rnr_retry > 7)
		return -EINVAL;
	qp->conn.sq_psn = conn->sq_psn;
	qp->conn.timeout_ns = conn->timeout_ns;
	qp->conn.retry_cnt = conn->retry_cnt;
	qp->conn.rnr_retry = conn->rnr_retry;
	tbr_req_reset(qp);
	return 0;
}

void tbr_tqp_set_qkey(struct tbr_tqp *qp, u32 qkey)
{
	if (qp->cfg.type == TBR_QPT_UD)
		qp->cfg.qkey = qkey;
}

/* tbr_pkey_get()'s answers for a port with no table (cfg.pkeys NULL) */
static const u16 tbr_pkey_no_table[2] = { TBR_PKEY_DEFAULT, 0 };

int tbr_tqp_set_pkey_index(struct tbr_tqp *qp, u32 idx)
{
	if (idx >= TBR_PKEY_TBL_LEN)
		return -EINVAL;
	qp->pkey_index = (u16)idx;
	qp->pkey_slot = qp->cfg.pkeys ? &qp->cfg.pkeys->key[idx] :
			&tbr_pkey_no_table[idx ? 1 : 0];
	return 0;
}

bool tbr_tqp_in_error(const struct tbr_tqp *qp)
{
	return qp->error;
}

u32 tbr_tqp_cwnd(const struct tbr_tqp *qp)
{
	if (!qp->connected || !qp->conn.cwnd_min || qp->cfg.type != TBR_QPT_RC)
		return 0;
	return qp->cwnd;
}

bool tbr_tqp_path(const struct tbr_tqp *qp, struct tbr_tqp_path *p)
{
	if (!qp->connected || qp->cfg.type != TBR_QPT_RC)
		return false;
	p->srtt = qp->srtt;
	p->rtt_hi = qp->rtt_hi;
	p->min_rtt = qp->min_rtt == TBR_NO_DEADLINE ? 0 : qp->min_rtt;
	p->reo = qp->reo_meas;
	p->reo_wnd = tbr_req_reo_wnd(qp);
	p->inflight = (u32)tbr_psn_diff(qp->snd_nxt, qp->una);
	p->cwnd = tbr_tqp_cwnd(qp);
	p->sq_queued = qp->sq_tail - qp->sq_head;
	p->deadline = tbr_tqp_next_deadline(qp);
	return true;
}

const struct tbr_tqp_counters *tbr_tqp_counters(const struct tbr_tqp *qp)
{
	return &qp->cnt;
}

static void tbr_tqp_stop(struct tbr_tqp *qp)
{
	qp->error = 1;
	tbr_req_flush(qp);
	tbr_resp_flush(qp);
}

void tbr_tqp_ack_final(struct tbr_tqp *qp)
{
	if (qp->connected && !qp->error)
		tbr_resp_ack_flush(qp);
}

void tbr_tqp_flush(struct tbr_tqp *qp)
{
	tbr_tqp_ack_final(qp);
	tbr_tqp_stop(qp);
}

/*
 * The core itself moves the QP to error: flush and tell the verbs layer
 * (no ACK owed goes: the fatal NAK said where the QP stopped).
 */
void tbr_tqp_fatal(struct tbr_tqp *qp, u32 status)
{
	if (qp->error)
		return;
	tbr_dbg("qp %u: error, status %u\n", qp->cfg.qpn, status);
	tbr_tqp_stop(qp);
	if (qp->ops->qp_error)
		qp->ops->qp_error(qp->ctx, status);
}

int tbr_frame_peek(const void *frame, u32 len, u16 *conn_id, u32 *dqpn)
{
	const u8 *p = frame;

	if (len < TBR_BASE_HDR_LEN || len > TBR_FRAME_MAX ||
	    p[0] != TBR_WIRE_VERSION)
		return -EINVAL;
	*conn_id = tbr_get_be16(p + 4);
	*dqpn = tbr_get_be32(p + 8);
	return 0;
}

static bool tbr_op_to_requester(u8 op)
{
	return op == TBR_OP_ACK || op == TBR_OP_READ_RESP ||
	       op == TBR_OP_ATOMIC_RESP;
}

/*
 * Send what either half owes. A half with nothing that could go out is not
 * called: the responder without jobs or an ACK due, the requester with
 * every WR sent, no retransmission sweep and no failed WR to retire.
 */
static inline void tbr_tqp_pump(struct tbr_tqp *qp, u64 now)
{
	if (qp->njobs || (qp->ack_pending && now >= qp->ack_deadline))
		tbr_resp_pump(qp, now);
	if (qp->sq_next != qp->sq_tail || qp->rtx_active ||
	    tbr_req_head_failed(qp))
		tbr_req_pump(qp, now);
}

/*
 * The receive-side partition check (IBTA's P_Key check): a frame whose
 * P_Key does not match the QP's slot is not the QP's to see, whatever it
 * is, ACKs and responses included. QP1 takes every partition of its port.
 */
static bool tbr_tqp_pkey_ok(struct tbr_tqp *qp, u16 pkey)
{
	int i;

	if (!qp->cfg.gsi)
		return tbr_pkey_match(tbr_tqp_pkey(qp), pkey);
	i = tbr_pkey_find(qp->cfg.pkeys, pkey);
	if (i < 0)
		return false;
	qp->rx_pkey_index = (u16)i;
	return true;
}

/* Every frame but the one tbr_resp_write_raw() took: parse, check, dispatch. */
static tbr_noinline int tbr_tqp_rx_full(struct tbr_tqp *qp, const void *frame,
				    u32 len, u64 now, int raw)
{
	struct tbr_hdr h;
	int ret;

	if (tbr_frame_parse_inl(frame, len, &h)) {
		qp->cnt.rx_malformed++;
		return -EINVAL;
	}
	if (!qp->connected) {
		qp->cnt.rx_invalid++;
		return -EIO;
	}
	if ((h.dqpn != qp->cfg.qpn &&
	     !(qp->cfg.type == TBR_QPT_UD && h.dqpn == TBR_QPN_MCAST)) ||
	    !((qp->rx_ops >> h.opcode) & 1) ||
	    (qp->cfg.type != TBR_QPT_UD && h.conn_id != qp->conn.conn_id)) {
		qp->cnt.rx_invalid++;
		return -EINVAL;
	}
	if (!tbr_tqp_pkey_ok(qp, tbr_hdr_pkey(&h))) {
		qp->cnt.pkey_violations++;
		return -EACCES;
	}
	if (qp->error) {
		/* A lost fatal NAK is repeated to the retransmissions. */
		tbr_resp_error_rx(qp, &h);
		qp->cnt.rx_invalid++;
		return -EIO;
	}
	qp->cnt.rx_frames++;
	qp->cnt.rx_bytes += h.paylen;
	if (tbr_op_to_requester(h.opcode)) {
		ret = tbr_req_rx(qp, &h, now);
	} else {
		/* an ACK riding on it first, then the frame (SEND*, WRITE) */
		if (h.flags & TBR_F_ACK) {
			if (tbr_req_rx_ack_rider(qp, &h, now))
				return -EINVAL;
			if (qp->error)
				return 0;
		}
		ret = raw == TBR_RAW_UNPLACED ? tbr_resp_rx_unplaced(qp, &h, now) :
		      tbr_resp_rx(qp, &h, now);
	}
	/* Either half may have freed window space or queued frames. */
	if (!qp->error)
		tbr_tqp_pump(qp, now);
	return ret;
}

/* tbr_tqp_rx() for a frame that may be the common one (tbr_resp_fast.h) */
static tbr_noinline int tbr_tqp_rx_write(struct tbr_tqp *qp, const void *frame,
					 u32 len, u64 now)
{
	int raw = tbr_resp_write_raw(qp, frame, len, now);

	if (raw != TBR_RAW_DONE)
		return tbr_tqp_rx_full(qp, frame, len, now, raw);
	/*
	 * tbr_tqp_pump() less what cannot have changed: the raw path took the
	 * frame only with no job pending and the QP not failed, and placing
	 * a WRITE and noting its ACK queue no job and fail nothing.
	 */
	if (qp->ack_pending && now >= qp->ack_deadline)
		tbr_resp_pump(qp, now);
	if (qp->sq_next != qp->sq_tail || qp->rtx_active ||
	    tbr_req_head_failed(qp))
		tbr_req_pump(qp, now);
	return 0;
}

int tbr_tqp_rx(struct tbr_tqp *qp, const void *frame, u32 len, u64 now)
{
	const u8 *p = frame;

	/*
	 * The common frame first, from its bytes: a WRITE of a whole message
	 * (its length is the frame's payload) at the next PSN with nothing
	 * received beyond it is tried by tbr_tqp_rx_write(); a frame out of
	 * order (several rails), of a longer message or of another kind goes
	 * straight to the full path, neither paying for the other's tests or
	 * saved registers.
	 */
	if (len >= TBR_BASE_HDR_LEN + TBR_EXT_WRITE_LEN && p[1] == TBR_OP_WRITE &&
	    (tbr_get_be32(p + 12) & TBR_PSN_MASK) == qp->epsn &&
	    qp->rcv_hi == qp->epsn &&
	    tbr_get_be32(p + TBR_BASE_HDR_LEN + 8) == tbr_get_be16(p + 6))
		return tbr_tqp_rx_write(qp, frame, len, now);
	return tbr_tqp_rx_full(qp, frame, len, now, TBR_RAW_NO);
}

void tbr_tqp_progress(struct tbr_tqp *qp, u64 now)
{
	if (!qp->connected || qp->error)
		return;
	tbr_resp_timer(qp, now);
	if (!qp->error)
		tbr_req_timer(qp, now);
	if (!qp->error)
		tbr_tqp_pump(qp, now);
}

bool tbr_tqp_waiting(const struct tbr_tqp *qp)
{
	return qp->connected && !qp->error &&
	       (qp->sq_head != qp->sq_tail || qp->una != qp->snd_nxt);
}

u32 tbr_tqp_sq_queued(const struct tbr_tqp *qp)
{
	return qp->sq_tail - qp->sq_head;
}

u64 tbr_tqp_next_deadline(const struct tbr_tqp *qp)
{
	u64 a, b;

	if (!qp->connected || qp->error)
		return TBR_NO_DEADLINE;
	a = tbr_req_deadline(qp);
	b = tbr_resp_deadline(qp);
	return a < b ? a : b;
}
