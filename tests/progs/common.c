// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* common.c - what the two-sided test programs share (common.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

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
