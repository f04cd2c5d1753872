// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_hostile.c - frames a broken or malicious peer could send: each is
 * rejected and counted, nothing crashes, and the QP keeps working.
 */
#include "tcommon.h"

#define EPSN	0xfffff0u	/* tsim()'s initial PSN */

static uint8_t fb[TBR_FRAME_MAX + 64];

static uint32_t mk(struct tbr_hdr *h, uint8_t op, uint32_t psn, uint32_t pl)
{
	uint32_t hl;

	h->opcode = op;
	h->psn = psn & TBR_PSN_MASK;
	h->conn_id = 7;
	if (!h->dqpn)
		h->dqpn = 0x22;
	h->paylen = (uint16_t)pl;
	hl = tbr_hdr_build(fb, h);
	memset(fb + hl, 0x5a, pl);
	return hl + pl;
}

/* After the abuse, ordinary traffic must still flow both ways. */
static void still_works(struct sim *s)
{
	uint8_t src[5000], dst[5000], back[5000];
	unsigned int n0 = s->ep[0].ncq;

	tfill(s, src, sizeof(src));
	sim_add_mr(&s->ep[1], 0x66, dst, sizeof(dst),
		   SIM_ACC_WRITE | SIM_ACC_READ);
	assert_int_equal(tpost(&s->ep[0], TBR_WR_WRITE, 100, src, 5000,
			       taddr(dst), 0x66, 0), 0);
	assert_int_equal(tpost(&s->ep[0], TBR_WR_READ, 101, back, 5000,
			       taddr(dst), 0x66, 0), 0);
	assert_true(sim_run(s, T_SEC));
	assert_int_equal(s->ep[0].ncq, n0 + 2);
	assert_int_equal(s->ep[0].cq[n0].status, TBR_WC_SUCCESS);
	assert_int_equal(s->ep[0].cq[n0 + 1].status, TBR_WC_SUCCESS);
	assert_memory_equal(dst, src, 5000);
	assert_memory_equal(back, src, 5000);
}

static void test_malformed(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 90, NULL, NULL);
	const struct tbr_tqp_counters *c = tbr_tqp_counters(s->ep[1].qp);
	struct tbr_hdr h;
	uint32_t len, i;
	uint64_t bad = 0;

	memset(&h, 0, sizeof(h));
	h.msg_len = 100;
	len = mk(&h, TBR_OP_SEND, EPSN, 100);
	for (i = 0; i < len; i++, bad++)
		assert_int_equal(sim_inject(s, 1, fb, i), -EINVAL);
	fb[1] = 0x77;		/* bad opcode */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	bad++;
	fb[1] = TBR_OP_SEND;
	fb[6] = 0xff;		/* paylen disagrees with the frame length */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	bad++;
	assert_int_equal(sim_inject(s, 1, fb, TBR_FRAME_MAX + 1), -EINVAL);
	bad++;
	assert_int_equal(c->rx_malformed, bad);
	assert_int_equal(c->rx_frames, 0);
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	still_works(s);
	sim_free(s);
}

/*
 * The frame the responder places straight from its bytes (a one-frame WRITE
 * at the expected PSN and MSN, tbr_resp_write_raw()) with one field wrong:
 * each is refused and counted as the parser and tbr_tqp_rx() count it,
 * nothing is placed; the same frame intact is then placed.
 */
static void test_raw_write_frames(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 94, NULL, NULL);
	const struct tbr_tqp_counters *c = tbr_tqp_counters(s->ep[1].qp);
	static uint8_t dst[64];
	struct tbr_hdr h;
	uint32_t len, j;

	memset(dst, 0, sizeof(dst));
	sim_add_mr(&s->ep[1], 0x66, dst, sizeof(dst), SIM_ACC_WRITE);
	memset(&h, 0, sizeof(h));
	h.msn = 0;
	h.msg_len = 16;
	h.rkey = 0x66;
	h.va = taddr(dst);
	len = mk(&h, TBR_OP_WRITE, EPSN, 16);
	fb[0] = TBR_WIRE_VERSION + 1;		/* another version */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	fb[0] = TBR_WIRE_VERSION;
	fb[2] |= 0x80;				/* an unknown flag */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	fb[2] &= (uint8_t)~0x80;
	assert_int_equal(sim_inject(s, 1, fb, len - 1), -EINVAL); /* short */
	assert_int_equal(c->rx_malformed, 3);
	h.dqpn = 0x23;				/* another QP */
	len = mk(&h, TBR_OP_WRITE, EPSN, 16);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	h.dqpn = 0x22;
	len = mk(&h, TBR_OP_WRITE, EPSN, 16);
	fb[5] ^= 1;				/* another connection */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	fb[5] ^= 1;
	assert_int_equal(c->rx_invalid, 2);
	assert_int_equal(c->rx_frames, 0);
	for (j = 0; j < sizeof(dst); j++)
		assert_int_equal(dst[j], 0);
	/* intact: placed */
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	assert_int_equal(c->rx_frames, 1);
	assert_int_equal(dst[0], 0x5a);
	assert_int_equal(dst[15], 0x5a);
	assert_int_equal(dst[16], 0);
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	sim_free(s);
}

static void test_semantic_garbage(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 91, NULL, NULL);
	const struct tbr_tqp_counters *c = tbr_tqp_counters(s->ep[1].qp);
	const struct tbr_tqp_counters *rc = tbr_tqp_counters(s->ep[0].qp);
	struct tbr_hdr h;
	uint32_t len;
	uint64_t inval = 0, oow = 0;

	/* wrong destination QP, wrong connection */
	memset(&h, 0, sizeof(h));
	h.msg_len = 10;
	h.dqpn = 0x99;
	len = mk(&h, TBR_OP_SEND, EPSN, 10);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.dqpn = 0x22;
	len = mk(&h, TBR_OP_SEND, EPSN, 10);
	fb[5] = 8;
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	/* UD opcode on an RC QP */
	memset(&h, 0, sizeof(h));
	len = mk(&h, TBR_OP_UD_SEND, EPSN, 4);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	/* PSN far outside the window, both just past it and half-way */
	memset(&h, 0, sizeof(h));
	h.msg_len = 10;
	len = mk(&h, TBR_OP_SEND, EPSN + 256, 10);
	assert_int_equal(sim_inject(s, 1, fb, len), -ERANGE);
	oow++;
	len = mk(&h, TBR_OP_SEND, EPSN + 0x7fffff, 10);
	assert_int_equal(sim_inject(s, 1, fb, len), -ERANGE);
	oow++;
	/* huge offset, offset not frame aligned, message length > 2^31 */
	memset(&h, 0, sizeof(h));
	h.msg_len = 2048;
	h.offset = 0xfffffc00u;
	len = mk(&h, TBR_OP_WRITE, EPSN, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.offset = 100;
	len = mk(&h, TBR_OP_WRITE, EPSN, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.offset = 0;
	h.msg_len = 0x80000001u;
	len = mk(&h, TBR_OP_WRITE, EPSN, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	/* payload length not what the geometry says */
	h.msg_len = 3000;
	len = mk(&h, TBR_OP_WRITE, EPSN, 1000);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	/* message number far ahead of the window */
	memset(&h, 0, sizeof(h));
	h.msg_len = 10;
	h.msn = 100000;
	len = mk(&h, TBR_OP_SEND, EPSN, 10);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	/* READ asking for more than a chunk / past its message / payload */
	memset(&h, 0, sizeof(h));
	h.msg_len = 1u << 30;
	h.req_len = 1u << 30;
	len = mk(&h, TBR_OP_READ_REQ, EPSN, 0);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.msg_len = 1000;
	h.req_len = 2000;
	len = mk(&h, TBR_OP_READ_REQ, EPSN, 0);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.req_len = 1000;
	len = mk(&h, TBR_OP_READ_REQ, EPSN, 8);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	/* duplicate READ far in the past asking beyond epsn */
	h.msg_len = 1 << 20;
	h.req_len = 64 * 1024;
	len = mk(&h, TBR_OP_READ_REQ, EPSN - 2, 0);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	assert_int_equal(c->rx_invalid, inval);
	assert_int_equal(c->out_of_window, oow);

	/* requester side: ACK beyond anything sent, bogus responses */
	memset(&h, 0, sizeof(h));
	h.dqpn = 0x11;
	h.epsn = EPSN + 50;
	len = mk(&h, TBR_OP_ACK, EPSN, 0);
	assert_int_equal(sim_inject(s, 0, fb, len), -EINVAL);
	memset(&h, 0, sizeof(h));
	h.dqpn = 0x11;
	len = mk(&h, TBR_OP_READ_RESP, EPSN, 100);
	assert_int_equal(sim_inject(s, 0, fb, len), -EINVAL);
	len = mk(&h, TBR_OP_ATOMIC_RESP, EPSN, 0);
	assert_int_equal(sim_inject(s, 0, fb, len), -EINVAL);
	/* NAKs for PSNs never sent are ignored */
	h.syndrome = TBR_SYN_NAK_REM_ACCESS;
	h.epsn = EPSN;
	len = mk(&h, TBR_OP_ACK, EPSN + 3, 0);
	assert_int_equal(sim_inject(s, 0, fb, len), 0);
	assert_int_equal(rc->rx_invalid, 3);

	assert_false(tbr_tqp_in_error(s->ep[0].qp));
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	assert_int_equal(s->ep[1].ncq, 0);
	still_works(s);
	sim_free(s);
}

/* An unaligned atomic reaching the responder: IBTA invalid request. */
static void test_unaligned_atomic_frame(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 92, NULL, NULL);
	uint64_t word = 0;
	struct tbr_hdr h;
	uint32_t len;

	sim_add_mr(&s->ep[1], 5, &word, 8, SIM_ACC_ATOMIC);
	memset(&h, 0, sizeof(h));
	h.rkey = 5;
	h.va = taddr(&word) + 4;
	h.swap_add = 1;
	len = mk(&h, TBR_OP_FETCH_ADD, EPSN, 0);
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	assert_true(tbr_tqp_in_error(s->ep[1].qp));
	assert_int_equal(s->ep[1].qp_error_status, TBR_WC_REM_INV_REQ_ERR);
	assert_int_equal(word, 0);
	sim_free(s);
}

/*
 * The WRITE both misfit tests send: 3000 bytes in frames of 1024, 1024 and
 * 952 into @dst (4 KiB, an MR of the responder). @want becomes what @dst
 * holds once the message is placed (mk()'s payload bytes); the first frame
 * (PSN EPSN) is sent, and @h is left set up for the others.
 */
static void misfit_start(struct sim *s, struct tbr_hdr *h, uint8_t *dst,
			 uint8_t *want)
{
	uint32_t len;

	memset(dst, 0, 4096);
	memset(want, 0, 4096);
	memset(want, 0x5a, 3000);
	sim_add_mr(&s->ep[1], 0x66, dst, 4096, SIM_ACC_WRITE);
	memset(h, 0, sizeof(*h));
	h->rkey = 0x66;
	h->va = taddr(dst);
	h->msg_len = 3000;
	len = mk(h, TBR_OP_WRITE, EPSN, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
}

/*
 * A WRITE of several frames arriving in order takes the responder's fast
 * path frame by frame: a later frame that does not fit the message its first
 * frame began (length, offset, PSN, opcode, payload) is rejected as by the
 * general path, writes nothing, and the genuine frame still completes it.
 */
static void test_write_frames_misfit(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 94, NULL, NULL);
	const struct tbr_tqp_counters *c = tbr_tqp_counters(s->ep[1].qp);
	uint8_t dst[4096], want[4096];
	struct tbr_hdr h;
	uint64_t inval = 0;
	uint32_t len;

	misfit_start(s, &h, dst, want);
	/* second frame (PSN EPSN + 1, offset 1024), each field wrong once */
	h.offset = 1024;
	h.msg_len = 4000;
	len = mk(&h, TBR_OP_WRITE, EPSN + 1, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.msg_len = 3000;
	h.offset = 2048;
	len = mk(&h, TBR_OP_WRITE, EPSN + 1, 952);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.offset = 1024;
	len = mk(&h, TBR_OP_WRITE, EPSN + 1, 1000);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	len = mk(&h, TBR_OP_WRITE_IMM, EPSN + 1, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	len = mk(&h, TBR_OP_WRITE, EPSN + 2, 1024);	/* PSN of a later frame */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	assert_int_equal(c->rx_invalid, inval);
	assert_memory_equal(dst + 1024, want + 3000, 1024);	/* zeros */
	len = mk(&h, TBR_OP_WRITE, EPSN + 1, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	/* the genuine rest: PSN EPSN + 2, offset 2048 */
	h.offset = 2048;
	len = mk(&h, TBR_OP_WRITE, EPSN + 2, 952);
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	assert_int_equal(c->rx_invalid, inval);
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	assert_memory_equal(dst, want, sizeof(dst));
	sim_free(s);
}

/*
 * The same message with its frames out of order, as striping over rails
 * delivers them: frames beyond a hole take the responder's out-of-order
 * path (tbr_resp_write_ooo). A later frame that does not fit the message
 * is rejected as by the general path and writes nothing; the genuine third
 * frame is placed beyond the hole, and the second, filling it, completes
 * the message.
 */
static void test_write_frames_misfit_out_of_order(void **state)
{
	static const uint8_t zero[2048];
	struct sim *s = tsim(TBR_QPT_RC, 95, NULL, NULL);
	const struct tbr_tqp_counters *c = tbr_tqp_counters(s->ep[1].qp);
	uint8_t dst[4096], want[4096];
	struct tbr_hdr h;
	uint64_t inval = 0;
	uint32_t len;

	misfit_start(s, &h, dst, want);
	/* third frame (PSN EPSN + 2, offset 2048) before the second */
	h.offset = 2048;
	h.msg_len = 3100;	/* a frame that would fit that message */
	len = mk(&h, TBR_OP_WRITE, EPSN + 2, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.msg_len = 3000;
	h.offset = 1024;	/* the second frame's offset at the third's PSN */
	len = mk(&h, TBR_OP_WRITE, EPSN + 2, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.offset = 2048;
	len = mk(&h, TBR_OP_WRITE, EPSN + 2, 900);	/* short payload */
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	len = mk(&h, TBR_OP_WRITE_IMM, EPSN + 2, 952);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	h.offset = 3072;	/* past the message */
	len = mk(&h, TBR_OP_WRITE, EPSN + 3, 952);
	assert_int_equal(sim_inject(s, 1, fb, len), -EINVAL);
	inval++;
	assert_int_equal(c->rx_invalid, inval);
	assert_memory_equal(dst + 1024, zero, sizeof(zero));
	h.offset = 2048;
	len = mk(&h, TBR_OP_WRITE, EPSN + 2, 952);
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	assert_memory_equal(dst + 2048, want, 952);
	assert_memory_equal(dst + 1024, zero, 1024);	/* the hole */
	assert_int_equal(sim_inject(s, 1, fb, len), 0);	/* a duplicate */
	assert_int_equal(c->duplicates, 1);
	h.offset = 1024;
	len = mk(&h, TBR_OP_WRITE, EPSN + 1, 1024);
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	assert_int_equal(c->rx_invalid, inval);
	assert_false(tbr_tqp_in_error(s->ep[1].qp));
	assert_memory_equal(dst, want, sizeof(dst));
	/* the message retired: the next PSN is the next message's */
	assert_int_equal(sim_inject(s, 1, fb, len), 0);
	assert_int_equal(c->duplicates, 2);
	sim_free(s);
}

/* Random bytes, and random mutations of valid frames: no crash. */
static void test_random_frames(void **state)
{
	struct sim *s = tsim(TBR_QPT_RC, 93, NULL, NULL);
	uint8_t dst[8192];
	struct tbr_hdr h;
	unsigned int i;

	sim_add_mr(&s->ep[1], 0x66, dst, sizeof(dst), SIM_ACC_WRITE);
	for (i = 0; i < 200000; i++) {
		uint32_t len = (uint32_t)(sim_rand(s) % 200);
		uint32_t j;

		memset(&h, 0, sizeof(h));
		h.msg_len = (uint32_t)(sim_rand(s) % 3000);
		h.offset = (uint32_t)(sim_rand(s) % 3) * 1024;
		h.rkey = 0x66;
		h.va = taddr(dst);
		h.dqpn = (i & 1) ? 0x11 : 0x22;
		h.epsn = EPSN;
		mk(&h, (uint8_t)(1 + sim_rand(s) % TBR_OP_MAX),
		   EPSN + (uint32_t)(sim_rand(s) % 8), 0);
		for (j = 16; j < len; j++)
			if (sim_rand(s) % 4 == 0)
				fb[j] = (uint8_t)sim_rand(s);
		if (len >= 8) {
			fb[6] = (uint8_t)((len - tbr_hdr_len(fb[1])) >> 8);
			fb[7] = (uint8_t)(len - tbr_hdr_len(fb[1]));
		}
		sim_inject(s, i & 1 ? 0 : 1, fb, len);
		if (i % 64 == 0)
			sim_run(s, 100000);
	}
	assert_true(tbr_tqp_counters(s->ep[1].qp)->rx_malformed > 0);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_raw_write_frames),
		cmocka_unit_test(test_semantic_garbage),
		cmocka_unit_test(test_unaligned_atomic_frame),
		cmocka_unit_test(test_write_frames_misfit),
		cmocka_unit_test(test_write_frames_misfit_out_of_order),
		cmocka_unit_test(test_random_frames),
	};

	tfilter();
	return cmocka_run_group_tests_name("hostile", tests, NULL, NULL);
}
