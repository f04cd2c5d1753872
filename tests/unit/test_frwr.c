// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_frwr.c - fast registration through the transport core: local
 * operations (TBR_WR_LOCAL) in send-queue order, remote invalidation
 * (SEND_INV) in message order, stale keys refused. The MRs are the sim's
 * (sim.h): what is tested is when the core runs the operations, what the
 * completions say and what a key can reach afterwards.
 */
#include "tcommon.h"

#define MR_LEN		(16 * 1024)
#define KEY_BASE	0x00500000u	/* index 0x5000, key byte 0 */

/* ib_inc_rkey: the next key byte, the index kept */
static uint32_t next_key(uint32_t key)
{
	return (key & 0xffffff00u) | ((key + 1) & 0xffu);
}

static int post_local(struct sim_ep *ep, uint64_t wr_id, uint64_t cookie,
		      uint32_t flags)
{
	struct tbr_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = TBR_WR_LOCAL;
	wr.flags = TBR_WR_SIGNALED | flags;
	wr.remote_addr = cookie;
	return sim_post(ep, &wr);
}

static int post_send_inv(struct sim_ep *ep, uint64_t wr_id, uint32_t rkey)
{
	struct tbr_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = TBR_WR_SEND_INV;
	wr.flags = TBR_WR_SIGNALED | TBR_WR_INLINE;
	wr.inline_data = "inv";
	wr.inline_len = 3;
	wr.imm = rkey;
	return sim_post(ep, &wr);
}

/* the completions of @ep from index @from on: all successful, in @ids order */
static void expect_ok(struct sim_ep *ep, uint32_t from, const uint64_t *ids,
		      uint32_t n)
{
	uint32_t i;

	assert_int_equal(ep->ncq - from, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(ep->cq[from + i].status, TBR_WC_SUCCESS);
		assert_int_equal(ep->cq[from + i].wr_id, ids[i]);
	}
}

/*
 * B (the side that owns the memory, an NVMe host) registers a fast MR with a
 * rotated key, uses the new key as an lkey in the very next WR (a
 * registration takes effect in order), A (the target) writes and reads it
 * remotely, then the key is invalidated: by B locally (fenced LOCAL) or by
 * A with a SEND_INV right behind its WRITE. Thousands of rounds on a clean
 * wire, then on a lossy, reordering, duplicating one over several rails.
 * Every round checks the bytes, the completions and that the MR is invalid
 * again; at the end the last key, now stale, is refused with a remote
 * access error.
 */
static void run_stress(unsigned int rounds, bool lossy, uint64_t seed)
{
	struct sim *s = tsim(TBR_QPT_RC, seed, NULL, NULL);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	static uint8_t mem[MR_LEN], src[MR_LEN], back[MR_LEN], note[64],
		       got[64], rbuf[64];
	uint32_t key = KEY_BASE, i, ca, cb;
	uint64_t ids[3];
	int m;

	if (lossy) {
		s->f.drop_pct = 5;
		s->f.dup_pct = 5;
		s->f.jitter_ns = 20000;
		s->f.rails = 2;
		s->f.rail_skew_ns = 700;
	}
	m = sim_add_fast_mr(b, key, mem, sizeof(mem),
			    SIM_ACC_WRITE | SIM_ACC_READ);
	assert_true(m >= 0);
	for (i = 0; i < rounds; i++) {
		uint32_t len = 1 + (uint32_t)(sim_rand(s) % MR_LEN);
		uint64_t va = taddr(mem);
		bool remote = i & 1;

		key = next_key(key);
		tfill(s, src, len);
		tfill(s, note, sizeof(note));
		ca = a->ncq;
		cb = b->ncq;
		/* B: register, then send from the new key at once */
		memcpy(mem, note, sizeof(note));
		sim_post_recv(a, 1000 + i, got, sizeof(got));
		assert_int_equal(post_local(b, 10, SIM_LOCAL_REG(m, key), 0), 0);
		{
			struct tbr_sge sge = { va, sizeof(note), key };
			struct tbr_send_wr wr;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 11;
			wr.opcode = TBR_WR_SEND;
			wr.flags = TBR_WR_SIGNALED;
			wr.sgl = &sge;
			wr.num_sge = 1;
			assert_int_equal(sim_post(b, &wr), 0);
		}
		assert_true(sim_run(s, 10 * T_SEC));
		ids[0] = 10;
		ids[1] = 11;
		expect_ok(b, cb, ids, 2);
		assert_int_equal(a->cq[ca].wr_id, 1000 + i);
		assert_int_equal(a->cq[ca].status, TBR_WC_SUCCESS);
		assert_memory_equal(got, note, sizeof(note));
		ca = a->ncq;
		cb = b->ncq;

		/* A: write, read back, and (odd rounds) invalidate remotely */
		assert_int_equal(tpost(a, TBR_WR_WRITE, 20, src, len, va, key, 0), 0);
		assert_int_equal(tpost(a, TBR_WR_READ, 21, back, len, va, key, 0), 0);
		if (remote) {
			sim_post_recv(b, 2000 + i, rbuf, sizeof(rbuf));
			assert_int_equal(post_send_inv(a, 22, key), 0);
		}
		assert_true(sim_run(s, 10 * T_SEC));
		ids[0] = 20;
		ids[1] = 21;
		ids[2] = 22;
		expect_ok(a, ca, ids, remote ? 3 : 2);
		assert_memory_equal(mem, src, len);
		assert_memory_equal(back, src, len);
		if (remote) {
			struct tbr_cqe *c = &b->cq[cb];

			assert_int_equal(b->ncq, cb + 1);
			assert_int_equal(c->wr_id, 2000 + i);
			assert_int_equal(c->status, TBR_WC_SUCCESS);
			assert_true(c->flags & TBR_WC_WITH_INV);
			assert_false(c->flags & TBR_WC_WITH_IMM);
			assert_int_equal(c->imm, key);
		} else {
			assert_int_equal(post_local(b, 30, SIM_LOCAL_INV(key),
						    TBR_WR_FENCE), 0);
			assert_true(sim_run(s, 10 * T_SEC));
			ids[0] = 30;
			expect_ok(b, cb, ids, 1);
		}
		assert_false(b->mr[m].valid);
	}
	assert_int_equal(b->nremote_inv, rounds / 2);
	assert_int_equal(b->nlocal, rounds + (rounds + 1) / 2);
	assert_false(tbr_tqp_in_error(a->qp));
	assert_false(tbr_tqp_in_error(b->qp));

	/* the last key is stale now */
	ca = a->ncq;
	assert_int_equal(tpost(a, TBR_WR_WRITE, 40, src, 64, taddr(mem), key, 0), 0);
	assert_true(sim_run(s, 10 * T_SEC));
	assert_int_equal(a->ncq, ca + 1);
	assert_int_equal(a->cq[ca].wr_id, 40);
	assert_int_equal(a->cq[ca].status, TBR_WC_REM_ACCESS_ERR);
	assert_true(tbr_tqp_in_error(b->qp));
	sim_free(s);
}

static void test_frwr_stress(void **state)
{
	run_stress(4000, false, 101);
}

static void test_frwr_stress_lossy(void **state)
{
	run_stress(600, true, 102);
}

/*
 * A registration of an MR that is still valid, a registration that changes
 * the index of the key, an invalidation of a key that is not valid: each
 * fails in order (after the WRs before it completed) with LOC_QP_OP_ERR,
 * and the QP goes to error (later WRs flushed). A local operation that fails
 * with another status (a memory window bind: MW_BIND_ERR) completes with
 * that one.
 */
static void test_frwr_bad_local(void **state)
{
	unsigned int k;

	for (k = 0; k < 4; k++) {
		struct sim *s = tsim(TBR_QPT_RC, 110 + k, NULL, NULL);
		struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
		static uint8_t mem[4096], src[4096];
		uint32_t key = KEY_BASE | 7;
		uint64_t cookie;
		int m;

		m = sim_add_fast_mr(a, KEY_BASE, src, sizeof(src), 0);
		sim_add_mr(b, 0x77, mem, sizeof(mem), SIM_ACC_WRITE);
		assert_int_equal(post_local(a, 1, SIM_LOCAL_REG(m, key), 0), 0);
		assert_true(sim_run(s, T_SEC));
		cookie = k == 0 ? SIM_LOCAL_REG(m, next_key(key)) :
			 k == 1 ? SIM_LOCAL_REG(m, key + 0x100) :
			 k == 2 ? SIM_LOCAL_INV(next_key(key)) :
				  SIM_LOCAL_FAIL(TBR_WC_MW_BIND_ERR);
		assert_int_equal(tpost(a, TBR_WR_WRITE, 2, src, 3000,
				       taddr(mem), 0x77, 0), 0);
		assert_int_equal(post_local(a, 3, cookie, 0), 0);
		assert_int_equal(tpost(a, TBR_WR_WRITE, 4, src, 10,
				       taddr(mem), 0x77, 0), 0);
		assert_true(sim_run(s, T_SEC));
		assert_int_equal(a->ncq, 4);
		assert_int_equal(a->cq[0].status, TBR_WC_SUCCESS);
		assert_int_equal(a->cq[1].wr_id, 2);
		assert_int_equal(a->cq[1].status, TBR_WC_SUCCESS);
		assert_int_equal(a->cq[2].wr_id, 3);
		assert_int_equal(a->cq[2].status, k == 3 ? TBR_WC_MW_BIND_ERR :
							   TBR_WC_LOC_QP_OP_ERR);
		assert_int_equal(a->cq[2].opcode, TBR_WC_LOCAL);
		assert_int_equal(a->cq[3].wr_id, 4);
		assert_int_equal(a->cq[3].status, TBR_WC_WR_FLUSH_ERR);
		assert_true(tbr_tqp_in_error(a->qp));
		/* the MR kept its registration (k == 0, 1, 3) */
		assert_true(a->mr[m].valid);
		sim_free(s);
	}
}

/*
 * A fenced invalidation waits for every earlier WR to complete: a WRITE
 * sourced from the key, retransmitted on a lossy wire, still reads valid
 * memory and lands intact; a WR after the invalidation that uses the key as
 * an lkey fails with a local protection error.
 */
static void test_frwr_fence_inv(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 120, NULL, NULL);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	static uint8_t mem[MR_LEN], src[MR_LEN];
	uint32_t key = KEY_BASE | 9;
	struct tbr_sge sge = { taddr(src), sizeof(src), key };
	struct tbr_send_wr wr;
	int m, i;

	s->f.drop_pct = 20;
	s->f.jitter_ns = 20000;
	s->f.rails = 2;
	tfill(s, src, sizeof(src));
	m = sim_add_fast_mr(a, KEY_BASE, src, sizeof(src), 0);
	sim_add_mr(b, 0x77, mem, sizeof(mem), SIM_ACC_WRITE);
	assert_int_equal(post_local(a, 1, SIM_LOCAL_REG(m, key), 0), 0);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = TBR_WR_WRITE;
	wr.flags = TBR_WR_SIGNALED;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.remote_addr = taddr(mem);
	wr.rkey = 0x77;
	for (i = 0; i < 4; i++) {
		wr.wr_id = 2 + i;
		assert_int_equal(sim_post(a, &wr), 0);
	}
	assert_int_equal(post_local(a, 6, SIM_LOCAL_INV(key), TBR_WR_FENCE), 0);
	/* the invalidation has not run: nothing is acknowledged yet */
	assert_true(a->mr[m].valid);
	wr.wr_id = 7;
	assert_int_equal(sim_post(a, &wr), 0);
	assert_true(sim_run(s, 10 * T_SEC));
	assert_true(tbr_tqp_counters(a->qp)->retransmits > 0);
	assert_int_equal(a->ncq, 7);
	for (i = 0; i < 6; i++) {
		assert_int_equal(a->cq[i].wr_id, 1 + i);
		assert_int_equal(a->cq[i].status, TBR_WC_SUCCESS);
	}
	assert_int_equal(a->cq[6].wr_id, 7);
	assert_int_equal(a->cq[6].status, TBR_WC_LOC_PROT_ERR);
	assert_memory_equal(mem, src, sizeof(mem));
	assert_false(a->mr[m].valid);
	sim_free(s);
}

/*
 * SEND_INV of a key the responder cannot invalidate (unknown, or already
 * invalid): the receive completes with REM_INV_REQ_ERR, so does the send,
 * both QPs go to error; also for a multi-frame SEND_INV on a lossy wire
 * whose first frames were acknowledged before the last arrived.
 */
static void test_send_inv_bad_key(void **state)
{
	unsigned int k;

	for (k = 0; k < 4; k++) {
		struct sim *s = tsim(TBR_QPT_RC, 130 + k, NULL, NULL);
		struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
		static uint8_t rbuf[8192], src[8192];
		struct tbr_sge sge = tsge(src, sizeof(src));
		struct tbr_send_wr wr;
		int m;

		if (k & 1) {
			s->f.drop_pct = 10;
			s->f.jitter_ns = 20000;
			s->f.rails = 2;
		}
		m = sim_add_fast_mr(b, KEY_BASE, rbuf, sizeof(rbuf),
				    SIM_ACC_WRITE);
		sim_post_recv(b, 70, rbuf, sizeof(rbuf));
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 7;
		wr.opcode = TBR_WR_SEND_INV;
		wr.flags = TBR_WR_SIGNALED;
		wr.sgl = &sge;
		wr.num_sge = 1;
		/* k < 2: an unknown key; else the MR's, but it is invalid */
		wr.imm = k < 2 ? 0x4242 : KEY_BASE;
		assert_int_equal(sim_post(a, &wr), 0);
		assert_true(sim_run(s, 10 * T_SEC));
		assert_int_equal(a->ncq, 1);
		assert_int_equal(a->cq[0].wr_id, 7);
		assert_int_equal(a->cq[0].status, TBR_WC_REM_INV_REQ_ERR);
		assert_int_equal(b->ncq, 1);
		assert_int_equal(b->cq[0].wr_id, 70);
		assert_int_equal(b->cq[0].status, TBR_WC_REM_INV_REQ_ERR);
		assert_false(b->cq[0].flags & TBR_WC_WITH_INV);
		assert_true(tbr_tqp_in_error(a->qp));
		assert_true(tbr_tqp_in_error(b->qp));
		assert_false(b->mr[m].valid);
		sim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frwr_stress),
		cmocka_unit_test(test_frwr_stress_lossy),
		cmocka_unit_test(test_frwr_bad_local),
		cmocka_unit_test(test_frwr_fence_inv),
		cmocka_unit_test(test_send_inv_bad_key),
	};

	tfilter();
	return cmocka_run_group_tests_name("frwr", tests, NULL, NULL);
}
