// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * "peers" and "counters" (docs/json.md). Both only read: the model (the kernel's devices, links,
 * rails and counters as the last genl dump saw them) and, for peers, the sweep's fabric (the
 * reply of the "fabric" op, reshaped per host). No kernel access, no I/O: unit-testable and
 * fuzzable like the rest of request.c.
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"
#include "inspect.h"
#include "json.h"
#include "protocol.h"
#include "request.h"
#include "util.h"

/* the short form of a local link in a peer entry */
static json_object *peer_link(const Link *l)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "device", json_object_new_string(l->device));
	json_object_object_add(o, "id", json_object_new_int64(l->id));
	json_object_object_add(o, "state", json_object_new_string(l->up ? "up" : "down"));
	json_object_object_add(o, "rails_up", json_object_new_int64(l->rails_up));
	json_object_object_add(o, "rails_total", json_object_new_int64(l->rails_total));
	return o;
}

/* the local links whose peer is @guid */
static json_object *links_to(const Model *m, uint64_t guid, size_t *n)
{
	json_object *a = json_object_new_array();

	*n = 0;
	for (size_t i = 0; i < m->n_links; i++)
		if (m->links[i].peer_guid == guid) {
			json_object_array_add(a, peer_link(&m->links[i]));
			(*n)++;
		}
	return a;
}

/* a GUID of the peers request, 0 for none or a bad one */
static uint64_t parse_guid(const char *s)
{
	uint64_t g;

	return s && !guid_parse(s, strlen(s), &g) ? g : 0;
}

static const char *jstring(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static json_object *jcopy(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? json_object_get(v) : NULL;
}

/* hop counts from @self over the hosts' neighbour lists (breadth first); -1: unreachable */
static void hops_from(json_object *hosts, size_t n, const char *self, int *hops)
{
	size_t queue[FABRIC_HOSTS_MAX], head = 0, tail = 0;

	for (size_t i = 0; i < n; i++) {
		hops[i] = -1;
		if (self && !strcmp(jstring(json_object_array_get_idx(hosts, i), "guid") ?: "", self)) {
			hops[i] = 0;
			queue[tail++] = i;
		}
	}
	while (head < tail) {
		size_t u = queue[head++];
		json_object *nb = NULL;

		json_object_object_get_ex(json_object_array_get_idx(hosts, u), "neighbours", &nb);
		for (size_t j = 0; nb && j < json_object_array_length(nb); j++) {
			const char *g = json_object_get_string(json_object_array_get_idx(nb, j));

			for (size_t v = 0; g && v < n; v++) {
				const char *hv = jstring(json_object_array_get_idx(hosts, v), "guid");

				if (hops[v] < 0 && hv && !strcmp(hv, g) && tail < FABRIC_HOSTS_MAX) {
					hops[v] = hops[u] + 1;
					queue[tail++] = v;
				}
			}
		}
	}
}

json_object *inspect_peers(const RequestContext *c, const char *method, json_object *req)
{
	_cleanup_json_ json_object *fab = json_object_new_object();
	json_object *o, *peers, *hosts = NULL;
	const Model *m = c->model;
	const char *self = NULL, *master = NULL;
	bool sweep;
	size_t n = 0;
	int hops[FABRIC_HOSTS_MAX];

	(void)req;
	sweep = c->ops && c->ops->fabric && c->ops->fabric(c->userdata, fab) >= 0;
	if (sweep) {
		self = jstring(fab, "self");
		master = jstring(fab, "master");
		if (json_object_object_get_ex(fab, "hosts", &hosts) &&
		    json_object_is_type(hosts, json_type_array))
			n = json_object_array_length(hosts);
		if (n > FABRIC_HOSTS_MAX)
			n = FABRIC_HOSTS_MAX;
		hops_from(hosts, n, self, hops);
	}
	o = json_reply_new(method);
	json_object_object_add(o, "sweep", json_object_new_boolean(sweep));
	json_object_object_add(o, "self", self ? json_object_new_string(self) : NULL);
	json_object_object_add(o, "master", master ? json_object_new_string(master) : NULL);
	peers = json_object_new_array();
	/* every host the sweep knows, this one included */
	for (size_t i = 0; i < n; i++) {
		json_object *h = json_object_array_get_idx(hosts, i), *p = json_object_new_object();
		const char *g = jstring(h, "guid");
		json_object *v;
		bool is_master = json_object_object_get_ex(h, "master", &v) && json_object_get_boolean(v);
		bool is_self = json_object_object_get_ex(h, "self", &v) && json_object_get_boolean(v);
		size_t nl;

		json_object_object_add(p, "guid", g ? json_object_new_string(g) : NULL);
		json_object_object_add(p, "name", NULL);
		json_object_object_add(p, "self", json_object_new_boolean(is_self));
		json_object_object_add(p, "role", json_object_new_string(is_master ? "master" : "standby"));
		json_object_object_add(p, "address", jcopy(h, "address"));
		json_object_object_add(p, "priority", jcopy(h, "priority"));
		json_object_object_add(p, "hops", hops[i] >= 0 ? json_object_new_int(hops[i]) : NULL);
		json_object_object_add(p, "age_ms", jcopy(h, "age_ms"));
		json_object_object_add(p, "neighbours", jcopy(h, "neighbours"));
		json_object_object_add(p, "links", is_self ? json_object_new_array() :
				       links_to(m, parse_guid(g), &nl));
		json_object_array_add(peers, p);
	}
	/* kernel neighbours the sweep does not know (Sweep=no, or not heard yet): one hop away */
	for (size_t i = 0; i < m->n_links; i++) {
		char g[17];
		bool known = false, dup = false;
		json_object *p;
		size_t nl;

		guid_to_string(m->links[i].peer_guid, g);
		for (size_t k = 0; k < n && !known; k++)
			known = !strcmp(jstring(json_object_array_get_idx(hosts, k), "guid") ?: "", g);
		for (size_t k = 0; k < i && !dup; k++)
			dup = m->links[k].peer_guid == m->links[i].peer_guid;
		if (known || dup)
			continue;
		p = json_object_new_object();
		json_object_object_add(p, "guid", json_object_new_string(g));
		json_object_object_add(p, "name", NULL);
		json_object_object_add(p, "self", json_object_new_boolean(false));
		json_object_object_add(p, "role", NULL);
		json_object_object_add(p, "address", NULL);
		json_object_object_add(p, "priority", NULL);
		json_object_object_add(p, "hops", json_object_new_int(1));
		json_object_object_add(p, "age_ms", NULL);
		json_object_object_add(p, "neighbours", NULL);
		json_object_object_add(p, "links", links_to(m, m->links[i].peer_guid, &nl));
		json_object_array_add(peers, p);
	}
	json_object_object_add(o, "peers", peers);
	return o;
}

static json_object *counted(const char *device, json_object *counters)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "device", json_object_new_string(device));
	json_object_object_add(o, "counters", counters);
	return o;
}

json_object *inspect_counters(const RequestContext *c, const char *method, json_object *req)
{
	const Model *m = c->model;
	json_object *o, *devs, *links, *rails, *eth, *err = NULL;
	const char *dev;

	if (request_device_param(req, method, false, &dev, &err) < 0)
		return err;
	if (dev && !model_find_device(m, dev))
		return json_error_new(method, ERR_NOT_FOUND, "no device %s", dev);
	o = json_reply_new(method);
	devs = json_object_new_array();
	for (size_t i = 0; i < m->n_devices; i++) {
		const Device *d = &m->devices[i];
		Counters sum = { 0 };
		json_object *e;
		char g[17];

		if (dev && strcmp(dev, d->name))
			continue;
		/* a device's totals: the sum of its links' counters */
		for (size_t j = 0; j < m->n_links; j++) {
			const Link *l = &m->links[j];

			if (strcmp(l->device, d->name))
				continue;
			sum.present |= l->counters.present;
			for (unsigned k = 0; k < MODEL_STATS; k++)
				sum.v[k] += l->counters.v[k];
		}
		e = counted(d->name, json_counters(&sum));
		guid_to_string(d->guid, g);
		json_object_object_add(e, "guid", json_object_new_string(g));
		json_object_object_add(e, "links", json_object_new_int64(d->links));
		json_object_array_add(devs, e);
	}
	links = json_object_new_array();
	for (size_t i = 0; i < m->n_links; i++) {
		const Link *l = &m->links[i];
		json_object *e;
		char g[17];

		if (dev && strcmp(dev, l->device))
			continue;
		e = counted(l->device, json_counters(&l->counters));
		json_object_object_add(e, "id", json_object_new_int64(l->id));
		guid_to_string(l->peer_guid, g);
		json_object_object_add(e, "peer_guid", json_object_new_string(g));
		json_object_object_add(e, "state", json_object_new_string(l->up ? "up" : "down"));
		json_object_array_add(links, e);
	}
	rails = json_object_new_array();
	for (size_t i = 0; i < m->n_rails; i++) {
		const Rail *r = &m->rails[i];
		json_object *e;

		if (dev && strcmp(dev, r->device))
			continue;
		e = counted(r->device, json_counters(&r->counters));
		json_object_object_add(e, "link", json_object_new_int64(r->link));
		json_object_object_add(e, "id", json_object_new_int64(r->id));
		json_object_object_add(e, "backend", json_object_new_string(r->backend));
		json_object_object_add(e, "state", json_object_new_string(r->up ? "up" : "down"));
		json_object_object_add(e, "ifname", r->eth_ifname[0] ?
				       json_object_new_string(r->eth_ifname) : NULL);
		json_object_array_add(rails, e);
	}
	eth = json_object_new_array();
	for (size_t i = 0; i < m->n_eth; i++) {
		const EthBinding *b = &m->eth[i];
		json_object *e;

		if (dev && strcmp(dev, b->device))
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "device", json_object_new_string(b->device));
		json_object_object_add(e, "ifname", json_object_new_string(b->ifname));
		json_object_object_add(e, "state", json_object_new_string(b->up ? "up" : "down"));
		json_object_object_add(e, "peers", json_object_new_int64(b->peers));
		json_object_object_add(e, "hello_tx", json_object_new_uint64(b->hello_tx));
		json_object_object_add(e, "hello_rx", json_object_new_uint64(b->hello_rx));
		json_object_object_add(e, "rx_foreign", json_object_new_uint64(b->rx_foreign));
		json_object_array_add(eth, e);
	}
	json_object_object_add(o, "devices", devs);
	json_object_object_add(o, "links", links);
	json_object_object_add(o, "rails", rails);
	json_object_object_add(o, "eth", eth);
	return o;
}
