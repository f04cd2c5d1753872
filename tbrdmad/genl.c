// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel control over the "tbrdma" generic netlink family (docs/netlink.md), libnl-genl-3.
 * The family's policies, counters and request/response exchange are genl-family.c's (shared with
 * tbctl and tests/tools/tbrdma-ctl); this file organises them for a long-running event loop: the
 * model filled from dumps, a receive timeout on the request socket, and a non-blocking event
 * socket that also follows nlctrl's family notifications.
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

#include "genl-family.h"
#include "genl.h"
#include "json.h"
#include "log.h"
#include "routes.h"
#include "util.h"

#define REQ_TIMEOUT_SEC 3
#define EVENTS_PER_WAKEUP 256

/* ---- sockets ---------------------------------------------------------------------------- */

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
	return log_error_errno(tbr_genl_errno(r), "event socket: %s", nl_geterror(r));
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
	struct nl_sock *sk;
	int r, grp;

	if (k->req)
		return 0;
	r = tbr_genl_open(&sk, &k->family, k->family_name, REQ_TIMEOUT_SEC, msg, msglen);
	if (r < 0)
		return r;
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

struct dump_ctx {
	Model *model;
	const char *device;
	int (*fill)(Model *m, struct nlattr **tb);	/* a new object from a reply; -ENOMEM */
	int parse_err;		/* a reply we could not take (-errno) */
};

/* sends @m (a new request of @cmd with @flags when NULL) and waits for its end */
static int request(Kernel *k, uint8_t cmd, int flags, struct nl_msg *m, nl_recvmsg_msg_cb_t valid,
		   struct dump_ctx *ctx, char *msg, size_t msglen)
{
	int r;

	if (!k->req) {
		nlmsg_free(m);
		snprintf(msg, msglen, "not connected to the kernel");
		return -ENOTCONN;
	}
	if (!m)
		m = tbr_genl_msg(k->family, cmd, flags, 0);
	if (!m)
		return -ENOMEM;
	r = tbr_genl_request(k->req, m, valid, ctx, msg, msglen);
	if (r < 0)
		return r;
	if (ctx->parse_err) {
		snprintf(msg, msglen, "could not store a reply");
		return ctx->parse_err;
	}
	return 0;
}

/* ---- dumps ------------------------------------------------------------------------------- */

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

	if (tbr_genl_parse_stats(nest, st) < 0)
		return;
	for (unsigned i = 0; i <= TBRDMA_STAT_MAX; i++)
		if (st[i] && tbr_counter(i)) {
			c->v[i] = nla_get_u64(st[i]);
			c->present |= 1u << i;
		}
}

static int dump_cb(struct nl_msg *m, void *arg)
{
	struct dump_ctx *c = arg;
	struct nlattr *tb[TBRDMA_ATTR_MAX + 1];

	/* replies without a device name or of another device than the one we manage are skipped */
	if (tbr_genl_parse(m, tb) < 0 || !tb[TBRDMA_ATTR_DEV_NAME] ||
	    (c->device && strcmp(c->device, nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]))))
		return NL_OK;
	if (c->fill(c->model, tb) < 0)
		c->parse_err = -ENOMEM;
	return NL_OK;
}

static int fill_device(Model *m, struct nlattr **tb)
{
	Device *d = model_add_device(m);

	if (!d)
		return -ENOMEM;
	str_copy(d->name, sizeof(d->name), tb, TBRDMA_ATTR_DEV_NAME);
	str_copy(d->netdev, sizeof(d->netdev), tb, TBRDMA_ATTR_NETDEV_NAME);
	d->index = tbr_nla_u32(tb, TBRDMA_ATTR_DEV_INDEX);
	d->ifindex = tbr_nla_u32(tb, TBRDMA_ATTR_NETDEV_IFINDEX);
	d->guid = tbr_nla_u64(tb, TBRDMA_ATTR_DEV_GUID);
	d->host = tb[TBRDMA_ATTR_HOST] != NULL;
	d->links = tbr_nla_u32(tb, TBRDMA_ATTR_LINKS);
	d->rails_up = tbr_nla_u32(tb, TBRDMA_ATTR_RAILS_UP);
	d->auth = tb[TBRDMA_ATTR_AUTH_KEYED] && nla_get_u8(tb[TBRDMA_ATTR_AUTH_KEYED]);
	d->auth_refused = tbr_nla_u64(tb, TBRDMA_ATTR_AUTH_REFUSED);
	return 0;
}

static int fill_link(Model *m, struct nlattr **tb)
{
	Link *l = model_add_link(m);

	if (!l)
		return -ENOMEM;
	str_copy(l->device, sizeof(l->device), tb, TBRDMA_ATTR_DEV_NAME);
	l->id = tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID);
	l->peer_guid = tbr_nla_u64(tb, TBRDMA_ATTR_PEER_GUID);
	l->up = tbr_nla_up(tb);
	l->rails_up = tbr_nla_u32(tb, TBRDMA_ATTR_RAILS_UP);
	l->trust = tb[TBRDMA_ATTR_TRUST] ? nla_get_u8(tb[TBRDMA_ATTR_TRUST]) : 0;
	l->rails_total = tbr_nla_u32(tb, TBRDMA_ATTR_RAILS_TOTAL);
	l->has_tx_credits = tb[TBRDMA_ATTR_TX_CREDITS] != NULL;
	l->tx_credits = tbr_nla_u32(tb, TBRDMA_ATTR_TX_CREDITS);
	l->has_max_frame = tb[TBRDMA_ATTR_MAX_FRAME] != NULL;
	l->max_frame = tbr_nla_u32(tb, TBRDMA_ATTR_MAX_FRAME);
	get_counters(&l->counters, tb[TBRDMA_ATTR_STATS]);
	return 0;
}

static int fill_rail(Model *m, struct nlattr **tb)
{
	Rail *r = model_add_rail(m);

	if (!r)
		return -ENOMEM;
	str_copy(r->device, sizeof(r->device), tb, TBRDMA_ATTR_DEV_NAME);
	r->link = tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID);
	r->id = tbr_nla_u32(tb, TBRDMA_ATTR_RAIL_ID);
	r->peer_guid = tbr_nla_u64(tb, TBRDMA_ATTR_PEER_GUID);
	str_copy(r->backend, sizeof(r->backend), tb, TBRDMA_ATTR_BACKEND);
	r->up = tbr_nla_up(tb);
	r->tx_depth = tbr_nla_u32(tb, TBRDMA_ATTR_TX_DEPTH);
	r->rx_depth = tbr_nla_u32(tb, TBRDMA_ATTR_RX_DEPTH);
	r->tx_credits = tbr_nla_u32(tb, TBRDMA_ATTR_TX_CREDITS);
	r->has_max_frame = tb[TBRDMA_ATTR_MAX_FRAME] != NULL;
	r->max_frame = tbr_nla_u32(tb, TBRDMA_ATTR_MAX_FRAME);
	r->has_knobs = tb[TBRDMA_ATTR_DROP_PPM] != NULL;
	r->drop_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_DROP_PPM);
	r->dup_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_DUP_PPM);
	r->reorder = tbr_nla_u32(tb, TBRDMA_ATTR_REORDER);
	r->delay_us = tbr_nla_u32(tb, TBRDMA_ATTR_DELAY_US);
	r->rx_hold_us = tbr_nla_u32(tb, TBRDMA_ATTR_RX_HOLD_US);
	r->rate_bps = tbr_nla_u64(tb, TBRDMA_ATTR_RATE_BPS);
	r->cut = tb[TBRDMA_ATTR_CUT_STATE] && nla_get_u8(tb[TBRDMA_ATTR_CUT_STATE]);
	str_copy(r->eth_ifname, sizeof(r->eth_ifname), tb, TBRDMA_ATTR_ETH_IFNAME);
	r->eth_ifindex = tbr_nla_u32(tb, TBRDMA_ATTR_ETH_IFINDEX);
	if (tb[TBRDMA_ATTR_ETH_PEER_MAC] && nla_len(tb[TBRDMA_ATTR_ETH_PEER_MAC]) == 6) {
		memcpy(r->eth_peer_mac, nla_data(tb[TBRDMA_ATTR_ETH_PEER_MAC]), 6);
		r->has_peer_mac = true;
	}
	r->lane_mbps = tbr_nla_u32(tb, TBRDMA_ATTR_LANE_MBPS);
	r->lanes = tbr_nla_u32(tb, TBRDMA_ATTR_LANES);
	r->has_ring = tb[TBRDMA_ATTR_RING_MS] != NULL;
	r->ring_ms = tbr_nla_u32(tb, TBRDMA_ATTR_RING_MS);
	r->tx_full_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_TX_FULL_PPM);
	r->tx_empty_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_TX_EMPTY_PPM);
	r->tx_mean_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_TX_MEAN_PPM);
	r->rx_full_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_RX_FULL_PPM);
	r->rx_empty_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_RX_EMPTY_PPM);
	r->rx_mean_ppm = tbr_nla_u32(tb, TBRDMA_ATTR_RX_MEAN_PPM);
	get_counters(&r->counters, tb[TBRDMA_ATTR_STATS]);
	return 0;
}

static int fill_eth(Model *m, struct nlattr **tb)
{
	EthBinding *e = model_add_eth(m);

	if (!e)
		return -ENOMEM;
	str_copy(e->device, sizeof(e->device), tb, TBRDMA_ATTR_DEV_NAME);
	str_copy(e->ifname, sizeof(e->ifname), tb, TBRDMA_ATTR_ETH_IFNAME);
	e->ifindex = tbr_nla_u32(tb, TBRDMA_ATTR_ETH_IFINDEX);
	e->up = tbr_nla_up(tb);
	e->max_frame = tbr_nla_u32(tb, TBRDMA_ATTR_MAX_FRAME);
	e->peers = tbr_nla_u32(tb, TBRDMA_ATTR_ETH_PEERS);
	e->hello_tx = tbr_nla_u64(tb, TBRDMA_ATTR_ETH_HELLO_TX);
	e->hello_rx = tbr_nla_u64(tb, TBRDMA_ATTR_ETH_HELLO_RX);
	e->rx_foreign = tbr_nla_u64(tb, TBRDMA_ATTR_ETH_RX_FOREIGN);
	return 0;
}

int kernel_dump(Kernel *k, Model *m, const char *device, char *msg, size_t msglen)
{
	static const struct {
		uint8_t cmd;
		int (*fill)(Model *m, struct nlattr **tb);
	} dumps[] = {
		{ TBRDMA_CMD_DEV_GET, fill_device },
		{ TBRDMA_CMD_LINK_GET, fill_link },
		{ TBRDMA_CMD_RAIL_GET, fill_rail },
		{ TBRDMA_CMD_ETH_GET, fill_eth },
	};
	Model new = { 0 };

	for (size_t i = 0; i < ELEMENTSOF(dumps); i++) {
		struct dump_ctx ctx = { .model = &new, .device = device, .fill = dumps[i].fill };
		int r = request(k, dumps[i].cmd, NLM_F_DUMP, NULL, dump_cb, &ctx, msg, msglen);

		if (r < 0) {
			model_clear(&new);
			return r;
		}
	}
	for (size_t i = 0; i < new.n_rails; i++) {
		Rail *r = &new.rails[i];
		const EthBinding *e = r->eth_ifname[0] ?
			model_find_eth(&new, r->device, r->eth_ifname) : NULL;

		r->eth_rx_foreign = e ? e->rx_foreign : 0;
	}
	model_replace(m, &new);
	return 0;
}

int kernel_rail_set_cut(Kernel *k, const char *device, uint32_t link, uint32_t rail, bool cut,
			char *msg, size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_RAIL_SET, NLM_F_ACK, 0);

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
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
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_MGMT_SEND, NLM_F_ACK, len + 512);

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
	    nla_put_u32(m, TBRDMA_ATTR_LINK_ID, link) < 0 ||
	    nla_put(m, TBRDMA_ATTR_MGMT_DATA, (int)len, data) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	return request(k, TBRDMA_CMD_MGMT_SEND, 0, m, NULL, &ctx, msg, msglen);
}

int kernel_route_set(Kernel *k, const char *device, uint32_t version, const RouteTable *t,
		     char *msg, size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_ROUTE_SET, NLM_F_ACK,
					 256 + t->n * 64);
	struct nlattr *routes, *r;

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
	    nla_put_u32(m, TBRDMA_ATTR_ROUTE_VERSION, version) < 0)
		goto nomem;
	routes = nla_nest_start(m, TBRDMA_ATTR_ROUTES);
	if (!routes)
		goto nomem;
	for (size_t i = 0; i < t->n; i++) {
		r = nla_nest_start(m, TBRDMA_ATTR_ROUTE);
		if (!r || nla_put_u64(m, TBRDMA_ATTR_ROUTE_DST, t->r[i].dst) < 0 ||
		    nla_put_u64(m, TBRDMA_ATTR_ROUTE_NEXT_HOP, t->r[i].next_hop) < 0 ||
		    nla_put_u32(m, TBRDMA_ATTR_ROUTE_HOPS, t->r[i].hops) < 0)
			goto nomem;
		nla_nest_end(m, r);
	}
	nla_nest_end(m, routes);
	return request(k, TBRDMA_CMD_ROUTE_SET, 0, m, NULL, &ctx, msg, msglen);
nomem:
	nlmsg_free(m);
	return -ENOMEM;
}

int kernel_link_trust(Kernel *k, const char *device, uint32_t link, uint8_t trust, char *msg,
		      size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_LINK_TRUST, NLM_F_ACK, 256);

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
	    nla_put_u32(m, TBRDMA_ATTR_LINK_ID, link) < 0 ||
	    nla_put_u8(m, TBRDMA_ATTR_TRUST, trust) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	return request(k, TBRDMA_CMD_LINK_TRUST, 0, m, NULL, &ctx, msg, msglen);
}

int kernel_auth_key_set(Kernel *k, const char *device, const uint8_t *key, size_t len,
			uint32_t grace_ms, char *msg, size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_AUTH_KEY_SET, NLM_F_ACK, 512);
	int r;

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0 ||
	    (key && nla_put(m, TBRDMA_ATTR_AUTH_KEY, (int)len, key) < 0) ||
	    nla_put_u32(m, TBRDMA_ATTR_AUTH_GRACE_MS, grace_ms) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	r = request(k, TBRDMA_CMD_AUTH_KEY_SET, 0, m, NULL, &ctx, msg, msglen);
	return r;
}

/* ---- events ------------------------------------------------------------------------------ */

struct event_ctx {
	Kernel *k;
	kernel_event_fn fn;
	void *userdata;
};

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
	struct nlattr *tb[TBRDMA_ATTR_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	char text[160], g[17];
	uint8_t cmd;

	if (nlh->nlmsg_type == GENL_ID_CTRL)
		return ctrl_event(c, m);
	if (c->k->family < 0 || nlh->nlmsg_type != c->k->family)
		return NL_OK;
	if (tbr_genl_parse(m, tb) < 0)
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
	guid_to_string(tbr_nla_u64(tb, TBRDMA_ATTR_PEER_GUID), g);
	switch (cmd) {
	case TBRDMA_CMD_DEV_EVENT:
		snprintf(text, sizeof(text), "device %s: %s",
			 tb[TBRDMA_ATTR_DEV_NAME] ? nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]) : "?",
			 tbr_genl_event_name(tb));
		break;
	case TBRDMA_CMD_LINK_EVENT:
		snprintf(text, sizeof(text), "link %s/%u (peer %s): %s",
			 tb[TBRDMA_ATTR_DEV_NAME] ? nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]) : "?",
			 tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID), g, tbr_genl_event_name(tb));
		break;
	case TBRDMA_CMD_RAIL_EVENT:
		snprintf(text, sizeof(text), "rail %s/%u/%u (%s, peer %s): %s",
			 tb[TBRDMA_ATTR_DEV_NAME] ? nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]) : "?",
			 tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID), tbr_nla_u32(tb, TBRDMA_ATTR_RAIL_ID),
			 tb[TBRDMA_ATTR_BACKEND] ? nla_get_string(tb[TBRDMA_ATTR_BACKEND]) : "?", g,
			 tbr_genl_event_name(tb));
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
	return tbr_genl_errno(r);
}

int kernel_pkey_set(Kernel *k, const char *device, const uint16_t *keys, unsigned n, char *msg,
		    size_t msglen)
{
	struct dump_ctx ctx = { 0 };
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_PKEY_SET, NLM_F_ACK, 512);
	struct nlattr *nest;

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0)
		goto nomem;
	nest = nla_nest_start(m, TBRDMA_ATTR_PKEYS);
	if (!nest)
		goto nomem;
	for (unsigned i = 0; i < n; i++)
		if (nla_put_u16(m, TBRDMA_ATTR_PKEY, keys[i]) < 0)
			goto nomem;
	nla_nest_end(m, nest);
	return request(k, TBRDMA_CMD_PKEY_SET, 0, m, NULL, &ctx, msg, msglen);
nomem:
	nlmsg_free(m);
	return -ENOMEM;
}

struct pkey_ctx {
	struct dump_ctx c;	/* first: request() reads its parse_err */
	uint16_t *table;
	unsigned n;
};

static int pkey_cb(struct nl_msg *m, void *arg)
{
	struct pkey_ctx *p = arg;
	struct nlattr *tb[TBRDMA_ATTR_MAX + 1], *a;
	int rem;

	if (tbr_genl_parse(m, tb) < 0 || !tb[TBRDMA_ATTR_PKEYS])
		return NL_OK;
	nla_for_each_nested(a, tb[TBRDMA_ATTR_PKEYS], rem)
		if (nla_type(a) == TBRDMA_ATTR_PKEY && nla_len(a) == 2 && p->n < TBRDMA_PKEYS_MAX)
			p->table[p->n++] = nla_get_u16(a);
	return NL_OK;
}

int kernel_pkey_get(Kernel *k, const char *device, uint16_t table[TBRDMA_PKEYS_MAX], char *msg,
		    size_t msglen)
{
	struct pkey_ctx ctx = { .table = table };
	struct nl_msg *m = tbr_genl_msg(k->family, TBRDMA_CMD_PKEY_GET, 0, 256);
	int r;

	if (!m || nla_put_string(m, TBRDMA_ATTR_DEV_NAME, device) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	r = request(k, TBRDMA_CMD_PKEY_GET, 0, m, pkey_cb, &ctx.c, msg, msglen);
	return r < 0 ? r : (int)ctx.n;
}
