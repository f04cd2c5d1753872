/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The "tbrdma" generic netlink family as its user-space clients see it (docs/netlink.md): the
 * attribute and counter policies, the counter names, and one request/response exchange with the
 * kernel's extended-ack message. One source for tbrdmad (genl.c), tbctl (eth.c) and
 * tests/tools/tbrdma-ctl.c. No logging, no exit(): every function returns 0 or -errno and says
 * why in the caller's buffer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "tbrdma-netlink.h"

/* every attribute of the family, with its type: a parse never reads one shorter than its type */
extern struct nla_policy tbr_genl_policy[TBRDMA_ATTR_MAX + 1];
/* the TBRDMA_ATTR_STATS (and LOOP_STATS) nest: u64 counters */
extern struct nla_policy tbr_genl_stat_policy[TBRDMA_STAT_MAX + 1];

/* A counter of the stats nest: its key in JSON and tbrdma-ctl output ("tx_frames"), and its
 * column in tbctl's tables ("TX-FRAMES"). */
typedef struct TbrCounter {
	const char *name;
	const char *column;
} TbrCounter;

/* TBRDMA_STAT_@stat's names; NULL for PAD and unknown */
const TbrCounter *tbr_counter(unsigned stat);
const char *tbr_counter_name(unsigned stat);

/* libnl's NLE_* (either sign) as a negative errno */
int tbr_genl_errno(int nlerr);

/* A connected generic netlink socket with extended acks, capped acks and, @timeout_sec > 0, a
 * receive timeout; resolves the family @name into *@family (-ENOENT, with @msg, when the
 * module is not loaded). */
int tbr_genl_open(struct nl_sock **ret, int *family, const char *name, unsigned timeout_sec,
		  char *msg, size_t msglen);

/* a new request of @family: @cmd with @flags (NLM_F_DUMP, NLM_F_ACK), @size bytes of room (0:
 * libnl's default); NULL on ENOMEM */
struct nl_msg *tbr_genl_msg(int family, uint8_t cmd, int flags, size_t size);

/* Sends @m (freed) on @sk and reads until the dump's end or the ack, calling @valid(msg, @arg)
 * for every reply (if set). Returns 0, the kernel's -errno with its extended-ack message (or
 * "missing attribute N") in @msg, or the transport's -errno with "send: ..."/"receive: ...". */
int tbr_genl_request(struct nl_sock *sk, struct nl_msg *m, nl_recvmsg_msg_cb_t valid, void *arg,
		     char *msg, size_t msglen);

/* parses @m's attributes against tbr_genl_policy into @tb; -EBADMSG if malformed */
int tbr_genl_parse(struct nl_msg *m, struct nlattr **tb);
/* parses the stats nest @nest into @st; -EBADMSG if malformed, -ENODATA if absent */
int tbr_genl_parse_stats(struct nlattr *nest, struct nlattr **st);

/* attribute accessors for parsed tables: 0 / @dflt when absent */
static inline uint32_t tbr_nla_u32(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u32(tb[a]) : 0;
}

static inline uint64_t tbr_nla_u64(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u64(tb[a]) : 0;
}

static inline const char *tbr_nla_str(struct nlattr **tb, int a, const char *dflt)
{
	return tb[a] ? nla_get_string(tb[a]) : dflt;
}

/* TBRDMA_ATTR_STATE is up */
static inline bool tbr_nla_up(struct nlattr **tb)
{
	return tb[TBRDMA_ATTR_STATE] && nla_get_u8(tb[TBRDMA_ATTR_STATE]) == TBRDMA_STATE_UP;
}

/* "?", "new", "del", "up", "down" for TBRDMA_ATTR_EVENT */
const char *tbr_genl_event_name(struct nlattr **tb);
