// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_atomic.c - ATOMIC correctness, ordering and replay safety. */
#include "tcommon.h"

#define N_ATOMIC 2000

static void lossy(struct sim *s)
{
	s->f.drop_pct = 10;
	s->f.dup_pct = 10;
	s->f.jitter_ns = 20000;
	s->f.rails = 4;
	s->f.spray_random = true;
}

static void test_fetch_add_lossy(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 61, NULL, NULL);
	struct sim_ep *a = &s->ep[0];
	uint64_t counter = 1000, *res = calloc(N_ATOMIC, 8);
	unsigned int i = 0;
	struct tbr_send_wr wr;
	struct tbr_sge sge;

	assert_non_null(res);
	lossy(s);
	sim_add_mr(&s->ep[1], 0xa7, &counter, 8, SIM_ACC_ATOMIC);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = TBR_WR_FETCH_ADD;
	wr.flags = TBR_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sgl = &sge;
	wr.remote_addr = taddr(&counter);
	wr.rkey = 0xa7;
	wr.compare_add = 3;
	while (i < N_ATOMIC) {
		int ret;

		sge = tsge(&res[i], 8);
		wr.wr_id = i;
		ret = sim_post(a, &wr);
		if (ret == -ENOSPC) {
			sim_run(s, 5000);
			continue;
		}
		assert_int_equal(ret, 0);
		i++;
	}
	assert_true(sim_run(s, 60 * T_SEC));
	assert_int_equal(a->ncq, N_ATOMIC);
	/* executed exactly once each, in posting order */
	assert_int_equal(counter, 1000 + 3ull * N_ATOMIC);
	for (i = 0; i < N_ATOMIC; i++) {
		assert_int_equal(a->cq[i].status, TBR_WC_SUCCESS);
		assert_int_equal(a->cq[i].opcode, TBR_WC_FETCH_ADD);
		assert_int_equal(a->cq[i].wr_id, i);
		assert_int_equal(res[i], 1000 + 3ull * i);
	}
	assert_true(s->dropped > 0 && s->duplicated > 0);
	assert_true(tbr_tqp_counters(s->ep[1].qp)->atomic_replays > 0);
	free(res);
	sim_free(s);
}

static void test_cmp_swap_chain(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 62, NULL, NULL);
	struct sim_ep *a = &s->ep[0];
	uint64_t word = 0, res[201];
	struct tbr_send_wr wr;
	struct tbr_sge sge;
	unsigned int i;

	lossy(s);
	sim_add_mr(&s->ep[1], 0xa8, &word, 8, SIM_ACC_ATOMIC);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = TBR_WR_CMP_SWAP;
	wr.flags = TBR_WR_SIGNALED;
	wr.num_sge = 1;
	wr.sgl = &sge;
	wr.remote_addr = taddr(&word);
	wr.rkey = 0xa8;
	for (i = 0; i < 201; i++) {
		sge = tsge(&res[i], 8);
		wr.wr_id = i;
		/* the last one compares against a stale value and fails */
		wr.compare_add = i < 200 ? i : 7;
		wr.swap = i < 200 ? i + 1 : 999;
		while (sim_post(a, &wr) == -ENOSPC)
			sim_run(s, 5000);
	}
	assert_true(sim_run(s, 60 * T_SEC));
	assert_int_equal(a->ncq, 201);
	for (i = 0; i < 201; i++) {
		assert_int_equal(a->cq[i].status, TBR_WC_SUCCESS);
		assert_int_equal(res[i], i);
	}
	assert_int_equal(res[200], 200);
	assert_int_equal(word, 200);
	sim_free(s);
}

/* Capture every ATOMIC request frame delivered to the responder. */
struct cap {
	uint8_t f[64][TBR_HDR_MAX];
	uint32_t len[64];
	unsigned int n;
};

static struct cap g_cap;

static void tap_atomic(struct sim *s, int dst, const uint8_t *buf, uint32_t len)
{
	if (dst == 1 && len >= 2 && buf[1] == TBR_OP_FETCH_ADD &&
	    g_cap.n < 64 && len <= TBR_HDR_MAX) {
		memcpy(g_cap.f[g_cap.n], buf, len);
		g_cap.len[g_cap.n++] = len;
	}
}

/* Old ATOMIC requests replayed later must never execute again. */
static void test_atomic_replay_not_reexecuted(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 63, NULL, NULL);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	uint64_t counter = 0, res[40];
	const struct tbr_tqp_counters *bc = tbr_tqp_counters(b->qp);
	unsigned int i, ncq;
	uint64_t replays;

	memset(&g_cap, 0, sizeof(g_cap));
	s->tap = tap_atomic;
	sim_add_mr(b, 0xa9, &counter, 8, SIM_ACC_ATOMIC);
	for (i = 0; i < 40; i++) {
		struct tbr_sge sge = tsge(&res[i], 8);
		struct tbr_send_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.opcode = TBR_WR_FETCH_ADD;
		wr.flags = TBR_WR_SIGNALED;
		wr.sgl = &sge;
		wr.num_sge = 1;
		wr.remote_addr = taddr(&counter);
		wr.rkey = 0xa9;
		wr.compare_add = 1;
		assert_int_equal(sim_post(a, &wr), 0);
		assert_true(sim_run(s, T_SEC));
	}
	assert_int_equal(counter, 40);
	assert_int_equal(g_cap.n, 40);
	s->tap = NULL;
	/* replay all: recent ones are answered from the cache, old ones
	 * dropped; none executes again and the requester ignores answers */
	ncq = a->ncq;
	for (i = 0; i < g_cap.n; i++)
		assert_int_equal(sim_inject(s, 1, g_cap.f[i], g_cap.len[i]), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(counter, 40);
	replays = bc->atomic_replays;
	assert_int_equal(replays, TBR_ATOMIC_CACHE);
	assert_int_equal(a->ncq, ncq);
	assert_false(tbr_tqp_in_error(a->qp));
	for (i = 0; i < 40; i++)
		assert_int_equal(res[i], i);
	sim_free(s);
}

static void test_atomic_errors(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 64, NULL, NULL);
	struct sim_ep *a = &s->ep[0];
	uint64_t words[2] = { 5, 6 }, res;

	sim_add_mr(&s->ep[1], 0xaa, words, 16, SIM_ACC_ATOMIC);
	/* past the end of the MR */
	assert_int_equal(tpost(a, TBR_WR_FETCH_ADD, 1, &res, 8,
			       taddr(words) + 16, 0xaa, 0), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(a->ncq, 1);
	assert_int_equal(a->cq[0].status, TBR_WC_REM_ACCESS_ERR);
	assert_int_equal(words[0], 5);
	assert_int_equal(words[1], 6);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fetch_add_lossy),
		cmocka_unit_test(test_cmp_swap_chain),
		cmocka_unit_test(test_atomic_replay_not_reexecuted),
		cmocka_unit_test(test_atomic_errors),
	};

	tfilter();
	return cmocka_run_group_tests_name("atomic", tests, NULL, NULL);
}
