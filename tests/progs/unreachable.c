// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * unreachable - an RC QP whose peer can never be reached ends in an error
 * completion within its retry budget, never waits forever.
 *
 *   unreachable [-d DEV] [-g GID_INDEX] DEST_GID MAX_SECONDS
 *
 * Connects an RC QP (timeout 14 = 67 ms, retry_cnt 7: common.c rc_connect)
 * to QP 0x123 at DEST_GID (an IPv6 or IPv4-mapped GID the RDMA core resolves
 * to a MAC no link leads to), posts two signaled SENDs and polls: the first
 * must complete with IBV_WC_RETRY_EXC_ERR, no sooner than the budget allows
 * (8 x 67 ms: the retries happened) and within MAX_SECONDS, the second with
 * IBV_WC_WR_FLUSH_ERR, and the QP must read back ERR. Prints "unreachable:
 * RETRY_EXC_ERR after S s" and exits 0, or "FAIL: ..." and exits 1.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* (retry_cnt + 1) * 4.096 us * 2^timeout for rc_connect's 7 and 14 */
#define BUDGET_S	(8 * 4.096e-6 * (1 << 14))

static void parse_gid(const char *s, union ibv_gid *gid)
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {	/* IPv4-mapped */
		memset(gid, 0, sizeof(*gid));
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &a4, 4);
		return;
	}
	CHECK(inet_pton(AF_INET6, s, gid->raw) == 1, "bad GID '%s'", s);
}

int main(int argc, char **argv)
{
	const char *dev = "tbrdma0";
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr qa;
	struct ibv_context *ctx;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc[2];
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	double t0, end, took, max_s;
	int gid_index = 0, opt, n = 0, i, r;
	static char buf[64];

	snprintf(die_ctx, sizeof(die_ctx), "unreachable");
	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'g')
			gid_index = atoi(optarg);
		else
			die("usage: unreachable [-d DEV] [-g GID_INDEX] DEST_GID MAX_SECONDS");
	}
	CHECK(argc - optind == 2, "usage: unreachable [-d DEV] [-g GID_INDEX] DEST_GID MAX_SECONDS");
	parse_gid(argv[optind], &gid);
	max_s = atof(argv[optind + 1]);

	ctx = open_device(dev);
	CHECK((pd = ibv_alloc_pd(ctx)), "ibv_alloc_pd");
	CHECK((cq = ibv_create_cq(ctx, 4, NULL, NULL, 0)), "ibv_create_cq");
	CHECK((mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)), "ibv_reg_mr");
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	CHECK((qp = ibv_create_qp(pd, &ia)), "ibv_create_qp");
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	CHECK(!ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS), "modify_qp -> INIT");
	rc_connect(qp, gid_index, 0x123, 0, &gid, 0);

	sge.addr = (uintptr_t)buf;
	sge.length = sizeof(buf);
	sge.lkey = mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	t0 = now_s();
	for (i = 0; i < 2; i++) {
		wr.wr_id = i + 1;
		CHECK(!ibv_post_send(qp, &wr, &bad), "ibv_post_send %d", i);
	}
	end = t0 + max_s;
	took = 0;
	while (n < 2) {
		r = ibv_poll_cq(cq, 2 - n, &wc[n]);
		CHECK(r >= 0, "ibv_poll_cq");
		if (r && !n)
			took = now_s() - t0;
		n += r;
		if (n < 2) {
			CHECK(now_s() < end, "%d of 2 completions within %.1f s", n, max_s);
			usleep(1000);
		}
	}
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_RETRY_EXC_ERR,
	      "first completion: %s, expected RETRY_EXC_ERR", wc_str(&wc[0]));
	CHECK(wc[1].wr_id == 2 && wc[1].status == IBV_WC_WR_FLUSH_ERR,
	      "second completion: %s, expected WR_FLUSH_ERR", wc_str(&wc[1]));
	CHECK(took >= BUDGET_S * 0.9, "error after %.3f s: before the retry budget (%.3f s)",
	      took, BUDGET_S);
	CHECK(!ibv_query_qp(qp, &qa, IBV_QP_STATE, &ia) && qa.qp_state == IBV_QPS_ERR,
	      "QP state %d, expected ERR", qa.qp_state);
	printf("unreachable: RETRY_EXC_ERR after %.3f s (budget 8 x 67.1 ms = %.3f s, limit %.1f s)\n",
	       took, BUDGET_S, max_s);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
