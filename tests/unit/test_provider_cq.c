// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_provider_cq - the provider's OS-independent CQ decisions (provider/cq_attr.h): which
 * ibv_create_cq_ex requests are taken and with which CQE format, the CQE layouts of the
 * user/kernel ABI, and the time-namespace offset of ibv_query_rt_values_ex's raw clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cq_attr.h"

#define TS IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
#define WALL IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK

static int check(uint64_t wc, uint32_t mask, uint32_t flags, bool *ts)
{
	*ts = false;
	return tbr_cq_ex_attr_check(wc, mask, flags, ts);
}

static void test_taken(void **state)
{
	bool ts;

	assert_int_equal(check(IBV_WC_STANDARD_FLAGS, 0, 0, &ts), 0);
	assert_false(ts);
	assert_int_equal(check(0, IBV_CQ_INIT_ATTR_MASK_FLAGS, 0, &ts), 0);
	assert_false(ts);
	assert_int_equal(check(IBV_WC_STANDARD_FLAGS | TS, 0, 0, &ts), 0);
	assert_true(ts);
	/* the wallclock alone needs the 64-byte CQE too */
	assert_int_equal(check(WALL, 0, 0, &ts), 0);
	assert_true(ts);
	assert_int_equal(check(TS | WALL, IBV_CQ_INIT_ATTR_MASK_FLAGS, 0, &ts), 0);
	assert_true(ts);
	assert_int_equal(tbr_cqe_stride(false), 48);
	assert_int_equal(tbr_cqe_stride(true), 64);
}

static void test_refused(void **state)
{
	static const uint64_t wc[] = {
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG, IBV_WC_EX_WITH_TM_INFO,
		TS | IBV_WC_EX_WITH_CVLAN, 1ULL << 40,	/* a field libibverbs may add later */
	};
	bool ts;
	size_t i;

	for (i = 0; i < sizeof(wc) / sizeof(wc[0]); i++)
		assert_int_equal(check(IBV_WC_STANDARD_FLAGS | wc[i], 0, 0, &ts), EOPNOTSUPP);
	assert_int_equal(check(TS, IBV_CQ_INIT_ATTR_MASK_PD, 0, &ts), EOPNOTSUPP);
	assert_int_equal(check(TS, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			       IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, &ts), EOPNOTSUPP);
	assert_int_equal(check(0, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			       IBV_CREATE_CQ_ATTR_SINGLE_THREADED, &ts), EOPNOTSUPP);
	assert_false(ts);
}

/* the layout both sides compile: the 48-byte CQE unchanged, the timestamps after it */
static void test_layout(void **state)
{
	assert_int_equal(sizeof(struct tbrdma_cqe), 48);
	assert_int_equal(offsetof(struct tbrdma_cqe_ts, cqe), 0);
	assert_int_equal(offsetof(struct tbrdma_cqe_ts, ts_ns), 48);
	assert_int_equal(offsetof(struct tbrdma_cqe_ts, wall_ns), 56);
	assert_int_equal(sizeof(struct tbrdma_cqe_ts), 64);
	assert_int_equal(TBRDMA_RING_HDR_SIZE % 64, 0);	/* 64-byte slots stay aligned */
	assert_int_equal(TBRDMA_CLOCK_KHZ, 1000000);
}

static void test_timens(void **state)
{
	assert_int_equal(tbr_timens_mono_offset(""), 0);
	assert_int_equal(tbr_timens_mono_offset("monotonic 0 0\nboottime 0 0\n"), 0);
	assert_int_equal(tbr_timens_mono_offset("monotonic 5 100\nboottime 7 0\n"),
			 5000000100LL);
	assert_int_equal(tbr_timens_mono_offset("boottime 7 0\nmonotonic -2 5\n"),
			 -1999999995LL);
	assert_int_equal(tbr_timens_mono_offset("monotonic 100000"), 0);
	assert_int_equal(tbr_timens_mono_offset("boottime 3 3"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_timens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
