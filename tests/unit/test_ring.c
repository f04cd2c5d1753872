// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_ring.c - ring occupancy (kernel/core/tbr_ring_acct.h): a sender whose
 * receiver stalls sees its TX ring full most of the time; a sender starved
 * of work sees it empty; the receiver's RX ring mirrors both.
 */
#include "tcommon.h"
#include "tbr_ring_acct.h"

#define US	1000ull
#define DEPTH	64

/*
 * A rail for @steps microseconds: every microsecond the sender queues
 * @offer frames (TX ring permitting) and the receiver drains @drain frames
 * from the wire into its RX ring and hands @consume of them up. Levels: TX
 * frames queued, RX buffers full of data.
 */
static void run(u32 offer, u32 drain, u32 consume, u32 steps,
		struct tbr_ring_occ *tx, struct tbr_ring_occ *rx)
{
	struct tbr_ring_acct ta, ra;
	u32 tl = 0, rl = 0, n, i;
	u64 t = 1000000;

	tbr_ring_acct_init(&ta, DEPTH, 0, t);
	tbr_ring_acct_init(&ra, DEPTH, 0, t);
	for (i = 0; i < steps; i++) {
		t += US;
		n = offer < DEPTH - tl ? offer : DEPTH - tl;
		tl += n;
		tbr_ring_acct_set(&ta, tl, t);
		n = drain < tl ? drain : tl;
		n = n < DEPTH - rl ? n : DEPTH - rl;	/* RX full: the wire waits */
		tl -= n;
		rl += n;
		tbr_ring_acct_set(&ta, tl, t + US / 2);
		tbr_ring_acct_set(&ra, rl, t + US / 2);
		n = consume < rl ? consume : rl;
		rl -= n;
		tbr_ring_acct_set(&ra, rl, t + US * 3 / 4);
	}
	tbr_ring_acct_read(&ta, t + US, tx);
	tbr_ring_acct_read(&ra, t + US, rx);
}

static void test_stalled_receiver(void **state)
{
	struct tbr_ring_occ tx, rx;

	/*
	 * The receiver hands up 1 frame per us of the 8 offered: both rings
	 * fill up; the TX ring is full until the wire takes its one frame in
	 * the middle of each us (the sender refills it at the next).
	 */
	run(8, 8, 1, 10000, &tx, &rx);
	assert_int_equal(tx.elapsed_ns, 10001 * US);
	assert_true(tx.full_ppm > 490000);
	assert_true(tx.mean_ppm > 950000);
	assert_true(rx.full_ppm > 240000);	/* full from the wire to the consumer */
	assert_true(rx.mean_ppm > 950000);
	assert_true(tx.empty_ppm < 1000);	/* before the first frames */
}

static void test_starved_sender(void **state)
{
	struct tbr_ring_occ tx, rx;

	/* 1 frame per us, everything drains at once: the rings sit (almost) empty */
	run(1, 8, 8, 10000, &tx, &rx);
	assert_int_equal(tx.full_ppm, 0);
	assert_true(tx.empty_ppm >= 490000);	/* empty half of each us */
	assert_true(tx.mean_ppm < 20000);
	assert_int_equal(rx.full_ppm, 0);
	assert_true(rx.empty_ppm >= 740000);
}

static void test_edges(void **state)
{
	struct tbr_ring_acct a;
	struct tbr_ring_occ o;

	/* nothing elapsed: zeros */
	tbr_ring_acct_init(&a, 8, 3, 5000);
	tbr_ring_acct_read(&a, 5000, &o);
	assert_int_equal(o.elapsed_ns, 0);
	assert_int_equal(o.mean_ppm, 0);
	/* half the time at 4 of 8, half full: mean 3/4, full 1/2 */
	tbr_ring_acct_init(&a, 8, 4, 0);
	tbr_ring_acct_set(&a, 8, 1000 * US);
	tbr_ring_acct_read(&a, 2000 * US, &o);
	assert_int_equal(o.full_ppm, 500000);
	assert_int_equal(o.empty_ppm, 0);
	assert_int_equal(o.mean_ppm, 750000);
	/* a time from a CPU slightly behind adds none */
	tbr_ring_acct_set(&a, 8, 900 * US);
	tbr_ring_acct_read(&a, 2000 * US, &o);
	assert_int_equal(o.full_ppm, 500000);
	/* long runs do not overflow: a 4096 ring full for a year */
	tbr_ring_acct_init(&a, 4096, 4096, 0);
	tbr_ring_acct_read(&a, 365ull * 86400 * 1000000000ull, &o);
	assert_int_equal(o.full_ppm, 1000000);
	assert_int_equal(o.mean_ppm, 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stalled_receiver),
		cmocka_unit_test(test_starved_sender),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
