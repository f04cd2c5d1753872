// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_netx.c - tbrN's fragment frames, the receive side
 * (kernel/core/tbr_netx.c): header checks, reassembly in order, and the
 * rule that gives a packet up: as soon as every up rail delivered a later
 * packet's fragment or nothing at all for TBR_NETX_SILENT_MS, never while a
 * rail that may still hold a fragment keeps delivering (up to
 * TBR_NETX_HOLD_MS), and TBR_NETX_CUT_MS after a rail went down.
 */
#include "tcommon.h"
#include "tbr_netx.h"

#define FSZ	1000	/* fragment size of the tests' packets */
#define T0	100000	/* ms: the clock's start */

struct pkt {
	u32 len;
	u8 data[];
};

static struct {
	u32 delivered[256];
	u32 nd;
	u64 cnt[TBR_NETX_CNT_MAX];
	int live;		/* packets allocated, not yet delivered or dropped */
	int fail_alloc;
} h;

static void *op_alloc(void *ctx, u32 len)
{
	struct pkt *p;

	if (h.fail_alloc)
		return NULL;
	p = calloc(1, sizeof(*p) + len);
	assert_non_null(p);
	p->len = len;
	h.live++;
	return p;
}

static void op_copy(void *ctx, void *pkt, u32 off, const u8 *src, u32 n)
{
	struct pkt *p = pkt;

	assert_true(off + n <= p->len);
	memcpy(p->data + off, src, n);
}

static int op_finish(void *ctx, void *pkt, const struct tbr_netx_frag *f)
{
	return f->flags & 0x80 ? -EINVAL : 0;	/* the tests' "bad offloads" */
}

/* a packet's bytes: its number big-endian, then (seq + i) & 0xff at byte i */
static void op_deliver(void *ctx, void *pkt)
{
	struct pkt *p = pkt;
	u32 seq = tbr_get_be32(p->data), i;

	for (i = 4; i < p->len; i++)
		assert_int_equal(p->data[i], (u8)(seq + i));
	assert_true(h.nd < 256);
	h.delivered[h.nd++] = seq;
	h.live--;
	free(p);
}

static void op_drop(void *ctx, void *pkt)
{
	h.live--;
	free(pkt);
}

static void op_count(void *ctx, enum tbr_netx_cnt c, u32 n)
{
	assert_true(c < TBR_NETX_CNT_MAX);
	h.cnt[c] += n;
}

static const struct tbr_netx_ops ops = {
	.alloc = op_alloc, .copy = op_copy, .finish = op_finish,
	.deliver = op_deliver, .drop = op_drop, .count = op_count,
};

static struct tbr_netx_win *w;
static u64 frames[TBR_NETX_RAILS];

static int setup(void **state)
{
	memset(&h, 0, sizeof(h));
	memset(frames, 0, sizeof(frames));
	w = calloc(1, sizeof(*w));
	tbr_netx_win_init(w);
	return w ? 0 : -1;
}

static int teardown(void **state)
{
	tbr_netx_win_reset(w, &ops, NULL);
	assert_int_equal(h.live, 0);
	free(w);
	return 0;
}

/* fragment @frag of packet @seq (@len bytes) into @buf: its frame length */
static u32 mkfrag(u8 *buf, u32 seq, u8 frag, u32 len)
{
	u32 nfrags = (len + FSZ - 1) / FSZ, off = frag * FSZ, n, i;

	n = (u32)frag + 1 < nfrags ? FSZ : len - off;
	memset(buf, 0, TBR_NETX_HDR_SIZE);
	buf[0] = TBR_NETX_VER;
	buf[2] = frag;
	buf[3] = nfrags;
	tbr_put_be32(seq, buf + 4);
	tbr_put_be32(len, buf + 8);
	tbr_put_be16(FSZ, buf + 12);
	for (i = 0; i < n; i++)
		buf[TBR_NETX_HDR_SIZE + i] = (u8)(seq + off + i);
	if (!off)
		tbr_put_be32(seq, buf + TBR_NETX_HDR_SIZE);
	return TBR_NETX_HDR_SIZE + n;
}

/* fragment @frag of packet @seq (@len bytes) arrives on @rail at @now */
static void rx(u32 seq, u8 frag, u32 len, u32 rail, u64 now)
{
	u8 buf[TBR_NETX_HDR_SIZE + FSZ];
	struct tbr_netx_frag f;
	u32 n = mkfrag(buf, seq, frag, len);

	assert_int_equal(tbr_netx_parse(buf, n, &f), 0);
	tbr_netx_win_rx(w, &f, buf + TBR_NETX_HDR_SIZE, rail, now, &ops, NULL);
	frames[rail]++;
}

static void test_parse(void **state)
{
	u8 buf[TBR_NETX_HDR_SIZE + FSZ];
	struct tbr_netx_frag f;
	u32 n;

	n = mkfrag(buf, 7, 1, 2500);
	assert_int_equal(tbr_netx_parse(buf, n, &f), 0);
	assert_int_equal(f.seq, 7);
	assert_int_equal(f.len, 2500);
	assert_int_equal(f.nfrags, 3);
	assert_int_equal(f.off, FSZ);
	assert_int_equal(f.n, FSZ);
	assert_int_equal(tbr_netx_parse(buf, n - 1, &f), -EINVAL);	/* not its place */
	assert_int_equal(tbr_netx_parse(buf, TBR_NETX_HDR_SIZE, &f), -EINVAL);
	buf[0] = 2;
	assert_int_equal(tbr_netx_parse(buf, n, &f), -EINVAL);	/* version */
	n = mkfrag(buf, 7, 2, 2500);
	assert_int_equal(tbr_netx_parse(buf, n, &f), 0);
	assert_int_equal(f.n, 500);
	buf[3] = 4;						/* nfrags != ceil(len / size) */
	assert_int_equal(tbr_netx_parse(buf, n, &f), -EINVAL);
	buf[3] = 3;
	buf[2] = 3;						/* frag >= nfrags */
	assert_int_equal(tbr_netx_parse(buf, n, &f), -EINVAL);
	n = mkfrag(buf, 7, 0, 13);				/* under an Ethernet header */
	assert_int_equal(tbr_netx_parse(buf, n, &f), -EINVAL);
	n = mkfrag(buf, 7, 0, 100);
	tbr_put_be16(0, buf + 12);				/* frag_size 0 */
	assert_int_equal(tbr_netx_parse(buf, n, &f), -EINVAL);
	tbr_put_be16(FSZ, buf + 12);
	tbr_put_be32(TBR_NETX_PKT_MAX + 1, buf + 8);		/* too large */
	assert_int_equal(tbr_netx_parse(buf, n, &f), -EINVAL);
}

/* Two rails, both up, sampled at @now. */
static void two_rails(u64 now)
{
	tbr_netx_win_sample(w, 3, frames, now);
}

static void test_order(void **state)
{
	u64 now = T0;

	two_rails(now);
	/* packet 0 in 3 fragments over both rails, packet 1 complete first */
	rx(0, 0, 2500, 0, now);
	rx(1, 0, 800, 1, now);
	rx(0, 2, 2500, 1, now);
	assert_int_equal(h.nd, 0);
	rx(0, 1, 2500, 0, now);
	assert_int_equal(h.nd, 2);
	assert_int_equal(h.delivered[0], 0);
	assert_int_equal(h.delivered[1], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_REORDERED], 1);
	/* a duplicate of a fragment of a packet handed up: late */
	rx(0, 1, 2500, 0, now);
	assert_int_equal(h.cnt[TBR_NETX_RX_LATE], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP] + h.cnt[TBR_NETX_RX_MISSING], 0);
	assert_int_equal(tbr_netx_win_when(w, now), 0);	/* nothing waits */
	/* bad offloads: complete, dropped, counted, the next one goes on */
	{
		u8 buf[TBR_NETX_HDR_SIZE + FSZ];
		struct tbr_netx_frag f;
		u32 n = mkfrag(buf, 2, 0, 100);

		buf[1] = 0x80;
		assert_int_equal(tbr_netx_parse(buf, n, &f), 0);
		tbr_netx_win_rx(w, &f, buf + TBR_NETX_HDR_SIZE, 0, now, &ops, NULL);
	}
	rx(3, 0, 100, 1, now);
	assert_int_equal(h.cnt[TBR_NETX_RX_BAD], 1);
	assert_int_equal(h.nd, 3);
	assert_int_equal(h.delivered[2], 3);
}

/* A fragment lost on rail 1: given up once rail 1 carried a later packet. */
static void test_rails_past(void **state)
{
	u64 now = T0;

	two_rails(now);
	rx(0, 0, 1500, 0, now);		/* its fragment 1 (rail 1) is lost */
	rx(1, 0, 100, 0, now + 1);
	assert_int_equal(h.nd, 0);	/* rail 1 may still hold it */
	assert_false(tbr_netx_win_past(w, 0, now + 1));
	rx(2, 0, 100, 1, now + 2);	/* rail 1 moved past packet 0 */
	assert_int_equal(h.nd, 2);
	assert_int_equal(h.delivered[0], 1);
	assert_int_equal(h.delivered[1], 2);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_RAILS], 1);
	/* its fragment after all (injected reordering): late, dropped */
	rx(0, 1, 1500, 1, now + 3);
	assert_int_equal(h.cnt[TBR_NETX_RX_LATE], 1);
	assert_int_equal(h.nd, 2);
}

/*
 * A packet lost whole, the next one on the other rail: the first rail
 * delivers nothing (an idle connection), so it is given up
 * TBR_NETX_SILENT_MS after the rail's last frame, not TBR_NETX_HOLD_MS.
 */
static void test_silent(void **state)
{
	u64 now = T0, when;

	rx(0, 0, 100, 0, now);
	two_rails(now);			/* rail 0 counted 1 frame */
	/* packet 1 lost on rail 0; packet 2 arrives on rail 1 */
	rx(2, 0, 100, 1, now + 5);
	assert_int_equal(h.nd, 1);
	when = tbr_netx_win_when(w, now + 5);
	assert_true(when > now + 5 && when <= now + TBR_NETX_SILENT_MS);
	two_rails(now + 10);		/* rail 0: nothing new */
	/* the next sample: half the silence on, not past when rail 0 falls silent */
	assert_int_equal(tbr_netx_win_tick(w, now + 10, &ops, NULL),
			 now + 10 + TBR_NETX_SILENT_MS / 2);
	assert_int_equal(h.nd, 1);
	two_rails(now + TBR_NETX_SILENT_MS);
	assert_int_equal(tbr_netx_win_tick(w, now + TBR_NETX_SILENT_MS, &ops, NULL), 0);
	assert_int_equal(h.nd, 2);
	assert_int_equal(h.delivered[1], 2);
	assert_int_equal(h.cnt[TBR_NETX_RX_MISSING], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_RAILS], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_HOLD], 0);
	/* packet 2 waited from its arrival (now + 5) until then */
	assert_int_equal(h.cnt[TBR_NETX_RX_HOLD_MS], TBR_NETX_SILENT_MS - 5);
}

/*
 * A fragment queued behind other frames on a slow rail (ip-tbnet: RDMA's,
 * 420 ms on a 20 Mb/s lane): the rail keeps delivering, so the packet
 * waits, and arrives whole; a silence sample from long ago does not count.
 */
static void test_slow_rail(void **state)
{
	u64 now = T0, t;

	two_rails(now);
	frames[1] += 5;
	tbr_netx_win_sample(w, 3, frames, now + 500);	/* rail 0 silent, long ago */
	now += 2000;
	rx(0, 0, 1500, 0, now);		/* fragment 1 waits on rail 1 */
	rx(1, 0, 1500, 0, now);
	rx(1, 1, 1500, 0, now);
	assert_int_equal(h.nd, 0);
	for (t = now; t < now + 420; t += 10) {
		frames[1] += 6;		/* RDMA frames go on arriving on rail 1 */
		two_rails(t);
		tbr_netx_win_tick(w, t, &ops, NULL);
		assert_int_equal(h.nd, 0);
	}
	rx(0, 1, 1500, 1, now + 420);
	assert_int_equal(h.nd, 2);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP] + h.cnt[TBR_NETX_RX_MISSING], 0);
}

/* The last resort: a rail that delivers, but never the fragment. */
static void test_hold(void **state)
{
	u64 now = T0, t, when = 0;

	two_rails(now);
	rx(0, 0, 1500, 0, now);
	rx(1, 0, 100, 0, now + 10);
	for (t = now; t < now + TBR_NETX_HOLD_MS; t += 25) {
		frames[1]++;
		two_rails(t);
		when = tbr_netx_win_tick(w, t, &ops, NULL);
		assert_true(when > t && when <= now + TBR_NETX_HOLD_MS);
	}
	assert_int_equal(h.nd, 0);
	frames[1]++;
	two_rails(now + TBR_NETX_HOLD_MS);
	tbr_netx_win_tick(w, now + TBR_NETX_HOLD_MS, &ops, NULL);
	assert_int_equal(h.nd, 1);
	assert_int_equal(h.delivered[0], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_HOLD], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP], 1);
}

/* A rail cut: left out of the rule at once, what was seen given up CUT_MS later. */
static void test_cut(void **state)
{
	u64 now = T0;

	two_rails(now);
	rx(0, 0, 1500, 0, now);
	rx(1, 0, 1500, 0, now);		/* fragments 1 of both on rail 1 */
	frames[1] += 3;			/* rail 1 busy */
	two_rails(now + 5);
	tbr_netx_win_rail_down(w, 1, now + 5);
	/* rail 0 alone is not past packet 1, so only packet 0 goes now */
	tbr_netx_win_tick(w, now + 5, &ops, NULL);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_RAILS], 1);
	assert_true(tbr_netx_win_when(w, now + 5) <= now + 5 + TBR_NETX_CUT_MS);
	tbr_netx_win_tick(w, now + 4 + TBR_NETX_CUT_MS, &ops, NULL);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_CUT], 0);
	tbr_netx_win_tick(w, now + 5 + TBR_NETX_CUT_MS, &ops, NULL);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_CUT], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP], 2);
	assert_int_equal(h.nd, 0);
	/* the rail back: not seen yet, so waited for */
	tbr_netx_win_rail_up(w, 1);
	rx(3, 0, 1500, 0, now + 30);	/* packet 2 lost whole, 3 half there */
	assert_int_equal(h.cnt[TBR_NETX_RX_MISSING], 0);
	rx(3, 1, 1500, 1, now + 31);	/* rail 1 now past 2: given up, 3 up */
	assert_int_equal(h.cnt[TBR_NETX_RX_MISSING], 1);
	assert_int_equal(h.nd, 1);
	assert_int_equal(h.delivered[0], 3);
}

/*
 * This host stalled (a VM descheduled): its rails delivered nothing
 * meanwhile, but that is no silence; it takes TBR_NETX_SILENT_MS of
 * samples after the stall.
 */
static void test_stall(void **state)
{
	u64 now = T0;

	rx(0, 0, 100, 0, now);
	two_rails(now);
	rx(2, 0, 100, 1, now + 1);	/* 1 lost, or still on rail 0 */
	two_rails(now + 200);		/* the first sample after a 200 ms stall */
	tbr_netx_win_tick(w, now + 200, &ops, NULL);
	assert_int_equal(h.nd, 1);
	two_rails(now + 215);
	tbr_netx_win_tick(w, now + 215, &ops, NULL);
	assert_int_equal(h.nd, 1);
	two_rails(now + 230);
	tbr_netx_win_tick(w, now + 230, &ops, NULL);
	assert_int_equal(h.nd, 2);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_RAILS], 1);
}

/* The window: pushed on by a packet 1024 ahead; a restarted peer; no memory. */
static void test_window(void **state)
{
	u64 now = T0;

	two_rails(now);
	rx(10, 0, 1500, 0, now);
	rx(10 + TBR_NETX_WIN, 0, 100, 0, now);	/* 10 pushed out, 11.. wait */
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_WINDOW], 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP], 1);
	assert_int_equal(h.nd, 0);
	rx(10 + TBR_NETX_WIN, 0, 100, 1, now);	/* a duplicate: both rails past 11..1033 */
	assert_int_equal(h.cnt[TBR_NETX_RX_MISSING], TBR_NETX_WIN - 1);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEUP_RAILS], TBR_NETX_WIN - 1);
	assert_int_equal(h.nd, 1);
	rx(100000, 0, 100, 0, now);	/* far ahead: a new numbering */
	assert_int_equal(h.cnt[TBR_NETX_RX_RESYNC], 1);
	assert_int_equal(h.nd, 2);
	assert_int_equal(h.delivered[1], 100000);
	h.fail_alloc = 1;		/* no memory: given up later, as lost */
	rx(100001, 0, 100, 1, now);
	h.fail_alloc = 0;
	rx(100002, 0, 100, 1, now);
	rx(100003, 0, 100, 0, now);
	assert_int_equal(h.cnt[TBR_NETX_RX_GIVEN_UP], 2);
	assert_int_equal(h.nd, 4);
	assert_int_equal(h.delivered[3], 100003);
}

int main(void)
{
	const struct CMUnitTest netx[] = {
		cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rails_past, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_rail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window, setup, teardown),
	};

	return cmocka_run_group_tests(netx, NULL, NULL);
}
