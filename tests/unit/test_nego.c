// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_nego.c - Thunderbolt rail negotiation messages (kernel/core/tbr_nego.c):
 * layout, round trips, version mismatch, hostile values, agreement.
 */
#include "tcommon.h"
#include "tbr_nego.h"

static void hello(struct tbr_nego_msg *m, u8 rails)
{
	unsigned int i;

	tbr_nego_init(m, TBR_NEGO_HELLO);
	m->seq = 7;
	m->guid = 0x0102030405060708ull;
	for (i = 0; i < 16; i++) {
		m->initiator[i] = (u8)(0xa0 + i);
		m->target[i] = (u8)(0xb0 + i);
	}
	m->caps = TBR_NEGO_CAP_E2E | TBR_NEGO_CAP_POLL;
	m->rails = rails;
	m->nhops = rails;
	m->link_gbps = 20;
	m->lanes = 2;
	m->tx_ring = 256;
	m->rx_ring = 512;
	m->frame_size = 4096;
	m->instance = 0xbeef;
	for (i = 0; i < rails; i++)
		m->hopid[i] = (u16)(8 + i);
}

static void test_layout(void **state)
{
	struct tbr_nego_msg m;
	u32 w[TBR_NEGO_WORDS];

	hello(&m, 3);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(TBR_NEGO_WORDS, 27);
	assert_int_equal(w[0], 0x5442524e);
	assert_int_equal(w[1], 0x02020100u | TBR_NEGO_WORDS);	/* 2.2 */
	assert_int_equal(w[2], 7);
	assert_int_equal(w[3], 0);
	assert_int_equal(w[4], 0x01020304);
	assert_int_equal(w[5], 0x05060708);
	assert_int_equal(w[6], 0xa0a1a2a3);
	assert_int_equal(w[13], 0xbcbdbebf);
	assert_int_equal(w[14], 3);
	assert_int_equal(w[15], 0x03030014);
	assert_int_equal(w[16], 0x0200beef);	/* lanes, sender instance */
	assert_int_equal(w[17], 0x01000200);
	assert_int_equal(w[18], 4096);
	assert_int_equal(w[19], 0x00080009);
	assert_int_equal(w[20], 0x000a0000);
	assert_int_equal(w[26], 0);
}

static void test_roundtrip(void **state)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_WORDS];
	u8 r;

	for (r = 1; r <= TBR_NEGO_MAX_RAILS; r++) {
		hello(&m, r);
		m.type = r & 1 ? TBR_NEGO_HELLO : TBR_NEGO_HELLO_REPLY;
		assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
		assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
		assert_memory_equal(&m, &d, sizeof(m));
	}
	tbr_nego_init(&m, TBR_NEGO_READY);
	m.guid = 42;
	m.seq = 0xffffffff;
	m.ready_rails = 2;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
	assert_memory_equal(&m, &d, sizeof(m));
	tbr_nego_init(&m, TBR_NEGO_BYE);
	m.guid = 42;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
	assert_int_equal(d.type, TBR_NEGO_BYE);
	tbr_nego_init(&m, TBR_NEGO_STATUS);
	m.guid = 42;
	m.status = TBR_NEGO_ST_BUSY;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
	assert_int_equal(d.status, TBR_NEGO_ST_BUSY);
	/* a refusing reply needs no parameters */
	tbr_nego_init(&m, TBR_NEGO_HELLO_REPLY);
	m.guid = 42;
	m.status = TBR_NEGO_ST_REFUSED;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
	assert_int_equal(d.status, TBR_NEGO_ST_REFUSED);
}

static void test_version(void **state)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_MAX_WORDS];

	hello(&m, 2);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	/* newer minor with more words: accepted, extra words ignored */
	memset(w + TBR_NEGO_WORDS, 0x5a, (TBR_NEGO_MAX_WORDS - TBR_NEGO_WORDS) * 4);
	w[1] = (w[1] & 0xff00ff00u) | 0x00070000u | TBR_NEGO_MAX_WORDS;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_MAX_WORDS, &d), 0);
	assert_int_equal(d.ver_minor, 7);
	assert_int_equal(d.hopid[1], 9);
	/* other major: refused, but type and seq known to answer */
	w[1] = (w[1] & 0x00ffffffu) | (u32)(TBR_NEGO_VER_MAJOR + 1) << 24;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_MAX_WORDS, &d), -EPROTONOSUPPORT);
	assert_int_equal(d.ver_major, TBR_NEGO_VER_MAJOR + 1);
	assert_int_equal(d.type, TBR_NEGO_HELLO);
	assert_int_equal(d.seq, 7);
	/* major 1: wave 2's framing (SOF PDF == EOF PDF), refused */
	w[1] = (w[1] & 0x00ffffffu) | 0x01000000u;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_MAX_WORDS, &d), -EPROTONOSUPPORT);
	w[1] &= 0x00ffffffu;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_MAX_WORDS, &d), -EPROTONOSUPPORT);
	/* we never encode another major */
	m.ver_major = TBR_NEGO_VER_MAJOR + 1;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), -EINVAL);
}

static void test_malformed(void **state)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_WORDS], v[TBR_NEGO_WORDS];
	unsigned int n;

	hello(&m, 2);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS - 1), -EINVAL);
	/* every truncation is refused */
	for (n = 0; n < TBR_NEGO_WORDS; n++)
		assert_int_equal(tbr_nego_decode(w, n, &d), -EBADMSG);
	memcpy(v, w, sizeof(v));
	v[0] ^= 1;
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	/* declared length longer than received, shorter than the type needs */
	memcpy(v, w, sizeof(v));
	v[1] = (v[1] & ~0xffu) | (TBR_NEGO_WORDS + 1);
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	v[1] = (v[1] & ~0xffu) | (TBR_NEGO_WORDS - 1);
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	v[1] = (v[1] & ~0xffu) | 3;
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	v[1] = (v[1] & ~0xffu) | 0xff;
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	/* unknown types */
	memcpy(v, w, sizeof(v));
	v[1] &= ~0xff00u;
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	v[1] |= (TBR_NEGO_TYPE_MAX + 1) << 8;
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
	/* a READY of header length only */
	tbr_nego_init(&m, TBR_NEGO_READY);
	m.guid = 5;
	m.ready_rails = 1;
	assert_int_equal(tbr_nego_encode(&m, v, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	v[1] = (v[1] & ~0xffu) | TBR_NEGO_HDR_WORDS;
	assert_int_equal(tbr_nego_decode(v, TBR_NEGO_WORDS, &d), -EBADMSG);
}

/* Patch one word of a valid HELLO; the decoder must answer -ERANGE. */
static void expect_range(unsigned int word, u32 value)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_WORDS];

	hello(&m, 2);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	w[word] = value;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
}

static void test_hostile(void **state)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_WORDS];

	expect_range(3, 99);				/* status */
	hello(&m, 2);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	w[4] = w[5] = 0;				/* guid 0 */
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
	w[4] = w[5] = ~0u;				/* guid all ones */
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
	m.guid = 0;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), -EINVAL);
	m.guid = ~0ull;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), -EINVAL);
	expect_range(15, 0x00000014);			/* 0 rails */
	expect_range(15, 0x11110014);			/* 17 rails */
	expect_range(15, 0xff000014);			/* 255 rails, 0 hops */
	expect_range(15, 0x02030014);			/* hops != rails */
	expect_range(15, 0x020203e9);			/* 1001 Gb/s */
	expect_range(16, 0x05000000);			/* 5 lanes */
	expect_range(17, 0x01000000);			/* RX ring 0 */
	expect_range(17, 0x00ff0100);			/* TX ring not pow2 */
	expect_range(17, 0x00080100);			/* TX ring 8 */
	expect_range(17, 0x20000100);			/* TX ring 8192 */
	expect_range(18, 8192);				/* frame size */
	expect_range(18, 128);
	expect_range(18, 3000);
	expect_range(18, 0);
	expect_range(19, 0x00070009);			/* HopID 7 */
	expect_range(19, 0x00080800);			/* HopID 2048 */
	expect_range(19, 0x00080008);			/* duplicate */
	expect_range(19, 0xffff0009);
	/* READY with 0 or too many rails */
	tbr_nego_init(&m, TBR_NEGO_READY);
	m.guid = 5;
	m.ready_rails = 1;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	w[14] = 0;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
	w[14] = 17;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
	w[14] = 0x100;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
	/* unknown capability bits and reserved bits are ignored */
	hello(&m, 1);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	w[14] |= 0xfff00000u;
	w[16] |= 0x00ffffffu;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
}

static void test_agree(void **state)
{
	struct tbr_nego_msg a, b;
	struct tbr_nego_result r;

	hello(&a, 2);
	hello(&b, 1);
	b.type = TBR_NEGO_HELLO_REPLY;
	b.caps = TBR_NEGO_CAP_POLL;		/* no E2E */
	b.tx_ring = 128;
	b.rx_ring = 64;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_int_equal(r.rails, 1);
	assert_false(r.e2e);
	assert_int_equal(r.tx_ring, 64);	/* min(our TX 256, their RX 64) */
	assert_int_equal(r.rx_ring, 128);	/* min(our RX 512, their TX 128) */
	assert_int_equal(r.frame_size, 4096);
	b.caps |= TBR_NEGO_CAP_E2E;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_true(r.e2e);
	/* split frames only when both ends announce them */
	assert_false(r.split);
	b.caps |= TBR_NEGO_CAP_SPLIT;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_false(r.split);
	a.caps |= TBR_NEGO_CAP_SPLIT;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_true(r.split);
	b.caps &= ~TBR_NEGO_CAP_E2E;		/* and only with E2E */
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_false(r.split);
	b.caps |= TBR_NEGO_CAP_E2E;
	b.caps &= ~TBR_NEGO_CAP_SPLIT;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_false(r.split);
	/* ACKs ride on data frames only when both ends announce it */
	assert_false(r.ack_ride);
	a.caps |= TBR_NEGO_CAP_ACK_RIDE;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_false(r.ack_ride);
	b.caps |= TBR_NEGO_CAP_ACK_RIDE;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_true(r.ack_ride);
	assert_int_equal(TBR_NEGO_CAP_ACK_RIDE, 0x10);
	/* tbrN's fragment frames likewise (an older peer gets one frame per packet) */
	assert_false(r.net_frag);
	a.caps |= TBR_NEGO_CAP_NET_FRAG;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_false(r.net_frag);
	b.caps |= TBR_NEGO_CAP_NET_FRAG;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), 0);
	assert_true(r.net_frag);
	assert_int_equal(TBR_NEGO_CAP_NET_FRAG, 0x20);
	/* smaller frames than the rail layer needs */
	b.frame_size = 2048;
	assert_int_equal(tbr_nego_agree(&a, &b, 4096, &r), -ERANGE);
	assert_int_equal(tbr_nego_agree(&a, &b, 2048, &r), 0);
	assert_int_equal(r.frame_size, 2048);
	/* a refusal or a non-HELLO is no agreement */
	b.status = TBR_NEGO_ST_REFUSED;
	assert_int_equal(tbr_nego_agree(&a, &b, 256, &r), -ERANGE);
	b.status = 0;
	b.type = TBR_NEGO_READY;
	assert_int_equal(tbr_nego_agree(&a, &b, 256, &r), -ERANGE);
}

static void test_rails_for_link(void **state)
{
	assert_int_equal(tbr_nego_rails_for_link(0, false, 4), 1);
	assert_int_equal(tbr_nego_rails_for_link(1, false, 4), 1);
	assert_int_equal(tbr_nego_rails_for_link(2, false, 4), 2);
	assert_int_equal(tbr_nego_rails_for_link(2, false, 1), 1);
	assert_int_equal(tbr_nego_rails_for_link(2, true, 4), 1);
	assert_int_equal(tbr_nego_rails_for_link(4, false, 99), 4);
	assert_int_equal(tbr_nego_rails_for_link(99, false, 99), TBR_NEGO_MAX_RAILS);
	assert_int_equal(tbr_nego_rails_for_link(2, false, 0), 1);
	/* both ends go on with the rails both set up (READY's ready_rails) */
	assert_int_equal(tbr_nego_ready_rails(2, 1), 1);
	assert_int_equal(tbr_nego_ready_rails(1, 2), 1);
	assert_int_equal(tbr_nego_ready_rails(2, 2), 2);
	assert_int_equal(tbr_nego_ready_rails(4, 3), 3);
	assert_int_equal(tbr_nego_ready_rails(2, 0), 2);	/* no READY yet */
	assert_int_equal(tbr_nego_ready_rails(2, TBR_NEGO_MAX_RAILS + 1), 2);	/* not a count */
	assert_int_equal(tbr_nego_ready_rails(0, 1), 0);
	assert_string_equal(tbr_nego_type_name(TBR_NEGO_READY), "ready");
	assert_string_equal(tbr_nego_type_name(0), "unknown");
}

/* Random words never crash the decoder; what decodes re-encodes the same. */
static void test_random(void **state)
{
	struct tbr_nego_msg d, d2;
	u32 w[TBR_NEGO_MAX_WORDS], e[TBR_NEGO_WORDS];
	uint64_t x = 88172645463325252ull;
	unsigned int i, n, ok = 0;

	for (n = 0; n < 200000; n++) {
		for (i = 0; i < TBR_NEGO_MAX_WORDS; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			w[i] = (u32)x;
		}
		/* mostly-valid headers so the deep checks get exercised */
		w[0] = TBR_NEGO_MAGIC;
		w[1] = (u32)TBR_NEGO_VER_MAJOR << 24 | (w[1] & 0x00070000u) |
		       ((1 + w[1] % TBR_NEGO_TYPE_MAX) << 8) | TBR_NEGO_WORDS;
		if (n & 1) {
			w[15] = (w[15] & 0x0303ffffu) | 0x01010000u;
			w[15] &= 0xff1f00ffu;
			w[17] = 0x01000100u;
			w[18] = 4096;
			w[3] = 0;
		}
		if (tbr_nego_decode(w, TBR_NEGO_MAX_WORDS, &d))
			continue;
		ok++;
		assert_int_equal(tbr_nego_encode(&d, e, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
		assert_int_equal(tbr_nego_decode(e, TBR_NEGO_WORDS, &d2), 0);
		d.ver_minor = d2.ver_minor = 0;
		assert_memory_equal(&d, &d2, sizeof(d));
	}
	assert_true(ok > 0);
}

int main(void)
{
	const struct CMUnitTest nego[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_agree),
		cmocka_unit_test(test_rails_for_link),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(nego, NULL, NULL);
}
