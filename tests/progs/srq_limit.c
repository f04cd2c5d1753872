// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq_limit - the SRQ limit event driven by real traffic between two hosts.
 *
 *   srq_limit [-d DEV] [-g GID_INDEX] [-p PORT] server
 *   srq_limit [-d DEV] [-g GID_INDEX] [-p PORT] client SERVER_IPV4
 *
 * The server's RC QP takes its receives from an SRQ holding 16 WQEs, armed
 * with limit 8 (ibv_modify_srq IBV_SRQ_LIMIT). The client sends 7 messages:
 * 9 WQEs are left, no IBV_EVENT_SRQ_LIMIT_REACHED may arrive. It sends 2
 * more: 7 < 8 left, the event must arrive (within 10 s) naming our SRQ, the
 * limit must read back 0 (disarmed, IBTA), and 5 further messages must not
 * raise it again. Every message is checked byte for byte. Prints
 * "srq_limit SIDE: ok" and exits 0, or "FAIL: ..." and exits 1.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define SRQ_WRS		16
#define SRQ_LIMIT	8
#define MSG_LEN		256

static const char *role = "?";

struct peer {
	uint32_t qpn, psn;
	union ibv_gid gid;
};

static struct ibv_context *ctx;
static struct ibv_cq *cq;
static struct ibv_srq *srq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t buf[SRQ_WRS + 1][MSG_LEN];
static int ctl_fd = -1;

static void poll_wc(struct ibv_wc *wc, const char *what)
{
	double end = now_s() + 10;
	int r;

	while (!(r = ibv_poll_cq(cq, 1, wc))) {
		CHECK(now_s() < end, "%s: no completion within 10 s", what);
		usleep(100);
	}
	CHECK(r == 1 && wc->status == IBV_WC_SUCCESS, "%s: %s", what,
	      r == 1 ? wc_str(wc) : "poll_cq failed");
}

/* an async event of @type within @ms, or 0 when none arrived */
static int async_event(int ms, struct ibv_async_event *ev)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	int r = poll(&p, 1, ms);

	CHECK(r >= 0, "poll async_fd: %s", strerror(errno));
	if (!r)
		return 0;
	CHECK(!ibv_get_async_event(ctx, ev), "ibv_get_async_event");
	ibv_ack_async_event(ev);
	return 1;
}

static void sync_step(uint32_t step)
{
	uint32_t got;

	oob_xfer(ctl_fd, &step, sizeof(step), true);
	oob_xfer(ctl_fd, &got, sizeof(got), false);
	CHECK(got == step, "control channel out of step (%u vs %u)", got, step);
}

static void post_recv(unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)buf[i], MSG_LEN, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "ibv_post_srq_recv");
}

static void send_msgs(unsigned int first, unsigned int n)
{
	unsigned int i;
	struct ibv_wc wc;

	for (i = first; i < first + n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf[SRQ_WRS], MSG_LEN, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		memset(buf[SRQ_WRS], (int)(0x40 + i), MSG_LEN);
		CHECK(!ibv_post_send(qp, &wr, &bad), "ibv_post_send %u", i);
		poll_wc(&wc, "send");
	}
}

/* @n receives; message i carries bytes 0x40 + i */
static void recv_msgs(unsigned int first, unsigned int n)
{
	unsigned int k, j;
	struct ibv_wc wc;

	for (k = first; k < first + n; k++) {
		poll_wc(&wc, "receive");
		CHECK(wc.byte_len == MSG_LEN, "received %u bytes", wc.byte_len);
		for (j = 0; j < MSG_LEN; j++)
			CHECK(buf[wc.wr_id][j] == (uint8_t)(0x40 + k),
			      "message %u byte %u is %#x", k, j, buf[wc.wr_id][j]);
	}
}

static void server(void)
{
	struct ibv_srq_attr sa = { .srq_limit = SRQ_LIMIT };
	struct ibv_async_event ev;
	unsigned int i;

	for (i = 0; i < SRQ_WRS; i++)
		post_recv(i);
	CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "ibv_modify_srq limit %d", SRQ_LIMIT);
	CHECK(!ibv_query_srq(srq, &sa) && sa.srq_limit == SRQ_LIMIT,
	      "armed limit reads back %u", sa.srq_limit);
	sync_step(1);			/* client sends 7 */
	sync_step(2);
	recv_msgs(0, 7);
	CHECK(!async_event(500, &ev), "event %s with %d WQEs left (limit %d)",
	      ibv_event_type_str(ev.event_type), SRQ_WRS - 7, SRQ_LIMIT);
	sync_step(3);			/* client sends 2 */
	sync_step(4);
	recv_msgs(7, 2);
	CHECK(async_event(10000, &ev), "no SRQ limit event with %d WQEs left (limit %d)",
	      SRQ_WRS - 9, SRQ_LIMIT);
	CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq,
	      "got %s, want IBV_EVENT_SRQ_LIMIT_REACHED on our SRQ",
	      ibv_event_type_str(ev.event_type));
	CHECK(!ibv_query_srq(srq, &sa) && sa.srq_limit == 0,
	      "limit reads back %u after the event, want 0 (disarmed)", sa.srq_limit);
	printf("srq_limit server: IBV_EVENT_SRQ_LIMIT_REACHED at %d WQEs left, limit disarmed\n",
	       SRQ_WRS - 9);
	sync_step(5);			/* client sends 5 more */
	sync_step(6);
	recv_msgs(9, 5);
	CHECK(!async_event(500, &ev), "a second event (%s) after the limit was disarmed",
	      ibv_event_type_str(ev.event_type));
}

static void client(void)
{
	sync_step(1);
	send_msgs(0, 7);
	sync_step(2);
	sync_step(3);
	send_msgs(7, 2);
	sync_step(4);
	sync_step(5);
	send_msgs(9, 5);
	sync_step(6);
}

int main(int argc, char **argv)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = SRQ_WRS, .max_sge = 1 } };
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct side_args a = { .dev = "tbrdma0", .port = 18600 };
	struct peer me, peer;
	struct ibv_pd *pd;

	if (!side_args_parse(argc, argv, "srq_limit", &a))
		goto usage;
	role = a.role;

	ctx = open_device(a.dev);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd && cq, "ibv_alloc_pd/ibv_create_cq");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	srq = ibv_create_srq(pd, &si);
	CHECK(mr && srq, "ibv_reg_mr/ibv_create_srq: %s", strerror(errno));
	qi.send_cq = qi.recv_cq = cq;
	qi.srq = srq;
	qp = ibv_create_qp(pd, &qi);
	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	me.qpn = qp->qp_num;
	me.psn = a.server ? 0x1234 : 0x5678;
	CHECK(!ibv_query_gid(ctx, 1, a.gid_index, &me.gid), "ibv_query_gid %d", a.gid_index);
	{
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

		CHECK(!ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "modify_qp -> INIT");
	}
	ctl_fd = a.server ? oob_server(a.port) : oob_client(a.host, a.port);
	oob_xfer(ctl_fd, &me, sizeof(me), true);
	oob_xfer(ctl_fd, &peer, sizeof(peer), false);
	rc_connect(qp, a.gid_index, peer.qpn, peer.psn, &peer.gid, me.psn);
	if (a.server)
		server();
	else
		client();
	printf("srq_limit %s: ok\n", role);
	return 0;
usage:
	fprintf(stderr, "usage: srq_limit [-d DEV] [-g GID_INDEX] [-p PORT] server|client SERVER_IPV4\n");
	return 2;
}
