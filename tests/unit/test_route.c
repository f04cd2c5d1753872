// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_route.c - routed frames (kernel/core/tbr_route_wire.c, docs/protocol.md
 * 7): the routing header's layout, hostile headers refused, the forwarding
 * decision (for us, forward, hop limit 0 and 1, a hop limit above the
 * fabric's maximum, our own source), the forwarding table's checks and
 * lookup, and the reverse-path check.
 */
#include "tcommon.h"
#include "tbr_route_wire.h"

#define SELF	0x0123456789abcdefULL
#define FAR	0x1111222233334444ULL
#define NEIGH	0x5555666677778888ULL

static void test_layout(void **state)
{
	static const u8 want[TBR_ROUTE_HDR_LEN] = {
		1, 3, 16, 0, 0, 0, 0, 0,
		0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	};
	struct tbr_route_hdr h = {
		.version = TBR_ROUTE_VERSION, .pdf = TBR_ROUTE_INNER_NET,
		.hop_limit = TBR_ROUTE_HOPS_MAX, .dst = FAR, .src = SELF,
	}, p;
	u8 buf[TBR_ROUTE_HDR_LEN + 1] = {};

	memset(&p, 0, sizeof(p));	/* (padding) */
	tbr_route_hdr_build(buf, &h);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(tbr_route_hdr_parse(buf, sizeof(buf), &p), 0);
	assert_int_equal(p.version, h.version);
	assert_int_equal(p.pdf, h.pdf);
	assert_int_equal(p.hop_limit, h.hop_limit);
	assert_int_equal(p.flags, h.flags);
	assert_true(p.dst == h.dst && p.src == h.src);
	tbr_route_hop_dec(buf);
	assert_int_equal(buf[2], 15);
	assert_int_equal(TBR_ROUTE_PDF, 4);
}

static void test_hostile(void **state)
{
	struct tbr_route_hdr h = {
		.version = TBR_ROUTE_VERSION, .pdf = TBR_ROUTE_INNER_DATA,
		.hop_limit = 3, .dst = FAR, .src = NEIGH,
	}, p;
	u8 buf[64] = {}, bad[64];
	unsigned int i;

	tbr_route_hdr_build(buf, &h);
	assert_int_equal(tbr_route_hdr_parse(buf, sizeof(buf), &p), 0);
	/* no inner frame, or truncated */
	for (i = 0; i <= TBR_ROUTE_HDR_LEN; i++)
		assert_int_equal(tbr_route_hdr_parse(buf, i, &p), -EINVAL);
	/* version, inner codes, flags, reserved bytes */
	for (i = 0; i < 256; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[0] = (u8)i;
		assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p) == 0,
				 i == TBR_ROUTE_VERSION);
		memcpy(bad, buf, sizeof(bad));
		bad[1] = (u8)i;
		assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p) == 0,
				 i >= 1 && i <= 3);
		memcpy(bad, buf, sizeof(bad));
		bad[3] = (u8)i;
		assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p) == 0, i == 0);
	}
	for (i = 4; i < 8; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] = 1;
		assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p), -EINVAL);
	}
	/* GUIDs: zero, or the same at both ends */
	h.dst = 0;
	tbr_route_hdr_build(bad, &h);
	assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p), -EINVAL);
	h.dst = FAR;
	h.src = 0;
	tbr_route_hdr_build(bad, &h);
	assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p), -EINVAL);
	h.src = FAR;
	tbr_route_hdr_build(bad, &h);
	assert_int_equal(tbr_route_hdr_parse(bad, sizeof(bad), &p), -EINVAL);
}

static void test_decide(void **state)
{
	struct tbr_route_hdr h = {
		.version = TBR_ROUTE_VERSION, .pdf = TBR_ROUTE_INNER_DATA,
		.hop_limit = 2, .dst = FAR, .src = NEIGH,
	};

	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_FORWARD);
	h.hop_limit = 1;	/* would reach 0 on the next hop */
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_DROP_HOPS);
	h.dst = SELF;		/* but it is for us */
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_LOCAL);
	h.hop_limit = 0;	/* never valid, not even for us */
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_DROP_HOPS);
	h.dst = FAR;
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_DROP_HOPS);
	h.hop_limit = 9;
	h.src = SELF;		/* our own frame came back */
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_DROP_LOOP);
	/* the fabric's maximum is what every sender sets: more is forged */
	h.src = NEIGH;
	h.hop_limit = TBR_ROUTE_HOPS_MAX;
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_FORWARD);
	h.dst = SELF;
	assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_LOCAL);
	for (unsigned int l = TBR_ROUTE_HOPS_MAX + 1; l < 256; l++) {
		h.hop_limit = (u8)l;
		h.dst = SELF;
		assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_DROP_HOPS);
		h.dst = FAR;
		assert_int_equal(tbr_route_decide(&h, SELF), TBR_ROUTE_DROP_HOPS);
	}
}

/*
 * The reverse-path check: a routed frame from a source comes in from the
 * neighbour the table goes to that source by, or from the source itself.
 */
static void test_rpf(void **state)
{
	/* self's neighbours 0x10 and 0x40; 0x20 behind 0x10, 0x30 behind 0x40 */
	static const struct tbr_route_entry e[4] = {
		{ .dst = 0x10, .next_hop = 0x10, .hops = 1 },
		{ .dst = 0x20, .next_hop = 0x10, .hops = 2 },
		{ .dst = 0x30, .next_hop = 0x40, .hops = 3 },
		{ .dst = 0x40, .next_hop = 0x40, .hops = 1 },
	};

	assert_int_equal(tbr_route_table_check(e, 4, SELF), 0);
	assert_true(tbr_route_rpf(e, 4, 0x20, 0x10));	/* the way to 0x20 */
	assert_true(tbr_route_rpf(e, 4, 0x30, 0x40));
	assert_true(tbr_route_rpf(e, 4, 0x10, 0x10));	/* a neighbour's own */
	assert_false(tbr_route_rpf(e, 4, 0x20, 0x40));	/* 0x40 is not the way to 0x20 */
	assert_false(tbr_route_rpf(e, 4, 0x30, 0x10));
	assert_false(tbr_route_rpf(e, 4, 0x10, 0x40));	/* a neighbour claimed by another */
	assert_false(tbr_route_rpf(e, 4, 0x40, 0x10));
	assert_false(tbr_route_rpf(e, 4, 0x25, 0x10));	/* not in the table */
	assert_false(tbr_route_rpf(e, 4, 0, 0x10));
	assert_false(tbr_route_rpf(e, 4, 0x20, 0));
	/* no table: a neighbour's own frames only */
	assert_true(tbr_route_rpf(NULL, 0, 0x50, 0x50));
	assert_false(tbr_route_rpf(NULL, 0, 0x20, 0x10));
}

static void test_table(void **state)
{
	struct tbr_route_entry e[3] = {
		{ .dst = 0x10, .next_hop = 0x10, .hops = 1 },
		{ .dst = 0x20, .next_hop = 0x10, .hops = 2 },
		{ .dst = 0x30, .next_hop = 0x10, .hops = 3 },
	}, b[3];

	assert_int_equal(tbr_route_table_check(e, 3, SELF), 0);
	assert_int_equal(tbr_route_table_check(e, 0, SELF), 0);
	assert_ptr_equal(tbr_route_table_find(e, 3, 0x20), &e[1]);
	assert_ptr_equal(tbr_route_table_find(e, 3, 0x30), &e[2]);
	assert_ptr_equal(tbr_route_table_find(e, 3, 0x10), &e[0]);
	assert_null(tbr_route_table_find(e, 3, 0x25));
	assert_null(tbr_route_table_find(e, 0, 0x10));
	assert_int_equal(tbr_route_table_check(e, TBR_ROUTE_TABLE_MAX + 1, SELF), -EINVAL);
#define BAD(field, v) do {						\
		memcpy(b, e, sizeof(b));				\
		b[1].field = (v);					\
		assert_int_equal(tbr_route_table_check(b, 3, SELF), -EINVAL); \
	} while (0)
	BAD(dst, 0x10);		/* twice */
	BAD(dst, 0x40);		/* not ascending */
	BAD(dst, 0);
	BAD(next_hop, 0);
	BAD(next_hop, SELF);
	BAD(hops, 0);
	BAD(hops, 1);		/* one hop but the next hop is not it */
	BAD(hops, TBR_ROUTE_HOPS_MAX + 1);
	memcpy(b, e, sizeof(b));
	b[2].dst = SELF;
	assert_int_equal(tbr_route_table_check(b, 3, SELF), -EINVAL);
	memcpy(b, e, sizeof(b));
	b[0].hops = 2;		/* to a neighbour through itself in 2 hops */
	assert_int_equal(tbr_route_table_check(b, 3, SELF), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_rpf),
	};

	return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
