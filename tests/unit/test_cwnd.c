// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_cwnd.c - the RC requester's congestion window (docs/protocol.md 3.9)
 * over the in-memory wire: untouched on a lossless link, fewer frames lost
 * into a bottleneck that drops when full, the floor after a timeout, a
 * cut undone when its retransmissions were only reordering, a start
 * from what an earlier connection learned (conn.cwnd_init), and the
 * recovery from a rail that goes dark (with the window and without).
 */
#include "tcommon.h"
#include "tbr_priv.h"	/* struct tbr_tqp: cwnd */

#ifdef TEST_DEBUG
#include <stdio.h>
#define TDBG(...) fprintf(stderr, __VA_ARGS__)
#else
#define TDBG(...) do { } while (0)
#endif

#define MSG_LEN		(64u << 10)
#define NMSG		64

static void big_win(struct tbr_tqp_cfg *c)
{
	c->win = 1024;
}

static void no_cwnd(struct tbr_tqp_conn *c)
{
	c->cwnd_min = 0;
}

/* the congestion window is off by default (docs/protocol.md 3.9) */
static void cwnd_on(struct tbr_tqp_conn *c)
{
	c->cwnd_min = TBR_CWND_MIN;
}

/*
 * NMSG WRITEs of MSG_LEN from ep0 to ep1, posted as the send queue takes
 * them, every byte verified and every completion successful. Returns the
 * virtual time it took.
 */
static uint64_t stream_writes(struct sim *s)
{
	struct sim_ep *rq = &s->ep[0], *rs = &s->ep[1];
	size_t len = (size_t)MSG_LEN * NMSG;
	uint8_t *a = malloc(len), *b = calloc(1, len);
	unsigned int i = 0, ncq0 = rq->ncq;
	uint32_t rkey = 0x70 + rs->nmr;
	uint64_t t0 = s->now;

	assert_non_null(a);
	assert_non_null(b);
	tfill(s, a, len);
	assert_true(sim_add_mr(rs, rkey, b, len, SIM_ACC_WRITE) >= 0);
	while (i < NMSG) {
		int ret = tpost(rq, TBR_WR_WRITE, i, a + (size_t)i * MSG_LEN,
				MSG_LEN, taddr(b + (size_t)i * MSG_LEN), rkey, 0);

		if (ret == -ENOSPC) {
			assert_true(rq->ncq - ncq0 < i || tbr_tqp_sq_space(rq->qp));
			sim_run(s, 1000);
			continue;
		}
		assert_int_equal(ret, 0);
		i++;
	}
	assert_true(sim_run(s, 60 * T_SEC));
	assert_int_equal(rq->ncq - ncq0, NMSG);
	for (i = 0; i < NMSG; i++) {
		assert_int_equal(rq->cq[ncq0 + i].status, TBR_WC_SUCCESS);
		assert_int_equal(rq->cq[ncq0 + i].wr_id, i);
	}
	assert_memory_equal(a, b, len);
	assert_false(tbr_tqp_in_error(rq->qp));
	free(a);
	free(b);
	return s->now - t0;
}

/* No loss, no cut: the whole window stays open. */
static void test_cwnd_lossless(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 1, big_win, cwnd_on);
	struct tbr_tqp *qp = s->ep[0].qp;

	s->f.rails = 4;
	stream_writes(s);
	assert_int_equal(tbr_tqp_counters(qp)->cwnd_cuts, 0);
	assert_int_equal(tbr_tqp_counters(qp)->retransmits, 0);
	assert_int_equal(qp->cwnd, 1024);
	sim_free(s);
}

static uint32_t learned;

static void init_learned(struct tbr_tqp_conn *c)
{
	c->cwnd_min = TBR_CWND_MIN;
	c->cwnd_init = learned;
}

/*
 * A bottleneck of 32 frames in front of the responder, draining one frame
 * per microsecond: a whole window in flight overflows it. With the
 * congestion window far fewer frames are lost and sent again; a connection
 * that starts from the window the first one ended with (what the kernel
 * keeps per link) loses fewer still and ends sooner. Without the window
 * the stream ends sooner still here (4.3 against 9.7 ms: 40,142 frames
 * lost, 0 timeouts), since RACK finds lost retransmissions again and this
 * wire charges nothing for a lost frame; before it did, the window was the
 * faster (9.9 against 12.0 ms, 42 timeouts).
 */
static void test_cwnd_bottleneck(void **state)
{
	void (*tweak[3])(struct tbr_tqp_conn *) = { cwnd_on, no_cwnd, init_learned };
	uint64_t t[3], drops[3], cuts[3], rtx[3];
	int k;

	for (k = 0; k < 3; k++) {
		struct sim *s = tsim(TBR_QPT_RC, 7, big_win, tweak[k]);
		const struct tbr_tqp_counters *c = tbr_tqp_counters(s->ep[0].qp);

		s->f.bneck_ns = 1000;
		s->f.bneck_cap = 32;
		t[k] = stream_writes(s);
		drops[k] = s->bneck_drops;
		cuts[k] = c->cwnd_cuts;
		rtx[k] = c->retransmits;
		if (!k)
			learned = tbr_tqp_cwnd(s->ep[0].qp);
		TDBG("cwnd %d: %llu ns, drops %llu, rtx %llu, cuts %llu, tmo %llu\n",
		     k, (unsigned long long)t[k],
		     (unsigned long long)drops[k], (unsigned long long)rtx[k],
		     (unsigned long long)cuts[k], (unsigned long long)c->timeouts);
		sim_free(s);
	}
	assert_true(cuts[0] > 0);
	assert_int_equal(cuts[1], 0);
	assert_true(drops[1] > 0);
	assert_true(drops[0] * 4 < drops[1]);
	assert_true(rtx[0] * 4 < rtx[1]);
	assert_true(learned >= TBR_CWND_MIN && learned < 1024);
	assert_true(drops[2] * 4 < drops[0]);
	assert_true(t[2] <= t[0]);
}

static void init_40(struct tbr_tqp_conn *c)
{
	c->cwnd_min = TBR_CWND_MIN;
	c->cwnd_init = 40;
}

static void init_4(struct tbr_tqp_conn *c)
{
	c->cwnd_min = TBR_CWND_MIN;
	c->cwnd_init = 4;
}

static void init_2048(struct tbr_tqp_conn *c)
{
	c->cwnd_min = TBR_CWND_MIN;
	c->cwnd_init = 2048;
}

/*
 * cwnd_init: the window starts there (not below cwnd_min, not above the
 * window) and, with nothing lost, grows by one PSN per window only.
 */
static void test_cwnd_init(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 5, big_win, init_40);
	struct tbr_tqp *qp = s->ep[0].qp;

	assert_int_equal(tbr_tqp_cwnd(qp), 40);
	stream_writes(s);
	assert_int_equal(tbr_tqp_counters(qp)->cwnd_cuts, 0);
	assert_true(tbr_tqp_cwnd(qp) > 40);
	assert_true(tbr_tqp_cwnd(qp) < 1024);
	sim_free(s);

	s = tsim(TBR_QPT_RC, 5, big_win, init_4);
	assert_int_equal(tbr_tqp_cwnd(s->ep[0].qp), TBR_CWND_MIN);
	sim_free(s);
	s = tsim(TBR_QPT_RC, 5, big_win, init_2048);
	assert_int_equal(tbr_tqp_cwnd(s->ep[0].qp), 1024);
	sim_free(s);
}

/*
 * A noisy link (5% of the frames lost, scattered, duplicates, reordering)
 * is no congestion: the window stays (nearly) whole, unlike after the
 * bursts a full queue drops.
 */
static void test_cwnd_noise(void **state)
{
	unsigned int seed;

	for (seed = 0; seed < 4; seed++) {
		uint64_t tmo[2], cuts = 0, t[2];
		int k;

		for (k = 0; k < 2; k++) {
			struct sim *s = tsim(TBR_QPT_RC, 90 + seed, big_win,
					     k ? no_cwnd : cwnd_on);
			const struct tbr_tqp_counters *c =
				tbr_tqp_counters(s->ep[0].qp);

			s->f.rails = 4;
			s->f.drop_pct = 5;
			s->f.dup_pct = 5;
			s->f.jitter_ns = 3000;
			t[k] = stream_writes(s);
			tmo[k] = c->timeouts;
			if (!k)
				cuts = c->cwnd_cuts;
			assert_true(s->dropped > 100);
			sim_free(s);
		}
		TDBG("noise seed %u: cuts %llu tmo %llu/%llu t %llu/%llu\n", seed,
		     (unsigned long long)cuts, (unsigned long long)tmo[0],
		     (unsigned long long)tmo[1], (unsigned long long)t[0],
		     (unsigned long long)t[1]);
		/* scattered losses are no congestion */
		assert_true(cuts <= 1);
		/*
		 * lost retransmissions are found by RACK again, not by the
		 * timeout (2-3 timeouts per seed when they waited for it)
		 */
		assert_true(tmo[0] <= 1 && tmo[1] <= 1);
		/* and the window costs no more timeouts or time than none */
		assert_true(tmo[0] <= tmo[1] + 1);
		assert_true(t[0] <= t[1] + t[1] / 4);
	}
}

/*
 * Every frame lost for a while: the retransmit timeouts cut nothing (a
 * noisy link's lost retransmissions are no congestion), and the frames
 * go again with the whole window once the link carries them.
 */
static void test_cwnd_timeout(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 3, big_win, cwnd_on);
	struct sim_ep *rq = &s->ep[0], *rs = &s->ep[1];
	struct tbr_tqp *qp = rq->qp;
	static uint8_t a[MSG_LEN], b[MSG_LEN];

	tfill(s, a, sizeof(a));
	assert_int_equal(sim_add_mr(rs, 0x77, b, sizeof(b), SIM_ACC_WRITE), 0);
	s->f.rail_down_mask = 1;
	assert_int_equal(tpost(rq, TBR_WR_WRITE, 1, a, MSG_LEN, taddr(b),
			       0x77, 0), 0);
	while (tbr_tqp_counters(qp)->timeouts < 2)
		sim_run(s, 10000);
	assert_int_equal(tbr_tqp_counters(qp)->cwnd_cuts, 0);
	assert_int_equal(qp->cwnd, 1024);
	s->f.rail_down_mask = 0;
	assert_true(sim_run(s, 60 * T_SEC));
	assert_int_equal(rq->ncq, 1);
	assert_int_equal(rq->cq[0].status, TBR_WC_SUCCESS);
	assert_memory_equal(a, b, sizeof(b));
	sim_free(s);
}

/*
 * A bottleneck that holds two frames: the window is cut again and again,
 * never below its floor, and every byte still arrives.
 */
static void test_cwnd_floor(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 11, big_win, cwnd_on);
	struct tbr_tqp *qp = s->ep[0].qp;

	s->f.bneck_ns = 1000;
	s->f.bneck_cap = 2;
	stream_writes(s);
	assert_true(tbr_tqp_counters(qp)->cwnd_cuts >= 6);
	assert_true(qp->cwnd >= TBR_CWND_MIN);
	assert_true(qp->cwnd < 64);
	sim_free(s);
}

static void cwnd_on_10ms(struct tbr_tqp_conn *c)
{
	c->cwnd_min = TBR_CWND_MIN;
	c->timeout_ns = 10000000;
}

static void no_cwnd_10ms(struct tbr_tqp_conn *c)
{
	c->timeout_ns = 10000000;
}

/*
 * One of two rails goes dark for 6 ms mid-stream, less than the 10 ms
 * retransmit timeout (a cable cut until the fabric re-routes, tests/vm
 * route-ring): its frames in the air and the fast retransmits sent on it
 * are lost, while the other rail delivers. The lost retransmissions are
 * found by RACK again once frames sent after them arrive, or by the
 * retransmit timeout, which deliveries past the holes (tail probes, each
 * answered) no longer hold back: the stream resumes within one timeout of
 * the dark's end, with the window or without. It took 770 ms with the
 * window and 519 ms without when they did: one probe per hole, from the
 * end of the flight, and no timeout at all.
 */
static void test_cwnd_dark(void **state)
{
	int k;

	for (k = 0; k < 2; k++) {
		struct sim *s = tsim(TBR_QPT_RC, 21, big_win,
				     k ? no_cwnd_10ms : cwnd_on_10ms);
		const struct tbr_tqp_counters *c =
			tbr_tqp_counters(s->ep[0].qp);
		uint64_t t;

		/* one frame per microsecond each way: the stream takes ~1 ms */
		s->f.bneck_ns = 1000;
		s->f.bneck_cap = 4096;
		s->f.rails = 2;
		s->f.dark_rails = 1;
		s->f.dark_from = s->now + 300000;
		s->f.dark_until = s->f.dark_from + 6000000;
		t = stream_writes(s);
		TDBG("dark cwnd %d: %llu ns, fast %llu, tlp %llu, tmo %llu, cuts %llu\n",
		     !k, (unsigned long long)t,
		     (unsigned long long)c->fast_retransmits,
		     (unsigned long long)c->tail_probes,
		     (unsigned long long)c->timeouts,
		     (unsigned long long)c->cwnd_cuts);
		assert_true(s->dropped > 100);
		assert_true(c->timeouts <= 1);
		/* dark until 6.3 ms, one 10 ms timeout, the stream's 4 ms */
		assert_true(t < 25000000);
		sim_free(s);
	}
}

/*
 * Frames only reordered, never lost: a cut made on a fast retransmit the
 * peer reports as a duplicate is undone, so reordering rails keep the
 * whole window.
 */
static void test_cwnd_undo(void **state)
{
	unsigned int seed, undone = 0;

	for (seed = 0; seed < 64; seed++) {
		struct sim *s = tsim(TBR_QPT_RC, 40 + seed, big_win, cwnd_on);
		struct tbr_tqp *qp = s->ep[0].qp;
		const struct tbr_tqp_counters *c = tbr_tqp_counters(qp);

		s->f.rails = 2 + seed % 3;
		s->f.rail_skew_ns = 10000 * (1 + seed / 16);
		s->f.jitter_ns = 10000;
		stream_writes(s);
		TDBG("seed %u: fast %llu spurious %llu cuts %llu cwnd %u\n", seed,
		     (unsigned long long)c->fast_retransmits,
		     (unsigned long long)c->spurious_retransmits,
		     (unsigned long long)c->cwnd_cuts, qp->cwnd);
		assert_int_equal(s->dropped, 0);
		assert_int_equal(c->timeouts, 0);
		if (c->cwnd_cuts && c->spurious_retransmits == c->fast_retransmits) {
			/*
			 * Every cut undone. Without the undo the window would
			 * still be near half: it grows by one PSN per window,
			 * a few dozen over this stream.
			 */
			assert_int_equal(qp->cwnd, 1024);
			undone++;
		}
		sim_free(s);
	}
	assert_true(undone > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cwnd_lossless),
		cmocka_unit_test(test_cwnd_bottleneck),
		cmocka_unit_test(test_cwnd_timeout),
		cmocka_unit_test(test_cwnd_floor),
		cmocka_unit_test(test_cwnd_init),
		cmocka_unit_test(test_cwnd_noise),
		cmocka_unit_test(test_cwnd_undo),
		cmocka_unit_test(test_cwnd_dark),
	};

	tfilter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
