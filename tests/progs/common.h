/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * common.h - what the two-sided test programs (badinput, integrity, write_bw, ...) share:
 * the out-of-band TCP control channel over which the sides exchange QP
 * numbers, GIDs and MR keys and keep in step, a clock and completion text.
 * Every failure ends the program through die(): "FAIL: <die_ctx>: <why>",
 * exit 1; each program keeps die_ctx saying which program, side and case.
 */
#ifndef TBR_PROGS_COMMON_H
#define TBR_PROGS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

extern char die_ctx[160];
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond))                                               \
			die(__VA_ARGS__);                                  \
	} while (0)

/* accept one connection on @port (any address) */
int oob_server(int port);
/* connect to @host:@port (IPv4), retrying for 20 s while the server starts */
int oob_client(const char *host, int port);
/* send (@out) or receive exactly @n bytes */
void oob_xfer(int fd, void *p, size_t n, bool out);

/*
 * The command line of the server/client programs:
 *   PROG [-d DEV] [-g GID_INDEX] [-p PORT] server | client SERVER_IPV4
 * Fill @a (dev and port keep the caller's defaults unless given); false on a
 * bad command line. Also sets die_ctx to "@prog ROLE" and line-buffers stdout.
 */
struct side_args {
	const char *dev, *host, *role;
	int gid_index, port;
	bool server;
};
bool side_args_parse(int argc, char **argv, const char *prog, struct side_args *a);

/* open the RDMA device @name (die if absent) */
struct ibv_context *open_device(const char *name);
/* an RC QP to RTR then RTS towards remote QP @qpn at @gid (its first PSN
 * @rpsn), with ours starting at @psn: path MTU the port's active MTU,
 * 16 READ/ATOMIC each way, timeout rc_timeout (default 14 = 67 ms),
 * retries 7, RNR retries infinite */
extern int rc_timeout;
void rc_connect(struct ibv_qp *qp, int gid_index, uint32_t qpn, uint32_t rpsn,
		const union ibv_gid *gid, uint32_t psn);

/* the index of port 1's first IPv4-mapped GID (RoCE v2 over the netdev's address), stored in
 * @gid; dies when there is none */
int find_v4_gid(struct ibv_context *ctx, union ibv_gid *gid);

/* CLOCK_MONOTONIC in seconds */
double now_s(void);
/* "wr_id 0x.. status N (text) opcode N byte_len N" in a static buffer */
const char *wc_str(const struct ibv_wc *wc);
/*
 * The completion of @wr_id on @cq with @status within 5 s (else die, naming
 * @what); completions of other wr_ids polled meanwhile (at most 4) are kept
 * for a later call. Returns it.
 */
struct ibv_wc poll_wc_for(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
			const char *what);

#endif
