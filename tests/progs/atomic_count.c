// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * atomic_count: RC atomics checked for exactness across two hosts.
 *
 *   atomic_count -d DEV -g GIDX -s NCLIENTS -n N [-p PORT]        server
 *   atomic_count -d DEV -g GIDX -n N [-p PORT] SERVER_IP           client
 *
 * The server registers one 8-byte counter (remote atomic access) and gives
 * every client its own RC QP (QP attributes exchanged over TCP). Each client
 * posts N ATOMIC_FETCH_AND_ADD of 1 (up to 16 outstanding), checks that every
 * returned value is below the final total, and reports; the server waits for
 * all clients and requires counter == NCLIENTS * N. Then the server's last
 * step checks CMP_AND_SWP from the first client's point of view: the client
 * (told the final value) swaps it for a marker (must return the old value),
 * tries a swap with a wrong compare value (must fail, returning the marker),
 * and reads the counter back with RDMA READ.
 * Exit status 0 only when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 16
#define MARKER 0x5eed5eed12345678ULL

struct info {
	uint32_t qpn;
	uint32_t psn;
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
	uint8_t gid[16];
};

static const char *dev_name = "tbrdma0";
static int gid_idx;
static int port = 18600;
static long iters = 1000;

static void die(const char *what)
{
	fprintf(stderr, "atomic_count: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void xfer(int fd, void *buf, size_t len, bool out)
{
	char *p = buf;

	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0) {
			errno = n ? errno : EPIPE;
			die(out ? "write" : "read");
		}
		p += n;
		len -= (size_t)n;
	}
}

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
};

static void ctx_open(struct ctx *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			break;
	if (!list[i]) {
		fprintf(stderr, "atomic_count: no device %s\n", dev_name);
		exit(1);
	}
	c->ctx = ibv_open_device(list[i]);
	if (!c->ctx)
		die("ibv_open_device");
	ibv_free_device_list(list);
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = ibv_create_cq(c->ctx, 2 * DEPTH + 4, NULL, NULL, 0);
	if (!c->pd || !c->cq)
		die("pd/cq");
	if (ibv_query_gid(c->ctx, 1, gid_idx, &c->gid))
		die("ibv_query_gid");
}

static struct ibv_qp *qp_new(struct ctx *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify INIT");
	return qp;
}

static void qp_connect(struct ibv_qp *qp, uint32_t my_psn, const struct info *r)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = r->qpn, .rq_psn = r->psn,
		.max_dest_rd_atomic = DEPTH, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = (uint8_t)gid_idx,
				      .hop_limit = 1 } },
	};

	memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify RTR");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = my_psn;
	a.max_rd_atomic = DEPTH;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS");
}

static void wait_wc(struct ctx *c, struct ibv_wc *wc)
{
	int n;

	do {
		n = ibv_poll_cq(c->cq, 1, wc);
	} while (n == 0);
	if (n < 0)
		die("ibv_poll_cq");
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "atomic_count: completion %s (opcode %d)\n",
			ibv_wc_status_str(wc->status), wc->opcode);
		exit(1);
	}
}

static int server(int nclients)
{
	struct ctx c;
	uint64_t *counter = aligned_alloc(8, 8);
	struct ibv_mr *mr;
	int ls, fds[16], i, one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	uint64_t want = (uint64_t)nclients * (uint64_t)iters, got;
	char done;

	if (nclients < 1 || nclients > 16)
		return 2;
	ctx_open(&c);
	*counter = 0;
	mr = ibv_reg_mr(c.pd, counter, 8, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 16))
		die("listen");
	for (i = 0; i < nclients; i++) {
		struct info r, l = { .psn = (uint32_t)(lrand48() & 0xffffff),
				     .addr = (uintptr_t)counter, .rkey = mr->rkey };
		struct ibv_qp *qp;

		fds[i] = accept(ls, NULL, NULL);
		if (fds[i] < 0)
			die("accept");
		xfer(fds[i], &r, sizeof(r), false);
		qp = qp_new(&c);
		l.qpn = qp->qp_num;
		memcpy(l.gid, c.gid.raw, 16);
		qp_connect(qp, l.psn, &r);
		xfer(fds[i], &l, sizeof(l), true);
	}
	/* every client reports its adds done */
	for (i = 0; i < nclients; i++)
		xfer(fds[i], &done, 1, false);
	got = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
	printf("server: counter %llu after %d x %ld FETCH_AND_ADD (want %llu)\n",
	       (unsigned long long)got, nclients, iters, (unsigned long long)want);
	if (got != want)
		return 1;
	/* the first client does the CMP_AND_SWP checks on the final value */
	xfer(fds[0], &got, sizeof(got), true);
	xfer(fds[0], &done, 1, false);
	got = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
	printf("server: counter %#llx after CMP_AND_SWP\n", (unsigned long long)got);
	for (i = 1; i < nclients; i++)
		xfer(fds[i], &got, sizeof(got), true);
	return got == MARKER ? 0 : 1;
}

static void post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t *res,
			uint32_t lkey, const struct info *r, uint64_t cmp_add,
			uint64_t swap, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)res, .length = 8, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = r->addr, .rkey = r->rkey,
			       .compare_add = cmp_add, .swap = swap },
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
}

static int client(const char *host)
{
	struct ctx c;
	uint64_t *res = aligned_alloc(64, DEPTH * 8 + 8), total, *seen;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct info l = { .psn = (uint32_t)(getpid() & 0xffffff) }, r;
	struct addrinfo *ai, hints = { .ai_family = AF_INET,
				       .ai_socktype = SOCK_STREAM };
	struct ibv_wc wc;
	struct timespec t0, t1;
	char portstr[16], done = 1;
	long posted = 0, completed = 0;
	int fd, bad = 0;

	ctx_open(&c);
	mr = ibv_reg_mr(c.pd, res, DEPTH * 8 + 8, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	qp = qp_new(&c);
	l.qpn = qp->qp_num;
	memcpy(l.gid, c.gid.raw, 16);
	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(host, portstr, &hints, &ai))
		die("getaddrinfo");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		die("connect");
	xfer(fd, &l, sizeof(l), true);
	xfer(fd, &r, sizeof(r), false);
	qp_connect(qp, l.psn, &r);

	seen = calloc((size_t)iters, sizeof(*seen));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (completed < iters) {
		while (posted < iters && posted - completed < DEPTH) {
			post_atomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD,
				    &res[posted % DEPTH], mr->lkey, &r, 1, 0,
				    (uint64_t)posted);
			posted++;
		}
		wait_wc(&c, &wc);
		if (wc.opcode != IBV_WC_FETCH_ADD || wc.wr_id != (uint64_t)completed) {
			fprintf(stderr, "client: bad completion opcode %d wr_id %llu\n",
				wc.opcode, (unsigned long long)wc.wr_id);
			return 1;
		}
		seen[completed] = res[completed % DEPTH];
		completed++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* returned values of one client strictly increase */
	for (long i = 1; i < iters; i++)
		if (seen[i] <= seen[i - 1])
			bad++;
	printf("client: %ld FETCH_AND_ADD in %.3f s (%.1f us each), first %llu last %llu, %d out of order\n",
	       iters, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / (double)iters,
	       (unsigned long long)seen[0], (unsigned long long)seen[iters - 1], bad);
	if (bad)
		return 1;
	xfer(fd, &done, 1, true);
	xfer(fd, &total, sizeof(total), false);	/* first client: final sum */
	if (total != MARKER) {
		for (long i = 0; i < iters; i++)
			if (seen[i] >= total) {
				fprintf(stderr, "client: fetched %llu >= total %llu\n",
					(unsigned long long)seen[i], (unsigned long long)total);
				return 1;
			}
		/* CMP_AND_SWP: total -> MARKER succeeds, returns total */
		post_atomic(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &res[0], mr->lkey, &r,
			    total, MARKER, 1);
		wait_wc(&c, &wc);
		if (wc.opcode != IBV_WC_COMP_SWAP || res[0] != total) {
			fprintf(stderr, "client: CMP_AND_SWP returned %llu (opcode %d), want %llu\n",
				(unsigned long long)res[0], wc.opcode, (unsigned long long)total);
			return 1;
		}
		/* a wrong compare value leaves MARKER and returns it */
		post_atomic(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &res[0], mr->lkey, &r,
			    total, 7, 2);
		wait_wc(&c, &wc);
		if (res[0] != MARKER) {
			fprintf(stderr, "client: failed CMP_AND_SWP returned %#llx\n",
				(unsigned long long)res[0]);
			return 1;
		}
		/* RDMA READ sees MARKER */
		{
			struct ibv_sge sge = { .addr = (uintptr_t)&res[1], .length = 8,
					       .lkey = mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = 3, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = r.addr, .rkey = r.rkey },
			}, *badwr;

			if (ibv_post_send(qp, &wr, &badwr))
				die("ibv_post_send READ");
			wait_wc(&c, &wc);
			if (res[1] != MARKER) {
				fprintf(stderr, "client: READ got %#llx\n",
					(unsigned long long)res[1]);
				return 1;
			}
		}
		printf("client: CMP_AND_SWP ok (swap, failed compare, READ back)\n");
		xfer(fd, &done, 1, true);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int nclients = 0, o;

	while ((o = getopt(argc, argv, "d:g:s:n:p:")) != -1) {
		switch (o) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_idx = atoi(optarg); break;
		case 's': nclients = atoi(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: return 2;
		}
	}
	if (iters < 1)
		return 2;
	srand48(getpid());
	if (nclients)
		return server(nclients);
	if (optind >= argc)
		return 2;
	return client(argv[optind]);
}
