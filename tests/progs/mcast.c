// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mcast: UD multicast through the provider on one device (the datagrams
 * loop back to it), every result checked:
 * - a group with three members: three UD QPs attached to one multicast GID
 *   (IPv4-mapped 239.1.2.3) each receive every datagram a fourth QP sends
 *   to the group (remote QPN 0xFFFFFF), data and GRH (IPv4, destination the
 *   group) verified; a QP not attached, and a member whose Q_Key differs,
 *   receive nothing;
 * - attaching twice is harmless; after ibv_detach_mcast a QP receives no
 *   more while the other members go on;
 * - bad input: an RC QP, a GID that is not multicast (EINVAL); detaching a
 *   QP that is not attached (EINVAL); destroying a QP still attached (EBUSY,
 *   uverbs' rule).
 * usage: mcast [DEVICE]   (default tbrdma0; needs an IPv4 address on its
 * netdev). Prints one line per case; FAIL: ... and exit 1 on any mismatch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define QKEY	0x11111111
#define MSG	256
#define GRH	40
#define NQP	5	/* 0..2 members, 3 not attached, 4 member with another Q_Key */
#define SENDS	8

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid, mgid;
static int gid_index;
static char *buf;
static struct ibv_mr *mr;


static struct ibv_qp *ud_qp(uint32_t qkey)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	CHECK(qp, "ibv_create_qp UD: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY), "UD -> INIT");
	a.qp_state = IBV_QPS_RTR;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "UD -> RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), "UD -> RTS");
	return qp;
}

/* receive buffer i of QP q: GRH + MSG bytes */
static char *rbuf(int q, int i)
{
	return buf + ((size_t)(q * SENDS * 2 + i) + 1) * (GRH + MSG);
}

static void post_recvs(struct ibv_qp *qp, int q)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge s;
	int i;

	for (i = 0; i < SENDS * 2; i++) {
		s = (struct ibv_sge){ .addr = (uintptr_t)rbuf(q, i),
				      .length = GRH + MSG, .lkey = mr->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = (uint64_t)q << 32 | i,
					   .sg_list = &s, .num_sge = 1 };
		CHECK(!ibv_post_recv(qp, &wr, &bad), "ibv_post_recv");
	}
}

/* send datagram @n (MSG bytes of value n) from @qp to the group */
static void send_group(struct ibv_qp *qp, struct ibv_ah *ah, int n)
{
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000 + n, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = ah, .remote_qpn = 0xffffff,
					     .remote_qkey = QKEY } }, *bad;

	memset(buf, 'A' + n, MSG);
	CHECK(!ibv_post_send(qp, &wr, &bad), "ibv_post_send to the group");
}

/*
 * Send @n datagrams (numbered from @first) and collect completions for
 * 2 s: each QP in @want must receive every one, in order, the others none.
 */
static void round_trip(struct ibv_qp *src, struct ibv_ah *ah, int first, int n,
		       const bool want[NQP], int got_before[NQP], const char *what)
{
	int got[NQP] = { 0 }, sent = 0, i, q;
	double end;
	struct ibv_wc w;
	char *r;

	for (i = 0; i < n; i++)
		send_group(src, ah, first + i);
	end = now_s() + 2;
	while (now_s() < end) {
		if (ibv_poll_cq(cq, 1, &w) != 1)
			continue;
		CHECK(w.status == IBV_WC_SUCCESS, "%s: %s", what, wc_str(&w));
		if (w.opcode == IBV_WC_SEND) {
			sent++;
			continue;
		}
		q = w.wr_id >> 32;
		i = w.wr_id & 0xffffffff;
		CHECK(q < NQP && want[q], "%s: QP %d received a datagram", what, q);
		CHECK(i == got_before[q] + got[q], "%s: QP %d: receive %d out of order",
		      what, q, i);
		CHECK(w.byte_len == GRH + MSG && (w.wc_flags & IBV_WC_GRH) &&
		      w.src_qp == src->qp_num,
		      "%s: QP %d: %s src_qp %u flags %#x", what, q, wc_str(&w),
		      w.src_qp, w.wc_flags);
		r = rbuf(q, i);
		/* IPv4 GRH: 20 zero bytes, the header; daddr = the group */
		CHECK(r[20] == 0x45 && !memcmp(r + 36, mgid.raw + 12, 4),
		      "%s: QP %d: GRH not IPv4 to the group", what, q);
		CHECK(r[GRH] == 'A' + first + got[q] && r[GRH + MSG - 1] == r[GRH],
		      "%s: QP %d: datagram %d data %#x", what, q, got[q], r[GRH]);
		got[q]++;
	}
	CHECK(sent == n, "%s: %d of %d sends completed", what, sent, n);
	for (q = 0; q < NQP; q++) {
		CHECK(got[q] == (want[q] ? n : 0), "%s: QP %d received %d of %d",
		      what, q, got[q], want[q] ? n : 0);
		got_before[q] += got[q];
	}
}

int main(int argc, char **argv)
{
	static const bool all3[NQP] = { true, true, true, false, false };
	static const bool two[NQP] = { true, false, true, false, false };
	struct ibv_qp_init_attr rcia = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_qp *qp[NQP], *src, *rc;
	int got[NQP] = { 0 }, q;
	union ibv_gid ucast;
	struct ibv_ah *ah;

	snprintf(die_ctx, sizeof(die_ctx), "mcast");
	ctx = open_device(argc > 1 ? argv[1] : "tbrdma0");
	gid_index = find_v4_gid(ctx, &gid);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	buf = calloc(1, (size_t)(NQP * SENDS * 2 + 1) * (GRH + MSG));
	CHECK(pd && cq && buf, "pd/cq/buf");
	mr = ibv_reg_mr(pd, buf, (size_t)(NQP * SENDS * 2 + 1) * (GRH + MSG),
			IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));

	/* ::ffff:239.1.2.3 */
	memset(&mgid, 0, sizeof(mgid));
	mgid.raw[10] = mgid.raw[11] = 0xff;
	mgid.raw[12] = 239; mgid.raw[13] = 1; mgid.raw[14] = 2; mgid.raw[15] = 3;
	for (q = 0; q < NQP; q++) {
		qp[q] = ud_qp(q == 4 ? QKEY + 1 : QKEY);
		post_recvs(qp[q], q);
	}
	src = ud_qp(QKEY);
	for (q = 0; q < NQP; q++) {
		if (q == 3)
			continue;
		CHECK(!ibv_attach_mcast(qp[q], &mgid, 0), "attach QP %d: %s", q,
		      strerror(errno));
	}
	CHECK(!ibv_attach_mcast(qp[1], &mgid, 0), "attach QP 1 again");
	aa.grh.dgid = mgid;
	aa.grh.sgid_index = gid_index;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "ibv_create_ah to the group: %s", strerror(errno));

	round_trip(src, ah, 0, SENDS, all3, got, "three members");
	printf("three members: each received %d datagrams; not attached and other Q_Key: none\n",
	       SENDS);
	CHECK(!ibv_detach_mcast(qp[1], &mgid, 0), "detach QP 1: %s", strerror(errno));
	round_trip(src, ah, SENDS, SENDS, two, got, "after a detach");
	printf("after detaching one: the other two received %d more, it none\n", SENDS);

	/* bad input */
	CHECK(ibv_detach_mcast(qp[1], &mgid, 0) == EINVAL, "detach when not attached");
	rcia.send_cq = rcia.recv_cq = cq;
	rc = ibv_create_qp(pd, &rcia);
	CHECK(rc, "ibv_create_qp RC");
	CHECK(ibv_attach_mcast(rc, &mgid, 0) == EINVAL, "attach an RC QP");
	ucast = gid;
	CHECK(ibv_attach_mcast(qp[3], &ucast, 0) == EINVAL, "attach a unicast GID");
	printf("bad input: detach when not attached, RC QP, unicast GID: EINVAL\n");

	CHECK(!ibv_destroy_qp(rc) && !ibv_destroy_ah(ah), "destroy rc/ah");
	/* uverbs refuses to destroy a QP still attached (EBUSY): detach first */
	CHECK(ibv_destroy_qp(qp[0]) == EBUSY, "destroy an attached QP: not EBUSY");
	for (q = 0; q < NQP; q++) {
		if (q != 1 && q != 3)
			CHECK(!ibv_detach_mcast(qp[q], &mgid, 0), "detach QP %d", q);
		CHECK(!ibv_destroy_qp(qp[q]), "destroy QP %d", q);
	}
	CHECK(!ibv_destroy_qp(src) && !ibv_dereg_mr(mr) && !ibv_destroy_cq(cq) &&
	      !ibv_dealloc_pd(pd) && !ibv_close_device(ctx), "teardown");
	printf("mcast: ok\n");
	return 0;
}
