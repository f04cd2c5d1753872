// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel control over the "tbrdma" generic netlink family (docs/netlink.md), libnl-genl-3.
 * Same family knowledge as tests/tools/tbrdma-ctl.c (ext-ack parsing, dump shapes, counters),
 * organised for a long-running event loop: attribute policies on every parse (we never read an
 * attribute shorter than its type), no exit() on errors, a receive timeout on the request
 * socket, and a non-blocking event socket that also follows nlctrl's family notifications.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "genl.h"
#include "json.h"
#include "log.h"
#include "util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define REQ_TIMEOUT_SEC 3
#define EVENTS_PER_WAKEUP 256

static struct nla_policy attr_policy[TBRDMA_ATTR_MAX + 1] = {
	[TBRDMA_ATTR_DEV_NAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[TBRDMA_ATTR_NETDEV_NAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_NETDEV_IFINDEX] = { .type = NLA_U32 },
	[TBRDMA_ATTR_DEV_GUID] = { .type = NLA_U64 },
	[TBRDMA_ATTR_HOST] = { .type = NLA_FLAG },
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
	[TBRDMA_ATTR_STATS] = { .type = NLA_NESTED },
	[TBRDMA_ATTR_EVENT] = { .type = NLA_U8 },
	[TBRDMA_ATTR_CUT_STATE] = { .type = NLA_U8 },
	[TBRDMA_ATTR_ETH_IFNAME] = { .type = NLA_STRING },
	[TBRDMA_ATTR_ETH_IFINDEX] = { .type = NLA_U32 },
	[TBRDMA_ATTR_ETH_PEER_MAC] = { .minlen = 6 },
	[TBRDMA_ATTR_MAX_FRAME] = { .type = NLA_U32 },
	[TBRDMA_ATTR_MGMT_DATA] = { .type = NLA_UNSPEC, .maxlen = TBRDMA_MGMT_MAX },
};

static struct nla_policy stat_policy[TBRDMA_STAT_MAX + 1] = {
	[TBRDMA_STAT_TX_FRAMES ... TBRDMA_STAT_MAX] = { .type = NLA_U64 },
};

/* ---- sockets ---------------------------------------------------------------------------- */

static int nlerr_to_errno(int nlerr)
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

static int open_event_socket(Kernel *k)
{
	struct nl_sock *sk = nl_socket_alloc();
	int grp, r;

	if (!sk)
		return -ENOMEM;
	nl_socket_disable_seq_check(sk);
	r = genl_connect(sk);
	if (r < 0)
		goto fail;
	/* resolve while still blocking, then switch */
	grp = genl_ctrl_resolve_grp(sk, "nlctrl", "notify");
	if (grp < 0) {
		r = grp;
		goto fail;
	}
	r = nl_socket_add_membership(sk, grp);
	if (r < 0)
		goto fail;
	nl_socket_set_buffer_size(sk, 1 << 20, 0);
	r = nl_socket_set_nonblocking(sk);
	if (r < 0)
		goto fail;
	k->ev = sk;
	k->events_joined = false;
	k->mgmt_joined = false;
	return 0;
fail:
	nl_socket_free(sk);
	return log_error_errno(nlerr_to_errno(r), "event socket: %s", nl_geterror(r));
}

int kernel_init(Kernel *k, const char *family_name)
{
	*k = (Kernel){ .family = -1 };
	snprintf(k->family_name, sizeof(k->family_name), "%s", family_name);
	return open_event_socket(k);
}

void kernel_done(Kernel *k)
{
	if (k->req)
		nl_socket_free(k->req);
	if (k->ev)
		nl_socket_free(k->ev);
	*k = (Kernel){ .family = -1 };
}

int kernel_event_fd(const Kernel *k)
{
	return k->ev ? nl_socket_get_fd(k->ev) : -1;
}

int kernel_connect(Kernel *k, char *msg, size_t msglen)
{
	struct timeval tv = { .tv_sec = REQ_TIMEOUT_SEC };
	struct nl_sock *sk;
	int one = 1, fd, r, grp;

	if (k->req)
		return 0;
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	r = genl_connect(sk);
	if (r < 0) {
		snprintf(msg, msglen, "generic netlink socket: %s", nl_geterror(r));
		nl_socket_free(sk);
		return nlerr_to_errno(r);
	}
	fd = nl_socket_get_fd(sk);
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	k->family = genl_ctrl_resolve(sk, k->family_name);
	if (k->family < 0) {
		snprintf(msg, msglen, "generic netlink family \"%s\" not found (tbrdma.ko not loaded)",
			 k->family_name);
		nl_socket_free(sk);
		k->family = -1;
		return -ENOENT;
	}
	grp = genl_ctrl_resolve_grp(sk, k->family_name, TBRDMA_MCGRP_EVENTS);
	if (grp >= 0 && !k->events_joined) {
		r = nl_socket_add_membership(k->ev, grp);
		if (r < 0)
			log_warning("joining group %s: %s", TBRDMA_MCGRP_EVENTS, nl_geterror(r));
		else
			k->events_joined = true;
	} else if (grp < 0) {
		log_warning("family %s has no group %s", k->family_name, TBRDMA_MCGRP_EVENTS);
	}
	if (k->mgmt_fn && !k->mgmt_joined) {
		grp = genl_ctrl_resolve_grp(sk, k->family_name, TBRDMA_MCGRP_MGMT);
		r = grp >= 0 ? nl_socket_add_membership(k->ev, grp) : grp;
		if (r < 0)
			log_warning("joining group %s: %s (no sweep messages)", TBRDMA_MCGRP_MGMT,
				    nl_geterror(r));
		else
			k->mgmt_joined = true;
	}
	k->req = sk;
	return 0;
}

int kernel_disconnect(Kernel *k)
{
	if (k->req)
		nl_socket_free(k->req);
	k->req = NULL;
	k->family = -1;
	if (k->ev)
		nl_socket_free(k->ev);
	k->ev = NULL;
	return open_event_socket(k);
}

/* ---- request/response -------------------------------------------------------------------- */

struct req_state {
	bool done;
	int err;		/* the kernel's -errno */
	char ext[256];		/* its extended-ack message */
	int parse_err;		/* a reply we could not take (-errno) */
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
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
			snprintf(st->ext, sizeof(st->ext), "%.*s",
				 (int)(a->nla_len - NLA_HDRLEN), (char *)a + NLA_HDRLEN);
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

struct dump_ctx {
	struct req_state st;
	Model *model;
	const char *device;
};

static int request(Kernel *k, uint8_t cmd, int flags, struct nl_msg *m_in, nl_recvmsg_msg_cb_t valid,
		   struct dump_ctx *ctx, char *msg, size_t msglen)
{
	struct nl_msg *m = m_in;
	struct nl_cb *cb;
	int r;

	if (!k->req) {
		nlmsg_free(m_in);
		snprintf(msg, msglen, "not connected to the kernel");
		return -ENOTCONN;
	}
	if (!m) {
		m = nlmsg_alloc();
		if (!m || !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, k->family, 0, flags, cmd,
				       TBRDMA_GENL_VERSION)) {
			nlmsg_free(m);
			return -ENOMEM;
		}
	}
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, err_cb, &ctx->st);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, &ctx->st);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, &ctx->st);
	if (valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, ctx);
	r = nl_send_auto(k->req, m);
	nlmsg_free(m);
	if (r < 0) {
		snprintf(msg, msglen, "send: %s", nl_geterror(r));
		nl_cb_put(cb);
		return nlerr_to_errno(r);
	}
	while (!ctx->st.done) {
		r = nl_recvmsgs(k->req, cb);
		if (r < 0 && !ctx->st.done) {
			snprintf(msg, msglen, "receive: %s", nl_geterror(r));
			nl_cb_put(cb);
			return nlerr_to_errno(r);
		}
	}
	nl_cb_put(cb);
	if (ctx->st.err) {
		snprintf(msg, msglen, "%s", ctx->st.ext);
		return ctx->st.err < 0 ? ctx->st.err : -ctx->st.err;
	}
	if (ctx->st.parse_err) {
		snprintf(msg, msglen, "could not store a reply");
		return ctx->st.parse_err;
	}
	return 0;
}

/* ---- dumps ------------------------------------------------------------------------------- */

static struct nlattr **parse(struct nl_msg *m, struct nlattr **tb)
{
	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, TBRDMA_ATTR_MAX, attr_policy) < 0)
		return NULL;
	return tb;
}

static uint32_t u32_or0(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u32(tb[a]) : 0;
}

static uint64_t u64_or0(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u64(tb[a]) : 0;
}

static void str_copy(char *dst, size_t n, struct nlattr **tb, int a)
{
	if (tb[a])
		nla_strlcpy(dst, tb[a], n);
	else
		dst[0] = '\0';
}

static void get_counters(Counters *c, struct nlattr *nest)
{
	struct nlattr *st[TBRDMA_STAT_MAX + 1];

	if (!nest || nla_parse_nested(st, TBRDMA_STAT_MAX, nest, stat_policy) < 0)
		return;
	for (unsigned i = 0; i <= TBRDMA_STAT_MAX; i++)
		if (st[i] && counter_name(i)) {
			c->v[i] = nla_get_u64(st[i]);
			c->present |= 1u << i;
		}
}

/* skip replies without a device name or of another device than the one we manage */
static bool skip(struct dump_ctx *c, struct nlattr **tb)
{
	return !tb[TBRDMA_ATTR_DEV_NAME] ||
	       (c->device && strcmp(c->device, nla_get_string(tb[TBRDMA_ATTR_DEV_NAME])));
}

static int dev_cb(struct nl_msg *m, void *arg)
{
	struct dump_ctx *c = arg;
	struct nlattr *buf[TBRDMA_ATTR_MAX + 1], **tb = parse(m, buf);
	Device *d;

	if (!tb || skip(c, tb))
		return NL_OK;
	d = model_add_device(c->model);
	if (!d) {
		c->st.parse_err = -ENOMEM;
		return NL_OK;
	}
	str_copy(d->name, sizeof(d->name), tb, TBRDMA_ATTR_DEV_NAME);
	str_copy(d->netdev, sizeof(d->netdev), tb, TBRDMA_ATTR_NETDEV_NAME);
	d->index = u32_or0(tb, TBRDMA_ATTR_DEV_INDEX);
	d->ifindex = u32_or0(tb, TBRDMA_ATTR_NETDEV_IFINDEX);
	d->guid = u64_or0(tb, TBRDMA_ATTR_DEV_GUID);
	d->host = tb[TBRDMA_ATTR_HOST] != NULL;
	d->links = u32_or0(tb, TBRDMA_ATTR_LINKS);
	d->rails_up = u32_or0(tb, TBRDMA_ATTR_RAILS_UP);
	return NL_OK;
}

static int link_cb(struct nl_msg *m, void *arg)
{
	struct dump_ctx *c = arg;
	struct nlattr *buf[TBRDMA_ATTR_MAX + 1], **tb = parse(m, buf);
	Link *l;

	if (!tb || skip(c, tb))
		return NL_OK;
	l = model_add_link(c->model);
	if (!l) {
		c->st.parse_err = -ENOMEM;
		return NL_OK;
	}
	str_copy(l->device, sizeof(l->device), tb, TBRDMA_ATTR_DEV_NAME);
	l->id = u32_or0(tb, TBRDMA_ATTR_LINK_ID);
	l->peer_guid = u64_or0(tb, TBRDMA_ATTR_PEER_GUID);
	l->up = tb[TBRDMA_ATTR_STATE] && nla_get_u8(tb[TBRDMA_ATTR_STATE]) == TBRDMA_STATE_UP;
	l->rails_up = u32_or0(tb, TBRDMA_ATTR_RAILS_UP);
	l->rails_total = u32_or0(tb, TBRDMA_ATTR_RAILS_TOTAL);
	l->has_tx_credits = tb[TBRDMA_ATTR_TX_CREDITS] != NULL;
	l->tx_credits = u32_or0(tb, TBRDMA_ATTR_TX_CREDITS);
	l->has_max_frame = tb[TBRDMA_ATTR_MAX_FRAME] != NULL;
	l->max_frame = u32_or0(tb, TBRDMA_ATTR_MAX_FRAME);
	get_counters(&l->counters, tb[TBRDMA_ATTR_STATS]);
	return NL_OK;
}

static int rail_cb(struct nl_msg *m, void *arg)
{
	struct dump_ctx *c = arg;
	struct nlattr *buf[TBRDMA_ATTR_MAX + 1], **tb = parse(m, buf);
	Rail *r;

	if (!tb || skip(c, tb))
		return NL_OK;
	r = model_add_rail(c->model);
	if (!r) {
		c->st.parse_err = -ENOMEM;
		return NL_OK;
	}
	str_copy(r->device, sizeof(r->device), tb, TBRDMA_ATTR_DEV_NAME);
	r->link = u32_or0(tb, TBRDMA_ATTR_LINK_ID);
	r->id = u32_or0(tb, TBRDMA_ATTR_RAIL_ID);
	r->peer_guid = u64_or0(tb, TBRDMA_ATTR_PEER_GUID);
	str_copy(r->backend, sizeof(r->backend), tb, TBRDMA_ATTR_BACKEND);
	r->up = tb[TBRDMA_ATTR_STATE] && nla_get_u8(tb[TBRDMA_ATTR_STATE]) == TBRDMA_STATE_UP;
	r->tx_depth = u32_or0(tb, TBRDMA_ATTR_TX_DEPTH);
	r->rx_depth = u32_or0(tb, TBRDMA_ATTR_RX_DEPTH);
	r->tx_credits = u32_or0(tb, TBRDMA_ATTR_TX_CREDITS);
	r->has_max_frame = tb[TBRDMA_ATTR_MAX_FRAME] != NULL;
	r->max_frame = u32_or0(tb, TBRDMA_ATTR_MAX_FRAME);
	r->has_knobs = tb[TBRDMA_ATTR_DROP_PPM] != NULL;
	r->drop_ppm = u32_or0(tb, TBRDMA_ATTR_DROP_PPM);
	r->dup_ppm = u32_or0(tb, TBRDMA_ATTR_DUP_PPM);
	r->reorder = u32_or0(tb, TBRDMA_ATTR_REORDER);
	r->delay_us = u32_or0(tb, TBRDMA_ATTR_DELAY_US);
	r->rate_bps = u64_or0(tb, TBRDMA_ATTR_RATE_BPS);
	r->cut = tb[TBRDMA_ATTR_CUT_STATE] && nla_get_u8(tb[TBRDMA_ATTR_CUT_STATE]);
	str_copy(r->eth_ifname, sizeof(r->eth_ifname), tb, TBRDMA_ATTR_ETH_IFNAME);
	r->eth_ifindex = u32_or0(tb, TBRDMA_ATTR_ETH_IFINDEX);
	if (tb[TBRDMA_ATTR_ETH_PEER_MAC] && nla_len(tb[TBRDMA_ATTR_ETH_PEER_MAC]) == 6) {
		memcpy(r->eth_peer_mac, nla_data(tb[TBRDMA_ATTR_ETH_PEER_MAC]), 6);
		r->has_peer_mac = true;
	}
	get_counters(&r->counters, tb[TBRDMA_ATTR_STATS]);
	return NL_OK;
}

int kernel_dump(Kernel *k, Model *m, const char *device, char *msg, size_t msglen)
{
	static const struct {
		uint8_t cmd;
		nl_recvmsg_msg_cb_t cb;
	} dumps[] = {
		{ TBRDMA_CMD_DEV_GET, dev_cb },
		{ TBRDMA_CMD_LINK_GET, link_cb },
		{ TBRDMA_CMD_RAIL_GET, rail_cb },
	};
	Model new = { 0 };

	for (size_t i = 0; i < ELEMENTSOF(dumps); i++) {
		struct dump_ctx ctx = { .model = &new, .device = device };
		int r = request(k, dumps[i].cmd, NLM_F_DUMP, NULL, dumps[i].cb, &ctx, msg, msglen);

		if (r < 0) {
			model_clear(&new);
			return r;
		}
	}
	model_replace(m, &new);
	return 0;
}

int kernel_rail_set_cut(Kernel *k, const char *device, uint32_t link, uint32_t rail, bool cut,
			char *msg, size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m;

	if (!k->req) {
		snprintf(msg, msglen, "not connected to the kernel");
		return -ENOTCONN;
	}
	m = nlmsg_alloc();
	if (!m || !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, k->family, 0, NLM_F_ACK,
			       TBRDMA_CMD_RAIL_SET, TBRDMA_GENL_VERSION) ||
	    nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
	    nla_put_u32(m, TBRDMA_ATTR_LINK_ID, link) < 0 ||
	    nla_put_u32(m, TBRDMA_ATTR_RAIL_ID, rail) < 0 ||
	    nla_put_u8(m, TBRDMA_ATTR_CUT, cut) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	return request(k, TBRDMA_CMD_RAIL_SET, 0, m, NULL, &ctx, msg, msglen);
}

int kernel_mgmt_send(Kernel *k, const char *device, uint32_t link, const void *data, size_t len,
		     char *msg, size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m;

	if (!k->req) {
		snprintf(msg, msglen, "not connected to the kernel");
		return -ENOTCONN;
	}
	m = nlmsg_alloc_size(len + 512);
	if (!m || !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, k->family, 0, NLM_F_ACK,
			       TBRDMA_CMD_MGMT_SEND, TBRDMA_GENL_VERSION) ||
	    nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
	    nla_put_u32(m, TBRDMA_ATTR_LINK_ID, link) < 0 ||
	    nla_put(m, TBRDMA_ATTR_MGMT_DATA, (int)len, data) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	return request(k, TBRDMA_CMD_MGMT_SEND, 0, m, NULL, &ctx, msg, msglen);
}

/* ---- events ------------------------------------------------------------------------------ */

struct event_ctx {
	Kernel *k;
	kernel_event_fn fn;
	void *userdata;
};

static const char *event_name(struct nlattr **tb)
{
	static const char *const n[] = { "?", "new", "del", "up", "down" };
	unsigned e = tb[TBRDMA_ATTR_EVENT] ? nla_get_u8(tb[TBRDMA_ATTR_EVENT]) : 0;

	return e < ELEMENTSOF(n) ? n[e] : "?";
}

static int ctrl_event(struct event_ctx *c, struct nl_msg *m)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct genlmsghdr *g = genlmsg_hdr(nlmsg_hdr(m));
	static struct nla_policy pol[CTRL_ATTR_MAX + 1] = {
		[CTRL_ATTR_FAMILY_NAME] = { .type = NLA_STRING },
	};

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, CTRL_ATTR_MAX, pol) < 0 ||
	    !tb[CTRL_ATTR_FAMILY_NAME] ||
	    strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]), c->k->family_name))
		return NL_OK;
	if (g->cmd == CTRL_CMD_NEWFAMILY)
		c->fn(c->userdata, KERNEL_EVENT_FAMILY_NEW, "family registered");
	else if (g->cmd == CTRL_CMD_DELFAMILY)
		c->fn(c->userdata, KERNEL_EVENT_FAMILY_DEL, "family unregistered");
	return NL_OK;
}

static int event_cb(struct nl_msg *m, void *arg)
{
	struct event_ctx *c = arg;
	struct nlattr *buf[TBRDMA_ATTR_MAX + 1], **tb;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	char text[160], g[17];
	uint8_t cmd;

	if (nlh->nlmsg_type == GENL_ID_CTRL)
		return ctrl_event(c, m);
	if (c->k->family < 0 || nlh->nlmsg_type != c->k->family)
		return NL_OK;
	tb = parse(m, buf);
	if (!tb)
		return NL_OK;
	cmd = genlmsg_hdr(nlh)->cmd;
	if (cmd == TBRDMA_CMD_MGMT_RECV) {
		if (c->k->mgmt_fn && tb[TBRDMA_ATTR_DEV_NAME] && tb[TBRDMA_ATTR_MGMT_DATA] &&
		    tb[TBRDMA_ATTR_LINK_ID] && tb[TBRDMA_ATTR_PEER_GUID])
			c->k->mgmt_fn(c->k->mgmt_userdata, nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]),
				      nla_get_u32(tb[TBRDMA_ATTR_LINK_ID]),
				      nla_get_u64(tb[TBRDMA_ATTR_PEER_GUID]),
				      nla_data(tb[TBRDMA_ATTR_MGMT_DATA]),
				      (size_t)nla_len(tb[TBRDMA_ATTR_MGMT_DATA]));
		return NL_OK;
	}
	guid_to_string(u64_or0(tb, TBRDMA_ATTR_PEER_GUID), g);
	switch (cmd) {
	case TBRDMA_CMD_DEV_EVENT:
		snprintf(text, sizeof(text), "device %s: %s",
			 tb[TBRDMA_ATTR_DEV_NAME] ? nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]) : "?",
			 event_name(tb));
		break;
	case TBRDMA_CMD_LINK_EVENT:
		snprintf(text, sizeof(text), "link %s/%u (peer %s): %s",
			 tb[TBRDMA_ATTR_DEV_NAME] ? nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]) : "?",
			 u32_or0(tb, TBRDMA_ATTR_LINK_ID), g, event_name(tb));
		break;
	case TBRDMA_CMD_RAIL_EVENT:
		snprintf(text, sizeof(text), "rail %s/%u/%u (%s, peer %s): %s",
			 tb[TBRDMA_ATTR_DEV_NAME] ? nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]) : "?",
			 u32_or0(tb, TBRDMA_ATTR_LINK_ID), u32_or0(tb, TBRDMA_ATTR_RAIL_ID),
			 tb[TBRDMA_ATTR_BACKEND] ? nla_get_string(tb[TBRDMA_ATTR_BACKEND]) : "?", g,
			 event_name(tb));
		break;
	default:
		return NL_OK;
	}
	c->fn(c->userdata, KERNEL_EVENT_OBJECT, text);
	return NL_OK;
}

static int seq_ok(struct nl_msg *m, void *arg)
{
	(void)m; (void)arg;
	return NL_OK;
}

int kernel_process_events(Kernel *k, kernel_event_fn fn, void *userdata)
{
	struct event_ctx ctx = { .k = k, .fn = fn, .userdata = userdata };
	struct nl_cb *cb;
	int r = 0;

	if (!k->ev)
		return -ENOTCONN;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, event_cb, &ctx);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, seq_ok, NULL);	/* multicast: seq 0 */
	for (int i = 0; i < EVENTS_PER_WAKEUP; i++) {
		r = nl_recvmsgs_report(k->ev, cb);
		if (r == -NLE_NOMEM) {		/* ENOBUFS: the socket overflowed */
			fn(userdata, KERNEL_EVENT_OVERRUN, "event socket overrun");
			continue;
		}
		if (r <= 0)
			break;
	}
	nl_cb_put(cb);
	if (r == -NLE_AGAIN || r >= 0)
		return 0;
	return nlerr_to_errno(r);
}
