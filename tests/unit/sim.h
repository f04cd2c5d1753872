/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sim.h - deterministic in-memory wire joining two transport-core QPs for
 * host tests: seeded drop/duplicate/reorder faults over several rails,
 * virtual time, plain-buffer memory regions and receive queues.
 */
#ifndef TBR_SIM_H
#define TBR_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tbr_core.h"

#define SIM_LKEY	0x1000u
#define SIM_BAD_LKEY	0xbad0u
#define SIM_MAX_MR	8
#ifndef SIM_RQ
#define SIM_RQ		4096
#endif
#ifndef SIM_CQ
#define SIM_CQ		(1u << 17)
#endif
#define SIM_RAILS	8

#define SIM_ACC_WRITE	0x1
#define SIM_ACC_READ	0x2
#define SIM_ACC_ATOMIC	0x4

/*
 * A fast-registration MR (sim_add_fast_mr) has a key only while valid: a
 * TBR_WR_LOCAL with cookie SIM_LOCAL_REG registers it (the new key must keep
 * the index byte 0xffffff00 of its key), SIM_LOCAL_INV or a SEND_INV
 * invalidates it. While valid its key is also an lkey for local SGEs.
 * SIM_LOCAL_FAIL(status) is a local operation that fails with that status.
 */
struct sim_mr {
	uint32_t rkey;
	uint8_t *base;
	uint64_t va;
	uint64_t len;
	uint32_t access;
	bool fast;
	bool valid;
};

#define SIM_LOCAL_REG(mr_idx, key)	(1ull << 62 | (uint64_t)(mr_idx) << 32 | (key))
#define SIM_LOCAL_INV(key)		(2ull << 62 | (key))
/* a local operation that fails with -@status (a refused window bind) */
#define SIM_LOCAL_FAIL(status)		(3ull << 62 | (status))

struct sim;

struct sim_ep {
	struct sim *sim;
	int id;
	struct tbr_tqp *qp;
	struct sim_mr mr[SIM_MAX_MR];
	int nmr;
	struct tbr_tqp_recv rq[SIM_RQ];
	uint32_t rq_head, rq_tail;
	struct tbr_cqe *cq;
	uint32_t ncq;
	int qp_error_calls;
	uint32_t qp_error_status;
	uint64_t tx_frames;
	uint32_t tx_max_len;	/* longest frame sent */
	uint32_t qp_access;	/* SIM_ACC_* the QP enables (default all) */
	uint32_t nlocal;	/* TBR_WR_LOCAL operations run */
	uint32_t nremote_inv;	/* rkeys invalidated by a SEND_INV */
};

struct sim_frame {
	struct sim_frame *next;
	uint64_t at;
	uint64_t seq;
	int dst;
	int rail;
	uint32_t len;
	uint8_t data[TBR_FRAME_MAX];
};

struct sim_faults {
	unsigned int drop_pct;		/* 0..100 */
	unsigned int dup_pct;		/* 0..100 */
	uint64_t jitter_ns;		/* random extra delay: reordering */
	unsigned int rails;		/* 1..SIM_RAILS */
	bool spray_random;		/* random rail instead of round robin */
	uint64_t rail_skew_ns;		/* extra latency of rail i: i * skew */
	uint32_t rail_down_mask;	/* rails that lose every frame */
	unsigned int tx_cap;		/* max frames in flight, 0 = unlimited */
	uint64_t stall_until;		/* nothing delivered before: a peer that
					 * stops draining its rings (with tx_cap) */
	unsigned int drop_to[2];	/* lose the next N frames sent to ep[i]
					 * (a chosen frame: a ping-pong's tail) */
	/*
	 * A bottleneck in front of each end (a slower link, a receiver's
	 * socket buffer): frames to ep[i] leave it one per bneck_ns in
	 * order; one that finds bneck_cap frames waiting is lost (tail
	 * drop). 0: none.
	 */
	uint64_t bneck_ns;
	unsigned int bneck_cap;
	/*
	 * A path cut until re-routing: every frame sent before dark_until
	 * that would arrive at or after dark_from is lost (with the ones in
	 * the bottleneck's queue), on the rails of dark_rails (0: all).
	 */
	uint64_t dark_from, dark_until;
	uint32_t dark_rails;
};

struct sim {
	struct sim_ep ep[2];
	struct sim_faults f;
	uint64_t rng;
	uint64_t now;
	uint64_t seq;
	uint64_t base_ns;
	unsigned int rr;
	unsigned int inflight;
	struct sim_frame **heap;
	struct sim_frame *free_frames;
	unsigned int nheap, heap_cap;
	uint64_t dropped, duplicated, delivered;
	uint64_t bneck_free[2];		/* the bottleneck to ep[i] idle from */
	uint64_t bneck_drops;		/* of dropped: by a full bottleneck */
	/* optional tap on every delivered frame (tests of replay) */
	void (*tap)(struct sim *s, int dst, const uint8_t *buf, uint32_t len);
	void *tap_ctx;
};

/*
 * Create two connected QPs of @type with @cfg (qpn 0x11 and 0x22). A
 * cfg->pkeys points to two P_Key tables: ep[i] gets the i-th.
 */
struct sim *sim_new(enum tbr_tqp_type type, const struct tbr_tqp_cfg *cfg,
		    const struct tbr_tqp_conn *conn, uint64_t seed);
void sim_free(struct sim *s);
/*
 * Make a used sim as good as new for reuse (fuzzers): frames in flight
 * dropped, both QPs flushed and reconnected with @conn, memory regions,
 * queues, faults and virtual time cleared, RNG reseeded.
 */
int sim_reset(struct sim *s, const struct tbr_tqp_conn *conn, uint64_t seed);
void sim_default_cfg(struct tbr_tqp_cfg *cfg, enum tbr_tqp_type type);

uint64_t sim_rand(struct sim *s);
int sim_add_mr(struct sim_ep *ep, uint32_t rkey, void *buf, uint64_t len,
	       uint32_t access);
/* A fast-registration MR, invalid until registered; returns its index. */
int sim_add_fast_mr(struct sim_ep *ep, uint32_t key, void *buf, uint64_t len,
		    uint32_t access);
void sim_post_recv(struct sim_ep *ep, uint64_t wr_id, void *buf, uint32_t len);
int sim_post(struct sim_ep *ep, const struct tbr_send_wr *wr);
/* Deliver a raw frame to @dst now (hostile-input tests). */
int sim_inject(struct sim *s, int dst, const void *buf, uint32_t len);

/*
 * Run the event loop until both QPs are idle (no frame in flight, no
 * deadline) or @max_ns of virtual time passed. Returns true when idle.
 */
bool sim_run(struct sim *s, uint64_t max_ns);
/* Run until virtual time reaches @t (events in between processed). */
void sim_run_until(struct sim *s, uint64_t t);

#endif
