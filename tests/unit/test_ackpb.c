// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_ackpb.c - ACKs riding on data frames (TBR_F_ACK, docs/protocol.md
 * 3.3): a ping-pong sends half the frames, a peer that stops answering
 * still gets its ACK within the bound, nothing is lost under faults, and
 * a frame whose ACK is bogus is refused whole.
 */
#include "tcommon.h"
#include "tbr_priv.h"	/* TBR_ACK_DEFER_MAX_NS */

#define PP_LEN_MAX	10000
#define PP_RKEY		9

static bool rides_on;

/* every test starts with rides on, whatever the one before left (or failed in) */
static int rides_default(void **state)
{
	rides_on = true;
	return 0;
}

static void conn_rides(struct tbr_tqp_conn *c)
{
	c->ack_piggyback = rides_on;
	c->timeout_ns = 50000000;	/* 50 ms: repairs are probes, not timeouts */
}

struct pp {
	struct sim *s;
	uint8_t *buf[2];	/* what the other end writes or sends into */
	uint8_t *src[2];
	uint64_t think_ns;	/* an end answers this long after the data */
	unsigned int nsent[2], nrecv[2];
	unsigned int frames_flagged;	/* frames seen with TBR_F_ACK */
};

static void tap_flags(struct sim *s, int dst, const uint8_t *buf, uint32_t len)
{
	struct pp *p = s->tap_ctx;

	if (len >= TBR_BASE_HDR_LEN && (buf[2] & TBR_F_ACK))
		p->frames_flagged++;
}

static void pp_init_cfg(struct pp *p, enum tbr_tqp_type type, uint64_t seed,
			void (*tweak_cfg)(struct tbr_tqp_cfg *))
{
	int i;

	memset(p, 0, sizeof(*p));
	p->s = tsim(type, seed, tweak_cfg, conn_rides);
	p->think_ns = 1500;
	for (i = 0; i < 2; i++) {
		p->buf[i] = calloc(1, PP_LEN_MAX);
		p->src[i] = calloc(1, PP_LEN_MAX);
		assert_non_null(p->buf[i]);
		assert_non_null(p->src[i]);
		assert_int_equal(sim_add_mr(&p->s->ep[i], PP_RKEY, p->buf[i],
					    PP_LEN_MAX, SIM_ACC_WRITE), 0);
	}
	p->s->tap = tap_flags;
	p->s->tap_ctx = p;
}

static void pp_init(struct pp *p, uint64_t seed)
{
	pp_init_cfg(p, TBR_QPT_RC, seed, NULL);
}

static void pp_free(struct pp *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		free(p->buf[i]);
		free(p->src[i]);
	}
	sim_free(p->s);
}

/* 4 rails of different delay, 5% drop, 5% duplication, jitter: reordering */
static void lossy_rails(struct sim *s)
{
	s->f.drop_pct = 5;
	s->f.dup_pct = 5;
	s->f.jitter_ns = 3000;
	s->f.rails = 4;
	s->f.rail_skew_ns = 700;
}

/* The pattern of message @n of end @from: every byte depends on both. */
static uint8_t pp_byte(int from, unsigned int n, uint32_t i)
{
	return (uint8_t)(n * 31 + i * 7 + from * 101 + 1);
}

static unsigned int pp_nrecv_cqes(const struct sim_ep *e)
{
	unsigned int k, n = 0;

	for (k = 0; k < e->ncq; k++)
		n += e->cq[k].recv;
	return n;
}

/*
 * End @from sends message number p->nsent[from] (@len bytes, WRITE or SEND)
 * and the run goes on until the other end has all of it.
 */
static void pp_send(struct pp *p, int from, bool send, uint32_t len)
{
	struct sim_ep *a = &p->s->ep[from], *b = &p->s->ep[!from];
	unsigned int n = p->nsent[from]++;
	uint64_t t0 = p->s->now;
	uint32_t i;

	for (i = 0; i < len; i++)
		p->src[from][i] = pp_byte(from, n, i);
	if (send) {
		unsigned int r0 = pp_nrecv_cqes(b), k;

		sim_post_recv(b, 5000 + n, p->buf[!from], len);
		assert_int_equal(tpost(a, TBR_WR_SEND, n, p->src[from], len, 0,
				       0, 0), 0);
		while (pp_nrecv_cqes(b) == r0 && p->s->now - t0 < 10 * T_SEC)
			sim_run_until(p->s, p->s->now + 100);
		assert_int_equal(pp_nrecv_cqes(b), r0 + 1);
		for (k = b->ncq; !b->cq[k - 1].recv; k--)
			;
		assert_int_equal(b->cq[k - 1].status, TBR_WC_SUCCESS);
		assert_int_equal(b->cq[k - 1].wr_id, 5000 + n);
		assert_int_equal(b->cq[k - 1].byte_len, len);
	} else {
		/* as ib_write_lat: the answer starts when the data is there */
		assert_int_equal(tpost(a, TBR_WR_WRITE, n, p->src[from], len,
				       taddr(p->buf[!from]), PP_RKEY, 0), 0);
		while (memcmp(p->buf[!from], p->src[from], len) &&
		       p->s->now - t0 < 10 * T_SEC)
			sim_run_until(p->s, p->s->now + 100);
	}
	for (i = 0; i < len; i++)
		assert_int_equal(p->buf[!from][i], pp_byte(from, n, i));
	p->nrecv[!from]++;
	sim_run_until(p->s, p->s->now + p->think_ns);
}

/* Every send completion of end @i came, in order and successful. */
static void pp_check_completions(struct pp *p, int i)
{
	struct sim_ep *e = &p->s->ep[i];
	unsigned int k, n = 0;

	for (k = 0; k < e->ncq; k++) {
		if (e->cq[k].recv)
			continue;
		assert_int_equal(e->cq[k].status, TBR_WC_SUCCESS);
		assert_int_equal(e->cq[k].wr_id, n);
		n++;
	}
	assert_int_equal(n, p->nsent[i]);
	assert_false(tbr_tqp_in_error(e->qp));
}

static uint64_t pp_frames(struct pp *p)
{
	return p->s->ep[0].tx_frames + p->s->ep[1].tx_frames;
}

/*
 * A WRITE (and a SEND) ping-pong of 64 B: with rides, after the first
 * rounds every frame carries the ACK of the message before it, 2 frames a
 * round trip instead of 4, and no ACK frame goes at all; without, none
 * carries one.
 */
static void run_pingpong_frames(bool rides, bool send)
{
	const struct tbr_tqp_counters *c[2];
	uint64_t f0, acks0;
	unsigned int r;
	struct pp p;

	rides_on = rides;
	pp_init(&p, 7);
	c[0] = tbr_tqp_counters(p.s->ep[0].qp);
	c[1] = tbr_tqp_counters(p.s->ep[1].qp);
	for (r = 0; r < 20; r++) {
		pp_send(&p, 0, send, 64);
		pp_send(&p, 1, send, 64);
	}
	f0 = pp_frames(&p);
	acks0 = c[0]->acks_sent + c[1]->acks_sent;

	for (r = 0; r < 200; r++) {
		pp_send(&p, 0, send, 64);
		pp_send(&p, 1, send, 64);
	}
	if (rides) {
		assert_int_equal(pp_frames(&p) - f0, 2 * 200);
		assert_int_equal(c[0]->acks_sent + c[1]->acks_sent, acks0);
		assert_true(c[0]->acks_piggybacked >= 200);
		assert_true(c[1]->acks_piggybacked >= 200);
		assert_int_equal(c[0]->acks_pb_rcvd, c[1]->acks_piggybacked);
	} else {
		assert_int_equal(pp_frames(&p) - f0, 4 * 200);
		assert_int_equal(c[0]->acks_piggybacked, 0);
		assert_int_equal(c[1]->acks_piggybacked, 0);
		assert_int_equal(p.frames_flagged, 0);
	}
	/* the last message's ACK is not forgotten: every WR completes */
	assert_true(sim_run(p.s, T_SEC));
	pp_check_completions(&p, 0);
	pp_check_completions(&p, 1);
	assert_int_equal(c[0]->retransmits + c[1]->retransmits, 0);
	assert_int_equal(c[0]->tail_probes + c[1]->tail_probes, 0);
	pp_free(&p);
}

static void test_pingpong_write_rides(void **state)
{
	run_pingpong_frames(true, false);
}

static void test_pingpong_send_rides(void **state)
{
	run_pingpong_frames(true, true);
}

static void mtu_max(struct tbr_tqp_cfg *c)
{
	c->mtu = TBR_MTU_MAX;
}

/*
 * Messages of a page and a byte (ibv_rc_pingpong -s 4097): the ride on the
 * first frame makes it TBR_MTU_MAX + 40 bytes, within TBR_FRAME_MAX.
 */
static void test_pingpong_page_plus_one(void **state)
{
	const struct tbr_tqp_counters *c[2];
	struct pp p;
	unsigned int r;

	pp_init_cfg(&p, TBR_QPT_RC, 53, mtu_max);
	c[0] = tbr_tqp_counters(p.s->ep[0].qp);
	c[1] = tbr_tqp_counters(p.s->ep[1].qp);
	for (r = 0; r < 40; r++) {
		pp_send(&p, 0, r & 1, 4097);
		pp_send(&p, 1, r & 1, 4097);
	}
	assert_true(sim_run(p.s, T_SEC));
	pp_check_completions(&p, 0);
	pp_check_completions(&p, 1);
	assert_true(c[0]->acks_piggybacked >= 30);
	assert_true(p.s->ep[0].tx_max_len <= TBR_FRAME_MAX);
	assert_int_equal(c[0]->retransmits + c[1]->retransmits, 0);
	pp_free(&p);
}

static void test_pingpong_no_rides(void **state)
{
	run_pingpong_frames(false, false);
}

/*
 * One end stops answering: each ACK it held for an answer goes by itself,
 * no later than twice the longest recent answer time plus ack_delay_ns,
 * without a probe; after TBR_PP_SCORE_MAX - 1 such misses (from a full
 * score) the next ACK it owes goes at once (the ping-pong is over).
 */
static void test_no_answer_acked_in_time(void **state)
{
	const struct tbr_tqp_counters *c;
	uint64_t t0, t, conn_delay;
	struct sim_ep *a;
	unsigned int r, n;
	struct pp p;

	pp_init(&p, 11);
	a = &p.s->ep[0];
	c = tbr_tqp_counters(a->qp);
	conn_delay = 20000;	/* tbr_tqp_conn_defaults() ack_delay_ns */
	for (r = 0; r < 30; r++) {
		pp_send(&p, 0, false, 64);
		pp_send(&p, 1, false, 64);
	}
	/* end 0 writes; end 1 does not answer any more */
	for (r = 0; r < TBR_PP_SCORE_MAX; r++) {
		n = a->ncq;
		t0 = p.s->now;
		pp_send(&p, 0, false, 64);
		while (a->ncq == n && p.s->now - t0 < T_SEC)
			sim_run_until(p.s, p.s->now + 100);
		assert_int_equal(a->ncq, n + 1);
		t = p.s->now - t0;
		/* one-way 2 us: an RTT of 4 us, the answers came 1.5 us
		 * after the data, pp_send then waits think_ns */
		if (r + 1 < TBR_PP_SCORE_MAX) {
			assert_true(t > 4000 + conn_delay);
			assert_true(t <= 4000 + 2 * 1500 + conn_delay + 2000);
		} else {
			assert_true(t < 4000 + p.think_ns + 1000);
		}
	}
	assert_int_equal(c->tail_probes, 0);
	assert_int_equal(c->retransmits, 0);
	assert_true(sim_run(p.s, T_SEC));
	pp_check_completions(&p, 0);
	pp_check_completions(&p, 1);
	pp_free(&p);
}

/*
 * End 0 is flushed with all copies of its last ACK but one lost on the way:
 * end 1's last send (its completion number @n) completes one way after,
 * not by a retransmission.
 */
static void flush_a_expect_b_done(struct pp *p, unsigned int n)
{
	struct sim_ep *b = &p->s->ep[1];
	uint64_t t0;

	p->s->f.drop_to[1] = TBR_ACK_FLUSH_COPIES - 1;
	tbr_tqp_flush(p->s->ep[0].qp);
	t0 = p->s->now;
	while (b->ncq == n && p->s->now - t0 < T_SEC)
		sim_run_until(p->s, p->s->now + 100);
	assert_int_equal(b->ncq, n + 1);
	assert_int_equal(b->cq[n].status, TBR_WC_SUCCESS);
	assert_true(p->s->now - t0 < 10000);
	assert_int_equal(tbr_tqp_counters(b->qp)->retransmits, 0);
	assert_false(tbr_tqp_in_error(b->qp));
}

/*
 * An end that got its last answer and stops at once (ibv_rc_pingpong's
 * client destroys its QP): the ACK it held for an answer goes when it is
 * flushed, TBR_ACK_FLUSH_COPIES times (no retransmission will be answered),
 * and the other end's last message completes without a retry, also when
 * all copies but the last are lost.
 */
static void test_flush_sends_held_ack(void **state)
{
	struct sim_ep *b;
	struct pp p;
	unsigned int r, n;

	pp_init(&p, 59);
	b = &p.s->ep[1];
	for (r = 0; r < 20; r++) {
		pp_send(&p, 0, true, 64);
		pp_send(&p, 1, true, 64);
	}
	/* end 1's last message arrived (pp_send ran until then), held ACK */
	n = b->ncq;
	assert_true(tbr_tqp_counters(p.s->ep[0].qp)->acks_piggybacked >= 15);
	flush_a_expect_b_done(&p, n);
	assert_int_equal(p.s->dropped, TBR_ACK_FLUSH_COPIES - 1);
	pp_free(&p);
}

/*
 * The same without rides: the ACK of the last answer went at once and was
 * lost; the QP flushed right after sends it again (the peer's probe would
 * find no QP), and the peer's last message completes without a retry.
 */
static void test_flush_resends_lost_ack(void **state)
{
	struct sim_ep *b;
	struct pp p;
	unsigned int r, n;

	rides_on = false;
	pp_init(&p, 61);
	b = &p.s->ep[1];
	for (r = 0; r < 20; r++) {
		pp_send(&p, 0, true, 64);
		pp_send(&p, 1, true, 64);
	}
	pp_send(&p, 0, true, 64);
	n = b->ncq;
	p.s->f.drop_to[1] = 1;		/* the ACK of end 1's last message */
	pp_send(&p, 1, true, 64);
	assert_int_equal(p.s->dropped, 1);
	assert_int_equal(b->ncq, n);	/* its send is not complete */
	flush_a_expect_b_done(&p, n);
	assert_int_equal(p.s->dropped, TBR_ACK_FLUSH_COPIES);
	pp_free(&p);
}

/*
 * ib_write_lat's loop, end 0 as its server: post a 64 B WRITE, wait for its
 * completion (the ACK rides on the other end's answer), wait for the other
 * end's WRITE, post the next; end 1 starts by waiting. Under drop,
 * duplication and reordering on 4 rails, for several seeds: every WRITE
 * completes successfully, none runs out of retries.
 */
static void run_perftest_lat_lossy(uint64_t seed, unsigned int iters)
{
	enum { WAIT_DATA, WAIT_COMP };
	uint8_t state[2] = { WAIT_COMP, WAIT_DATA }, buf[2][64], src[2][64];
	unsigned int scnt[2] = { 0, 0 }, rcnt[2] = { 0, 0 }, ncq0, i;
	uint32_t ncq_seen[2] = { 0, 0 };
	struct sim *s;
	uint64_t t0;

	memset(buf, 0, sizeof(buf));
	s = tsim(TBR_QPT_RC, seed, NULL, conn_rides);
	lossy_rails(s);
	for (i = 0; i < 2; i++)
		assert_int_equal(sim_add_mr(&s->ep[i], PP_RKEY, buf[i], 64,
					    SIM_ACC_WRITE), 0);
	/* end 0 posts first */
	src[0][0] = (uint8_t)++scnt[0];
	assert_int_equal(tpost(&s->ep[0], TBR_WR_WRITE, scnt[0], src[0], 64,
			       taddr(buf[1]), PP_RKEY, 0), 0);
	t0 = s->now;
	while ((scnt[0] < iters || scnt[1] < iters || state[0] == WAIT_COMP ||
		state[1] == WAIT_COMP) && s->now - t0 < 60 * T_SEC) {
		sim_run_until(s, s->now + 200);
		for (i = 0; i < 2; i++) {
			struct sim_ep *e = &s->ep[i];

			if (state[i] == WAIT_COMP) {
				if (e->ncq == ncq_seen[i])
					continue;
				ncq0 = ncq_seen[i]++;
				assert_int_equal(e->cq[ncq0].status, TBR_WC_SUCCESS);
				assert_false(e->cq[ncq0].recv);
				state[i] = WAIT_DATA;
			}
			if (rcnt[i] >= iters ||
			    buf[i][0] != (uint8_t)(rcnt[i] + 1))
				continue;
			rcnt[i]++;
			if (scnt[i] >= iters)
				continue;
			src[i][0] = (uint8_t)++scnt[i];
			assert_int_equal(tpost(e, TBR_WR_WRITE, scnt[i], src[i],
					       64, taddr(buf[!i]), PP_RKEY, 0), 0);
			state[i] = WAIT_COMP;
		}
	}
	assert_true(tbr_tqp_counters(s->ep[0].qp)->acks_piggybacked > iters / 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(scnt[i], iters);
		assert_int_equal(ncq_seen[i], iters);
		assert_false(tbr_tqp_in_error(s->ep[i].qp));
	}
	sim_free(s);
}

static void test_perftest_lat_lossy(void **state)
{
	uint64_t seed;

	for (seed = 100; seed < 140; seed++)
		run_perftest_lat_lossy(seed, 200);
}

/*
 * Ping-pongs of WRITEs and SENDs of 1..PP_LEN_MAX bytes (several frames,
 * some rides on later frames) over 4 rails with 5% drop, 5% duplication
 * and reordering: every byte arrives, every WR completes, nothing fails.
 */
static void test_pingpong_lossy(void **state)
{
	const struct tbr_tqp_counters *c[2];
	struct pp p;
	unsigned int r;

	pp_init(&p, 23);
	lossy_rails(p.s);
	c[0] = tbr_tqp_counters(p.s->ep[0].qp);
	c[1] = tbr_tqp_counters(p.s->ep[1].qp);
	for (r = 0; r < 400; r++) {
		uint64_t x = sim_rand(p.s);
		uint32_t len = 1 + (uint32_t)(x % (r % 4 ? 200 : PP_LEN_MAX));

		pp_send(&p, 0, x >> 32 & 1, len);
		pp_send(&p, 1, x >> 33 & 1, len);
	}
	assert_true(sim_run(p.s, 10 * T_SEC));
	pp_check_completions(&p, 0);
	pp_check_completions(&p, 1);
	assert_true(c[0]->acks_piggybacked > 100);
	assert_true(c[1]->acks_piggybacked > 100);
	assert_true(p.s->dropped > 0 && p.s->duplicated > 0);
	pp_free(&p);
}

/*
 * Both ends stream WRITEs at each other at once, a new message every 3 us,
 * under the same faults: every byte lands, every WR completes in order.
 * (Few ACKs ride here: each message's end asks for its ACK at once, and
 * the other end's next message is rarely going out just then.)
 */
static void test_bidirectional_lossy(void **state)
{
	enum { NWR = 100, LEN = 40000 };
	static uint8_t mem[2][NWR * LEN], src[2][NWR * LEN];
	unsigned int posted[2] = { 0, 0 };
	struct sim *s;
	int i;

	s = tsim(TBR_QPT_RC, 31, NULL, conn_rides);
	s->f.drop_pct = 5;
	s->f.dup_pct = 5;
	s->f.jitter_ns = 3000;
	s->f.rails = 4;
	for (i = 0; i < 2; i++) {
		tfill(s, src[i], sizeof(src[i]));
		memset(mem[i], 0, sizeof(mem[i]));
		assert_int_equal(sim_add_mr(&s->ep[i], PP_RKEY, mem[i],
					    sizeof(mem[i]), SIM_ACC_WRITE), 0);
	}
	while (posted[0] < NWR || posted[1] < NWR) {
		bool any = false;

		for (i = 0; i < 2; i++) {
			uint32_t off = posted[i] * LEN;
			uint32_t len = 1 + posted[i] * 977 % LEN;

			if (posted[i] == NWR)
				continue;
			if (tpost(&s->ep[i], TBR_WR_WRITE, posted[i],
				  src[i] + off, len, taddr(mem[!i] + off),
				  PP_RKEY, 0) == -ENOSPC)
				continue;
			posted[i]++;
			any = true;
		}
		/* a new message every few us: frames keep coming both ways */
		sim_run_until(s, s->now + (any ? 3000 : 5000));
	}
	assert_true(sim_run(s, 10 * T_SEC));
	for (i = 0; i < 2; i++) {
		unsigned int k;

		assert_int_equal(s->ep[i].ncq, NWR);
		for (k = 0; k < NWR; k++) {
			uint32_t len = 1 + k * 977 % LEN;

			assert_int_equal(s->ep[i].cq[k].status, TBR_WC_SUCCESS);
			assert_int_equal(s->ep[i].cq[k].wr_id, k);
			assert_memory_equal(mem[!i] + k * LEN, src[i] + k * LEN,
					    len);
		}
		assert_false(tbr_tqp_in_error(s->ep[i].qp));
	}
	sim_free(s);
}

/* A WRITE frame to ep[1] (qpn 0x22) carrying @epsn as its ACK. */
static uint32_t forged_write(struct sim *s, uint8_t *b, uint32_t psn,
			     uint32_t epsn, uint64_t va)
{
	struct tbr_hdr h;
	uint32_t hl;

	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_WRITE;
	h.flags = TBR_F_ACK | TBR_F_ACKREQ;
	h.conn_id = 7;		/* sim.c */
	h.dqpn = 0x22;
	h.psn = psn;
	h.paylen = 16;
	h.msg_len = 16;
	h.rkey = PP_RKEY;
	h.va = va;
	h.epsn = epsn;
	hl = tbr_hdr_build(b, &h);
	memset(b + hl, 0xee, 16);
	return hl + 16;
}

/* A QP pair of @type whose ep[1] takes WRITEs into @mem (64 zeroed bytes). */
static struct sim *ride_target(enum tbr_tqp_type type, uint64_t seed,
			       uint8_t *mem)
{
	struct sim *s = tsim(type, seed, NULL, conn_rides);

	memset(mem, 0, 64);
	assert_int_equal(sim_add_mr(&s->ep[1], PP_RKEY, mem, 64,
				    SIM_ACC_WRITE), 0);
	return s;
}

/* A WRITE carrying @epsn to ep[1] is refused whole: nothing placed, counted. */
static void assert_ride_refused(struct sim *s, const uint8_t *mem, uint32_t epsn)
{
	uint8_t b[TBR_FRAME_MAX];
	uint32_t len = forged_write(s, b, 0xfffff0, epsn, taddr(mem));

	assert_int_equal(sim_inject(s, 1, b, len), -EINVAL);
	sim_run(s, T_SEC);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->rx_invalid, 1);
	assert_int_equal(mem[0], 0);
}

/*
 * A hostile frame: an ACK beyond anything ep[1] sent refuses the whole
 * frame (its data is not placed, rx_invalid counts it), and the QP goes
 * on; the same frame with a plausible ACK is taken.
 */
static void test_bogus_ride_refused(void **state)
{
	uint8_t b[TBR_FRAME_MAX];
	static uint8_t mem[64];
	const struct tbr_tqp_counters *c;
	struct sim *s;
	uint32_t len;

	s = ride_target(TBR_QPT_RC, 41, mem);
	c = tbr_tqp_counters(s->ep[1].qp);
	/* ep[1] sent nothing: its snd_nxt is conn.sq_psn, 0xfffff0 */
	assert_ride_refused(s, mem, 0x000100);
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	/* an ACK of nothing new (epsn == una) is fine */
	len = forged_write(s, b, 0xfffff0, 0xfffff0, taddr(mem));
	assert_int_equal(sim_inject(s, 1, b, len), 0);
	sim_run(s, T_SEC);
	assert_int_equal(c->rx_invalid, 1);
	assert_int_equal(c->acks_pb_rcvd, 1);
	assert_int_equal(mem[0], 0xee);
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	sim_free(s);
}

/* UC has no ACKs: a UC QP connected with ack_piggyback never sends one. */
static void test_uc_never_rides(void **state)
{
	struct pp p;
	unsigned int r;

	pp_init_cfg(&p, TBR_QPT_UC, 47, NULL);
	for (r = 0; r < 50; r++) {
		pp_send(&p, 0, r & 1, 64);
		pp_send(&p, 1, r & 1, 64);
	}
	assert_int_equal(p.frames_flagged, 0);
	assert_int_equal(pp_frames(&p), 100);
	pp_free(&p);
}

/* A UC QP has no ACKs: a frame carrying one is refused. */
static void test_uc_ride_refused(void **state)
{
	static uint8_t mem[64];
	struct sim *s;

	s = ride_target(TBR_QPT_UC, 43, mem);
	assert_ride_refused(s, mem, 0xfffff0);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pingpong_write_rides, rides_default),
		cmocka_unit_test_setup(test_pingpong_send_rides, rides_default),
		cmocka_unit_test_setup(test_pingpong_page_plus_one, rides_default),
		cmocka_unit_test_setup(test_pingpong_no_rides, rides_default),
		cmocka_unit_test_setup(test_no_answer_acked_in_time, rides_default),
		cmocka_unit_test_setup(test_flush_sends_held_ack, rides_default),
		cmocka_unit_test_setup(test_flush_resends_lost_ack, rides_default),
		cmocka_unit_test_setup(test_pingpong_lossy, rides_default),
		cmocka_unit_test_setup(test_perftest_lat_lossy, rides_default),
		cmocka_unit_test_setup(test_bidirectional_lossy, rides_default),
		cmocka_unit_test_setup(test_bogus_ride_refused, rides_default),
		cmocka_unit_test_setup(test_uc_never_rides, rides_default),
		cmocka_unit_test_setup(test_uc_ride_refused, rides_default),
	};

	tfilter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
