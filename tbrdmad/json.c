// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The model's objects as JSON (schema in docs/json.md). Key names follow tbrdma-ctl's and
 * docs/netlink.md's names; GUIDs are 16 hex digits as in sysfs peer_guid. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "genl-family.h"
#include "json.h"
#include "protocol.h"

json_object *json_reply_new(const char *method)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "schema", json_object_new_int(TBRDMAD_SCHEMA));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	if (method)
		json_object_object_add(o, "method", json_object_new_string(method));
	return o;
}

json_object *json_error_new(const char *method, const char *code, const char *fmt, ...)
{
	json_object *o = json_reply_new(method), *e;
	char msg[512];
	va_list ap;

	if (!o)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_string(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "error", e);
	return o;
}

static const char *errno_name(int err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENETDOWN: return "ENETDOWN";
	case ENOBUFS: return "ENOBUFS";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case ERANGE: return "ERANGE";
	default: return NULL;
	}
}

void json_error_set_errno(json_object *reply, int err)
{
	json_object *e;
	const char *n;

	if (err < 0)
		err = -err;
	if (!json_object_object_get_ex(reply, "error", &e))
		return;
	n = errno_name(err);
	if (n)
		json_object_object_add(e, "errno", json_object_new_string(n));
	json_object_object_add(e, "errno_value", json_object_new_int(err));
}

void guid_to_string(uint64_t guid, char buf[static 17])
{
	snprintf(buf, 17, "%016" PRIx64, guid);
}

static void add_guid(json_object *o, const char *key, uint64_t guid)
{
	char buf[17];

	guid_to_string(guid, buf);
	json_object_object_add(o, key, json_object_new_string(buf));
}

static void add_u32(json_object *o, const char *key, uint32_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* a share of time, 0..1, from parts per million: printed as its 6 decimals, not 0.1000000001 */
static void add_share(json_object *o, const char *key, uint32_t ppm)
{
	char buf[32];
	size_t n;

	n = (size_t)snprintf(buf, sizeof(buf), "%u.%06u", ppm / 1000000, ppm % 1000000);
	while (n > 3 && buf[n - 1] == '0')
		buf[--n] = '\0';
	json_object_object_add(o, key, json_object_new_double_s(ppm / 1e6, buf));
}

json_object *json_counters(const Counters *c)
{
	json_object *o = json_object_new_object();

	for (unsigned i = 0; i < MODEL_STATS; i++) {
		const char *n = tbr_counter_name(i);

		if (n)
			json_object_object_add(o, n, json_object_new_uint64(
				c->present & (1u << i) ? c->v[i] : 0));
	}
	return o;
}

json_object *json_device(const Device *d)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(d->name));
	add_u32(o, "index", d->index);
	json_object_object_add(o, "netdev", json_object_new_string(d->netdev));
	add_u32(o, "ifindex", d->ifindex);
	add_guid(o, "guid", d->guid);
	json_object_object_add(o, "host", json_object_new_boolean(d->host));
	add_u32(o, "links", d->links);
	add_u32(o, "rails_up", d->rails_up);
	json_object_object_add(o, "auth", json_object_new_boolean(d->auth));
	json_object_object_add(o, "auth_refused", json_object_new_int64((int64_t)d->auth_refused));
	return o;
}

json_object *json_link(const Link *l)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "device", json_object_new_string(l->device));
	add_u32(o, "id", l->id);
	add_guid(o, "peer_guid", l->peer_guid);
	json_object_object_add(o, "state", json_object_new_string(l->up ? "up" : "down"));
	add_u32(o, "rails_up", l->rails_up);
	add_u32(o, "rails_total", l->rails_total);
	json_object_object_add(o, "trust", json_object_new_string(
		l->trust == 1 ? "held" : l->trust == 2 ? "rejected" : "used"));
	if (l->trust) {
		char g[17], t[96];

		guid_to_string(l->peer_guid, g);
		snprintf(t, sizeof(t), "%s: claims GUID %s, %s", l->trust == 1 ? "held" : "rejected",
			 g, l->trust == 1 ? "not confirmed by the sweep" : "refused");
		json_object_object_add(o, "trust_note", json_object_new_string(t));
	} else {
		json_object_object_add(o, "trust_note", NULL);
	}
	json_object_object_add(o, "tx_credits",
			       l->has_tx_credits ? json_object_new_int64(l->tx_credits) : NULL);
	json_object_object_add(o, "max_frame",
			       l->has_max_frame ? json_object_new_int64(l->max_frame) : NULL);
	json_object_object_add(o, "counters", json_counters(&l->counters));
	return o;
}

json_object *json_rail(const Rail *r)
{
	json_object *o = json_object_new_object(), *k;

	json_object_object_add(o, "device", json_object_new_string(r->device));
	add_u32(o, "link", r->link);
	add_u32(o, "id", r->id);
	add_guid(o, "peer_guid", r->peer_guid);
	json_object_object_add(o, "backend", json_object_new_string(r->backend));
	json_object_object_add(o, "state", json_object_new_string(r->up ? "up" : "down"));
	json_object_object_add(o, "cut", json_object_new_boolean(r->cut));
	add_u32(o, "tx_depth", r->tx_depth);
	add_u32(o, "rx_depth", r->rx_depth);
	add_u32(o, "tx_credits", r->tx_credits);
	json_object_object_add(o, "max_frame",
			       r->has_max_frame ? json_object_new_int64(r->max_frame) : NULL);
	json_object_object_add(o, "lane_mbps", r->lanes ? json_object_new_int64(r->lane_mbps) : NULL);
	json_object_object_add(o, "lanes", r->lanes ? json_object_new_int64(r->lanes) : NULL);
	json_object_object_add(o, "gbps", r->lanes ?
			       json_object_new_double((double)r->lane_mbps * r->lanes / 1000) : NULL);
	json_object_object_add(o, "slow", json_object_new_boolean(r->slow));
	json_object_object_add(o, "expected_lane_mbps",
			       r->expect_mbps ? json_object_new_int64(r->expect_mbps) : NULL);
	if (r->has_ring) {
		k = json_object_new_object();
		json_object_object_add(k, "seconds", json_object_new_double(r->ring_ms / 1000.0));
		add_share(k, "tx_full", r->tx_full_ppm);
		add_share(k, "tx_empty", r->tx_empty_ppm);
		add_share(k, "tx_mean", r->tx_mean_ppm);
		add_share(k, "rx_full", r->rx_full_ppm);
		add_share(k, "rx_empty", r->rx_empty_ppm);
		add_share(k, "rx_mean", r->rx_mean_ppm);
		json_object_object_add(o, "ring", k);
	} else {
		json_object_object_add(o, "ring", NULL);
	}
	if (r->has_knobs) {
		k = json_object_new_object();
		add_u32(k, "drop_ppm", r->drop_ppm);
		add_u32(k, "dup_ppm", r->dup_ppm);
		add_u32(k, "reorder", r->reorder);
		add_u32(k, "delay_us", r->delay_us);
		add_u32(k, "rx_hold_us", r->rx_hold_us);
		json_object_object_add(k, "rate_bps", json_object_new_uint64(r->rate_bps));
		json_object_object_add(o, "knobs", k);
	} else {
		json_object_object_add(o, "knobs", NULL);
	}
	if (r->eth_ifname[0]) {
		char mac[18] = "";

		k = json_object_new_object();
		json_object_object_add(k, "ifname", json_object_new_string(r->eth_ifname));
		add_u32(k, "ifindex", r->eth_ifindex);
		if (r->has_peer_mac)
			snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
				 r->eth_peer_mac[0], r->eth_peer_mac[1], r->eth_peer_mac[2],
				 r->eth_peer_mac[3], r->eth_peer_mac[4], r->eth_peer_mac[5]);
		json_object_object_add(k, "peer_mac", mac[0] ? json_object_new_string(mac) : NULL);
		json_object_object_add(k, "rx_foreign", json_object_new_uint64(r->eth_rx_foreign));
		json_object_object_add(o, "eth", k);
	} else {
		json_object_object_add(o, "eth", NULL);
	}
	json_object_object_add(o, "counters", json_counters(&r->counters));
	return o;
}
