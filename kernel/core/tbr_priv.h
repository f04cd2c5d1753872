/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_priv.h - transport core internals shared by tbr_tqp.c, tbr_req*.c and
 * tbr_resp.c. Not part of the API. Locking: none; see tbr_core.h.
 */
#ifndef TBR_PRIV_H
#define TBR_PRIV_H

#include "tbr_core.h"

/* Responder READ/ATOMIC job table (READ chunks in flight + duplicates). */
#define TBR_RESP_JOBS		64
/* Responder receive WQEs fetched ahead of message order, at most. */
#define TBR_RQ_WIN_MAX		256

/* Send WQE as kept by the core. */
struct tbr_swqe {
	u64 wr_id;
	u64 remote_addr;
	u64 compare_add;
	u64 swap;
	u32 length;
	u32 rkey;
	u32 imm;
	u32 first_psn;
	u32 npsn;		/* PSNs the message occupies (>= 1) */
	u32 rmsn;
	u32 wmsn;		/* msn on the wire: TBR_WR_LOCAL takes none,
				 * so it differs from the WR's queue index
				 */
	u32 remote_qpn;		/* UD */
	u32 qkey;		/* UD */
	u16 conn_id;		/* UD */
	u16 pkey_index;		/* GSI: the slot whose P_Key it goes with */
	u8 opcode;		/* enum tbr_wr_opcode */
	u8 flags;
	u8 num_sge;
	u8 status;		/* != 0: failed with this tbr_wc_status */
	u8 rd;			/* READ or ATOMIC: counted in rd_out */
	u8 ordered;		/* WRITE* started behind a READ/ATOMIC */
	/*
	 * RC/UC SEND* or WRITE*: its wire opcode, the frame built in place;
	 * 0: any other frame (tbr_req_xmit_hdr()). Set when posted.
	 */
	u8 data_op;
	union {
		struct tbr_sge sge[TBR_MAX_SGE];
		u8 inline_data[TBR_MAX_INLINE];
	};
};

/* Fetched receive WQE. */
struct tbr_rwqe {
	struct tbr_tqp_recv wqe;
	u64 total;		/* sum of SGE lengths */
};

enum tbr_rmsg_state {
	TBR_RMSG_FREE = 0,
	TBR_RMSG_ACTIVE,
	TBR_RMSG_DROPPED,	/* UC: abandoned; frames ignored */
};

/* Responder per-message tracking, indexed by msn & (win - 1). */
struct tbr_rmsg {
	u32 msn;
	u32 msg_len;
	u32 rcvd;		/* payload (READ: requested) bytes taken */
	u32 first_psn;
	u32 npsn;
	u32 rmsn;		/* local receive index for recv-consuming */
	u32 imm;
	u32 err_psn;		/* READ/ATOMIC: the PSN a fatal NAK names */
	u8 state;
	u8 opcode;		/* TBR_OP_* of the frames */
	u8 seen;		/* some frame was taken */
	u8 nak;			/* TBR_SYN_* to send when retired, 0 = ok */
	u8 wc_status;		/* status for the receive completion */
	u8 solicited;
	u8 bound;		/* receive WQE bound */
};

enum tbr_job_state {
	TBR_JOB_FREE = 0,
	TBR_JOB_WAIT,		/* request taken, earlier PSNs missing */
	TBR_JOB_READY,		/* executable / response being sent */
};

/* Responder READ response or ATOMIC response job. */
struct tbr_job {
	u8 state;
	u8 opcode;		/* TBR_OP_READ_REQ / CMP_SWAP / FETCH_ADD */
	u8 dup;			/* answer to a duplicate request */
	u32 psn;		/* PSN of the request = first response PSN */
	u32 msn;
	u32 rkey;
	u64 va;			/* READ: message base va */
	u32 start;		/* READ: offset of the first response (at psn) */
	u32 offset;		/* READ: next byte to send */
	u32 end;		/* READ: end offset of this request */
	u64 swap_add;
	u64 compare;
	u64 orig;		/* ATOMIC: result once executed */
};

struct tbr_acache {
	u32 psn;
	u8 valid;
	u64 orig;
};

struct tbr_tqp {
	struct tbr_tqp_cfg cfg;	/* cfg.mtu: the connection's, see mtu_max */
	u32 mtu_max;		/* cfg.mtu given at creation */
	struct tbr_tqp_conn conn;
	const struct tbr_ops *ops;
	void *ctx;
	u32 wmask;		/* win - 1 */
	u32 read_chunk;		/* response frames per READ request */
	u32 ackreq_mask;	/* win / 4 - 1: a PSN with none of these bits
				 * set asks for an ACK (TBR_F_ACKREQ)
				 */
	u8 connected;
	u8 error;
	u8 tx_blocked;		/* last tx_alloc() failed */
	u16 rx_ops;		/* bit op: frames of opcode op valid for
				 * the QP's type (tbr_tqp_rx)
				 */
	u16 pkey_index;		/* slot of cfg.pkeys (tbr_tqp_set_pkey_index) */
	const u16 *pkey_slot;	/* that slot's P_Key (tbr_tqp_pkey()) */
	u16 rx_pkey_index;	/* GSI: slot the frame being taken matched */
	struct tbr_tqp_counters cnt;

	/* ---- requester ---- */
	struct tbr_swqe *sq;
	u32 sq_mask;
	u32 sq_head;		/* oldest WR not retired (its msn) */
	u32 sq_next;		/* WR being / to be first transmitted */
	u32 sq_tail;		/* next msn to post */
	u32 cur_psn;		/* next PSN of sq_next to transmit first */
	u32 next_psn;		/* first PSN of the next posted WR */
	u32 next_rmsn;
	u32 next_wmsn;		/* msn of the next message sent */
	u32 una;		/* oldest PSN not done */
	u32 snd_nxt;		/* PSNs in [una, snd_nxt) have been sent */
	u64 *done;		/* PSN done (ACKed / response received) */
	u64 *rdm;		/* PSN is a READ/ATOMIC response slot */
	u64 *rtxd;		/* PSN fast-retransmitted in this RTO round */
	u32 *psn_msn;		/* msn owning each sent PSN */
	u64 *xts;		/* first transmission time of each sent PSN */
	u64 *frx;		/* PSN fast-retransmitted (kept until reused) */
	u64 *amb;		/* PSN resent by the timeout sweep this round */
	/* RACK-style loss detection (tbr_req.c) */
	u64 rack_ts;		/* xts of the last-sent PSN known delivered */
	u64 rack_rtt;		/* RTT measured on that delivery */
	u64 min_rtt;		/* smallest RTT sample, TBR_NO_DEADLINE: none */
	u64 srtt;		/* smoothed RTT */
	u64 rtt_hi;		/* largest recent RTT (slowest rails), decaying */
	u64 reo_meas;		/* reordering measured on the rails (ns) */
	u64 rack_deadline;	/* retry a verdict that found tx full */
	u64 rack_arm_at;	/* no verdicts before (learning the rails) */
	u64 rd_hole_deadline;	/* READ response hole is lost after this */
	u32 rack_psn;		/* PSN of rack_ts */
	u32 reo_mark;		/* DSACKs before this PSN were counted */
	u32 reo_round;		/* una passing this PSN ends a round */
	u32 rd_hole_psn;
	u8 rack_valid;
	u8 reo_mult;		/* DSACK-adapted window in min_rtt/4 steps */
	u8 reo_persist;		/* rounds with losses before reo_mult decays */
	u8 rack_lost;		/* losses detected in this round */
	u8 rd_hole_retry;	/* READ hole verdict found tx full */
	/* congestion window (tbr_req_loss.c, conn.cwnd_min) */
	u32 cwnd;		/* PSNs that may be in flight, <= win */
	u32 cwnd_acc;		/* PSNs acknowledged towards the next +1 */
	u32 cwnd_mark;		/* losses of PSNs before this were counted */
	u32 cwnd_lo;		/* first PSN found lost in the last cut */
	u32 cwnd_undo;		/* its fast retransmits not yet DSACKed */
	u32 cwnd_prior;		/* cwnd before the last cut */
	u32 loss_mark;		/* losses of PSNs from here start a flight */
	u32 loss_lo;		/* first PSN found lost in that flight */
	u32 loss_n;		/* frames found lost in it */
	u32 loss_span;		/* PSNs it had in flight */
	u32 rd_out;		/* READ/ATOMIC WRs started, not retired */
	u32 retries_left;
	u64 rtx_mark;		/* cnt.retransmits at the last counted RTO */
	u32 blocked_rtos;	/* RTOs in a row with the tx path full and
				 * nothing sent again: not counted as retries
				 */
	u32 rnr_left;
	u64 rto_deadline;	/* TBR_NO_DEADLINE: not armed */
	u64 pto_deadline;	/* tail loss probe, TBR_NO_DEADLINE: not armed */
	u8 tlp_sent;		/* probes sent since the last progress */
	u8 untimed;		/* the ACK or response being taken answers a
				 * retransmission: no RTT or lateness sample
				 */
	u8 tail_flags;		/* TBR_F_* of the last new frame sent */
	u8 acked_by_ride;	/* the last ACK rode on a data frame: the
				 * peer holds ACKs for its answers (3.3)
				 */
	u64 rnr_until;		/* TBR_NO_DEADLINE: not waiting */
	u8 rtx_active;		/* retransmission sweep in progress */
	u8 halted;		/* fatal NAK received: start no new WR */
	u32 rtx_next;
	u32 rtx_end;
	u32 halt_msn;

	/* ---- responder ---- */
	u32 epsn;		/* next PSN expected in order */
	u32 rcv_hi;		/* one past the highest PSN taken */
	u32 emsn;		/* next message to retire */
	u32 msn_hi;		/* one past the highest msn seen (UC) */
	u64 *rcvd;
	u32 *rpsn_msn;		/* UC: msn of each taken PSN */
	struct tbr_rmsg *msg;
	struct tbr_rwqe *rq;
	u32 rq_mask;
	u32 rq_head;		/* oldest fetched WQE (local receive index) */
	u32 rq_fetched;		/* next local receive index to fetch */
	u32 rq_skew;		/* UC: frame rmsn - local receive index */
	u32 rmsn_hi;		/* UC: one past the highest frame rmsn seen */
	u8 *bounce;		/* UC: TBR_FRAME_MAX bytes to move WQE data */
	struct tbr_job jobs[TBR_RESP_JOBS];
	u32 njobs;
	struct tbr_acache acache[TBR_ATOMIC_CACHE];
	u32 acache_pos;
	u8 ack_pending;
	u8 ack_rtx;		/* the owed ACK answers a retransmitted frame */
	u32 dsack;		/* TBR_ACK_DSACK | PSN of a duplicate, or 0 */
	u8 hole_acked;		/* the last ACK reported holes ... */
	u32 hole_hi;		/* ... before this PSN (its rcv_hi) */
	u8 uc_dropping;
	u32 uc_drop_msn;	/* UC: incomplete msgs below this are dropped */
	u32 ack_count;
	u64 ack_deadline;
	/*
	 * Ping-pong (docs/protocol.md 3.3): an ACK that a message's end
	 * asked for waits up to TBR_ACK_DEFER_MAX_NS for a frame of ours to
	 * ride on when the QP's last messages were answered that fast.
	 */
	u8 ack_deferred;	/* the owed ACK waits for a data frame */
	u8 pp_score;		/* answers in time (+1) and misses (-1), 0 to
				 * TBR_PP_SCORE_MAX; held when >= TBR_PP_SCORE_MIN
				 */
	u64 ack_owed_at;	/* a message's end asked for an ACK; or
				 * TBR_NO_DEADLINE once answered
				 */
	u64 pp_gap;		/* time from there to our answer: the longest
				 * recent one (decays by 1/8 per shorter one)
				 */
	u64 rnr_nak_at;		/* last RNR NAK time */
	u32 rnr_nak_msn;
	u8 rnr_nak_valid;
	u8 fatal_syn;		/* fatal NAK sent: repeat it to requests */
	u32 fatal_psn;
	u64 uc_hole_deadline;
	u32 uc_hole_mark;	/* UC: rcv_hi when the hole timer was armed */
};

/* ---- ring bitmaps: @nbits is a power of two >= 64 ---- */

static inline bool tbr_bm_test(const u64 *bm, u32 idx)
{
	return (bm[idx >> 6] >> (idx & 63)) & 1;
}

static inline void tbr_bm_set(u64 *bm, u32 idx)
{
	bm[idx >> 6] |= 1ull << (idx & 63);
}

/* 64 bits starting at ring index @idx. */
static inline u64 tbr_bm_get64(const u64 *bm, u32 nbits, u32 idx)
{
	u32 w = (idx & (nbits - 1)) >> 6, s = idx & 63;
	u64 v = bm[w] >> s;

	if (s)
		v |= bm[(w + 1) & ((nbits >> 6) - 1)] << (64 - s);
	return v;
}

/* bm[idx .. idx+63] |= v */
static inline void tbr_bm_or64(u64 *bm, u32 nbits, u32 idx, u64 v)
{
	u32 w = (idx & (nbits - 1)) >> 6, s = idx & 63;

	bm[w] |= v << s;
	if (s)
		bm[(w + 1) & ((nbits >> 6) - 1)] |= v >> (64 - s);
}

/* bm[idx .. idx+63] &= ~v */
static inline void tbr_bm_clr64(u64 *bm, u32 nbits, u32 idx, u64 v)
{
	u32 w = (idx & (nbits - 1)) >> 6, s = idx & 63;

	bm[w] &= ~(v << s);
	if (s)
		bm[(w + 1) & ((nbits >> 6) - 1)] &= ~(v >> (64 - s));
}

static inline u64 tbr_low_mask(u32 n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* Number of consecutive set bits from @idx, at most @max. */
static inline u32 tbr_bm_run(const u64 *bm, u32 nbits, u32 idx, u32 max)
{
	u32 n = 0;

	while (n < max) {
		u64 v = ~tbr_bm_get64(bm, nbits, idx + n);

		if (!v) {
			n += 64;
			continue;
		}
		n += tbr_ctz64(v);
		break;
	}
	return n < max ? n : max;
}

static inline u32 tbr_win(const struct tbr_tqp *qp)
{
	return qp->cfg.win;
}

static inline u32 tbr_frames(u32 len, u32 mtu)
{
	return len ? (len - 1) / mtu + 1 : 1;
}

/* A transmit buffer of @len bytes, or NULL (tx_blocked, counted). */
static inline void *tbr_tx_get(struct tbr_tqp *qp, u32 len)
{
	void *buf = qp->ops->tx_alloc(qp->ctx, len);

	qp->tx_blocked = !buf;
	if (!buf)
		qp->cnt.tx_stalls++;
	return buf;
}

/* Send the frame in @buf from tbr_tx_get() (@paylen payload bytes). */
/*
 * The P_Key the QP's frames carry and take: its slot of the port's table,
 * read on every frame (a sweep may change the table under a connected QP).
 * pkey_slot points at it, found once per tbr_tqp_set_pkey_index(): what
 * tbr_pkey_get(qp->cfg.pkeys, qp->pkey_index) reads, in one load.
 */
static inline u16 tbr_tqp_pkey(const struct tbr_tqp *qp)
{
	return tbr_read_once(*qp->pkey_slot);
}

static inline void tbr_tx_put(struct tbr_tqp *qp, void *buf, u32 len,
			      u32 paylen)
{
	qp->cnt.tx_frames++;
	qp->cnt.tx_bytes += paylen;
	qp->ops->tx_send(qp->ctx, buf, len);
}

/* tbr_tqp.c */
void tbr_tqp_fatal(struct tbr_tqp *qp, u32 status);

/* tbr_req.c */
void tbr_req_reset(struct tbr_tqp *qp);
void tbr_req_pump(struct tbr_tqp *qp, u64 now);
void tbr_req_timer(struct tbr_tqp *qp, u64 now);
u64 tbr_req_deadline(const struct tbr_tqp *qp);

/* tbr_req_rx.c */
bool tbr_req_mark(struct tbr_tqp *qp, u32 psn, u32 n, u64 now);
bool tbr_req_advance(struct tbr_tqp *qp);
int tbr_req_rx(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now);
int tbr_req_rx_ack_rider(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now);
void tbr_req_flush(struct tbr_tqp *qp);

/* tbr_resp.c */
void tbr_resp_reset(struct tbr_tqp *qp);
void tbr_resp_pump(struct tbr_tqp *qp, u64 now);
void tbr_resp_timer(struct tbr_tqp *qp, u64 now);
u64 tbr_resp_deadline(const struct tbr_tqp *qp);
void tbr_resp_flush(struct tbr_tqp *qp);
void tbr_resp_error_rx(struct tbr_tqp *qp, const struct tbr_hdr *h);


/* ---- responder internals shared by tbr_resp.c and tbr_resp_job.c ---- */

/* Frame disposition inside the responder. */
enum {
	TBR_TAKEN = 0,		/* mark the PSN(s) received */
	TBR_NOT_TAKEN = 1,	/* leave the PSN open for a retransmission */
};

static inline bool tbr_op_atomic(u8 op)
{
	return op == TBR_OP_CMP_SWAP || op == TBR_OP_FETCH_ADD;
}

static inline bool tbr_op_recv(u8 op)
{
	return op == TBR_OP_SEND || op == TBR_OP_SEND_IMM ||
	       op == TBR_OP_SEND_INV || op == TBR_OP_WRITE_IMM;
}

/* the NAK for a failed ops->mr_*() */
static inline u8 tbr_resp_mr_nak(int ret)
{
	if (ret == -TBR_WC_REM_INV_REQ_ERR)
		return TBR_SYN_NAK_INV_REQ;
	return ret == -TBR_WC_REM_ACCESS_ERR ? TBR_SYN_NAK_REM_ACCESS :
	       TBR_SYN_NAK_REM_OP;
}

static inline struct tbr_rmsg *tbr_resp_slot_of(struct tbr_tqp *qp, u32 msn)
{
	return &qp->msg[msn & qp->wmask];
}

/* tbr_resp_uc.c: UC loss handling (drop, WQE reuse, hole timer, resync) */
void tbr_uc_drop(struct tbr_tqp *qp, struct tbr_rmsg *s);
void tbr_uc_shift(struct tbr_tqp *qp, u32 first, u32 k);
void tbr_uc_drop_head(struct tbr_tqp *qp, struct tbr_rmsg *s);
void tbr_uc_resync(struct tbr_tqp *qp, const struct tbr_hdr *h);
void tbr_uc_arm(struct tbr_tqp *qp, u64 now);
void tbr_uc_skip(struct tbr_tqp *qp, u64 now);

/* tbr_resp_job.c: a READ/ATOMIC request before @psn is still unanswered */
bool tbr_resp_job_before(const struct tbr_tqp *qp, u32 psn);
/* tbr_resp_job.c: execute, in PSN order, the jobs the window has passed */
void tbr_resp_exec(struct tbr_tqp *qp);
/* tbr_resp_job.c: a READ request @d PSNs into the window, in slot @s: the
 * PSNs it takes (> 0), 0 when no job is free (the requester retransmits),
 * -EINVAL when malformed
 */
int tbr_resp_read_req(struct tbr_tqp *qp, struct tbr_rmsg *s,
		      const struct tbr_hdr *h, s32 d);
/* tbr_resp_job.c: an ATOMIC request in slot @s: TBR_TAKEN, or
 * TBR_NOT_TAKEN when no job is free
 */
int tbr_resp_atomic(struct tbr_tqp *qp, struct tbr_rmsg *s,
		    const struct tbr_hdr *h);
/* tbr_resp_job.c: a frame behind the window: answered again (READ from
 * memory, ATOMIC from the replay cache) or re-ACKed; 0 or -EINVAL
 */
int tbr_resp_dup(struct tbr_tqp *qp, const struct tbr_hdr *h, u64 now);
/* tbr_resp_job.c: send what the executed jobs owe, as credits allow */
void tbr_resp_send_jobs(struct tbr_tqp *qp);
/* tbr_resp_ack.c: an ACK (or NAK @syn) with the window's state; false: no tx buffer */
bool tbr_resp_send_ack(struct tbr_tqp *qp, u8 syn, u32 psn, u32 aux);
/* tbr_resp_ack.c: fatal NAK @syn for @psn, QP to error with @status */
void tbr_resp_fatal(struct tbr_tqp *qp, u8 syn, u32 psn, u32 status);
/* tbr_resp_ack.c: ACK now (@urgent) or when coalescing allows */
void tbr_resp_ack(struct tbr_tqp *qp, u64 now, bool urgent);
/*
 * Ping-pong and piggybacked ACKs (tbr_resp_ack.c, docs/protocol.md 3.3): the
 * longest an ACK owed waits for a data frame of ours, and the score of
 * answers in time (one up) and misses (one down) from which one waits.
 */
#define TBR_ACK_DEFER_MAX_NS	500000ull
#define TBR_PP_SCORE_MIN	2
#define TBR_PP_SCORE_MAX	4
/* copies of the last ACK when the QP stops (tbr_resp_ack_flush()) */
#define TBR_ACK_FLUSH_COPIES	3
/* tbr_resp_ack.c: the last ACK goes now (tbr_tqp_ack_final) */
void tbr_resp_ack_flush(struct tbr_tqp *qp);
/* tbr_resp_ack.c: a message of ours was posted at @now */
void tbr_resp_pp_answer(struct tbr_tqp *qp, u64 now);
/* tbr_resp_ack.c: the ACK owed rides on a data frame: its epsn, or false */
bool tbr_resp_ack_ride(struct tbr_tqp *qp, u32 *epsn);

/* Nothing owed to the requester any more (an ACK went, or said it all). */
static inline void tbr_resp_ack_settled(struct tbr_tqp *qp)
{
	qp->ack_pending = 0;
	qp->ack_rtx = 0;
	qp->ack_count = 0;
	qp->ack_deadline = TBR_NO_DEADLINE;
	qp->ack_deferred = 0;
}
/* tbr_resp.c: complete, in message order, the messages fully received */
void tbr_resp_retire(struct tbr_tqp *qp);
/* tbr_resp.c: move the receive window past what has been received */
void tbr_resp_advance(struct tbr_tqp *qp);


/* ---- requester internals shared by tbr_req.c, tbr_req_rx.c and tbr_req_loss.c ---- */

/* the reordering window (tbr_req_loss.c) */
#define TBR_REO_MULT_INIT	4
#define TBR_REO_MULT_MAX	64
#define TBR_REO_PERSIST		16
#define TBR_RACK_WARMUP		8	/* first RTTs without verdicts */
#define TBR_TLP_MAX		3	/* tail loss probes per flight */
/*
 * The shortest probe timeout, whatever the RTT: the timer that runs it moves
 * with every message of a ping-pong, and a host pays for each move of a
 * timer due soon (docs/protocol.md 3.4). Linux's TCP waits 2 jiffies at least.
 */
#define TBR_PTO_MIN_NS		1000000ull
/*
 * The congestion window is halved when more than 1/TBR_CWND_LOSS_DIV of a
 * flight's frames is found lost (a queue that overflows drops bursts, a
 * noisy link scattered frames), and grows by 1/TBR_CWND_LOSS_DIV per
 * window of PSNs acknowledged (docs/protocol.md 3.9).
 */
#define TBR_CWND_LOSS_DIV	8
/* ... and at least this many frames of it (a short flight's one or two) */
#define TBR_CWND_LOSS_MIN	4

void tbr_req_cwnd_reset(struct tbr_tqp *qp);
void tbr_req_cwnd_cut(struct tbr_tqp *qp, u32 psn);
void tbr_req_cwnd_grow(struct tbr_tqp *qp, u32 n);

/* @n PSNs were passed by una: the congestion window may open. */
static inline void tbr_req_cwnd_open(struct tbr_tqp *qp, u32 n)
{
	if (qp->cwnd < qp->wmask + 1)
		tbr_req_cwnd_grow(qp, n);
}

/* A WR's data frame opcode on an RC/UC QP (struct tbr_swqe's data_op). */
static inline u8 tbr_wr_data_op(u8 opcode)
{
	switch (opcode) {
	case TBR_WR_SEND:
		return TBR_OP_SEND;
	case TBR_WR_SEND_IMM:
		return TBR_OP_SEND_IMM;
	case TBR_WR_SEND_INV:
		return TBR_OP_SEND_INV;
	case TBR_WR_WRITE:
		return TBR_OP_WRITE;
	case TBR_WR_WRITE_IMM:
		return TBR_OP_WRITE_IMM;
	default:
		return 0;
	}
}

static inline struct tbr_swqe *tbr_wr(struct tbr_tqp *qp, u32 msn)
{
	return &qp->sq[msn & qp->sq_mask];
}

/*
 * First PSN of the request chunk (read_chunk responses per READ_REQ) that
 * holds response PSN @psn of READ/ATOMIC @w (an ATOMIC: its only PSN).
 */
static inline u32 tbr_rd_chunk_start(const struct tbr_tqp *qp,
				     const struct tbr_swqe *w, u32 psn)
{
	u32 idx = (u32)tbr_psn_diff(psn, w->first_psn);

	return tbr_psn_add(w->first_psn, idx - idx % qp->read_chunk);
}

/* The oldest WR failed and waits for tbr_req_advance() to retire it. */
static inline bool tbr_req_head_failed(struct tbr_tqp *qp)
{
	return qp->sq_head != qp->sq_tail && tbr_wr(qp, qp->sq_head)->status;
}

static inline bool tbr_wr_is_rd(u8 op)
{
	return op == TBR_WR_READ || op == TBR_WR_CMP_SWAP ||
	       op == TBR_WR_FETCH_ADD;
}

static inline bool tbr_wr_is_atomic(u8 op)
{
	return op == TBR_WR_CMP_SWAP || op == TBR_WR_FETCH_ADD;
}

/* tbr_req_loss.c: the SACK word @nv at PSN @base delivered frames: RTTs,
 * delivery order, reordering measured
 */
void tbr_req_delivered(struct tbr_tqp *qp, u32 base, u64 nv, u64 now);
/* tbr_req_loss.c: a flight ended (the window's start moved past it) */
void tbr_req_round(struct tbr_tqp *qp);
/* tbr_req_loss.c: the responder reported @psn as a duplicate */
void tbr_req_dsack(struct tbr_tqp *qp, u32 psn);
/* tbr_req_loss.c: RACK's reordering window now (ns) */
u64 tbr_req_reo_wnd(const struct tbr_tqp *qp);
/* tbr_req_loss.c: an ACK reports [@base, @base + 64) with bits @v received */
void tbr_req_requested(struct tbr_tqp *qp, u32 base, u64 v);
/* tbr_req_loss.c: resend the data frames deemed lost by now */
void tbr_req_rack(struct tbr_tqp *qp, u64 now);
/* tbr_req_loss.c: a response at @psn for READ/ATOMIC @w; holes before it
 * are checked later, like data frames; and the verdicts on them
 */
void tbr_req_rd_hole_check(struct tbr_tqp *qp, struct tbr_swqe *w,
			   u32 psn, u64 now);
void tbr_req_rd_hole(struct tbr_tqp *qp, u64 now);
/* tbr_req_loss.c: arm the tail loss probe after a transmission or progress
 * (through tbr_req_tlp_arm()), and send it when due
 */
void tbr_req_tlp_set(struct tbr_tqp *qp, u64 now);
void tbr_req_tlp(struct tbr_tqp *qp, u64 now);

static inline void tbr_req_tlp_arm(struct tbr_tqp *qp, u64 now)
{
	if (qp->pto_deadline == TBR_NO_DEADLINE && !qp->tlp_sent &&
	    qp->una != qp->snd_nxt)
		tbr_req_tlp_set(qp, now);
}
/* tbr_req.c: send frame @psn again; the PSNs sent */
u32 tbr_req_resend(struct tbr_tqp *qp, u32 psn);
/* tbr_req.c: last not-done PSN in [@psn, @end), which holds @psn itself */
u32 tbr_req_last_missing(struct tbr_tqp *qp, u32 psn, u32 end);

/*
 * Frames sent again that may spend a retry: every retransmission except the
 * tail loss probes, which are no timeout and never count toward retry_cnt.
 */
static inline u64 tbr_req_rtx_count(const struct tbr_tqp *qp)
{
	return qp->cnt.retransmits - qp->cnt.tail_probes;
}
/*
 * The retransmit timeout: the programmed local ACK timeout, stretched to
 * twice the smoothed RTT when the rails' queues hold frames longer than that
 * (slow or emulated rails), but never beyond 4x the programmed value, the
 * range IBTA allows the local ACK timer.
 */
static inline u64 tbr_req_rto(const struct tbr_tqp *qp)
{
	u64 t = qp->conn.timeout_ns, r = 2 * qp->srtt;

	if (r <= t)
		return t;
	return r < 4 * t ? r : 4 * t;
}

/* Start the retransmit timer unless it runs (RC with a timeout, no RNR wait). */
static inline void tbr_req_arm(struct tbr_tqp *qp, u64 now)
{
	if (qp->cfg.type == TBR_QPT_RC && qp->conn.timeout_ns &&
	    qp->rto_deadline == TBR_NO_DEADLINE &&
	    qp->rnr_until == TBR_NO_DEADLINE)
		qp->rto_deadline = now + tbr_req_rto(qp);
}

/* tbr_req.c: complete @w (message @msn) with @status, QP to error */
void tbr_req_fail(struct tbr_tqp *qp, struct tbr_swqe *w, u32 msn,
		  u32 status);

#endif /* TBR_PRIV_H */
