// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_pkey.c - P_Key partitions in the transport core: the matching rule,
 * the P_Key every frame carries, the receive-side check (RC, UC, UD, GSI)
 * and a table changed under connected QPs.
 */
#include "tcommon.h"

#define RKEY	0x500u

/* the tables of ep[0] and ep[1] (sim_new: cfg.pkeys[i]) */
static struct tbr_pkey_table tbl[2];

static void cfg_pkeys(struct tbr_tqp_cfg *cfg)
{
	cfg->pkeys = tbl;
}

static void conn_short(struct tbr_tqp_conn *c)
{
	c->timeout_ns = 100000;
	c->retry_cnt = 2;
	c->uc_reorder_ns = 50000;
}

/* both QPs on slot @idx of their tables */
static struct sim *pk_sim(enum tbr_tqp_type type, u32 idx)
{
	struct sim *s = tsim(type, 46, cfg_pkeys, conn_short);

	assert_int_equal(tbr_tqp_set_pkey_index(s->ep[0].qp, idx), 0);
	assert_int_equal(tbr_tqp_set_pkey_index(s->ep[1].qp, idx), 0);
	return s;
}

static uint16_t last_pkey[2];
static uint32_t ntapped[2];

static void pk_tap(struct sim *s, int dst, const uint8_t *buf, uint32_t len)
{
	struct tbr_hdr h;

	if (tbr_frame_parse(buf, len, &h))
		return;
	last_pkey[dst] = tbr_hdr_pkey(&h);
	ntapped[dst]++;
}

static void tables(uint16_t a1, uint16_t b1)
{
	memset(tbl, 0, sizeof(tbl));
	tbl[0].key[0] = TBR_PKEY_DEFAULT;
	tbl[1].key[0] = TBR_PKEY_DEFAULT;
	tbl[0].key[1] = a1;
	tbl[1].key[1] = b1;
}

static void test_match_rule(void **state)
{
	/* full with full and with limited; limited with limited never */
	assert_true(tbr_pkey_match(0x8001, 0x8001));
	assert_true(tbr_pkey_match(0x8001, 0x0001));
	assert_true(tbr_pkey_match(0x0001, 0x8001));
	assert_false(tbr_pkey_match(0x0001, 0x0001));
	assert_false(tbr_pkey_match(0x8001, 0x8002));
	assert_true(tbr_pkey_match(0xffff, 0x7fff));
	assert_false(tbr_pkey_match(0x7fff, 0x7fff));
	/* partition 0 is no partition */
	assert_false(tbr_pkey_match(0x8000, 0x8000));
	assert_false(tbr_pkey_match(0, 0));
	assert_false(tbr_pkey_match(0, 0x8000));
	/* no table: the default partition in slot 0 only */
	assert_int_equal(tbr_pkey_get(NULL, 0), TBR_PKEY_DEFAULT);
	assert_int_equal(tbr_pkey_get(NULL, 1), 0);
	assert_int_equal(tbr_pkey_find(NULL, 0x7fff), 0);
	assert_int_equal(tbr_pkey_find(NULL, 0x8001), -1);
	tables(0x0003, 0x8003);
	assert_int_equal(tbr_pkey_find(&tbl[0], 0x8003), 1);
	assert_int_equal(tbr_pkey_find(&tbl[0], 0x0003), -1);
	assert_int_equal(tbr_pkey_get(&tbl[0], TBR_PKEY_TBL_LEN), 0);
}

/* RC WRITE of @len bytes from ep[0] to ep[1]; returns ep[0]'s status */
static uint32_t rc_write(struct sim *s, uint8_t *src, uint8_t *dst,
			 uint32_t len)
{
	assert_int_equal(tpost(&s->ep[0], TBR_WR_WRITE, 1, src, len,
			       taddr(dst), RKEY, 0), 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[0].ncq, 1);
	return s->ep[0].cq[0].status;
}

/*
 * Members of one partition talk, every frame both ways carrying its P_Key;
 * a full and a limited member too.
 */
static void test_rc_members(void **state)
{
	static const uint16_t b_keys[] = { 0x8005, 0x0005 };
	uint8_t src[5000], dst[5000];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct sim *s;

		tables(0x8005, b_keys[i]);
		s = pk_sim(TBR_QPT_RC, 1);
		s->tap = pk_tap;
		memset(ntapped, 0, sizeof(ntapped));
		tfill(s, src, sizeof(src));
		memset(dst, 0, sizeof(dst));
		sim_add_mr(&s->ep[1], RKEY, dst, sizeof(dst), SIM_ACC_WRITE);
		assert_int_equal(rc_write(s, src, dst, sizeof(src)),
				 TBR_WC_SUCCESS);
		assert_memory_equal(src, dst, sizeof(src));
		/* data to ep[1] with A's key, ACKs to ep[0] with B's */
		assert_true(ntapped[1] >= 2 && ntapped[0] >= 1);
		assert_int_equal(last_pkey[1], 0x8005);
		assert_int_equal(last_pkey[0], b_keys[i]);
		assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->pkey_violations, 0);
		sim_free(s);
	}
}

/*
 * A QP whose slot holds another partition, or two limited members: the
 * receiver drops every frame and counts it, nothing is placed, the sender
 * never gets an ACK (RETRY_EXC_ERR) and the receiver no completion.
 */
static void test_rc_refused(void **state)
{
	static const uint16_t keys[][2] = {
		{ 0x8005, 0x8006 },	/* another partition */
		{ 0x0005, 0x0005 },	/* limited - limited */
		{ 0x8005, 0 },		/* an empty slot */
	};
	uint8_t src[3000], dst[3000];
	unsigned int i;

	for (i = 0; i < 3; i++) {
		const struct tbr_tqp_counters *bc;
		struct sim *s;

		tables(keys[i][0], keys[i][1]);
		s = pk_sim(TBR_QPT_RC, 1);
		bc = tbr_tqp_counters(s->ep[1].qp);
		tfill(s, src, sizeof(src));
		memset(dst, 0, sizeof(dst));
		sim_add_mr(&s->ep[1], RKEY, dst, sizeof(dst), SIM_ACC_WRITE);
		assert_int_equal(rc_write(s, src, dst, sizeof(src)),
				 TBR_WC_RETRY_EXC_ERR);
		assert_true(bc->pkey_violations >= 3);
		assert_int_equal(bc->rx_frames, 0);
		assert_int_equal(bc->acks_sent, 0);
		assert_int_equal(s->ep[1].ncq, 0);
		for (uint32_t j = 0; j < sizeof(dst); j++)
			assert_int_equal(dst[j], 0);
		sim_free(s);
	}
}

/*
 * A forged frame with another P_Key to a connected QP: refused with
 * -EACCES and counted before anything else looks at it (no NAK, no ACK).
 */
static void test_rc_injected(void **state)
{
	uint8_t fb[TBR_FRAME_MAX];
	struct tbr_hdr h;
	struct sim *s;
	uint32_t hl;

	tables(0x8005, 0x8005);
	s = pk_sim(TBR_QPT_RC, 1);
	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_SEND;
	h.conn_id = 7;
	h.dqpn = 0x22;
	h.psn = 0xfffff0;
	h.msg_len = 4;
	h.paylen = 4;
	h.npkey = (uint16_t)~0x8006u;
	hl = tbr_hdr_build(fb, &h);
	assert_int_equal(sim_inject(s, 1, fb, hl + 4), -EACCES);
	/* the default P_Key (a zeroed header): not the QP's partition */
	h.npkey = 0;
	tbr_hdr_build(fb, &h);
	assert_int_equal(sim_inject(s, 1, fb, hl + 4), -EACCES);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->pkey_violations, 2);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->naks_sent, 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[1].tx_frames, 0);
	assert_int_equal(s->ep[1].ncq, 0);
	sim_free(s);
}

/*
 * The same for the frame the responder places straight from its bytes (a
 * one-frame WRITE at the expected PSN and MSN, tbr_resp_write_raw()): with
 * another P_Key, or the default one, refused with -EACCES, counted, nothing
 * placed; with the QP's own P_Key the same frame is taken and placed.
 */
static void test_rc_injected_write(void **state)
{
	static uint8_t dst[64];
	uint8_t fb[TBR_FRAME_MAX];
	struct tbr_hdr h;
	struct sim *s;
	uint32_t hl, j;

	tables(0x8005, 0x8005);
	s = pk_sim(TBR_QPT_RC, 1);
	memset(dst, 0, sizeof(dst));
	sim_add_mr(&s->ep[1], RKEY, dst, sizeof(dst), SIM_ACC_WRITE);
	memset(&h, 0, sizeof(h));
	h.opcode = TBR_OP_WRITE;
	h.conn_id = 7;
	h.dqpn = 0x22;
	h.psn = 0xfffff0;
	h.msn = 0;
	h.msg_len = 4;
	h.paylen = 4;
	h.rkey = RKEY;
	h.va = taddr(dst);
	h.npkey = (uint16_t)~0x8006u;
	hl = tbr_hdr_build(fb, &h);
	memset(fb + hl, 0xa5, 4);
	assert_int_equal(sim_inject(s, 1, fb, hl + 4), -EACCES);
	h.npkey = 0;	/* the default P_Key */
	tbr_hdr_build(fb, &h);
	assert_int_equal(sim_inject(s, 1, fb, hl + 4), -EACCES);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->pkey_violations, 2);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->rx_frames, 0);
	for (j = 0; j < sizeof(dst); j++)
		assert_int_equal(dst[j], 0);
	/* the QP's own partition: the same frame is placed */
	h.npkey = (uint16_t)~0x8005u;
	tbr_hdr_build(fb, &h);
	assert_int_equal(sim_inject(s, 1, fb, hl + 4), 0);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->rx_frames, 1);
	assert_int_equal(dst[0], 0xa5);
	assert_int_equal(dst[3], 0xa5);
	assert_int_equal(dst[4], 0);
	sim_free(s);
}

/*
 * The table changes under a connected QP (a sweep): slots other than the
 * QP's change and it goes on; its own slot emptied, its peer's frames are
 * refused from the next one on; the slot back, a new QP talks again.
 */
static void test_table_change(void **state)
{
	uint8_t src[3000], dst[3000];
	struct sim *s;

	tables(0x8005, 0x8005);
	tbl[1].key[2] = 0x8009;
	s = pk_sim(TBR_QPT_RC, 1);
	tfill(s, src, sizeof(src));
	sim_add_mr(&s->ep[1], RKEY, dst, sizeof(dst), SIM_ACC_WRITE);
	assert_int_equal(rc_write(s, src, dst, sizeof(src)), TBR_WC_SUCCESS);
	/* other slots come and go: the QP does not notice */
	tbl[0].key[3] = 0x8007;
	tbl[1].key[3] = 0x0007;
	tbl[1].key[2] = 0;
	s->ep[0].ncq = 0;
	memset(dst, 0, sizeof(dst));
	assert_int_equal(rc_write(s, src, dst, sizeof(src)), TBR_WC_SUCCESS);
	assert_memory_equal(src, dst, sizeof(src));
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	/* the receiver leaves the partition: refused, counted */
	tbl[1].key[1] = 0;
	s->ep[0].ncq = 0;
	assert_int_equal(rc_write(s, src, dst, sizeof(src)),
			 TBR_WC_RETRY_EXC_ERR);
	assert_true(tbr_tqp_counters(s->ep[1].qp)->pkey_violations > 0);
	sim_free(s);
}

static void test_uc_refused(void **state)
{
	uint8_t src[2000], dst[2][2000];
	struct sim *s;

	tables(0x0005, 0x0005);
	s = pk_sim(TBR_QPT_UC, 1);
	tfill(s, src, sizeof(src));
	memset(dst, 0, sizeof(dst));
	sim_post_recv(&s->ep[1], 8, dst[0], sizeof(dst[0]));
	sim_post_recv(&s->ep[1], 9, dst[1], sizeof(dst[1]));
	assert_int_equal(tpost(&s->ep[0], TBR_WR_SEND, 1, src, sizeof(src),
			       0, 0, 0), 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[1].ncq, 0);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->pkey_violations, 2);
	/* B becomes a full member: the next message arrives */
	tbl[1].key[1] = 0x8005;
	assert_int_equal(tpost(&s->ep[0], TBR_WR_SEND, 2, src, sizeof(src),
			       0, 0, 0), 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[1].ncq, 1);
	assert_int_equal(s->ep[1].cq[0].status, TBR_WC_SUCCESS);
	assert_memory_equal(dst[0], src, sizeof(src));
	sim_free(s);
}

static int ud_post(struct sim_ep *ep, uint64_t id, void *buf, uint32_t len,
		   uint16_t pkey_index)
{
	struct tbr_sge sge = tsge(buf, len);
	struct tbr_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = TBR_WR_SEND;
	wr.flags = TBR_WR_SIGNALED;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.remote_qpn = 0x22;
	wr.remote_qkey = 0x80000000u;
	wr.conn_id = 3;
	wr.pkey_index = pkey_index;
	return sim_post(ep, &wr);
}

/* UD: the receiving QP's partition only; a datagram of another is dropped */
static void test_ud(void **state)
{
	uint8_t src[100], r[2][400];
	struct sim *s;

	tables(0x8005, 0x8006);
	tbl[1].key[2] = 0x0005;
	s = pk_sim(TBR_QPT_UD, 1);
	tfill(s, src, sizeof(src));
	sim_post_recv(&s->ep[1], 0, r[0], sizeof(r[0]));
	sim_post_recv(&s->ep[1], 1, r[1], sizeof(r[1]));
	/* a WR's pkey_index is for QP1 only: this goes with 0x8005 */
	assert_int_equal(ud_post(&s->ep[0], 1, src, sizeof(src), 0), 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[1].ncq, 0);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->pkey_violations, 1);
	/* B's QP moves to slot 2 (limited 0x0005): A is a full member */
	assert_int_equal(tbr_tqp_set_pkey_index(s->ep[1].qp, 2), 0);
	assert_int_equal(tbr_tqp_set_pkey_index(s->ep[1].qp,
						 TBR_PKEY_TBL_LEN), -EINVAL);
	assert_int_equal(ud_post(&s->ep[0], 2, src, sizeof(src), 0), 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[1].ncq, 1);
	assert_int_equal(s->ep[1].cq[0].pkey_index, 2);
	assert_memory_equal(r[0] + TBR_GRH_LEN, src, sizeof(src));
	sim_free(s);
}

static void cfg_gsi(struct tbr_tqp_cfg *cfg)
{
	cfg->pkeys = tbl;
	cfg->gsi = true;
}

/*
 * QP1 (GSI): sends each datagram with its WR's slot and takes any P_Key of
 * its port's table, reporting the slot; one its table lacks is dropped.
 */
static void test_gsi(void **state)
{
	uint8_t src[64], r[3][200];
	struct tbr_tqp_cfg cfg;
	struct sim *s;
	int i;

	sim_default_cfg(&cfg, TBR_QPT_RC);
	cfg.gsi = true;
	assert_null(tbr_tqp_create(&cfg, NULL, NULL));
	tables(0x8005, 0);
	tbl[0].key[2] = 0x8009;
	tbl[1].key[4] = 0x0005;
	s = tsim(TBR_QPT_UD, 47, cfg_gsi, NULL);
	s->tap = pk_tap;
	tfill(s, src, sizeof(src));
	for (i = 0; i < 3; i++)
		sim_post_recv(&s->ep[1], i, r[i], sizeof(r[i]));
	/* slot 1 (0x8005): B has the partition, limited, in slot 4 */
	assert_int_equal(ud_post(&s->ep[0], 1, src, sizeof(src), 1), 0);
	sim_run(s, T_SEC);
	assert_int_equal(last_pkey[1], 0x8005);
	assert_int_equal(s->ep[1].ncq, 1);
	assert_int_equal(s->ep[1].cq[0].pkey_index, 4);
	/* slot 0, the default partition: B's slot 0 */
	assert_int_equal(ud_post(&s->ep[0], 2, src, sizeof(src), 0), 0);
	sim_run(s, T_SEC);
	assert_int_equal(s->ep[1].ncq, 2);
	assert_int_equal(s->ep[1].cq[1].pkey_index, 0);
	/* slot 2 (0x8009): not in B's table */
	assert_int_equal(ud_post(&s->ep[0], 3, src, sizeof(src), 2), 0);
	sim_run(s, T_SEC);
	assert_int_equal(last_pkey[1], 0x8009);
	assert_int_equal(s->ep[1].ncq, 2);
	assert_int_equal(tbr_tqp_counters(s->ep[1].qp)->pkey_violations, 1);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_rule),
		cmocka_unit_test(test_rc_members),
		cmocka_unit_test(test_rc_refused),
		cmocka_unit_test(test_rc_injected),
		cmocka_unit_test(test_rc_injected_write),
		cmocka_unit_test(test_table_change),
		cmocka_unit_test(test_uc_refused),
		cmocka_unit_test(test_ud),
		cmocka_unit_test(test_gsi),
	};

	tfilter();
	return cmocka_run_group_tests_name("pkey", tests, NULL, NULL);
}
