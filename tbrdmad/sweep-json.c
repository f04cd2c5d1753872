// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sweep as JSON (docs/json.md "fabric", the links' "negotiation"): read only. */
#include <string.h>

#include "addr.h"
#include "json.h"
#include "sweep-priv.h"

void sweep_link_json(Sweep *s, const Link *l, json_object *o)
{
	if (s)
		railneg_link_json(s->neg, l, o);
}

static json_object *guid_json(uint64_t g)
{
	char b[17];

	if (!g)
		return NULL;
	guid_to_string(g, b);
	return json_object_new_string(b);
}

static json_object *addr_json(uint32_t a)
{
	char b[16];

	if (!a)
		return NULL;
	ipv4_str(a, b);
	return json_object_new_string(b);
}

static json_object *addr6_json(Sweep *s, uint64_t guid)
{
	uint8_t a[16];
	char b[46];

	if (!s->pool6.enabled || !guid)
		return NULL;
	addr6_from_guid(&s->pool6, guid, a);
	ipv6_str(a, b);
	return json_object_new_string(b);
}

void sweep_fabric_json(Sweep *s, json_object *o)
{
	json_object *hosts = json_object_new_array(), *links = json_object_new_array(),
		    *addrs = json_object_new_array(), *st = json_object_new_object();
	HostRecord *mr;
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	/* converged: a master elected, and every host names it */
	bool converged = s->db.n_hosts > 0 && s->master, reach[FABRIC_HOSTS_MAX];

	json_object_object_add(o, "device", s->device[0] ? json_object_new_string(s->device) : NULL);
	json_object_object_add(o, "netdev", s->netdev[0] ? json_object_new_string(s->netdev) : NULL);
	json_object_object_add(o, "self", guid_json(s->db.self));
	json_object_object_add(o, "priority", json_object_new_int(s->m->config.priority));
	json_object_object_add(o, "role", json_object_new_string(
		!s->db.self ? "none" : s->master == s->db.self ? "master" : "standby"));
	json_object_object_add(o, "master", guid_json(s->master));
	json_object_object_add(o, "epoch", json_object_new_int64(s->epoch));
	json_object_object_add(o, "pool", json_object_new_string(s->m->config.pool));
	json_object_object_add(o, "authenticated", json_object_new_boolean(s->auth != NULL));
	json_object_object_add(o, "address", addr_json(s->addr));
	json_object_object_add(o, "pool6", s->pool6.enabled ?
			       json_object_new_string(s->m->config.pool6) : NULL);
	json_object_object_add(o, "address6", s->addr6_netdev[0] ? addr6_json(s, s->db.self) : NULL);
	fabric_reachable(&s->db, reach);
	for (size_t i = 0; i < s->db.n_hosts; i++) {
		HostRecord *h = &s->db.hosts[i];
		json_object *x = json_object_new_object(), *nb = json_object_new_array();

		converged &= h->master == s->master;
		json_object_object_add(x, "guid", guid_json(h->guid));
		json_object_object_add(x, "priority", json_object_new_int(h->priority));
		json_object_object_add(x, "self", json_object_new_boolean(h->guid == s->db.self));
		json_object_object_add(x, "master", json_object_new_boolean(h->guid == s->master));
		json_object_object_add(x, "believes_master", guid_json(h->master));
		json_object_object_add(x, "address", addr_json(h->addr));
		json_object_object_add(x, "address6", addr6_json(s, h->guid));
		json_object_object_add(x, "epoch", json_object_new_int64(h->epoch));
		json_object_object_add(x, "age_ms", json_object_new_int64(
			h->guid == s->db.self ? 0 : (int64_t)((now - h->origin_usec) / 1000)));
		json_object_object_add(x, "reachable", json_object_new_boolean(reach[i]));
		for (unsigned j = 0; j < h->n_neigh; j++) {
			json_object_array_add(nb, guid_json(h->neigh[j]));
			if (h->guid < h->neigh[j] && fabric_find(&s->db, h->neigh[j])) {
				json_object *l = json_object_new_object();

				json_object_object_add(l, "a", guid_json(h->guid));
				json_object_object_add(l, "b", guid_json(h->neigh[j]));
				json_object_array_add(links, l);
			}
		}
		json_object_object_add(x, "neighbours", nb);
		json_object_array_add(hosts, x);
	}
	mr = fabric_find(&s->db, s->master);
	for (unsigned j = 0; mr && j < mr->n_assign; j++) {
		json_object *x = json_object_new_object();

		json_object_object_add(x, "guid", guid_json(mr->assign[j].guid));
		json_object_object_add(x, "address", addr_json(mr->assign[j].addr));
		json_object_array_add(addrs, x);
	}
	json_object_object_add(o, "converged", json_object_new_boolean(converged));
	json_object_object_add(o, "hosts", hosts);
	json_object_object_add(o, "links", links);
	json_object_object_add(o, "addresses", addrs);
	json_object_object_add(st, "light", json_object_new_uint64(s->light));
	json_object_object_add(st, "heavy", json_object_new_uint64(s->heavy));
	json_object_object_add(st, "tx", json_object_new_uint64(s->tx));
	json_object_object_add(st, "tx_errors", json_object_new_uint64(s->tx_err));
	json_object_object_add(st, "rx", json_object_new_uint64(s->rx));
	json_object_object_add(st, "rx_dropped", json_object_new_uint64(s->rx_bad));
	json_object_object_add(st, "rx_unauthenticated", json_object_new_uint64(s->rx_unauth));
	json_object_object_add(st, "records_refused", json_object_new_uint64(s->db.rejected));
	json_object_object_add(st, "links_confirmed", json_object_new_uint64(s->confirmed));
	json_object_object_add(st, "records_evicted", json_object_new_uint64(s->db.evicted));
	json_object_object_add(o, "sweeps", st);
}

void sweep_routes_json(Sweep *s, json_object *o)
{
	json_object *a = json_object_new_array();
	const Model *mo = &s->m->model;

	json_object_object_add(o, "device", s->device[0] ? json_object_new_string(s->device) : NULL);
	json_object_object_add(o, "self", guid_json(s->db.self));
	json_object_object_add(o, "version", s->routes_set ?
			       json_object_new_int64(s->route_version) : NULL);
	json_object_object_add(o, "errors", json_object_new_uint64(s->route_errors));
	for (size_t i = 0; s->routes_set && i < s->routes.n; i++) {
		const Route *r = &s->routes.r[i];
		json_object *x = json_object_new_object(), *p = json_object_new_array(), *link = NULL;
		const HostRecord *h = fabric_find(&s->db, r->dst);

		for (uint32_t k = 0; k < r->hops; k++)
			json_object_array_add(p, guid_json(r->path[k]));
		for (size_t j = 0; j < mo->n_links; j++)
			if (!strcmp(mo->links[j].device, s->device) &&
			    mo->links[j].peer_guid == r->next_hop)
				link = json_object_new_int64(mo->links[j].id);
		json_object_object_add(x, "destination", guid_json(r->dst));
		json_object_object_add(x, "address", addr_json(h ? h->addr : 0));
		json_object_object_add(x, "next_hop", guid_json(r->next_hop));
		json_object_object_add(x, "link", link);
		json_object_object_add(x, "hops", json_object_new_int64(r->hops));
		json_object_object_add(x, "path", p);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "routes", a);
}

static const char *membership(uint16_t pkey)
{
	return pkey & PKEY_FULL ? "full" : "limited";
}

static json_object *pkey_json(uint16_t v)
{
	char b[8];

	snprintf(b, sizeof(b), "0x%04x", v);
	return json_object_new_string(b);
}

/* the name our [Partition] sections give partition @part, NULL when none */
static json_object *partition_name(const Sweep *s, uint16_t part)
{
	const PartitionConfig *c = &s->m->config.partitions;

	for (unsigned i = 0; i < c->n; i++)
		if (c->p[i].part == part && c->p[i].name[0])
			return json_object_new_string(c->p[i].name);
	return part == PKEY_DEFAULT_PART ? json_object_new_string("default") : NULL;
}

void sweep_partitions_json(Sweep *s, json_object *o)
{
	const HostRecord *mr = fabric_find(&s->db, s->master);
	json_object *parts = json_object_new_array(), *table = json_object_new_array();
	uint16_t slots[TBRDMA_PKEYS_MAX], seen[PKEY_ENTRIES_MAX];
	unsigned n_seen = 0;
	char msg[256];
	int n = s->device[0] ? kernel_pkey_get(&s->m->kernel, s->device, slots, msg, sizeof(msg)) : -ENODEV;

	json_object_object_add(o, "device", s->device[0] ? json_object_new_string(s->device) : NULL);
	json_object_object_add(o, "master", s->master ? guid_json(s->master) : NULL);
	json_object_object_add(o, "configured", json_object_new_boolean(mr && mr->n_pkey));
	json_object_object_add(o, "errors", json_object_new_uint64(s->pkey_errors));
	/* the master's partitions: each partition with its members, in the order published */
	for (unsigned i = 0; mr && i < mr->n_pkey; i++) {
		uint16_t part = mr->pkey[i].pkey & PKEY_PART;
		json_object *p = NULL, *m, *members;
		unsigned j;

		for (j = 0; j < n_seen && seen[j] != part; j++)
			;
		if (j < n_seen) {
			p = json_object_array_get_idx(parts, j);
		} else {
			seen[n_seen++] = part;
			p = json_object_new_object();
			json_object_object_add(p, "partition", pkey_json(part));
			json_object_object_add(p, "name", partition_name(s, part));
			json_object_object_add(p, "members", json_object_new_array());
			json_object_array_add(parts, p);
		}
		json_object_object_get_ex(p, "members", &members);
		m = json_object_new_object();
		json_object_object_add(m, "guid", mr->pkey[i].guid ? guid_json(mr->pkey[i].guid) :
				       json_object_new_string("ALL"));
		json_object_object_add(m, "membership",
				       json_object_new_string(membership(mr->pkey[i].pkey)));
		json_object_array_add(members, m);
	}
	json_object_object_add(o, "partitions", parts);
	/* the kernel's table, slot by slot (empty slots left out) */
	for (int i = 0; i < n; i++) {
		json_object *x;

		if (!(slots[i] & PKEY_PART))
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "index", json_object_new_int(i));
		json_object_object_add(x, "pkey", pkey_json(slots[i]));
		json_object_object_add(x, "partition", pkey_json(slots[i] & PKEY_PART));
		json_object_object_add(x, "membership", json_object_new_string(membership(slots[i])));
		json_object_object_add(x, "name", partition_name(s, slots[i] & PKEY_PART));
		json_object_array_add(table, x);
	}
	json_object_object_add(o, "table", n >= 0 ? table : (json_object_put(table), NULL));
}
