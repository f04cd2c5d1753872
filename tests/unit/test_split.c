// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_split.c - split frames on a Thunderbolt ring (kernel/core/tbr_split.c):
 * a head joins only the tail right behind it; lone tails, heads without a
 * tail, long heads and pairs around a damaged frame are dropped and counted.
 */
#include "tcommon.h"
#include "tbr_split.h"

#define H(pdf)	(TBR_SPLIT_PDF_HEAD | (pdf))
#define T	TBR_SPLIT_PDF_TAIL

static int b[8];	/* ring buffers: their addresses stand for them */

static enum tbr_split_act rx(struct tbr_split_rx *st, int i, u8 pdf, u32 size, bool bad,
			     struct tbr_split_out *o)
{
	return tbr_split_rx(st, &b[i], pdf, size, bad, o);
}

static void test_pairs(void **state)
{
	struct tbr_split_rx st = { 0 };
	struct tbr_split_out o;

	/* head then tail: joined, the head's PDF, its buffer given back */
	assert_int_equal(rx(&st, 0, H(1), 32, false, &o), TBR_SPLIT_HOLD);
	assert_ptr_equal(st.held, &b[0]);
	assert_int_equal(o.errors, 0);
	assert_int_equal(rx(&st, 1, T, 4096, false, &o), TBR_SPLIT_JOIN);
	assert_ptr_equal(o.head, &b[0]);
	assert_int_equal(o.head_len, 32);
	assert_int_equal(o.pdf, 1);
	assert_null(o.drop);
	assert_int_equal(o.errors, 0);
	assert_null(st.held);
	/* plain frames pass */
	assert_int_equal(rx(&st, 2, 3, 100, false, &o), TBR_SPLIT_DELIVER);
	assert_int_equal(o.pdf, 3);
	assert_int_equal(o.errors, 0);
	/* a routed frame's head */
	assert_int_equal(rx(&st, 3, H(4), 48, false, &o), TBR_SPLIT_HOLD);
	assert_int_equal(rx(&st, 4, T, 4096, false, &o), TBR_SPLIT_JOIN);
	assert_int_equal(o.pdf, 4);
}

static void test_losses(void **state)
{
	struct tbr_split_rx st = { 0 };
	struct tbr_split_out o;

	/* a lone tail is never read as a frame */
	assert_int_equal(rx(&st, 0, T, 4096, false, &o), TBR_SPLIT_DISCARD);
	assert_int_equal(o.errors, 1);
	/* head, head, tail: the first head dropped, the second joins */
	rx(&st, 1, H(1), 32, false, &o);
	assert_int_equal(rx(&st, 2, H(1), 40, false, &o), TBR_SPLIT_HOLD);
	assert_ptr_equal(o.drop, &b[1]);
	assert_int_equal(o.errors, 1);
	assert_int_equal(rx(&st, 3, T, 4096, false, &o), TBR_SPLIT_JOIN);
	assert_ptr_equal(o.head, &b[2]);
	assert_int_equal(o.head_len, 40);
	/* head, plain frame: the head dropped, the frame delivered */
	rx(&st, 4, H(1), 32, false, &o);
	assert_int_equal(rx(&st, 5, 1, 64, false, &o), TBR_SPLIT_DELIVER);
	assert_ptr_equal(o.drop, &b[4]);
	assert_int_equal(o.errors, 1);
	/* head, damaged frame, tail: nothing joins */
	rx(&st, 6, H(1), 32, false, &o);
	assert_int_equal(rx(&st, 7, T, 4096, true, &o), TBR_SPLIT_BAD);
	assert_ptr_equal(o.drop, &b[6]);
	assert_int_equal(rx(&st, 0, T, 4096, false, &o), TBR_SPLIT_DISCARD);
	assert_null(st.held);
}

static void test_hostile(void **state)
{
	struct tbr_split_rx st = { 0 };
	struct tbr_split_out o;

	/* heads longer than the room, or empty */
	assert_int_equal(rx(&st, 0, H(1), TBR_SPLIT_HEADROOM + 1, false, &o), TBR_SPLIT_DISCARD);
	assert_int_equal(rx(&st, 0, H(1), 0, false, &o), TBR_SPLIT_DISCARD);
	assert_null(st.held);
	assert_int_equal(rx(&st, 1, H(1), TBR_SPLIT_HEADROOM, false, &o), TBR_SPLIT_HOLD);
	/* a head of a code beyond the link's (H(7)): held, and a plain code drops it */
	assert_int_equal(rx(&st, 2, H(7), 8, false, &o), TBR_SPLIT_HOLD);
	assert_ptr_equal(o.drop, &b[1]);
	assert_int_equal(rx(&st, 3, 0, 4096, false, &o), TBR_SPLIT_DELIVER);
	assert_ptr_equal(o.drop, &b[2]);
	assert_int_equal(o.pdf, 0);
}

int main(void)
{
	const struct CMUnitTest split[] = {
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_losses),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(split, NULL, NULL);
}
