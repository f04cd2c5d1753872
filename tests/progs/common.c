// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* common.c - what the two-sided test programs share (common.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

char die_ctx[160] = "?";

void die(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: %s: ", die_ctx);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

void oob_xfer(int fd, void *p, size_t n, bool out)
{
	while (n) {
		ssize_t r = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			die("control channel %s: %s", out ? "send" : "recv",
			    r ? strerror(errno) : "peer closed (it failed?)");
		}
		p = (char *)p + r;
		n -= r;
	}
}

int oob_server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, ls, fd;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(ls >= 0, "socket: %s", strerror(errno));
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(!bind(ls, (void *)&a, sizeof(a)), "bind port %d: %s", port, strerror(errno));
	CHECK(!listen(ls, 1), "listen: %s", strerror(errno));
	fd = accept(ls, NULL, NULL);
	CHECK(fd >= 0, "accept: %s", strerror(errno));
	close(ls);
	return fd;
}

int oob_client(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int i, fd;

	CHECK(inet_pton(AF_INET, host, &a.sin_addr) == 1, "bad IPv4 address %s", host);
	for (i = 0; i < 200; i++) {	/* the server may not listen yet */
		fd = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(fd >= 0, "socket: %s", strerror(errno));
		if (!connect(fd, (void *)&a, sizeof(a)))
			return fd;
		close(fd);
		usleep(100000);
	}
	die("connect %s:%d: %s", host, port, strerror(errno));
}

double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

const char *wc_str(const struct ibv_wc *wc)
{
	static char s[160];

	snprintf(s, sizeof(s), "wr_id %#llx status %d (%s) opcode %d byte_len %u",
		 (unsigned long long)wc->wr_id, wc->status,
		 ibv_wc_status_str(wc->status), wc->opcode, wc->byte_len);
	return s;
}

struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	int i;

	CHECK(list, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	CHECK(list[i], "device %s not found (provider not loaded?)", name);
	ctx = ibv_open_device(list[i]);
	CHECK(ctx, "ibv_open_device %s", name);
	ibv_free_device_list(list);
	return ctx;
}

int find_v4_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	int i;

	for (i = 0; i < 32; i++)
		if (!ibv_query_gid(ctx, 1, i, gid) && !memcmp(gid->raw, v4map, 12))
			return i;
	die("no IPv4-mapped GID (add an IPv4 address to the netdev)");
}

int rc_timeout = 14;

void rc_connect(struct ibv_qp *qp, int gid_index, uint32_t qpn, uint32_t rpsn,
		const union ibv_gid *gid, uint32_t psn)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { 0 };

	CHECK(!ibv_query_port(qp->context, 1, &pa), "ibv_query_port");
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = qpn;
	a.rq_psn = rpsn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
	      "modify_qp -> RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = rc_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = 16;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
	      "modify_qp -> RTS");
}

struct ibv_wc poll_wc_for(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
			const char *what)
{
	static struct ibv_wc kept[4];
	static int nkept;
	double end = now_s() + 5;
	struct ibv_wc w;
	int i, n;

	for (i = 0; i < nkept; i++) {
		if (kept[i].wr_id != wr_id)
			continue;
		w = kept[i];
		kept[i] = kept[--nkept];
		goto found;
	}
	for (;;) {
		n = ibv_poll_cq(cq, 1, &w);
		CHECK(n >= 0, "%s: ibv_poll_cq %d", what, n);
		if (n && w.wr_id == wr_id)
			break;
		if (n) {
			CHECK(nkept < 4, "%s: unexpected %s", what, wc_str(&w));
			kept[nkept++] = w;
		}
		CHECK(now_s() < end, "%s: no completion for wr_id %#llx within 5 s",
		      what, (unsigned long long)wr_id);
	}
found:
	CHECK(w.status == status, "%s: expected status %s, got %s", what,
	      ibv_wc_status_str(status), wc_str(&w));
	return w;
}

bool side_args_parse(int argc, char **argv, const char *prog, struct side_args *a)
{
	int c;

	while ((c = getopt(argc, argv, "d:g:p:")) != -1) {
		switch (c) {
		case 'd': a->dev = optarg; break;
		case 'g': a->gid_index = atoi(optarg); break;
		case 'p': a->port = atoi(optarg); break;
		default: return false;
		}
	}
	if (optind >= argc)
		return false;
	a->role = argv[optind];
	a->server = !strcmp(a->role, "server");
	if (!a->server && (strcmp(a->role, "client") || optind + 1 >= argc))
		return false;
	a->host = a->server ? NULL : argv[optind + 1];
	snprintf(die_ctx, sizeof(die_ctx), "%s %s", prog, a->role);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return true;
}
