// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_eth.c - the eth rail backend's wire (kernel/core/tbr_eth_wire.c):
 * the HELLO flags and bundle size, the walk over a bundle's records (its
 * end, padding, a record cut short or not a FRAME), the FRAG header
 * (layout, hostile values) and in-order
 * reassembly (a frame cut like eth_frag_xmit cuts it comes back whole;
 * every gap, reordering or foreign piece drops the partial frame, counted,
 * and the next frame still gets through).
 */
#include "tcommon.h"
#include "tbr_eth_wire.h"

#define SELF	0x0123456789abcdefULL
#define PEER	0x1111222233334444ULL

static u8 frame[TBR_ETH_FRAME_MAX];
static u8 rbuf[TBR_ETH_FRAME_MAX];

/* A FRAG as it arrives: header + fragment header + data, parsed. */
static int frag_rx(u8 *pkt, u16 id, u16 off, u16 total, const u8 *data, u32 len,
		   u8 pdf, struct tbr_eth_frag *fr)
{
	struct tbr_eth_hdr h = {
		.version = TBR_ETH_VERSION, .type = TBR_ETH_FRAG, .pdf = pdf,
		.len = (u16)(TBR_ETH_FRAG_HDR_LEN + len), .src = PEER, .dst = SELF,
	};
	struct tbr_eth_frag b = { .id = id, .offset = off, .total = total };
	struct tbr_eth_hdr p;

	tbr_eth_hdr_build(pkt, &h);
	tbr_eth_frag_build(pkt + TBR_ETH_HDR_LEN, &b);
	memcpy(pkt + TBR_ETH_HDR_LEN + TBR_ETH_FRAG_HDR_LEN, data, len);
	if (tbr_eth_hdr_parse(pkt, TBR_ETH_HDR_LEN + h.len, &p))
		return -1;
	return tbr_eth_frag_parse(&p, pkt + TBR_ETH_HDR_LEN, p.len, SELF, fr);
}

static void test_frag_layout(void **state)
{
	static const u8 want[] = { 0x12, 0x34, 0x05, 0xb4, 0x10, 0x00, 0, 0 };
	struct tbr_eth_frag b = { .id = 0x1234, .offset = 1460, .total = 4096 };
	u8 buf[TBR_ETH_FRAG_HDR_LEN];

	tbr_eth_frag_build(buf, &b);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(TBR_ETH_FRAG, 3);
	assert_int_equal(TBR_ETH_REASSEMBLES, 0x02);
}

static void test_hello_flag(void **state)
{
	struct tbr_eth_hdr h = { .version = TBR_ETH_VERSION, .type = TBR_ETH_HELLO,
				 .len = TBR_ETH_HELLO_LEN, .src = PEER, .dst = 0 };
	struct tbr_eth_hello m;
	u8 p[TBR_ETH_HELLO_LEN];

	tbr_eth_hello_build(p, 7, 0, 1476, 200, 0,
			    TBR_ETH_REASSEMBLES | TBR_ETH_ACK_RIDE);
	assert_int_equal(p[12], 0x06);
	assert_int_equal(tbr_eth_hello_parse(&h, p, sizeof(p), SELF, 9, &m), 0);
	assert_true(m.flags & TBR_ETH_REASSEMBLES);
	assert_true(m.flags & TBR_ETH_ACK_RIDE);
	assert_false(m.hears_us);
	assert_int_equal(m.max_frame, 1476);
	assert_int_equal(m.bundle_max, 0);
	/* the bundle size: bytes 14-15, big endian; 13 stays reserved */
	tbr_eth_hello_build(p, 7, 0, 4096, 200, 65535, 0);
	assert_int_equal(p[13], 0);
	assert_int_equal(p[14], 0xff);
	assert_int_equal(p[15], 0xff);
	assert_int_equal(tbr_eth_hello_parse(&h, p, sizeof(p), SELF, 9, &m), 0);
	assert_int_equal(m.bundle_max, 65535);
	tbr_eth_hello_build(p, 7, 0, 4096, 200, 9000, 0);
	assert_int_equal(p[14] << 8 | p[15], 9000);
	assert_int_equal(tbr_eth_hello_parse(&h, p, sizeof(p), SELF, 9, &m), 0);
	assert_int_equal(m.bundle_max, 9000);
}

/* A bundle: FRAMEs of 100, 4096 and 1 bytes back to back, then what follows. */
static void test_bundle_walk(void **state)
{
	static u8 pkt[3 * TBR_ETH_HDR_LEN + 100 + 4096 + 1 + 64];
	const u32 lens[] = { 100, 4096, 1 };
	struct tbr_eth_hdr h = { .version = TBR_ETH_VERSION, .type = TBR_ETH_FRAME,
				 .src = PEER, .dst = SELF };
	u32 off = 0, end, i;

	for (i = 0; i < 3; i++) {
		h.len = (u16)lens[i];
		h.pdf = (u8)(0x10 + i);
		tbr_eth_hdr_build(pkt + off, &h);
		memcpy(pkt + off + TBR_ETH_HDR_LEN, frame, lens[i]);
		off += TBR_ETH_HDR_LEN + lens[i];
	}
	end = off;
	memset(pkt + end, 0, sizeof(pkt) - end);
	/* walked as eth_rx.c walks it: every record found, in order */
	assert_int_equal(tbr_eth_hdr_parse(pkt, end, &h), 0);
	off = TBR_ETH_HDR_LEN + h.len;
	for (i = 1; i < 3; i++) {
		assert_int_equal(tbr_eth_next_frame(pkt + off, end - off, &h), 0);
		assert_int_equal(h.len, lens[i]);
		assert_int_equal(h.pdf, 0x10 + i);
		assert_int_equal(tbr_eth_frame_check(&h, SELF), 0);
		off += TBR_ETH_HDR_LEN + h.len;
	}
	/* the end, or padding shorter than a header: the packet ends */
	assert_int_equal(tbr_eth_next_frame(pkt + off, 0, &h), 1);
	assert_int_equal(tbr_eth_next_frame(pkt + off, TBR_ETH_HDR_LEN - 1, &h), 1);
	/* zeros of a header's length (version 0): dropped */
	assert_int_equal(tbr_eth_next_frame(pkt + off, TBR_ETH_HDR_LEN, &h), -EINVAL);
	/* the last record cut short by one byte */
	off = end - (TBR_ETH_HDR_LEN + 1);
	assert_int_equal(tbr_eth_next_frame(pkt + off, TBR_ETH_HDR_LEN + 1, &h), 0);
	assert_int_equal(tbr_eth_next_frame(pkt + off, TBR_ETH_HDR_LEN, &h), -EINVAL);
	/* a HELLO or a FRAG inside a bundle: dropped */
	h.type = TBR_ETH_HELLO;
	h.len = 1;
	tbr_eth_hdr_build(pkt + off, &h);
	assert_int_equal(tbr_eth_next_frame(pkt + off, TBR_ETH_HDR_LEN + 1, &h), -EINVAL);
	h.type = TBR_ETH_FRAG;
	h.len = 1;
	tbr_eth_hdr_build(pkt + off, &h);
	assert_int_equal(tbr_eth_next_frame(pkt + off, TBR_ETH_HDR_LEN + 1, &h), -EINVAL);
}

static void test_frag_parse_hostile(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_FRAG_HDR_LEN + TBR_ETH_FRAME_MAX];
	struct tbr_eth_hdr h;
	struct tbr_eth_frag fr;

	assert_int_equal(frag_rx(pkt, 1, 0, 4096, frame, 1468, 0x11, &fr), 0);
	assert_int_equal(fr.id, 1);
	assert_int_equal(fr.offset, 0);
	assert_int_equal(fr.total, 4096);
	assert_int_equal(fr.len, 1468);
	assert_int_equal(fr.pdf, 0x11);
	/* the piece must lie inside the frame, the frame within 1..4144 */
	assert_int_equal(TBR_ETH_FRAME_MAX, 4144);
	assert_int_equal(frag_rx(pkt, 1, 4000, 4096, frame, 97, 0, &fr), -EINVAL);
	assert_int_equal(frag_rx(pkt, 1, 4000, 4096, frame, 96, 0, &fr), 0);
	assert_int_equal(frag_rx(pkt, 1, 4096, 4096, frame, 1, 0, &fr), -EINVAL);
	assert_int_equal(frag_rx(pkt, 1, 4000, 4144, frame, 144, 0, &fr), 0);
	assert_int_equal(frag_rx(pkt, 1, 0, 4145, frame, 100, 0, &fr), -EINVAL);
	assert_int_equal(frag_rx(pkt, 1, 0, 0, frame, 1, 0, &fr), -EINVAL);
	assert_int_equal(frag_rx(pkt, 1, 0xffff, 0xffff, frame, 1, 0, &fr), -EINVAL);
	assert_int_equal(frag_rx(pkt, 1, 0, 100, frame, 0, 0, &fr), -EINVAL);	/* no data */
	/* not for us, wrong type, payload shorter than announced */
	assert_int_equal(frag_rx(pkt, 1, 0, 100, frame, 50, 0, &fr), 0);
	assert_int_equal(tbr_eth_hdr_parse(pkt, TBR_ETH_HDR_LEN + 58, &h), 0);
	h.dst = PEER;
	assert_int_equal(tbr_eth_frag_parse(&h, pkt + TBR_ETH_HDR_LEN, 58, SELF, &fr), -EINVAL);
	h.dst = SELF;
	h.type = TBR_ETH_FRAME;
	assert_int_equal(tbr_eth_frag_parse(&h, pkt + TBR_ETH_HDR_LEN, 58, SELF, &fr), -EINVAL);
	h.type = TBR_ETH_FRAG;
	assert_int_equal(tbr_eth_frag_parse(&h, pkt + TBR_ETH_HDR_LEN, 57, SELF, &fr), -EINVAL);
	assert_int_equal(tbr_eth_frag_parse(&h, pkt + TBR_ETH_HDR_LEN, 58, SELF, &fr), 0);
	/* FRAME_MAX frames are still FRAME only up to 4144 */
	assert_int_equal(tbr_eth_frame_check(&(struct tbr_eth_hdr){ .type = TBR_ETH_FRAME,
		.dst = SELF, .len = 4145 }, SELF), -EINVAL);
	assert_int_equal(tbr_eth_frame_check(&(struct tbr_eth_hdr){ .type = TBR_ETH_FRAME,
		.dst = SELF, .len = 4144 }, SELF), 0);
}

/* Cut frame[0..total) in pieces of @chunk as eth_frag_xmit does; feed @order of them. */
static int feed(struct tbr_eth_reasm *r, u16 id, u32 total, u32 chunk, u8 pdf,
		const int *order, int n, u32 *dropped)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_FRAG_HDR_LEN + TBR_ETH_FRAME_MAX];
	struct tbr_eth_frag fr;
	int i, rc = -2;

	for (i = 0; i < n; i++) {
		u32 off = order[i] * chunk;
		u32 len = total - off < chunk ? total - off : chunk;

		assert_int_equal(frag_rx(pkt, id, (u16)off, (u16)total, frame + off, len, pdf,
					 &fr), 0);
		rc = tbr_eth_reasm_add(r, &fr, pkt + TBR_ETH_HDR_LEN + TBR_ETH_FRAG_HDR_LEN,
				       dropped);
	}
	return rc;
}

static void whole(struct tbr_eth_reasm *r, u16 id, u32 total, u8 pdf)
{
	assert_int_equal(r->total, total);
	assert_int_equal(r->pdf, pdf);
	assert_int_equal(r->id, id);
	assert_false(r->busy);
	assert_memory_equal(r->buf, frame, total);
}

static void test_reasm_in_order(void **state)
{
	static const int three[] = { 0, 1, 2 };
	struct tbr_eth_reasm r = { .buf = rbuf };
	u32 dropped = 0, total, chunk;

	for (total = 1; total <= TBR_ETH_FRAME_MAX; total += 97) {
		chunk = 1468;
		memset(rbuf, 0, sizeof(rbuf));
		assert_int_equal(feed(&r, (u16)total, total, chunk, 0x22, three,
				      (int)((total + chunk - 1) / chunk), &dropped),
				 TBR_ETH_REASM_DONE);
		whole(&r, (u16)total, total, 0x22);
	}
	/* 4096 in 248-byte pieces (the smallest frame, 256, minus the header): 17 */
	{
		int all[17], i;

		for (i = 0; i < 17; i++)
			all[i] = i;
		assert_int_equal(feed(&r, 9, 4096, 248, 0x11, all, 17, &dropped),
				 TBR_ETH_REASM_DONE);
		whole(&r, 9, 4096, 0x11);
	}
	assert_int_equal(dropped, 0);
}

static void test_reasm_gaps(void **state)
{
	static const int ok[] = { 0, 1, 2 }, gap[] = { 0, 2 }, swap[] = { 0, 2, 1 };
	static const int tail[] = { 1, 2 }, head[] = { 0, 1 }, dup[] = { 0, 1, 1 };
	struct tbr_eth_reasm r = { .buf = rbuf };
	u32 dropped = 0;

	/* lost middle piece: the partial frame and the stray piece go */
	assert_int_equal(feed(&r, 1, 4096, 1468, 0, gap, 2, &dropped), -EINVAL);
	assert_int_equal(dropped, 2);
	assert_false(r.busy);
	/* reordered */
	dropped = 0;
	assert_int_equal(feed(&r, 2, 4096, 1468, 0, swap, 3, &dropped), -EINVAL);
	assert_int_equal(dropped, 3);	/* piece 2 (with the partial), piece 1 stray */
	/* first piece lost: the rest are strays */
	dropped = 0;
	assert_int_equal(feed(&r, 3, 4096, 1468, 0, tail, 2, &dropped), -EINVAL);
	assert_int_equal(dropped, 2);
	/* last piece lost, the next frame starts: the partial one is dropped, the new one whole */
	dropped = 0;
	assert_int_equal(feed(&r, 4, 4096, 1468, 0, head, 2, &dropped), TBR_ETH_REASM_MORE);
	assert_int_equal(feed(&r, 5, 3000, 1468, 0, ok, 3, &dropped), TBR_ETH_REASM_DONE);
	assert_int_equal(dropped, 1);
	whole(&r, 5, 3000, 0);
	/* a duplicated piece */
	dropped = 0;
	assert_int_equal(feed(&r, 6, 4096, 1468, 0, dup, 3, &dropped), -EINVAL);
	assert_int_equal(dropped, 2);
	assert_int_equal(tbr_eth_reasm_reset(&r), 0);
}

static void test_reasm_foreign(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_FRAG_HDR_LEN + TBR_ETH_FRAME_MAX];
	static const int ok[] = { 0, 1, 2 };
	struct tbr_eth_reasm r = { .buf = rbuf };
	struct tbr_eth_frag fr;
	u32 dropped = 0;

	/*
	 * Frame 7 loses its last piece and frame 8 its first two: frame 8's
	 * last piece sits exactly at the offset frame 7 reached. The id tells
	 * them apart; same for another length or frame code.
	 */
	assert_int_equal(feed(&r, 7, 4096, 1468, 0, ok, 2, &dropped), TBR_ETH_REASM_MORE);
	assert_int_equal(frag_rx(pkt, 8, 2936, 4096, frame + 2936, 1160, 0, &fr), 0);
	assert_int_equal(tbr_eth_reasm_add(&r, &fr, pkt + 32, &dropped), -EINVAL);
	assert_int_equal(dropped, 2);
	assert_int_equal(feed(&r, 7, 4096, 1468, 0, ok, 2, &dropped), TBR_ETH_REASM_MORE);
	assert_int_equal(frag_rx(pkt, 7, 2936, 4000, frame + 2936, 1064, 0, &fr), 0);
	assert_int_equal(tbr_eth_reasm_add(&r, &fr, pkt + 32, &dropped), -EINVAL);
	assert_int_equal(feed(&r, 7, 4096, 1468, 0, ok, 2, &dropped), TBR_ETH_REASM_MORE);
	assert_int_equal(frag_rx(pkt, 7, 2936, 4096, frame + 2936, 1160, 0x11, &fr), 0);
	assert_int_equal(tbr_eth_reasm_add(&r, &fr, pkt + 32, &dropped), -EINVAL);
	assert_int_equal(dropped, 6);
	/* a stop forgets the partial frame */
	assert_int_equal(feed(&r, 9, 4096, 1468, 0, ok, 1, &dropped), TBR_ETH_REASM_MORE);
	assert_int_equal(tbr_eth_reasm_reset(&r), 1);
	assert_false(r.busy);
}

int main(void)
{
	const struct CMUnitTest eth[] = {
		cmocka_unit_test(test_frag_layout),
		cmocka_unit_test(test_hello_flag),
		cmocka_unit_test(test_bundle_walk),
		cmocka_unit_test(test_frag_parse_hostile),
		cmocka_unit_test(test_reasm_in_order),
		cmocka_unit_test(test_reasm_gaps),
		cmocka_unit_test(test_reasm_foreign),
	};
	unsigned int i;

	for (i = 0; i < sizeof(frame); i++)
		frame[i] = (u8)(i * 7 + (i >> 8));
	return cmocka_run_group_tests(eth, NULL, NULL);
}
