// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sweep (docs/sweep.md). Every HelloSec (light sweep), and soon after anything changes, the
 * daemon refreshes its own host record (GUID, priority, up neighbours, applied address, master
 * it believes in, epoch), expires silent hosts, elects the master by (priority, GUID), and sends
 * its whole database to the peer of every up link with MGMT_SEND. Received databases are merged
 * record by record (newer generation wins; ages grow hop by hop, so copies of a dead host die
 * out). The master allocates addresses from Pool= (persisted guid2addr map) and publishes them in
 * its record; every daemon applies its own address to tbrN and keeps a copy of the map, so a
 * standby that takes over hands out the same addresses. A change of the fabric's digest (hosts,
 * links, master, assignments) makes a heavy sweep: logged phase by phase, ending "FABRIC UP".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "addr.h"
#include "auth.h"
#include "fabric.h"
#include "json.h"
#include "log.h"
#include "manager.h"
#include "negotiate.h"
#include "railneg.h"
#include "sweep.h"
#include "util.h"

#define KICK_USEC 50000ULL

struct Sweep {
	Manager *m;
	sd_event_source *timer;
	Fabric db;
	Pool pool;
	Pool6 pool6;
	char addr6_netdev[MODEL_NAME_MAX];	/* where the IPv6 address was applied, "" not yet */
	uint64_t addr6_guid;
	AddrMap map;
	char map_path[4096];
	char device[MODEL_NAME_MAX], netdev[MODEL_NAME_MAX];
	uint64_t master, digest;
	uint32_t epoch;
	uint32_t addr;			/* applied to tbrN */
	uint32_t want;			/* what the master says */
	bool claimed;			/* looked at tbrN's addresses once */
	uint64_t light, heavy, tx, rx, rx_bad, tx_err;
	uint64_t rx_unauth;		/* dropped by auth_unwrap() */
	Auth *auth;			/* FabricKeyFile=, NULL: no key */
	uint64_t last_heavy_usec;
	uint64_t last_run_usec;		/* when run() was last called, 0 never */
	uint64_t start_usec;		/* first run with our device: discovery for 2 hellos */
	bool pending_heavy;		/* forced by request */
	RailNeg *neg;			/* rail negotiation per link */
	struct {			/* what frame_warn() last said per link */
		uint32_t link, frame;
		unsigned parts, skipped;
	} split[FABRIC_NEIGH_MAX];
};

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static uint64_t real_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static const Device *our_device(Sweep *s)
{
	const Model *mo = &s->m->model;

	if (s->m->config.device)
		return model_find_device(mo, s->m->config.device);
	for (size_t i = 0; i < mo->n_devices; i++)
		if (mo->devices[i].host)
			return &mo->devices[i];
	return mo->n_devices ? &mo->devices[0] : NULL;
}

static void arm(Sweep *s, uint64_t delay)
{
	uint64_t now;

	sd_event_now(s->m->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(s->timer, now + delay);
	sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

void sweep_kick(Sweep *s)
{
	uint64_t now, cur = 0;

	if (!s)
		return;
	sd_event_now(s->m->event, CLOCK_MONOTONIC, &now);
	sd_event_source_get_time(s->timer, &cur);
	if (cur > now + KICK_USEC)
		arm(s, KICK_USEC);
}

static void save_map(Sweep *s)
{
	int r = addrmap_save(&s->map, s->map_path);

	if (r < 0)
		log_warning_errno(r, "sweep: saving %s: %m", s->map_path);
}

static void set_self(Sweep *s, const Device *d)
{
	HostRecord *self;
	const Model *mo = &s->m->model;
	uint64_t seq;

	if (s->db.self != d->guid) {
		/* first time, or another device: start over */
		s->db.n_hosts = 0;
		s->db.self = d->guid;
		s->db.seq_floor = 0;
	}
	self = fabric_find(&s->db, d->guid);
	if (!self) {
		memmove(&s->db.hosts[1], &s->db.hosts[0], s->db.n_hosts * sizeof(HostRecord));
		self = &s->db.hosts[0];
		memset(self, 0, sizeof(*self));
		s->db.n_hosts++;
		self->guid = d->guid;
	}
	/* newer than our last generation and than any copy of our GUID someone sent */
	seq = real_usec();
	if (seq <= self->seq)
		seq = self->seq + 1;
	if (seq < s->db.seq_floor)
		seq = s->db.seq_floor;
	self->seq = seq;
	self->origin_usec = mono_usec();
	self->age_ms = 0;
	self->priority = (uint8_t)s->m->config.priority;
	self->addr = s->addr;
	self->n_neigh = 0;
	for (size_t i = 0; i < mo->n_links && self->n_neigh < FABRIC_NEIGH_MAX; i++) {
		const Link *l = &mo->links[i];
		bool dup = false;

		if (strcmp(l->device, d->name) || !l->up || !l->peer_guid || l->peer_guid == d->guid)
			continue;
		for (unsigned j = 0; j < self->n_neigh; j++)
			dup |= self->neigh[j] == l->peer_guid;
		if (!dup)
			self->neigh[self->n_neigh++] = l->peer_guid;
	}
}

/* Logs at warning level, once per change, that link @l's frame size splits the database into
 * @parts messages (or leaves @skipped records out, or, @parts 0, nothing fits): a small frame (an eth rail at MTU 1500) must
 * not partition the fabric silently. */
static void frame_warn(Sweep *s, const Link *l, uint32_t frame, unsigned parts, unsigned skipped)
{
	size_t i, free_slot = ELEMENTSOF(s->split);

	for (i = 0; i < ELEMENTSOF(s->split); i++) {
		if (s->split[i].link == l->id)
			break;
		if (!s->split[i].link && free_slot == ELEMENTSOF(s->split))
			free_slot = i;
	}
	if (i == ELEMENTSOF(s->split)) {
		if (parts == 1 && !skipped)
			return;
		i = free_slot < ELEMENTSOF(s->split) ? free_slot : 0;
	} else if (s->split[i].frame == frame && s->split[i].parts == parts &&
		   s->split[i].skipped == skipped) {
		return;
	}
	if (!parts)
		log_warning("sweep: link %u: frame size %u is too small for our own record, "
			    "nothing sent", l->id, frame);
	else if (skipped)
		log_warning("sweep: link %u: frame size %u: %u record(s) do not fit with ours, not sent",
			    l->id, frame, skipped);
	else if (parts > 1)
		log_warning("sweep: link %u: frame size %u: the database is sent in %u messages",
			    l->id, frame, parts);
	s->split[i].link = l->id;
	s->split[i].frame = frame;
	s->split[i].parts = parts;
	s->split[i].skipped = skipped;
}

int sweep_mgmt_send(Sweep *s, const char *device, const Link *l, const uint8_t *data, size_t len,
		    char *err, size_t errlen)
{
	uint8_t buf[SWEEP_MSG_MAX];
	int n;

	if (!s->auth)
		return kernel_mgmt_send(&s->m->kernel, device, l->id, data, len, err, errlen);
	n = auth_wrap(s->auth, l->peer_guid, data, len, buf, sizeof(buf), real_usec());
	if (n < 0)
		return n;
	return kernel_mgmt_send(&s->m->kernel, device, l->id, buf, (size_t)n, err, errlen);
}

static void send_all(Sweep *s, const Device *d)
{
	static SweepMsg msg, part;
	uint8_t buf[SWEEP_MSG_MAX];
	uint64_t now = mono_usec();
	const Model *mo = &s->m->model;

	memset(&msg, 0, sizeof(msg));
	msg.type = SWEEP_TYPE_STATE;
	msg.sender = s->db.self;
	msg.master = s->master;
	msg.epoch = s->epoch;
	msg.priority = (uint8_t)s->m->config.priority;
	for (size_t i = 0; i < s->db.n_hosts; i++) {
		HostRecord *r = &msg.rec[msg.n_records++];
		uint64_t age;

		*r = s->db.hosts[i];
		age = now > r->origin_usec ? now - r->origin_usec : 0;
		r->age_ms = (uint32_t)(age / 1000);
	}
	for (size_t i = 0; i < mo->n_links; i++) {
		const Link *l = &mo->links[i];
		uint32_t frame = l->has_max_frame && l->max_frame < sizeof(buf) ? l->max_frame :
			sizeof(buf);
		unsigned pos = 0, parts = 0, skipped = 0;
		int n;

		if (strcmp(l->device, d->name) || !l->up)
			continue;
		if (s->auth)
			frame = frame > AUTH_OVERHEAD ? frame - AUTH_OVERHEAD : 0;
		while ((n = sweep_fragment(&msg, frame, &pos, &part, &skipped)) > 0) {
			char err[256] = "";
			int len = sweep_encode(&part, buf, frame);
			int r;

			if (len < 0) {
				log_warning_errno(len, "sweep: encoding: %m");
				break;
			}
			parts++;
			r = sweep_mgmt_send(s, d->name, l, buf, (size_t)len, err, sizeof(err));
			if (r < 0) {
				s->tx_err++;
				if (r == -EMSGSIZE)
					log_warning_errno(r, "sweep: MGMT_SEND %s/%u, %d bytes: %m %s",
							  d->name, l->id, len, err);
				else
					log_debug_errno(r, "sweep: MGMT_SEND %s/%u: %m %s", d->name,
							l->id, err);
			} else {
				s->tx++;
			}
		}
		frame_warn(s, l, frame, parts, skipped);
	}
}

static void heavy_log(Sweep *s)
{
	char g[17], a[16];
	size_t links = 0;

	s->heavy++;
	for (size_t i = 0; i < s->db.n_hosts; i++)
		for (unsigned j = 0; j < s->db.hosts[i].n_neigh; j++)
			links += s->db.hosts[i].guid < s->db.hosts[i].neigh[j] &&
				 fabric_find(&s->db, s->db.hosts[i].neigh[j]);
	log_info("sweep: heavy sweep %" PRIu64 ": discovery: %zu host(s), %zu link(s)", s->heavy,
		 s->db.n_hosts, links);
	guid_to_string(s->master, g);
	log_info("sweep: election: master %s%s", g, s->master == s->db.self ? " (this host)" : "");
	for (size_t i = 0; i < s->db.n_hosts; i++) {
		HostRecord *h = &s->db.hosts[i];
		HostRecord *mr = fabric_find(&s->db, s->master);
		uint32_t addr = 0;

		for (unsigned j = 0; mr && j < mr->n_assign; j++)
			if (mr->assign[j].guid == h->guid)
				addr = mr->assign[j].addr;
		guid_to_string(h->guid, g);
		ipv4_str(addr, a);
		log_info("sweep: assignment: %s -> %s", g, addr ? a : "(none)");
	}
	guid_to_string(s->master, g);
	ipv4_str(s->addr, a);
	log_info("sweep: FABRIC UP: epoch %u, %zu host(s), %zu link(s), master %s, this host %s",
		 s->epoch, s->db.n_hosts, links, g, s->addr ? a : "(no address)");
}

static void run(Sweep *s)
{
	const Device *d;
	HostRecord *self, *mr;
	uint64_t master, digest, now = mono_usec(), guids[FABRIC_HOSTS_MAX];
	uint32_t want = 0, claims[FABRIC_HOSTS_MAX];
	bool reach[FABRIC_HOSTS_MAX], dirty = false;
	size_t n = 0;
	int gone;

	/* run() is called at least every HelloSec; a later call means this daemon (or its whole
	 * machine: a starved VM) did not run, and did not read its peers' messages meanwhile.
	 * That silence is ours: without this, every peer would time out at once and the next
	 * run would elect a new master for a moment. */
	if (s->last_run_usec && now - s->last_run_usec > 2 * s->m->config.hello_usec) {
		uint64_t late = now - s->last_run_usec - s->m->config.hello_usec;

		fabric_pause(&s->db, late, now);
		log_notice("sweep: this daemon did not run for %" PRIu64 " ms: peers get that time "
			   "back before timing out", (now - s->last_run_usec) / 1000);
	}
	s->last_run_usec = now;
	if (!s->m->kernel_present || !(d = our_device(s)) || !d->guid)
		return;
	snprintf(s->device, sizeof(s->device), "%s", d->name);
	snprintf(s->netdev, sizeof(s->netdev), "%s", d->netdev);
	s->light++;
	if (!s->claimed && d->netdev[0]) {
		int64_t a = addr_find_in_pool(d->netdev, s->pool.net, s->pool.prefix);

		s->claimed = true;
		if (a > 0 && pool_contains(&s->pool, (uint32_t)a)) {
			char t[16];

			s->addr = (uint32_t)a;
			ipv4_str(s->addr, t);
			log_info("sweep: %s already has %s", d->netdev, t);
		}
	}
	set_self(s, d);
	railneg_run(s->neg, d);
	if (s->pool6.enabled && d->netdev[0] &&
	    (strcmp(s->addr6_netdev, d->netdev) || s->addr6_guid != d->guid)) {
		uint8_t a6[16];
		char t[46];
		int r;

		addr6_from_guid(&s->pool6, d->guid, a6);
		ipv6_str(a6, t);
		r = addr6_apply(d->netdev, a6);
		if (r < 0) {
			log_warning_errno(r, "sweep: applying %s/64 to %s: %m", t, d->netdev);
		} else {
			log_info("sweep: address %s/64 applied to %s", t, d->netdev);
			snprintf(s->addr6_netdev, sizeof(s->addr6_netdev), "%s", d->netdev);
			s->addr6_guid = d->guid;
		}
	}
	gone = fabric_expire(&s->db, now);
	if (gone)
		log_info("sweep: %d host(s) timed out", gone);

	self = &s->db.hosts[0];
	if (!s->start_usec)
		s->start_usec = now;
	if (now - s->start_usec < 2 * s->m->config.hello_usec) {
		/* discovering: hear the neighbours' databases before electing and assigning, so a
		 * (re)started daemon does not briefly believe it is alone (and the master) */
		self->master = 0;
		self->flags = 0;
		self->n_assign = 0;
		send_all(s, d);
		return;
	}
	/* election */
	master = fabric_elect(&s->db);
	if (master != s->master) {
		char g[17], o[17];

		guid_to_string(master, g);
		guid_to_string(s->master, o);
		log_notice("sweep: election: master %s%s (was %s)", g,
			   master == s->db.self ? " (this host takes over)" : "",
			   s->master ? o : "none");
		s->master = master;
	}
	self = &s->db.hosts[0];
	self->master = master;
	self->flags = master == s->db.self ? REC_FLAG_MASTER : 0;

	/* assignment, only for hosts reachable over two-way links: a record nobody we can reach
	 * vouches for (a forged one) gets no address and no map entry */
	fabric_reachable(&s->db, reach);
	for (size_t i = 0; i < s->db.n_hosts; i++) {
		if (!reach[i])
			continue;
		guids[n] = s->db.hosts[i].guid;
		claims[n++] = s->db.hosts[i].addr;
	}
	if (master == s->db.self) {
		uint32_t out[FABRIC_HOSTS_MAX];

		dirty |= allocate(&s->map, &s->pool, guids, claims, n, out) > 0;
		self->n_assign = 0;
		for (size_t i = 0; i < n && i < FABRIC_ASSIGN_MAX; i++) {
			if (!out[i]) {
				char g[17];

				guid_to_string(guids[i], g);
				log_warning("sweep: pool %s exhausted: no address for %s",
					    s->m->config.pool, g);
				continue;
			}
			self->assign[self->n_assign].guid = guids[i];
			self->assign[self->n_assign].addr = out[i];
			self->n_assign++;
		}
	} else {
		self->n_assign = 0;
		mr = fabric_find(&s->db, master);
		for (unsigned j = 0; mr && j < mr->n_assign; j++)
			if (addrmap_get(&s->map, mr->assign[j].guid) != mr->assign[j].addr) {
				addrmap_set(&s->map, mr->assign[j].guid, mr->assign[j].addr);
				dirty = true;
			}
	}
	/* map entries of live hosts are refreshed, those of hosts gone for MapKeepDays= expire */
	for (size_t i = 0; i < n; i++)
		dirty |= addrmap_touch(&s->map, guids[i], real_usec() / 1000000) > 0;
	dirty |= addrmap_expire(&s->map, real_usec() / 1000000,
				(uint64_t)s->m->config.map_keep_days * 86400) > 0;
	if (dirty)
		save_map(s);
	mr = fabric_find(&s->db, master);
	for (unsigned j = 0; mr && j < mr->n_assign; j++)
		if (mr->assign[j].guid == s->db.self)
			want = mr->assign[j].addr;
	s->want = want;
	if (want && want != s->addr && d->netdev[0]) {
		char t[16];
		int r = addr_apply(d->netdev, want, s->pool.prefix, s->pool.net);

		ipv4_str(want, t);
		if (r < 0) {
			log_warning_errno(r, "sweep: applying %s/%u to %s: %m", t, s->pool.prefix,
					  d->netdev);
		} else {
			log_info("sweep: address %s/%u applied to %s", t, s->pool.prefix, d->netdev);
			s->addr = want;
			self->addr = want;
		}
	}

	/* epoch: the master's count of heavy sweeps; everyone else shows the master's */
	digest = fabric_digest(&s->db);
	if (master != s->db.self && mr)
		s->epoch = mr->epoch;
	if (digest != s->digest || s->pending_heavy) {
		s->digest = digest;
		s->pending_heavy = false;
		if (master == s->db.self)
			s->epoch++;
		self->epoch = s->epoch;
		heavy_log(s);
		s->last_heavy_usec = now;
	}
	self->epoch = s->epoch;
	send_all(s, d);
}

static int timer_cb(sd_event_source *src, uint64_t usec, void *userdata)
{
	Sweep *s = userdata;

	(void)src; (void)usec;
	run(s);
	arm(s, s->m->config.hello_usec);
	return 0;
}

static void mgmt_cb(void *userdata, const char *device, uint32_t link, uint64_t peer,
		    const uint8_t *data, size_t len)
{
	static SweepMsg msg;
	Sweep *s = userdata;
	char why[128], g[17];
	uint64_t now = mono_usec();
	int r;

	if (!s->device[0] || strcmp(device, s->device))
		return;		/* another host's device (the genl family is not netns-aware) */
	if (s->auth) {
		r = auth_unwrap(s->auth, s->db.self, peer, data, len, &data, &len, real_usec(), why,
				sizeof(why));
		if (r < 0) {
			s->rx_unauth++;
			guid_to_string(peer, g);
			log_debug("sweep: dropped a datagram from %s on link %u: %s", g, link, why);
			return;
		}
	}
	if (len >= 6 && data[5] == SWEEP_TYPE_RAILS) {
		railneg_recv(s->neg, link, peer, data, len);
		return;
	}
	s->rx++;
	r = sweep_decode(&msg, data, len, why, sizeof(why));
	guid_to_string(peer, g);
	if (r < 0) {
		s->rx_bad++;
		log_debug("sweep: dropped a message from %s on link %u: %s", g, link, why);
		return;
	}
	if (msg.sender != peer) {
		s->rx_bad++;
		log_debug("sweep: message on link %u claims another sender than %s", link, g);
		return;
	}
	for (unsigned i = 0; i < msg.n_records; i++) {
		r = fabric_merge(&s->db, &msg.rec[i], now, real_usec());
		if (r == -EBADMSG) {
			guid_to_string(msg.rec[i].guid, g);
			log_debug("sweep: refused the record of %s from link %u: %s", g, link,
				  s->db.why);
		} else if (r < 0) {
			log_warning("sweep: fabric larger than %d hosts", FABRIC_HOSTS_MAX);
			break;
		}
	}
	if (fabric_digest(&s->db) != s->digest)
		sweep_kick(s);
}

void sweep_request(Sweep *s)
{
	if (!s)
		return;
	s->pending_heavy = true;
	run(s);
	arm(s, s->m->config.hello_usec);
}

int sweep_new(Manager *m, Sweep **ret)
{
	Sweep *s;
	char why[256] = "";
	int r;

	*ret = NULL;
	if (!m->config.sweep) {
		log_info("sweep: disabled (Sweep=no)");
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->m = m;
	s->db.dead_usec = m->config.dead_usec;
	s->neg = railneg_new(m);
	if (!s->neg) {
		sweep_free(s);
		return -ENOMEM;
	}
	if (pool_parse(&s->pool, m->config.pool) < 0) {
		sweep_free(s);
		return log_error_errno(EINVAL, "sweep: bad Pool= %s", m->config.pool);
	}
	s->db.pool = s->pool;
	if (m->config.fabric_key_file && m->config.fabric_key_file[0]) {
		s->auth = malloc(sizeof(*s->auth));
		r = s->auth ? auth_key_load(s->auth, m->config.fabric_key_file, why, sizeof(why)) :
			-ENOMEM;
		if (r < 0) {
			log_error("sweep: FabricKeyFile=: %s", why);
			sweep_free(s);
			return r;
		}
		log_info("sweep: management datagrams authenticated (HMAC-SHA256, key %s)",
			 m->config.fabric_key_file);
	}
	if (pool6_parse(&s->pool6, m->config.pool6) < 0) {
		sweep_free(s);
		return log_error_errno(EINVAL, "sweep: bad Pool6= %s", m->config.pool6);
	}
	snprintf(s->map_path, sizeof(s->map_path), "%s/guid2addr", m->config.state_dir);
	r = addrmap_load(&s->map, s->map_path, why, sizeof(why));
	if (r < 0) {
		char bad[4200];

		log_error("sweep: %s: %s; starting with an empty map (the file is kept as %s.corrupt)",
			  s->map_path, why, s->map_path);
		snprintf(bad, sizeof(bad), "%s.corrupt", s->map_path);
		rename(s->map_path, bad);
		s->map.n = 0;
	} else {
		log_info("sweep: %zu address(es) in %s, pool %s, priority %u", s->map.n, s->map_path,
			 m->config.pool, m->config.priority);
	}
	r = sd_event_add_time(m->event, &s->timer, CLOCK_MONOTONIC, 0, 0, timer_cb, s);
	if (r < 0) {
		sweep_free(s);
		return log_error_errno(r, "sweep timer: %m");
	}
	m->kernel.mgmt_fn = mgmt_cb;
	m->kernel.mgmt_userdata = s;
	arm(s, KICK_USEC);
	*ret = s;
	return 0;
}

Sweep *sweep_free(Sweep *s)
{
	if (!s)
		return NULL;
	s->timer = sd_event_source_disable_unref(s->timer);
	if (s->m->kernel.mgmt_userdata == s)
		s->m->kernel.mgmt_fn = NULL;
	railneg_free(s->neg);
	if (s->auth)
		explicit_bzero(s->auth, sizeof(*s->auth));
	free(s->auth);
	free(s);
	return NULL;
}

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
	uint64_t now = mono_usec();
	bool converged = s->db.n_hosts > 0, reach[FABRIC_HOSTS_MAX];

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
	json_object_object_add(st, "records_evicted", json_object_new_uint64(s->db.evicted));
	json_object_object_add(o, "sweeps", st);
}
