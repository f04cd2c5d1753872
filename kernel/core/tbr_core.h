/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_core.h - OS-independent tbrdma transport core: public API.
 *
 * One struct tbr_tqp holds the transport state of one QP: the requester
 * (send queue, PSN window, selective ACK tracking, retransmission, RNR
 * backoff, READ/ATOMIC responses) and the responder (receive window,
 * out-of-order placement, in-order completion, ACK/NAK generation, READ
 * execution, ATOMIC replay cache). The wire format is in tbr_wire.h and
 * docs/protocol.md.
 *
 * Driving the core
 * ----------------
 * - Locking: the core takes no locks and has no threads. All calls for one
 *   QP (post, rx, progress, error, destroy) must be serialized by the caller
 *   (the kernel wraps each QP's core state in a spinlock and calls with it
 *   held, BH or IRQ disabled as its rail callbacks need). Different QPs are
 *   independent. The ops callbacks are invoked synchronously from within
 *   these calls, with the caller's lock held: they must not call back into
 *   the same QP.
 * - Time: the core never reads a clock. Every entry point that may need
 *   time takes @now in nanoseconds from any monotonic clock.
 *   tbr_tqp_next_deadline() tells when tbr_tqp_progress() must be called next
 *   (the kernel arms an hrtimer or its poll loop for it; it may call earlier).
 * - Transmit: frames go out through ops->tx_alloc()/ops->tx_send(). When
 *   tx_alloc() returns NULL the core stops and resumes on the next call of
 *   tbr_tqp_progress() (call it when rail space frees up).
 * - Memory: the core touches user memory only through the ops: local SGE
 *   lists (sgl_read/sgl_write) and remote keys (mr_*), so the kernel can map
 *   MR pages and the host tests can use plain buffers.
 * - Allocation: tbr_tqp_create() allocates every tracking array; nothing is
 *   allocated on the data path. tbr_tqp_create/destroy: process context.
 *   All other entry points: any context, no sleeping.
 */
#ifndef TBR_CORE_H
#define TBR_CORE_H

#include "tbr_os.h"
#include "tbr_wire.h"

enum tbr_tqp_type {
	TBR_QPT_RC,
	TBR_QPT_UC,
	TBR_QPT_UD,
};

/* Work completion status: same numbering as enum ib_wc_status/ibv_wc_status. */
enum tbr_wc_status {
	TBR_WC_SUCCESS		= 0,
	TBR_WC_LOC_LEN_ERR	= 1,
	TBR_WC_LOC_QP_OP_ERR	= 2,
	TBR_WC_LOC_PROT_ERR	= 4,
	TBR_WC_WR_FLUSH_ERR	= 5,
	TBR_WC_MW_BIND_ERR	= 6,
	TBR_WC_BAD_RESP_ERR	= 7,
	TBR_WC_LOC_ACCESS_ERR	= 8,
	TBR_WC_REM_INV_REQ_ERR	= 9,
	TBR_WC_REM_ACCESS_ERR	= 10,
	TBR_WC_REM_OP_ERR	= 11,
	TBR_WC_RETRY_EXC_ERR	= 12,
	TBR_WC_RNR_RETRY_EXC_ERR = 13,
};

/* Work completion opcode: same numbering as enum ib_wc_opcode. */
enum tbr_wc_opcode {
	TBR_WC_SEND		= 0,
	TBR_WC_RDMA_WRITE	= 1,
	TBR_WC_RDMA_READ	= 2,
	TBR_WC_COMP_SWAP	= 3,
	TBR_WC_FETCH_ADD	= 4,
	TBR_WC_LOCAL		= 6,	/* TBR_WR_LOCAL (IB_WC_LOCAL_INV) */
	TBR_WC_RECV		= 128,
	TBR_WC_RECV_RDMA_WITH_IMM = 129,
};

/* Completion flags: same bits as IB_WC_WITH_IMM etc. */
#define TBR_WC_GRH		0x01	/* UD: first TBR_GRH_LEN bytes reserved */
#define TBR_WC_WITH_IMM		0x02
#define TBR_WC_WITH_INV		0x04	/* SEND_INV: imm is the rkey invalidated */
#define TBR_WC_SOLICITED	0x80	/* sender asked for a solicited event */

/*
 * UD receive buffers start with a TBR_GRH_LEN-byte GRH: filled in by the
 * core from the datagram's address block when the QP was created with
 * cfg.ud_addr (tbr_ud_grh), else left to the caller.
 */
#define TBR_GRH_LEN		40
/* cqe.net_type of a UD receive with cfg.ud_addr: the GRH's network header */
#define TBR_NET_IPV4		1
#define TBR_NET_IPV6		2

enum tbr_wr_opcode {
	TBR_WR_SEND,
	TBR_WR_SEND_IMM,
	TBR_WR_SEND_INV,
	TBR_WR_WRITE,
	TBR_WR_WRITE_IMM,
	TBR_WR_READ,
	TBR_WR_CMP_SWAP,
	TBR_WR_FETCH_ADD,
	TBR_WR_LOCAL,
};

/* Send WR flags. */
#define TBR_WR_SIGNALED		0x01
#define TBR_WR_SOLICITED	0x02
#define TBR_WR_INLINE		0x04
#define TBR_WR_FENCE		0x08	/* TBR_WR_LOCAL: see struct tbr_send_wr */
/*
 * The caller posts another WR right after this one (a chain of WRs, as
 * ibv_post_send() takes): the core queues it without transmitting and does
 * not ask for an ACK at the end of its message; the next post without the
 * flag transmits the chain, its last message asking for the ACK that covers
 * them all (the responder acknowledges the others every conn.ack_every
 * frames). Ignored when the WR fills the send queue. A post that fails
 * its checks ends the chain as tbr_tqp_end_chain() does.
 */
#define TBR_WR_MORE		0x10

#define TBR_MAX_SGE		8
#define TBR_MAX_INLINE		(TBR_MAX_SGE * 16)
/* Responder ATOMIC replay cache entries; bounds max_rd_atomic. */
#define TBR_ATOMIC_CACHE	16

struct tbr_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

/*
 * TBR_WR_LOCAL (RC, UC): a local operation of the caller's (a memory
 * registration or invalidation) that sends nothing. The core runs it with
 * ops->local(ctx, remote_addr) when the send queue reaches it, so it takes
 * effect after every earlier WR has started and before any later one does;
 * with TBR_WR_FENCE only once every earlier WR has completed (an invalidation
 * must not pull memory from under a retransmission). It has no SGEs and
 * completes in order, with ops->local's status.
 */
struct tbr_send_wr {
	u64 wr_id;
	enum tbr_wr_opcode opcode;
	u32 flags;			/* TBR_WR_* */
	const struct tbr_sge *sgl;	/* copied by tbr_tqp_post_send() */
	u32 num_sge;
	const void *inline_data;	/* TBR_WR_INLINE: copied at post */
	u32 inline_len;
	/* WRITE*, READ, atomics; LOCAL: the cookie handed to ops->local */
	u64 remote_addr;
	u32 rkey;
	/*
	 * *_IMM: host order; SEND_INV: the rkey the responder invalidates (a
	 * SEND_INV is always fenced: it waits for earlier READ/ATOMICs)
	 */
	u32 imm;
	u64 compare_add;		/* CMP_SWAP: compare; FETCH_ADD: add */
	u64 swap;			/* CMP_SWAP: swap */
	/* UD only (from the address handle) */
	u32 remote_qpn;
	u32 remote_qkey;		/* top bit set: use the QP's own qkey */
	u16 conn_id;
	u16 pkey_index;			/* GSI (cfg.gsi): the slot of the
					 * table whose P_Key the datagram
					 * carries; other QPs send with their own
					 */
};

/* A receive WQE handed to the core by ops->get_recv(). */
struct tbr_tqp_recv {
	u64 wr_id;
	u32 num_sge;
	struct tbr_sge sge[TBR_MAX_SGE];
};

struct tbr_cqe {
	u64 wr_id;
	u32 status;		/* enum tbr_wc_status */
	u32 opcode;		/* enum tbr_wc_opcode */
	u32 byte_len;
	u32 imm;		/* TBR_WC_WITH_IMM: host order */
	u32 src_qp;
	u32 qkey;		/* UD receive */
	u16 conn_id;		/* UD receive: sender's connection id */
	u16 pkey_index;		/* UD receive: the slot the P_Key matched */
	u8 flags;		/* TBR_WC_* flags */
	u8 recv;		/* 1: receive queue completion */
	u8 net_type;		/* UD receive, cfg.ud_addr: TBR_NET_IPV4/6 */
};

/* Atomic operation codes for ops->mr_atomic(). */
enum tbr_atomic_op {
	TBR_ATOMIC_CMP_SWAP,
	TBR_ATOMIC_FETCH_ADD,
};

/* Access rights asked of ops->mr_check(). */
#define TBR_ACC_REMOTE_READ	0x1

/*
 * Callbacks from the core into its user. @ctx is the pointer given to
 * tbr_tqp_create(). All run synchronously inside a core entry point with
 * the caller's per-QP serialization held; none may sleep or call back into
 * the same QP. Return values: 0 or a negative enum tbr_wc_status-style code
 * as documented per callback.
 */
struct tbr_ops {
	/*
	 * Copy @len bytes from byte offset @off of the local SGE list into
	 * @dst (requester payload), or from @src into the SGE list (receive
	 * and READ/ATOMIC response placement). The core has checked that
	 * @off + @len does not exceed the sum of the SGE lengths.
	 * Return 0, or -TBR_WC_LOC_PROT_ERR for a bad lkey/range/permission
	 * (or another local -TBR_WC_* status).
	 */
	int (*sgl_read)(void *ctx, const struct tbr_sge *sgl, u32 nsge,
			u64 off, void *dst, u32 len);
	int (*sgl_write)(void *ctx, const struct tbr_sge *sgl, u32 nsge,
			 u64 off, const void *src, u32 len);
	/*
	 * Responder remote memory: validate @rkey, the range [va, va+len) and
	 * the permission (remote write, remote read, remote atomic) and copy.
	 * Return 0, -TBR_WC_REM_INV_REQ_ERR when the QP itself does not enable
	 * the operation (the requester gets an invalid-request NAK, as IBTA's
	 * responder checks and rxe have it), or -TBR_WC_REM_ACCESS_ERR (key,
	 * range or the MR's rights). The same for mr_check and mr_atomic.
	 */
	int (*mr_write)(void *ctx, u32 rkey, u64 va, const void *src, u32 len);
	int (*mr_read)(void *ctx, u32 rkey, u64 va, void *dst, u32 len);
	/* Validate only (READ requests before the responses are built). */
	int (*mr_check)(void *ctx, u32 rkey, u64 va, u32 len, u32 access);
	/*
	 * Perform an 8-byte atomic at @va (8-byte aligned, checked by the
	 * core) and return the previous value in @orig.
	 */
	int (*mr_atomic)(void *ctx, u32 rkey, u64 va, enum tbr_atomic_op op,
			 u64 compare_add, u64 swap, u64 *orig);
	/*
	 * SEND_INV: invalidate @rkey, when the message is complete and every
	 * earlier message was placed (in order, before its receive completion,
	 * which then carries TBR_WC_WITH_INV and the rkey in imm). Return 0 or
	 * -TBR_WC_REM_INV_REQ_ERR (no such key, or not one that can be
	 * invalidated): the receive completes with that status and the QP goes
	 * to error. NULL: the responder refuses every SEND_INV (invalid request).
	 */
	int (*invalidate)(void *ctx, u32 rkey);
	/*
	 * TBR_WR_LOCAL: run the local operation @cookie (the WR's remote_addr).
	 * Return 0 or a negative -TBR_WC_* status the WR completes with (the
	 * QP then goes to error). Required if TBR_WR_LOCAL is posted.
	 */
	int (*local)(void *ctx, u64 cookie);
	/*
	 * Take the next receive WQE of the QP (or its SRQ) into @wqe.
	 * Return 0, or -ENOENT when none is posted (the core answers RNR).
	 * The core owns the WQE until it completes it.
	 */
	int (*get_recv)(void *ctx, struct tbr_tqp_recv *wqe);
	/* Deliver a completion (send or receive queue: see cqe->recv). */
	void (*complete)(void *ctx, const struct tbr_cqe *cqe);
	/*
	 * Transmit: tx_alloc() returns a buffer of at least @len bytes
	 * (len <= TBR_FRAME_MAX) or NULL when the rails are full; the core
	 * fills it and hands it to tx_send(), which owns it from then on.
	 * The striping layer picks the rail.
	 */
	void *(*tx_alloc)(void *ctx, u32 len);
	void (*tx_send)(void *ctx, void *frame, u32 len);
	/* Give back an unsent tx_alloc() buffer (local read failed). */
	void (*tx_abort)(void *ctx, void *frame);
	/*
	 * The core moved the QP to the error state by itself (retry or RNR
	 * retry exhausted, fatal NAK sent or received). Every WR the core held
	 * has been completed; the verbs layer flushes what it still holds.
	 */
	void (*qp_error)(void *ctx, u32 status);
};

/* Per-QP counters; monotonically increasing. */
struct tbr_tqp_counters {
	u64 tx_frames;
	u64 tx_bytes;		/* payload bytes */
	u64 rx_frames;		/* frames accepted by the parser */
	u64 rx_bytes;
	u64 retransmits;	/* frames sent again (all reasons) */
	u64 fast_retransmits;	/* of which triggered by SACK holes */
	u64 timeouts;		/* retransmit timer expiries */
	u64 duplicates;		/* duplicate frames received */
	u64 out_of_window;	/* frames beyond the receive window */
	u64 rx_malformed;	/* rejected by the parser */
	u64 rx_invalid;		/* well-formed but not valid for the QP */
	u64 order_drops;	/* WRITE frames held back behind READ/ATOMIC */
	u64 acks_sent;		/* ACK frames */
	u64 acks_rcvd;
	u64 acks_piggybacked;	/* ACKs sent on a data frame (TBR_F_ACK) */
	u64 acks_pb_rcvd;	/* ACKs received on one */
	u64 naks_sent;		/* fatal NAKs */
	u64 naks_rcvd;
	u64 rnr_naks_sent;
	u64 rnr_naks_rcvd;
	u64 tx_stalls;		/* tx_alloc() returned NULL */
	u64 read_reexec;	/* duplicate READ requests served again */
	u64 atomic_replays;	/* duplicate ATOMICs answered from the cache */
	u64 uc_msgs_dropped;	/* UC messages lost or abandoned */
	u64 ud_drops;		/* UD datagrams dropped (no WQE, bad qkey) */
	u64 spurious_retransmits; /* fast retransmits the peer reported as
				   * duplicates (DSACK): reordering, not loss
				   */
	u64 read_hole_rtx;	/* READ chunks re-requested by the hole timer */
	u64 tail_probes;	/* tail loss probes sent (tbr_req_loss.c) */
	u64 cwnd_cuts;		/* congestion window halvings (bursts lost) */
	u64 pkey_violations;	/* frames whose P_Key does not match the
				 * QP's (dropped, tbr_tqp_rx)
				 */
};

/* Creation-time configuration. */
struct tbr_tqp_cfg {
	enum tbr_tqp_type type;
	u32 qpn;
	u32 sq_depth;		/* power of two, 1..TBR_SQ_DEPTH_MAX */
	/*
	 * PSN window in frames: power of two, TBR_WIN_MIN..TBR_WIN_MAX. Both
	 * ends of a connection must use the same value and the same mtu.
	 */
	u32 win;
	u32 mtu;		/* largest payload per frame, TBR_MTU_MIN..TBR_MTU_MAX */
	u32 max_rd_atomic;	/* 1..TBR_ATOMIC_CACHE outstanding READ/ATOMIC */
	u32 qkey;		/* UD: tbr_tqp_set_qkey() changes it later */
	/*
	 * UD: every datagram starts with the TBR_UD_ADDR_LEN-byte address
	 * block (docs/protocol.md 5.1). The receiver strips it, writes the
	 * RoCE v2 GRH built from it into the first TBR_GRH_LEN bytes of the
	 * receive buffer and reports cqe.net_type; a datagram shorter than
	 * the block is malformed (dropped, counted in rx_malformed).
	 */
	bool ud_addr;
	/*
	 * The port's P_Key table (tbr_pkey.h), read on every frame; NULL: the
	 * default partition only. The QP sends with, and takes frames only of
	 * a P_Key matching, the one in its slot (tbr_tqp_set_pkey_index, 0
	 * at creation). A GSI QP (@gsi, UD only) takes a frame whose P_Key
	 * matches any slot (reported in cqe.pkey_index) and sends each
	 * datagram with the one of its WR's pkey_index.
	 */
	const struct tbr_pkey_table *pkeys;
	bool gsi;
};

#define TBR_SQ_DEPTH_MAX	16384
#define TBR_WIN_MIN		64
#define TBR_WIN_MAX		4096
/* the floor of the congestion window where one is wanted (conn.cwnd_min), PSNs */
#define TBR_CWND_MIN		16

/* Connection attributes (modify_qp to RTR/RTS). */
struct tbr_tqp_conn {
	u32 dest_qpn;		/* RC/UC: peer QP; UD: unused */
	u16 conn_id;		/* RC/UC: carried in every frame sent */
	u32 sq_psn;		/* first PSN this side sends */
	u32 rq_psn;		/* first PSN expected from the peer */
	u64 timeout_ns;		/* retransmit timeout; 0 = infinite (IBTA 0) */
	u8 retry_cnt;		/* 0..7 retries after the first transmission;
				 * a timeout after which nothing could be
				 * sent again (rails full) is no retry, up to
				 * TBR_BLOCKED_RTO_MAX in a row
				 */
	u8 rnr_retry;		/* 0..6 retries, 7 = infinite */
	u64 min_rnr_timer_ns;	/* responder: wait asked for in RNR NAKs */
	u64 ack_delay_ns;	/* responder: max ACK coalescing delay */
	u32 ack_every;		/* responder: ACK at least every N frames */
	/*
	 * RC: the peer takes ACKs piggybacked on data frames (TBR_F_ACK; its
	 * link said so): owed ACKs ride on the frames going back, and in a
	 * ping-pong wait for them (docs/protocol.md 3.3). 0: ACK frames only.
	 */
	u8 ack_piggyback;
	/*
	 * RC/UC: payload bytes per frame on this connection, TBR_MTU_MIN up to
	 * the creation-time cfg.mtu; 0 = cfg.mtu. Both ends must use the same
	 * value (the frame size their rails carry, less TBR_HDR_MAX).
	 */
	u32 mtu;
	/*
	 * Requester loss detection (RACK-style, docs/protocol.md 3.4): a
	 * frame is deemed lost when a frame sent after it was acknowledged
	 * and the reordering window has passed. The window adapts to the
	 * reordering measured on the rails; these bound it.
	 */
	u64 reo_wnd_min_ns;	/* floor of the reordering window */
	u64 reo_wnd_max_ns;	/* ceiling; 0 = timeout_ns / 2 */
	u64 uc_reorder_ns;	/* UC responder: time a hole may stay open */
	u8 tail_probe;		/* RC: tail loss probes (default 1) */
	/*
	 * RC requester congestion window (docs/protocol.md 3.9): the PSNs in
	 * flight are held to cwnd <= win, which starts at cwnd_init (0: the
	 * whole window; else what an earlier connection over the same link
	 * ended with), halves when more than an eighth of a flight is found
	 * lost and grows back by an eighth per window acknowledged. cwnd_min is
	 * its floor (a power of two is not needed); 0 = no congestion window
	 * (always the whole window), the default.
	 */
	u32 cwnd_min;
	u32 cwnd_init;
	/*
	 * RC requester: the smoothed RTT (ns) an earlier connection over the
	 * same link ended with, 0 = none. Until the QP measured an RTT of its
	 * own the tail loss probe is timed from it (doubled), so that a new
	 * QP whose first flight is lost is probed, not left to the timeout.
	 */
	u64 srtt_init;
};

/* timeouts in a row with the tx path full that are not counted as retries */
#define TBR_BLOCKED_RTO_MAX	64

struct tbr_tqp;

/* Fill @conn with the defaults documented in docs/protocol.md. */
void tbr_tqp_conn_defaults(struct tbr_tqp_conn *conn);

/*
 * Allocate and initialise a QP's transport state. Returns NULL on bad
 * configuration or allocation failure. Context: process (may sleep).
 */
struct tbr_tqp *tbr_tqp_create(const struct tbr_tqp_cfg *cfg,
			     const struct tbr_ops *ops, void *ctx);
/*
 * Free the state. WRs still held are NOT completed: call tbr_tqp_flush()
 * first if completions are wanted. Context: process.
 */
void tbr_tqp_destroy(struct tbr_tqp *qp);

/*
 * Enter the connected state (RC/UC: RTR+RTS; UD: ready) with @conn.
 * Resets all sequence state and sets the connection's frame payload
 * (@conn->mtu). Returns 0 or -EINVAL.
 */
int tbr_tqp_connect(struct tbr_tqp *qp, const struct tbr_tqp_conn *conn);

/*
 * RTR -> RTS: a QP connected at RTR (it already answers its peer) starts
 * sending from @conn->sq_psn with @conn's timeout, retry_cnt and rnr_retry;
 * the responder state is kept. Only before the first send WR; returns 0 or
 * -EINVAL.
 */
int tbr_tqp_start_send(struct tbr_tqp *qp, const struct tbr_tqp_conn *conn);

/*
 * Post a send WR. Returns 0, -ENOSPC when the core's send queue is full,
 * -EINVAL for an invalid WR (bad opcode for the QP type, too many SGEs,
 * unaligned atomic, UD message larger than the mtu...), -EIO when the QP is
 * in the error state (the caller completes the WR with WR_FLUSH_ERR).
 * Transmits what the window and the rails allow before returning.
 */
int tbr_tqp_post_send(struct tbr_tqp *qp, const struct tbr_send_wr *wr, u64 now);

/*
 * End a chain of posts (TBR_WR_MORE) without another post: the last WR
 * posted asks for the ACK after all, and the chain is transmitted now.
 * Does nothing when the last WR was posted without TBR_WR_MORE or has
 * already been transmitted.
 */
void tbr_tqp_end_chain(struct tbr_tqp *qp, u64 now);

/* Number of send WRs that can be posted now. */
u32 tbr_tqp_sq_space(const struct tbr_tqp *qp);

/*
 * Feed one received frame. Returns 0 if it was accepted (including
 * harmless duplicates), or a negative errno when it was rejected:
 * -EINVAL malformed or invalid for this QP, -ERANGE outside the window,
 * -EIO QP in error, -EACCES a P_Key that does not match the QP's (counted in
 * pkey_violations; the frame has no other effect). Every rejection is
 * counted.
 */
int tbr_tqp_rx(struct tbr_tqp *qp, const void *frame, u32 len, u64 now);

/*
 * Run expired timers (retransmission, RNR backoff, delayed ACK, UC hole)
 * and transmit whatever is pending (after tx_alloc() failed). Call at or
 * after tbr_tqp_next_deadline() and whenever transmit space frees up.
 */
void tbr_tqp_progress(struct tbr_tqp *qp, u64 now);

/* Earliest time tbr_tqp_progress() must run, or TBR_NO_DEADLINE. */
u64 tbr_tqp_next_deadline(const struct tbr_tqp *qp);

/*
 * Move the QP to the error state: send the responder's last ACK
 * (tbr_tqp_ack_final()), then complete every WR the core holds (send WRs and
 * fetched receive WQEs) with WR_FLUSH_ERR, in order. Idempotent.
 * ops->qp_error is not called for this caller-initiated transition.
 */
void tbr_tqp_flush(struct tbr_tqp *qp);

/*
 * RC: send now the responder's last ACK, in TBR_ACK_FLUSH_COPIES copies,
 * if the QP received anything: the one it owes (coalesced, or held for an
 * answer, docs/protocol.md 3.3) or the one it sent already, which may have
 * been lost. Before the QP stops (flush, destroy), so that the peer's
 * messages it took are acknowledged although no retransmission will be
 * answered; a peer that got its last answer and destroys its QP at once
 * (ibv_rc_pingpong) leaves none unacknowledged. A full ring loses it (as
 * the wire may). No-op for a QP not connected or in error.
 */
void tbr_tqp_ack_final(struct tbr_tqp *qp);

bool tbr_tqp_in_error(const struct tbr_tqp *qp);

/*
 * The QP's slot of cfg.pkeys (modify_qp's pkey_index). Returns 0, or
 * -EINVAL for an index beyond the table. An empty slot is accepted: the
 * QP then talks to nobody until the slot is filled.
 */
int tbr_tqp_set_pkey_index(struct tbr_tqp *qp, u32 idx);

/*
 * UD QPs also take datagrams whose destination QPN is TBR_QPN_MCAST: the
 * caller hands them only to the QPs attached to the group they name.
 *
 * UD: the Q_Key received datagrams must carry from now on (modify_qp);
 * others are dropped and counted in ud_drops. No-op for RC/UC.
 */
void tbr_tqp_set_qkey(struct tbr_tqp *qp, u32 qkey);

/*
 * tbr_ud_grh - build the RoCE v2 GRH of a UD datagram into @grh
 * (TBR_GRH_LEN bytes) from its address block @uda (TBR_UD_ADDR_LEN bytes):
 * 20 zero bytes and an IPv4 header with checksum when both GIDs are
 * IPv4-mapped, else an IPv6 header; lengths of a RoCE v2 wire carrying
 * @len data bytes (+ ImmDt with @imm). Returns TBR_NET_IPV4 or TBR_NET_IPV6.
 */
u32 tbr_ud_grh(const u8 *uda, u32 len, bool imm, u8 *grh);

/*
 * tbr_ud_frame_dgid - the destination GID in the address block of the UD
 * datagram @frame (a multicast one: the group), or NULL when @frame is no
 * well-formed UD_SEND/UD_SEND_IMM with a whole address block. Points into
 * @frame.
 */
const u8 *tbr_ud_frame_dgid(const void *frame, u32 len);
const struct tbr_tqp_counters *tbr_tqp_counters(const struct tbr_tqp *qp);
/*
 * The congestion window the QP's requester has now (PSNs): a later
 * connection over the same link may start from it (conn.cwnd_init). 0: the
 * QP has none (not connected, not RC, or conn.cwnd_min 0).
 */
u32 tbr_tqp_cwnd(const struct tbr_tqp *qp);
/*
 * What the requester of a connected RC QP knows of its path (ns, PSNs); a
 * later connection over the same link may start from its srtt
 * (conn.srtt_init).
 */
struct tbr_tqp_path {
	u64 srtt;		/* smoothed RTT, 0: none measured yet */
	u64 rtt_hi;		/* largest recent RTT (decaying) */
	u64 min_rtt;		/* smallest RTT, 0: none */
	u64 reo;		/* reordering measured between frames */
	u64 reo_wnd;		/* RACK's reordering window now */
	u32 inflight;		/* PSNs sent and not yet done */
	u32 cwnd;		/* congestion window, 0: none (cwnd_min 0) */
	u32 sq_queued;		/* WRs posted and not yet retired */
	u64 deadline;		/* next timer deadline, TBR_NO_DEADLINE: none */
};

/* Fill @p; false (and @p untouched) if @qp is no connected RC QP. */
bool tbr_tqp_path(const struct tbr_tqp *qp, struct tbr_tqp_path *p);

/*
 * Whether the requester waits for its peer: WRs not yet sent, or frames
 * sent and not yet acknowledged (or READ/ATOMIC responses not yet in).
 */
bool tbr_tqp_waiting(const struct tbr_tqp *qp);
/* WRs posted and not yet retired (the poll mode's ping-pong test) */
u32 tbr_tqp_sq_queued(const struct tbr_tqp *qp);

/*
 * Demultiplex helper: parse only the base header of @frame to find the
 * destination QP. Returns 0 or -EINVAL.
 */
int tbr_frame_peek(const void *frame, u32 len, u16 *conn_id, u32 *dqpn);

#endif /* TBR_CORE_H */
