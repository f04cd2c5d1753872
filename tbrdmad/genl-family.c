// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The "tbrdma" generic netlink family for user-space clients (docs/netlink.md), libnl-genl-3:
 * policies, counter names, one request/response exchange with extended-ack parsing. Compiled
 * into tbrdmad, tbctl and tests/tools/tbrdma-ctl.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>

#include "genl-family.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct nla_policy tbr_genl_policy[TBRDMA_ATTR_MAX + 1] = {
	[TBRDMA_ATTR_DEV_NAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[TBRDMA_ATTR_NETDEV_NAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_NETDEV_IFINDEX] = { .type = NLA_U32 },
	[TBRDMA_ATTR_DEV_GUID] = { .type = NLA_U64 },
	[TBRDMA_ATTR_HOST] = { .type = NLA_FLAG },
	[TBRDMA_ATTR_PEER_DEV_NAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_CABLE_ID] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RAIL_COUNT] = { .type = NLA_U32 },
	[TBRDMA_ATTR_DEPTH] = { .type = NLA_U32 },
	[TBRDMA_ATTR_LINK_ID] = { .type = NLA_U32 },
	[TBRDMA_ATTR_PEER_GUID] = { .type = NLA_U64 },
	[TBRDMA_ATTR_RAIL_ID] = { .type = NLA_U32 },
	[TBRDMA_ATTR_BACKEND] = { .type = NLA_STRING },
	[TBRDMA_ATTR_STATE] = { .type = NLA_U8 },
	[TBRDMA_ATTR_RAILS_UP] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RAILS_TOTAL] = { .type = NLA_U32 },
	[TBRDMA_ATTR_LINKS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_DEPTH] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_DEPTH] = { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_CREDITS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_DROP_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_DUP_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_REORDER] = { .type = NLA_U32 },
	[TBRDMA_ATTR_DELAY_US] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RATE_BPS] = { .type = NLA_U64 },
	[TBRDMA_ATTR_CUT] = { .type = NLA_U8 },
	[TBRDMA_ATTR_STATS] = { .type = NLA_NESTED },
	[TBRDMA_ATTR_EVENT] = { .type = NLA_U8 },
	[TBRDMA_ATTR_MGMT_DATA] = { .type = NLA_UNSPEC, .maxlen = TBRDMA_MGMT_MAX },
	[TBRDMA_ATTR_CUT_STATE] = { .type = NLA_U8 },
	[TBRDMA_ATTR_ETH_IFNAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_ETH_IFINDEX] = { .type = NLA_U32 },
	[TBRDMA_ATTR_ETH_PEER_MAC] = { .minlen = 6 },
	[TBRDMA_ATTR_MAX_FRAME] = { .type = NLA_U32 },
	[TBRDMA_ATTR_ETH_PEERS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_ETH_HELLO_TX] = { .type = NLA_U64 },
	[TBRDMA_ATTR_ETH_HELLO_RX] = { .type = NLA_U64 },
	[TBRDMA_ATTR_ETH_RX_FOREIGN] = { .type = NLA_U64 },
	[TBRDMA_ATTR_LOOP_STATS] = { .type = NLA_NESTED },
	[TBRDMA_ATTR_ROUTE_VERSION] = { .type = NLA_U32 },
	[TBRDMA_ATTR_ROUTES] = { .type = NLA_NESTED },
	[TBRDMA_ATTR_ROUTE] = { .type = NLA_NESTED },
	[TBRDMA_ATTR_ROUTE_DST] = { .type = NLA_U64 },
	[TBRDMA_ATTR_ROUTE_NEXT_HOP] = { .type = NLA_U64 },
	[TBRDMA_ATTR_ROUTE_HOPS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_PDF] = { .type = NLA_U8 },
	[TBRDMA_ATTR_TRUST] = { .type = NLA_U8 },
	[TBRDMA_ATTR_LINKS_HELD] = { .type = NLA_U32 },
	[TBRDMA_ATTR_AUTH_KEY] = { .type = NLA_BINARY },
	[TBRDMA_ATTR_AUTH_GRACE_MS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_AUTH_KEYED] = { .type = NLA_U8 },
	[TBRDMA_ATTR_AUTH_REFUSED] = { .type = NLA_U64 },
	[TBRDMA_ATTR_LANE_MBPS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_LANES] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RING_MS] = { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_FULL_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_EMPTY_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_MEAN_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_FULL_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_EMPTY_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_MEAN_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_HOLD_US] = { .type = NLA_U32 },
};

struct nla_policy tbr_genl_stat_policy[TBRDMA_STAT_MAX + 1] = {
	[TBRDMA_STAT_TX_FRAMES ... TBRDMA_STAT_MAX] = { .type = NLA_U64 },
};

static const TbrCounter counters[TBRDMA_STAT_MAX + 1] = {
	[TBRDMA_STAT_TX_FRAMES] = { "tx_frames", "TX-FRAMES" },
	[TBRDMA_STAT_TX_BYTES] = { "tx_bytes", "TX-BYTES" },
	[TBRDMA_STAT_RX_FRAMES] = { "rx_frames", "RX-FRAMES" },
	[TBRDMA_STAT_RX_BYTES] = { "rx_bytes", "RX-BYTES" },
	[TBRDMA_STAT_TX_LOST] = { "tx_lost", "LOST" },
	[TBRDMA_STAT_RX_NOBUF] = { "rx_nobuf", "NOBUF" },
	[TBRDMA_STAT_DROPS] = { "drops", "DROPS" },
	[TBRDMA_STAT_DUPS] = { "dups", "DUPS" },
	[TBRDMA_STAT_CREDIT_STALLS] = { "credit_stalls", "STALLS" },
	[TBRDMA_STAT_RX_ERRORS] = { "rx_errors", "RX-ERRORS" },
	[TBRDMA_STAT_MGMT_TX] = { "mgmt_tx", "MGMT-TX" },
	[TBRDMA_STAT_MGMT_RX] = { "mgmt_rx", "MGMT-RX" },
	[TBRDMA_STAT_FRAG_TX] = { "frag_tx", "FRAG-TX" },
	[TBRDMA_STAT_FRAG_RX] = { "frag_rx", "FRAG-RX" },
	[TBRDMA_STAT_FRAG_DROPS] = { "frag_drops", "FRAG-DROPS" },
	[TBRDMA_STAT_FWD] = { "fwd", "FWD" },
	[TBRDMA_STAT_ROUTED_RX] = { "routed_rx", "ROUTED-RX" },
	[TBRDMA_STAT_FWD_DROP_HOPS] = { "fwd_drop_hops", "FWD-DROP-HOPS" },
	[TBRDMA_STAT_FWD_DROP_NOROUTE] = { "fwd_drop_noroute", "FWD-DROP-NOROUTE" },
	[TBRDMA_STAT_FWD_DROP_LOOP] = { "fwd_drop_loop", "FWD-DROP-LOOP" },
	[TBRDMA_STAT_FWD_DROP_FULL] = { "fwd_drop_full", "FWD-DROP-FULL" },
	[TBRDMA_STAT_BUNDLED] = { "bundled", "BUNDLED" },
	[TBRDMA_STAT_TX_ZEROCOPY] = { "tx_zerocopy", "TX-ZEROCOPY" },
	[TBRDMA_STAT_HELD] = { "held", "HELD" },
	[TBRDMA_STAT_HELD_DROPS] = { "held_drops", "HELD-DROPS" },
	[TBRDMA_STAT_FWD_DROP_RPF] = { "fwd_drop_rpf", "FWD-DROP-RPF" },
	[TBRDMA_STAT_PKEY_VIOLATIONS] = { "pkey_violations", "PKEY-VIOL" },
	[TBRDMA_STAT_RATE_WAITS] = { "rate_waits", "RATE-WAITS" },
};

const TbrCounter *tbr_counter(unsigned stat)
{
	return stat <= TBRDMA_STAT_MAX && counters[stat].name ? &counters[stat] : NULL;
}

const char *tbr_counter_name(unsigned stat)
{
	const TbrCounter *c = tbr_counter(stat);

	return c ? c->name : NULL;
}

int tbr_genl_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_AGAIN: return -ETIMEDOUT;
	case NLE_NOMEM: return -ENOBUFS;
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_PERM: return -EPERM;
	case NLE_INVAL: return -EINVAL;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	case NLE_BUSY: return -EBUSY;
	default: return -EIO;
	}
}

int tbr_genl_open(struct nl_sock **ret, int *family, const char *name, unsigned timeout_sec,
		  char *msg, size_t msglen)
{
	struct timeval tv = { .tv_sec = timeout_sec };
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1, fd, r;

	if (!sk)
		return -ENOMEM;
	r = genl_connect(sk);
	if (r < 0) {
		snprintf(msg, msglen, "generic netlink socket: %s", nl_geterror(r));
		nl_socket_free(sk);
		return tbr_genl_errno(r);
	}
	fd = nl_socket_get_fd(sk);
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (timeout_sec)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	*family = genl_ctrl_resolve(sk, name);
	if (*family < 0) {
		snprintf(msg, msglen, "generic netlink family \"%s\" not found (tbrdma.ko not loaded)",
			 name);
		nl_socket_free(sk);
		*family = -1;
		return -ENOENT;
	}
	*ret = sk;
	return 0;
}

struct nl_msg *tbr_genl_msg(int family, uint8_t cmd, int flags, size_t size)
{
	struct nl_msg *m = size ? nlmsg_alloc_size(size) : nlmsg_alloc();

	if (m && !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
			      TBRDMA_GENL_VERSION)) {
		nlmsg_free(m);
		return NULL;
	}
	return m;
}

struct req_state {
	bool done;
	int err;		/* the kernel's -errno */
	char ext[256];		/* its extended-ack message */
};

static int err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct req_state *st = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	int len = nlh->nlmsg_len;
	size_t off;

	(void)nla;
	st->err = e->error;
	st->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	off = NLMSG_HDRLEN + sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	for (struct nlattr *a = (struct nlattr *)((char *)nlh + off);
	     (char *)a + NLA_HDRLEN <= (char *)nlh + len && a->nla_len >= NLA_HDRLEN &&
	     (char *)a + a->nla_len <= (char *)nlh + len;
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
			snprintf(st->ext, sizeof(st->ext), "%.*s",
				 (int)(a->nla_len - NLA_HDRLEN), (char *)a + NLA_HDRLEN);
#ifdef NLMSGERR_ATTR_MISS_TYPE
		else if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MISS_TYPE && !st->ext[0] &&
			 a->nla_len >= NLA_HDRLEN + sizeof(uint32_t))
			snprintf(st->ext, sizeof(st->ext), "missing attribute %u",
				 *(uint32_t *)((char *)a + NLA_HDRLEN));
#endif
	}
	return NL_STOP;
}

static int finish_cb(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct req_state *)arg)->done = true;
	return NL_SKIP;
}

static int ack_cb(struct nl_msg *m, void *arg)
{
	(void)m;
	((struct req_state *)arg)->done = true;
	return NL_STOP;
}

int tbr_genl_request(struct nl_sock *sk, struct nl_msg *m, nl_recvmsg_msg_cb_t valid, void *arg,
		     char *msg, size_t msglen)
{
	struct req_state st = { 0 };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int r;

	if (!cb) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, err_cb, &st);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, &st);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, &st);
	if (valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, arg);
	r = nl_send_auto(sk, m);
	nlmsg_free(m);
	if (r < 0) {
		snprintf(msg, msglen, "send: %s", nl_geterror(r));
		nl_cb_put(cb);
		return tbr_genl_errno(r);
	}
	while (!st.done) {
		r = nl_recvmsgs(sk, cb);
		if (r < 0 && !st.done) {
			snprintf(msg, msglen, "receive: %s", nl_geterror(r));
			nl_cb_put(cb);
			return tbr_genl_errno(r);
		}
	}
	nl_cb_put(cb);
	if (st.err) {
		snprintf(msg, msglen, "%s", st.ext);
		return st.err < 0 ? st.err : -st.err;
	}
	return 0;
}

int tbr_genl_parse(struct nl_msg *m, struct nlattr **tb)
{
	return genlmsg_parse(nlmsg_hdr(m), 0, tb, TBRDMA_ATTR_MAX, tbr_genl_policy) < 0 ?
		-EBADMSG : 0;
}

int tbr_genl_parse_stats(struct nlattr *nest, struct nlattr **st)
{
	if (!nest)
		return -ENODATA;
	return nla_parse_nested(st, TBRDMA_STAT_MAX, nest, tbr_genl_stat_policy) < 0 ? -EBADMSG : 0;
}

const char *tbr_genl_event_name(struct nlattr **tb)
{
	static const char *const n[] = { "?", "new", "del", "up", "down" };
	unsigned e = tb[TBRDMA_ATTR_EVENT] ? nla_get_u8(tb[TBRDMA_ATTR_EVENT]) : 0;

	return e < sizeof(n) / sizeof(n[0]) ? n[e] : "?";
}
