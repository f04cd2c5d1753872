// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_uc_ud.c - UC (unacknowledged, lossy) and UD (datagram) framing. */
#include "tcommon.h"

#define UC_MSGS	400
#define UC_MAX	6000

static void uc_conn(struct tbr_tqp_conn *c)
{
	c->uc_reorder_ns = 50000;
}

/* Message payload derived from its index: self-identifying content. */
static void uc_payload(uint8_t *p, uint32_t len, uint32_t idx)
{
	uint64_t x = idx * 0x9E3779B97F4A7C15ull + 1;
	uint32_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
	if (len >= 4)
		memcpy(p, &idx, 4);
}

static uint32_t uc_len(uint32_t idx)
{
	return 4 + (idx * 2654435761u) % UC_MAX;
}

static void run_uc(struct sim *s, bool expect_loss)
{
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	uint8_t *src = malloc(UC_MAX + 8), *chk = malloc(UC_MAX + 8);
	uint8_t (*rb)[UC_MAX + 8] = calloc(UC_MSGS, UC_MAX + 8);
	uint32_t i, last = 0;
	const struct tbr_tqp_counters *bc = tbr_tqp_counters(b->qp);

	assert_non_null(src);
	assert_non_null(chk);
	assert_non_null(rb);
	for (i = 0; i < UC_MSGS; i++)
		sim_post_recv(b, i, rb[i], UC_MAX + 8);
	for (i = 0; i < UC_MSGS; i++) {
		uint32_t len = uc_len(i);
		int ret;

		uc_payload(src, len, i);
		ret = tpost(a, i % 3 ? TBR_WR_SEND : TBR_WR_SEND_IMM, i, src,
			    len, 0, 0, 0);
		if (ret == -ENOSPC) {
			sim_run(s, 2000);
			i--;
			continue;
		}
		assert_int_equal(ret, 0);
		/* UC completes once sent: the source may be reused now */
		sim_run(s, 3000);
	}
	assert_true(sim_run(s, T_SEC));
	/* the requester completed everything, successfully, in order */
	assert_int_equal(a->ncq, UC_MSGS);
	for (i = 0; i < UC_MSGS; i++) {
		assert_int_equal(a->cq[i].status, TBR_WC_SUCCESS);
		assert_int_equal(a->cq[i].wr_id, i);
	}
	/* the responder delivered a subsequence, in order, intact; receive
	 * WQEs are consumed in posting order (lost messages reuse them) */
	for (i = 0; i < b->ncq; i++) {
		struct tbr_cqe *c = &b->cq[i];
		uint32_t idx;

		assert_int_equal(c->status, TBR_WC_SUCCESS);
		assert_int_equal(c->wr_id, i);
		memcpy(&idx, rb[i], 4);
		assert_true(i == 0 || idx > last);
		assert_true(idx < UC_MSGS);
		last = idx;
		assert_int_equal(c->byte_len, uc_len(idx));
		uc_payload(chk, c->byte_len, idx);
		assert_memory_equal(rb[i], chk, c->byte_len);
		assert_int_equal(!!(c->flags & TBR_WC_WITH_IMM), idx % 3 == 0);
	}
	if (expect_loss) {
		assert_true(b->ncq > UC_MSGS * 2 / 3);
		assert_true(b->ncq < UC_MSGS);
		assert_true(bc->uc_msgs_dropped > 0);
	} else {
		assert_int_equal(b->ncq, UC_MSGS);
	}
	assert_false(tbr_tqp_in_error(a->qp));
	assert_false(tbr_tqp_in_error(b->qp));
	free(rb);
	free(chk);
	free(src);
}

static void test_uc_clean_reordered(void **state)
{
	struct sim *s = tsim(TBR_QPT_UC, 70, NULL, uc_conn);

	s->f.rails = 4;
	s->f.jitter_ns = 20000;
	run_uc(s, false);
	sim_free(s);
}

static void test_uc_loss_drops_without_error(void **state)
{
	unsigned int seed;

	for (seed = 0; seed < 4; seed++) {
		struct sim *s = tsim(TBR_QPT_UC, 71 + seed, NULL, uc_conn);

		s->f.drop_pct = 5;
		s->f.dup_pct = 5;
		s->f.rails = 2 + seed;
		s->f.jitter_ns = 10000;
		run_uc(s, true);
		sim_free(s);
	}
}

static void test_uc_write_imm_and_rules(void **state)
{
	struct sim *s = tsim(TBR_QPT_UC, 75, NULL, uc_conn);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	uint8_t src[3000], dst[3000], r[16];
	struct tbr_send_wr wr;
	struct tbr_sge sge = tsge(src, 3000);

	tfill(s, src, sizeof(src));
	sim_add_mr(b, 0x31, dst, sizeof(dst), SIM_ACC_WRITE);
	sim_post_recv(b, 1, r, sizeof(r));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = TBR_WR_WRITE_IMM;
	wr.flags = TBR_WR_SIGNALED;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.remote_addr = taddr(dst);
	wr.rkey = 0x31;
	wr.imm = 77;
	assert_int_equal(sim_post(a, &wr), 0);
	/* READ and atomics are RC only */
	wr.opcode = TBR_WR_READ;
	assert_int_equal(sim_post(a, &wr), -EINVAL);
	wr.opcode = TBR_WR_FETCH_ADD;
	assert_int_equal(sim_post(a, &wr), -EINVAL);
	/* a WRITE with a bad rkey is dropped silently on UC */
	wr.opcode = TBR_WR_WRITE;
	wr.rkey = 0x99;
	assert_int_equal(sim_post(a, &wr), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(b->ncq, 1);
	assert_int_equal(b->cq[0].opcode, TBR_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(b->cq[0].imm, 77);
	assert_memory_equal(dst, src, 3000);
	assert_false(tbr_tqp_in_error(b->qp));
	assert_int_equal(tbr_tqp_counters(b->qp)->uc_msgs_dropped, 1);
	sim_free(s);
}

static int ud_send(struct sim_ep *ep, uint64_t id, void *buf, uint32_t len,
		   uint32_t qkey, uint32_t imm, bool with_imm)
{
	struct tbr_sge sge = tsge(buf, len);
	struct tbr_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = with_imm ? TBR_WR_SEND_IMM : TBR_WR_SEND;
	wr.flags = TBR_WR_SIGNALED;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.imm = imm;
	wr.remote_qpn = 0x22;
	wr.remote_qkey = qkey;
	wr.conn_id = 42;
	return sim_post(ep, &wr);
}

static void test_ud(void **state)
{
	struct sim *s = tsim(TBR_QPT_UD, 80, NULL, NULL);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	uint8_t src[1100], r0[2000], r1[2000], r2[100], r3[2000];
	const struct tbr_tqp_counters *bc = tbr_tqp_counters(b->qp);

	tfill(s, src, sizeof(src));
	sim_post_recv(b, 0, r0, sizeof(r0));
	sim_post_recv(b, 1, r1, sizeof(r1));
	sim_post_recv(b, 2, r2, sizeof(r2));
	/* good datagram */
	assert_int_equal(ud_send(a, 10, src, 1000, 0x1234, 0, false), 0);
	/* qkey with the high bit: the sender QP's own qkey (also 0x1234) */
	assert_int_equal(ud_send(a, 11, src, 500, 0x80000000u, 9, true), 0);
	/* wrong qkey: dropped by the receiver */
	assert_int_equal(ud_send(a, 12, src, 10, 0x5555, 0, false), 0);
	/* too long for the 100-byte buffer */
	assert_int_equal(ud_send(a, 13, src, 200, 0x1234, 0, false), 0);
	/* larger than the mtu: refused at post */
	assert_int_equal(ud_send(a, 14, src, 1025, 0x1234, 0, false), -EINVAL);
	assert_true(sim_run(s, T_SEC));
	/* no receive WQE left: dropped, no RNR on UD */
	assert_int_equal(ud_send(a, 15, src, 10, 0x1234, 0, false), 0);
	assert_true(sim_run(s, T_SEC));

	assert_int_equal(a->ncq, 5);
	assert_int_equal(b->ncq, 3);
	assert_int_equal(b->cq[0].wr_id, 0);
	assert_int_equal(b->cq[0].byte_len, TBR_GRH_LEN + 1000);
	assert_true(b->cq[0].flags & TBR_WC_GRH);
	assert_int_equal(b->cq[0].src_qp, 0x11);
	assert_int_equal(b->cq[0].conn_id, 42);
	assert_memory_equal(r0 + TBR_GRH_LEN, src, 1000);
	assert_int_equal(b->cq[1].byte_len, TBR_GRH_LEN + 500);
	assert_true(b->cq[1].flags & TBR_WC_WITH_IMM);
	assert_int_equal(b->cq[1].imm, 9);
	assert_int_equal(b->cq[2].status, TBR_WC_LOC_LEN_ERR);
	assert_int_equal(bc->ud_drops, 2);
	assert_int_equal(bc->rnr_naks_sent, 0);
	/* datagrams are independent: post one more receive, it works */
	sim_post_recv(b, 3, r3, sizeof(r3));
	assert_int_equal(ud_send(a, 16, src, 7, 0x1234, 0, false), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(b->ncq, 4);
	assert_int_equal(b->cq[3].status, TBR_WC_SUCCESS);
	assert_false(tbr_tqp_in_error(b->qp));
	sim_free(s);
}

static void cfg_ud_addr(struct tbr_tqp_cfg *cfg)
{
	cfg->ud_addr = true;
}

/* an address block between two IPv4-mapped GIDs, or two IPv6 ones */
static void uda_fill(uint8_t *b, bool v4);

/*
 * Multicast: a UD QP takes a datagram whose destination QPN is
 * TBR_QPN_MCAST (the kernel glue hands such frames only to the QPs attached
 * to the group), an RC QP never; tbr_ud_frame_dgid finds the group in the
 * address block of a UD frame and nothing in any other frame.
 */
static void test_ud_mcast(void **state)
{
	struct sim *s = tsim(TBR_QPT_UD, 82, cfg_ud_addr, NULL);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	uint8_t src[TBR_UD_ADDR_LEN + 64], r0[2048], f[TBR_FRAME_MAX];
	struct tbr_sge sge = tsge(src, sizeof(src));
	struct tbr_send_wr wr;
	struct tbr_hdr h;
	uint32_t hl;

	tfill(s, src, sizeof(src));
	uda_fill(src, true);
	src[16] = 0xff;			/* dgid: a multicast group */
	sim_post_recv(b, 0, r0, sizeof(r0));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = TBR_WR_SEND;
	wr.flags = TBR_WR_SIGNALED;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.remote_qpn = TBR_QPN_MCAST;
	wr.remote_qkey = 0x1234;
	assert_int_equal(sim_post(a, &wr), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(b->ncq, 1);
	assert_int_equal(b->cq[0].status, TBR_WC_SUCCESS);
	assert_int_equal(b->cq[0].byte_len, TBR_GRH_LEN + 64);
	assert_memory_equal(r0 + TBR_GRH_LEN, src + TBR_UD_ADDR_LEN, 64);
	sim_free(s);

	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_UD_SEND;
	h.dqpn = TBR_QPN_MCAST;
	h.paylen = TBR_UD_ADDR_LEN;
	hl = tbr_hdr_build(f, &h);
	memcpy(f + hl, src, TBR_UD_ADDR_LEN);
	assert_ptr_equal(tbr_ud_frame_dgid(f, hl + TBR_UD_ADDR_LEN), f + hl + 16);
	/* a block cut short, or not a UD frame: no group */
	h.paylen = TBR_UD_ADDR_LEN - 1;
	hl = tbr_hdr_build(f, &h);
	assert_null(tbr_ud_frame_dgid(f, hl + TBR_UD_ADDR_LEN - 1));
	h.opcode = TBR_OP_SEND;
	h.paylen = TBR_UD_ADDR_LEN;
	h.msg_len = TBR_UD_ADDR_LEN;
	hl = tbr_hdr_build(f, &h);
	assert_null(tbr_ud_frame_dgid(f, hl + TBR_UD_ADDR_LEN));
}

/* an address block between two IPv4-mapped GIDs, or two IPv6 ones */
static void uda_fill(uint8_t *b, bool v4)
{
	memset(b, 0, TBR_UD_ADDR_LEN);
	if (v4) {
		b[10] = b[11] = b[26] = b[27] = 0xff;
		b[12] = 10; b[13] = 88; b[14] = 0; b[15] = 1;
		b[28] = 10; b[29] = 88; b[30] = 0; b[31] = 2;
	} else {
		b[0] = 0xfe; b[1] = 0x80; b[15] = 1;
		b[16] = 0xfe; b[17] = 0x80; b[31] = 2;
	}
	b[33] = 0x0a; b[34] = 0xbc; b[35] = 0xde;	/* flow label 0xabcde */
	b[36] = 0x28;					/* traffic class */
	b[37] = 64;					/* hop limit */
}

/*
 * cfg.ud_addr (the kernel's UD/GSI QPs): a datagram of any size whose Q_Key
 * is not the QP's current one completes nothing; one shorter than its
 * address block completes nothing whatever its Q_Key (it used to skip the
 * Q_Key translation of the kernel glue and reach a QP of any Q_Key with the
 * previous datagram's GRH). A good one completes with its own GRH: IPv4
 * (checksum valid) or IPv6, lengths of a RoCE v2 wire, data at 40.
 */
static void test_ud_addr_qkey_every_size(void **state)
{
	struct sim *s = tsim(TBR_QPT_UD, 81, cfg_ud_addr, NULL);
	struct sim_ep *a = &s->ep[0], *b = &s->ep[1];
	const struct tbr_tqp_counters *bc = tbr_tqp_counters(b->qp);
	static uint8_t rbuf[4][2048];
	static const uint8_t v4src[4] = { 10, 88, 0, 1 }, v4dst[4] = { 10, 88, 0, 2 };
	uint8_t src[TBR_UD_ADDR_LEN + 200], *g;
	uint32_t n, sum, i;
	uint64_t id = 100;

	tfill(s, src, sizeof(src));
	for (i = 0; i < 4; i++)
		sim_post_recv(b, i, rbuf[i], sizeof(rbuf[i]));
	/* every size 0..240 bytes of payload, wrong Q_Keys and short blocks */
	for (n = 0; n <= sizeof(src); n++) {
		/* (a Q_Key with the top bit would mean the sender's own) */
		static const uint32_t wrong[] = { 0x5555, 0, 0x1235, 0x7fffedcb };

		for (i = 0; i < 4; i++)
			assert_int_equal(ud_send(a, id++, src, n, wrong[i], 0,
						 i & 1), 0);
		if (n < TBR_UD_ADDR_LEN)
			assert_int_equal(ud_send(a, id++, src, n, 0x1234, 0,
						 n & 1), 0);
		assert_true(sim_run(s, T_SEC));
		assert_int_equal(b->ncq, 0);
	}
	assert_int_equal(bc->rx_malformed, 5 * TBR_UD_ADDR_LEN);
	assert_int_equal(bc->ud_drops, 4 * (sizeof(src) + 1 - TBR_UD_ADDR_LEN));

	/* the Q_Key changes (modify_qp): the old one is refused from now on */
	tbr_tqp_set_qkey(b->qp, 0x777);
	uda_fill(src, true);
	assert_int_equal(ud_send(a, id++, src, TBR_UD_ADDR_LEN + 5, 0x1234, 0,
				 false), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(b->ncq, 0);
	for (i = 0; i < 2; i++) {
		uda_fill(src, !i);
		assert_int_equal(ud_send(a, id++, src, TBR_UD_ADDR_LEN + 100,
					 0x777, 0x99, i), 0);
	}
	/* a block alone: no data */
	assert_int_equal(ud_send(a, id++, src, TBR_UD_ADDR_LEN, 0x777, 0, false), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(b->ncq, 3);

	/* IPv4: 20 zero bytes, a header with a valid checksum */
	g = rbuf[0];
	assert_int_equal(b->cq[0].status, TBR_WC_SUCCESS);
	assert_int_equal(b->cq[0].net_type, TBR_NET_IPV4);
	assert_int_equal(b->cq[0].byte_len, TBR_GRH_LEN + 100);
	for (i = 0; i < 20; i++)
		assert_int_equal(g[i], 0);
	assert_int_equal(g[20], 0x45);
	assert_int_equal(g[21], 0x28);
	assert_int_equal(g[22] << 8 | g[23], 20 + 8 + 12 + 8 + 100 + 4);
	assert_int_equal(g[28], 64);
	assert_int_equal(g[29], 17);
	assert_memory_equal(g + 32, v4src, 4);
	assert_memory_equal(g + 36, v4dst, 4);
	for (sum = 0, i = 20; i < 40; i += 2)
		sum += (uint32_t)g[i] << 8 | g[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	assert_int_equal(sum, 0xffff);
	assert_memory_equal(g + TBR_GRH_LEN, src + TBR_UD_ADDR_LEN, 100);

	/* IPv6 with ImmDt */
	g = rbuf[1];
	assert_int_equal(b->cq[1].net_type, TBR_NET_IPV6);
	assert_true(b->cq[1].flags & TBR_WC_WITH_IMM);
	assert_int_equal((uint32_t)g[0] << 24 | g[1] << 16 | g[2] << 8 | g[3],
			 6u << 28 | 0x28u << 20 | 0xabcde);
	assert_int_equal(g[4] << 8 | g[5], 8 + 12 + 8 + 4 + 100 + 4);
	assert_int_equal(g[6], 17);
	assert_int_equal(g[7], 64);
	assert_memory_equal(g + 8, src, 32);
	assert_memory_equal(g + TBR_GRH_LEN, src + TBR_UD_ADDR_LEN, 100);
	assert_int_equal(b->cq[2].byte_len, TBR_GRH_LEN);
	assert_int_equal(b->cq[2].status, TBR_WC_SUCCESS);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uc_clean_reordered),
		cmocka_unit_test(test_ud_addr_qkey_every_size),
		cmocka_unit_test(test_uc_loss_drops_without_error),
		cmocka_unit_test(test_uc_write_imm_and_rules),
		cmocka_unit_test(test_ud),
		cmocka_unit_test(test_ud_mcast),
	};

	tfilter();
	return cmocka_run_group_tests_name("uc_ud", tests, NULL, NULL);
}
