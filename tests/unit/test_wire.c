// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_wire.c - frame encoder/decoder: layout, round trips, rejections. */
#include "tcommon.h"

static uint32_t build(uint8_t *buf, struct tbr_hdr *h, uint32_t paylen)
{
	uint32_t hl;

	h->paylen = (uint16_t)paylen;
	hl = tbr_hdr_build(buf, h);
	memset(buf + hl, 0xab, paylen);
	return hl + paylen;
}

static void test_base_layout(void **state)
{
	uint8_t b[TBR_FRAME_MAX];
	struct tbr_hdr h = {
		.opcode = TBR_OP_WRITE, .flags = TBR_F_ACKREQ,
		.conn_id = 0x1234, .dqpn = 0xabcdef, .psn = 0x123456,
		.msn = 0x01020304, .offset = 0x05060708, .msg_len = 0x090a0b0c,
		.rkey = 0x0d0e0f10, .va = 0x1112131415161718ull,
	};
	uint32_t len = build(b, &h, 5);
	static const uint8_t exp[40] = {
		1, TBR_OP_WRITE, TBR_F_ACKREQ, 0, 0x12, 0x34, 0, 5,
		0, 0xab, 0xcd, 0xef, 0, 0x12, 0x34, 0x56,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	};

	assert_int_equal(len, 16 + TBR_EXT_WRITE_LEN + 5);
	assert_memory_equal(b, exp, sizeof(exp));
	/* a P_Key other than the default: inverted in bytes 3 and 12 */
	h.npkey = (uint16_t)~0x8123u;
	build(b, &h, 5);
	assert_int_equal(b[3], 0x7e);
	assert_int_equal(b[12], 0xdc);
	assert_int_equal(b[13], 0x12);
}

static void test_roundtrip_all(void **state)
{
	uint8_t b[TBR_FRAME_MAX];
	uint8_t op;

	for (op = 1; op <= TBR_OP_MAX; op++) {
		struct tbr_hdr h, d;
		uint32_t pl = op == TBR_OP_ACK ? 16 : 100, len;

		memset(&h, 0, sizeof(h));
		h.opcode = op;
		h.flags = TBR_F_SOLICITED;
		h.conn_id = 9;
		h.dqpn = 0x42;
		h.psn = 0xffffff;
		h.msn = 77;
		h.offset = 4096;
		h.msg_len = 1 << 20;
		h.req_len = 8192;
		h.rmsn = 5;
		h.imm = 0xcafe;
		h.rkey = 0x99;
		h.va = 0x7000;
		h.swap_add = 1;
		h.compare = 2;
		h.orig = 3;
		h.qkey = 0x11;
		h.src_qpn = 0x33;
		h.syndrome = TBR_SYN_RNR_NAK;
		h.nwords = 2;
		h.epsn = 0xfffffe;
		h.aux = 10;
		len = build(b, &h, pl);
		assert_int_equal(len, tbr_hdr_len(op) + pl);
		assert_int_equal(tbr_frame_parse(b, len, &d), 0);
		assert_int_equal(d.opcode, op);
		assert_int_equal(d.psn, 0xffffff);
		assert_int_equal(d.dqpn, 0x42);
		assert_int_equal(d.conn_id, 9);
		assert_int_equal(d.paylen, pl);
		assert_ptr_equal(d.payload, b + tbr_hdr_len(op));
		switch (op) {
		case TBR_OP_SEND: case TBR_OP_SEND_IMM: case TBR_OP_SEND_INV:
			assert_int_equal(d.rmsn, 5);
			assert_int_equal(d.imm, 0xcafe);
			assert_int_equal(d.msg_len, 1 << 20);
			assert_int_equal(d.offset, 4096);
			break;
		case TBR_OP_WRITE_IMM:
			assert_int_equal(d.rmsn, 5);
			assert_int_equal(d.imm, 0xcafe);
			/* fall through */
		case TBR_OP_WRITE:
			assert_int_equal(d.va, 0x7000);
			assert_int_equal(d.rkey, 0x99);
			break;
		case TBR_OP_READ_REQ:
			assert_int_equal(d.req_len, 8192);
			assert_int_equal(d.va, 0x7000);
			break;
		case TBR_OP_CMP_SWAP: case TBR_OP_FETCH_ADD:
			assert_int_equal(d.swap_add, 1);
			assert_int_equal(d.compare, 2);
			break;
		case TBR_OP_ATOMIC_RESP:
			assert_int_equal(d.orig, 3);
			break;
		case TBR_OP_ACK:
			assert_int_equal(d.syndrome, TBR_SYN_RNR_NAK);
			assert_int_equal(d.epsn, 0xfffffe);
			assert_int_equal(d.aux, 10);
			break;
		case TBR_OP_UD_SEND: case TBR_OP_UD_SEND_IMM:
			assert_int_equal(d.qkey, 0x11);
			assert_int_equal(d.src_qpn, 0x33);
			break;
		}
		/* every truncation is rejected */
		while (len--)
			assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	}
}

static void test_rejects(void **state)
{
	uint8_t b[TBR_FRAME_MAX + 16];
	struct tbr_hdr h, d;
	uint32_t len;

	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_SEND;
	h.msg_len = 10;
	len = build(b, &h, 10);
	assert_int_equal(tbr_frame_parse(b, len, &d), 0);
	/* trailing garbage */
	assert_int_equal(tbr_frame_parse(b, len + 1, &d), -EINVAL);
	b[0] = 2;
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[0] = 1;
	/* byte 3 and the PSN's top byte: the P_Key, inverted */
	b[3] = 0x7f;
	b[12] = 0xfe;
	assert_int_equal(tbr_frame_parse(b, len, &d), 0);
	assert_int_equal(tbr_hdr_pkey(&d), 0x8001);
	assert_int_equal(d.psn, 0);
	b[3] = 0;
	b[2] = 0x80;
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[2] = 0;
	b[1] = 0;
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[1] = TBR_OP_MAX + 1;
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[1] = 0xff;
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[1] = TBR_OP_SEND;
	b[8] = 1;	/* dqpn top byte */
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[8] = 0;
	b[12] = 0;
	assert_int_equal(tbr_frame_parse(b, len, &d), 0);

	/* larger than a frame */
	h.paylen = TBR_FRAME_MAX;
	tbr_hdr_build(b, &h);
	assert_int_equal(tbr_frame_parse(b, TBR_FRAME_MAX + 16, &d), -EINVAL);
	assert_int_equal(tbr_frame_parse(b, 15, &d), -EINVAL);
	assert_int_equal(tbr_frame_parse(b, 0, &d), -EINVAL);

	/* ACK: bitmap length must match nwords, syndrome known */
	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_ACK;
	h.nwords = 2;
	len = build(b, &h, 16);
	assert_int_equal(tbr_frame_parse(b, len, &d), 0);
	len = build(b, &h, 8);
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	h.nwords = TBR_ACK_MAX_WORDS + 1;
	len = build(b, &h, 8 * (TBR_ACK_MAX_WORDS + 1));
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	h.nwords = 0;
	h.syndrome = TBR_SYN_MAX + 1;
	len = build(b, &h, 0);
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
}

/*
 * TBR_F_ACK: the ACK's epsn follows the extension of a SEND* or WRITE
 * (within TBR_HDR_MAX), the payload after it; any other opcode with the
 * flag, an epsn above 24 bits or a truncation is refused.
 */
static void test_ride(void **state)
{
	uint8_t b[TBR_FRAME_MAX];
	struct tbr_hdr h, d;
	uint32_t len;
	uint8_t op;

	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_WRITE;
	h.flags = TBR_F_ACK | TBR_F_ACKREQ;
	h.msg_len = 5;
	h.epsn = 0xabcdef;
	len = build(b, &h, 5);
	assert_int_equal(len, 16 + TBR_EXT_WRITE_LEN + TBR_PB_ACK_LEN + 5);
	assert_int_equal(b[2], TBR_F_ACK | TBR_F_ACKREQ);
	assert_int_equal(b[40], 0);
	assert_int_equal(b[41], 0xab);
	assert_int_equal(b[42], 0xcd);
	assert_int_equal(b[43], 0xef);
	assert_int_equal(tbr_frame_parse(b, len, &d), 0);
	assert_int_equal(d.epsn, 0xabcdef);
	assert_int_equal(d.hdr_len, 44);
	assert_ptr_equal(d.payload, b + 44);
	assert_int_equal(d.paylen, 5);
	b[40] = 1;
	assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
	b[40] = 0;
	while (len--)
		assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);

	for (op = 1; op <= TBR_OP_MAX; op++) {
		memset(&h, 0, sizeof(h));
		h.opcode = op;
		h.flags = TBR_F_ACK;
		h.epsn = 0x123456;
		h.nwords = 0;
		len = build(b, &h, op == TBR_OP_ACK ? 0 : 8);
		if (!tbr_op_takes_ack(op)) {
			/* what a peer would send: the flag on another opcode */
			assert_int_equal(tbr_frame_parse(b, len, &d), -EINVAL);
			assert_int_equal(tbr_frame_parse(b, len + TBR_PB_ACK_LEN,
							 &d), -EINVAL);
			continue;
		}
		assert_true(tbr_hdr_len(op) + TBR_PB_ACK_LEN <= TBR_HDR_MAX);
		assert_int_equal(len, tbr_hdr_len(op) + TBR_PB_ACK_LEN + 8);
		assert_int_equal(tbr_frame_parse(b, len, &d), 0);
		assert_int_equal(d.epsn, 0x123456);
		assert_int_equal(d.paylen, 8);
		assert_ptr_equal(d.payload, b + len - 8);
	}
	assert_true(tbr_op_takes_ack(TBR_OP_SEND) &&
		    tbr_op_takes_ack(TBR_OP_SEND_IMM) &&
		    tbr_op_takes_ack(TBR_OP_SEND_INV) &&
		    tbr_op_takes_ack(TBR_OP_WRITE));
	assert_false(tbr_op_takes_ack(TBR_OP_WRITE_IMM));
}

static void test_psn_math(void **state)
{
	assert_int_equal(tbr_psn_add(0xffffff, 1), 0);
	assert_int_equal(tbr_psn_add(0xfffff0, 0x20), 0x10);
	assert_int_equal(tbr_psn_diff(0x10, 0xfffff0), 0x20);
	assert_int_equal(tbr_psn_diff(0xfffff0, 0x10), -0x20);
	assert_int_equal(tbr_psn_diff(5, 5), 0);
	assert_int_equal(tbr_psn_diff(0x7fffff, 0), 0x7fffff);
}

static void test_peek(void **state)
{
	uint8_t b[64];
	struct tbr_hdr h;
	uint16_t conn;
	uint32_t qpn;

	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_ACK;
	h.conn_id = 0xbeef;
	h.dqpn = 0x123;
	build(b, &h, 0);
	assert_int_equal(tbr_frame_peek(b, 28, &conn, &qpn), 0);
	assert_int_equal(conn, 0xbeef);
	assert_int_equal(qpn, 0x123);
	assert_int_equal(tbr_frame_peek(b, 15, &conn, &qpn), -EINVAL);
	b[0] = 9;
	assert_int_equal(tbr_frame_peek(b, 28, &conn, &qpn), -EINVAL);
}

static void test_create_rejects_bad_cfg(void **state)
{
	static const struct tbr_ops ops;
	struct tbr_tqp_cfg c;

	sim_default_cfg(&c, TBR_QPT_RC);
	c.win = 100;
	assert_null(tbr_tqp_create(&c, &ops, NULL));
	sim_default_cfg(&c, TBR_QPT_RC);
	c.win = 8192;
	assert_null(tbr_tqp_create(&c, &ops, NULL));
	sim_default_cfg(&c, TBR_QPT_RC);
	c.mtu = TBR_MTU_MAX + 1;
	assert_null(tbr_tqp_create(&c, &ops, NULL));
	sim_default_cfg(&c, TBR_QPT_RC);
	c.sq_depth = 3;
	assert_null(tbr_tqp_create(&c, &ops, NULL));
	sim_default_cfg(&c, TBR_QPT_RC);
	c.max_rd_atomic = TBR_ATOMIC_CACHE + 1;
	assert_null(tbr_tqp_create(&c, &ops, NULL));
	sim_default_cfg(&c, TBR_QPT_RC);
	c.qpn = 1 << 24;
	assert_null(tbr_tqp_create(&c, &ops, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_layout),
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_ride),
		cmocka_unit_test(test_psn_math),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_create_rejects_bad_cfg),
	};

	tfilter();
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
