// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * write_bw: RDMA WRITE throughput between two processes, timed with the
 * guest's own clock and reported per chunk, libibverbs only.
 *
 *   write_bw [options] server            (listens on TCP --port)
 *   write_bw [options] client HOST       (connects to HOST:--port)
 *
 * Why not ib_write_bw: perftest converts TSC cycles to time with a CPU
 * frequency it samples for ~0.2 s at start (a regression of rdtsc against
 * gettimeofday); in a QEMU TCG guest on a loaded host that sample is skewed
 * by whatever stalls the guest meanwhile, or fails (r^2 < 0.9, then the run
 * reports 0.00 MB/s with -F), so one run's figure can be off by more than the
 * ratio a test asserts. This program takes CLOCK_MONOTONIC, and splits the
 * transfer into --chunks equal parts, each timed from the previous part's
 * last completion to its own: a host stall that hits one part shows as one
 * slow part, and the median over the parts is the link's rate.
 *
 * The client keeps --window signaled WRITEs of --size bytes in flight (one
 * buffer, one SGE, into one server buffer) until --count completed, then
 * prints one line:
 *   write_bw: SIZE B x COUNT in S s: R MiB/s overall; chunks (MiB/s): R1 R2 ..; median M MiB/s
 * and tells the server it is done. Any error completion, or none for 30 s,
 * ends it with "FAIL: ..." and exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define MAX_WINDOW	256
#define MAX_CHUNKS	64
#define CQ_IDLE_S	30

struct peer {
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
};	/* the same binary on both sides: its layout is shared */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the client's transfer: @count WRITEs of @size, @window in flight; prints the report */
static void client(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		   const struct peer *srv, size_t size, long count, int window, int chunks)
{
	double rate[MAX_CHUNKS], sorted[MAX_CHUNKS], t0, t_prev, t_idle, t;
	long posted = 0, done = 0, chunk_end;
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = size, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = srv->addr, .rkey = srv->rkey },
	}, *bad;
	struct ibv_wc wc;
	const double mib = 1024.0 * 1024.0;
	int k = 0, i, n;
	char line[64 * MAX_CHUNKS], *p = line;

	t0 = t_prev = t_idle = now_s();
	chunk_end = count / chunks;
	while (done < count) {
		while (posted < count && posted - done < window) {
			wr.wr_id = posted;
			CHECK(!ibv_post_send(qp, &wr, &bad), "ibv_post_send WRITE %ld: %s", posted,
			      strerror(errno));
			posted++;
		}
		n = ibv_poll_cq(cq, 1, &wc);	/* one at a time: each gets its own time */
		CHECK(n >= 0, "ibv_poll_cq %d", n);
		if (!n) {
			CHECK(now_s() - t_idle < CQ_IDLE_S, "no completion for %d s (%ld of %ld done)",
			      CQ_IDLE_S, done, count);
			continue;
		}
		t = t_idle = now_s();
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE &&
		      wc.wr_id == (uint64_t)done, "WRITE %ld: %s", done, wc_str(&wc));
		if (++done == chunk_end) {	/* it ends this chunk (RC completes in order) */
			rate[k] = (double)(chunk_end - k * count / chunks) * size / mib /
				  (t - t_prev);
			t_prev = t;
			chunk_end = ++k == chunks ? count + 1 : (k + 1) * count / chunks;
		}
	}
	for (i = 0; i < chunks; i++)
		p += sprintf(p, " %.2f", rate[i]);
	memcpy(sorted, rate, sizeof(rate[0]) * chunks);
	qsort(sorted, chunks, sizeof(sorted[0]), cmp_double);
	printf("write_bw: %zu B x %ld in %.2f s: %.2f MiB/s overall; chunks (MiB/s):%s; median %.2f MiB/s\n",
	       size, count, t_prev - t0, count * (double)size / mib / (t_prev - t0), line,
	       chunks % 2 ? sorted[chunks / 2] : (sorted[chunks / 2 - 1] + sorted[chunks / 2]) / 2);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC, .cap = { .max_send_sge = 1,
								       .max_recv_wr = 1,
								       .max_recv_sge = 1 } };
	const char *dev = "tbrdma0", *role;
	int c, port = 18700, gid_index = 0, is_server, window = 64, chunks = 6, ctl_fd;
	long count = 100;
	size_t size = 65536;
	struct peer me, peer;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	char *end, done = 'd';
	void *buf;

	while ((c = getopt(argc, argv, "d:g:p:s:n:w:c:t:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 's': size = strtoul(optarg, &end, 0); if (*end || !size) goto usage; break;
		case 'n': count = strtol(optarg, &end, 0); if (*end) goto usage; break;
		case 'w': window = atoi(optarg); break;
		case 'c': chunks = atoi(optarg); break;
		case 't': rc_timeout = atoi(optarg); break;	/* the QP's local ACK timeout */
		default: goto usage;
		}
	}
	if (window < 1 || window > MAX_WINDOW || chunks < 1 || chunks > MAX_CHUNKS ||
	    count < chunks || rc_timeout < 1 || rc_timeout > 31 || optind >= argc)
		goto usage;
	is_server = !strcmp(argv[optind], "server");
	if (!is_server && (strcmp(argv[optind], "client") || optind + 1 >= argc))
		goto usage;
	role = argv[optind];
	snprintf(die_ctx, sizeof(die_ctx), "write_bw %s", role);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ctx = open_device(dev);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, MAX_WINDOW, NULL, NULL, 0);
	CHECK(pd && cq, "ibv_alloc_pd/ibv_create_cq");
	CHECK(!posix_memalign(&buf, 4096, size), "posix_memalign %zu", size);
	memset(buf, 0x5a, size);
	mr = ibv_reg_mr(pd, buf, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr, "ibv_reg_mr %zu: %s", size, strerror(errno));
	qi.send_cq = qi.recv_cq = cq;
	qi.cap.max_send_wr = window;
	qp = ibv_create_qp(pd, &qi);
	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

		CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "modify_qp -> INIT");
	}
	memset(&me, 0, sizeof(me));
	me.qpn = qp->qp_num;
	me.psn = is_server ? 0x1234 : 0x5678;
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	CHECK(!ibv_query_gid(ctx, 1, gid_index, &me.gid), "ibv_query_gid %d", gid_index);
	ctl_fd = is_server ? oob_server(port) : oob_client(argv[optind + 1], port);
	oob_xfer(ctl_fd, &me, sizeof(me), true);
	oob_xfer(ctl_fd, &peer, sizeof(peer), false);
	rc_connect(qp, gid_index, peer.qpn, peer.psn, &peer.gid, me.psn);
	oob_xfer(ctl_fd, &done, 1, is_server);	/* the server is ready for WRITEs */
	if (!is_server) {
		client(qp, cq, mr, &peer, size, count, window, chunks);
		oob_xfer(ctl_fd, &done, 1, true);
	} else {
		oob_xfer(ctl_fd, &done, 1, false);	/* the client's transfer ended */
	}
	return 0;
usage:
	fprintf(stderr, "usage: write_bw [-d DEV] [-g GID_INDEX] [-p PORT] [-s SIZE] [-n COUNT]\n"
		"                [-w WINDOW (1-%d)] [-c CHUNKS (1-%d, <= COUNT)] [-t ACK_TIMEOUT (1-31, 14)]\n"
		"                server|client SERVER_IPV4\n",
		MAX_WINDOW, MAX_CHUNKS);
	return 2;
}
