// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_kick.c - core/tbr_kick.h: how far the kernel goes on with a send
 * queue on its own (issue 46: kick_work re-queued itself for as long as the
 * user kept the ring full). A model of xport's loop: one pass moves at most
 * BUDGET WQEs; a pass that stops on its budget with more waiting continues
 * as tbr_kick_next() says (0: in the same tick, > 0: that many ticks later).
 */
#include "tcommon.h"
#include "tbr_kick.h"

#define BUDGET	256	/* TBR_XPORT_KICK_BUDGET */

/* the exact schedule: RUNS at once, then 1, 2, 4, ... ticks up to the cap */
static void test_schedule(void **state)
{
	struct tbr_kick k = {};
	int want[] = { 0, 0, 0, 0, 1, 2, 4, 8, 16, 16, 16 };
	unsigned int i;

	assert_int_equal(TBR_KICK_RUNS, 4);
	for (i = 0; i < (sizeof(want) / sizeof(want[0])); i++)
		assert_int_equal(tbr_kick_next(&k, true), want[i]);
	assert_int_equal(k.requeues, 4);
	assert_int_equal(k.backoffs, (sizeof(want) / sizeof(want[0])) - 4);
	/* a doorbell: at once again */
	tbr_kick_doorbell(&k);
	assert_int_equal(tbr_kick_next(&k, true), 0);
	/* nothing waits: no continuation, and the streak ends */
	for (i = 0; i < 10; i++)
		tbr_kick_next(&k, true);
	assert_int_equal(tbr_kick_next(&k, false), TBR_KICK_NONE);
	assert_int_equal(tbr_kick_next(&k, true), 0);
	tbr_kick_idle(&k);
	for (i = 0; i < TBR_KICK_RUNS; i++)
		assert_int_equal(tbr_kick_next(&k, true), 0);
	assert_int_equal(tbr_kick_next(&k, true), 1);
}

/*
 * A user that refills the ring as fast as it drains (UD with no route:
 * every WQE completes at once) and never rings: in @ticks ticks, how many
 * passes the kernel makes. The continuations of one tick are capped at
 * @cap (the model's stand-in for "without end").
 */
static unsigned int passes_refilling(struct tbr_kick *k, unsigned int ticks, unsigned int cap)
{
	unsigned int t = 0, passes = 0, in_tick = 0;
	int d;

	while (t < ticks && in_tick < cap) {
		passes++;
		in_tick++;
		d = tbr_kick_next(k, true);	/* the ring is full again */
		if (d > 0) {
			t += d;
			in_tick = 0;
		}
	}
	return passes;
}

static void test_refill_bounded(void **state)
{
	struct tbr_kick k = {};
	unsigned int p;

	/* one tick: the pass that started it and RUNS continuations, no more */
	p = passes_refilling(&k, 1, 1000000);
	assert_int_equal(p, TBR_KICK_RUNS + 1);
	/* a second (HZ 250): at most RUNS + 1 + the backoff ramp + 250 / 16 */
	memset(&k, 0, sizeof(k));
	p = passes_refilling(&k, 250, 1000000);
	assert_true(p <= TBR_KICK_RUNS + 1 + TBR_KICK_SHIFT_MAX + 250 / 16 + 1);
	print_message("# 1 s of a ring kept full, no doorbell: %u passes, %u WQEs at most\n",
		      p, p * BUDGET);
	assert_true(k.backoffs > 0);
	/* a doorbell per tick (the user pays a system call): RUNS + 1 passes each */
	memset(&k, 0, sizeof(k));
	p = 0;
	for (unsigned int t = 0; t < 250; t++) {
		tbr_kick_doorbell(&k);
		p += passes_refilling(&k, 1, 1000000);
	}
	assert_true(p <= 250 * (TBR_KICK_RUNS + 2));
}

/* WQEs posted once, no doorbell after them: all go out, none is stranded */
static void test_no_stranding(void **state)
{
	struct tbr_kick k = {};
	unsigned int left = 100000, ticks = 0;
	int d;

	for (;;) {
		left -= left < BUDGET ? left : BUDGET;
		d = tbr_kick_next(&k, left > 0);
		if (d == TBR_KICK_NONE)
			break;
		ticks += d;
		assert_true(ticks < 100000);
	}
	assert_int_equal(left, 0);
	assert_int_equal(k.runs, 0);
	print_message("# 100000 WQEs posted without a doorbell: out after %u ticks\n", ticks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_refill_bounded),
		cmocka_unit_test(test_no_stranding),
	};

	tfilter();
	return cmocka_run_group_tests_name("kick", tests, NULL, NULL);
}
