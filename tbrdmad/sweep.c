// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sweep (docs/sweep.md). Every HelloSec (light sweep), and soon after anything changes, run()
 * goes through the phases opensm's sweep has: discovery (our own record from the kernel's links,
 * silent hosts expired), election (the master by priority and GUID), assignment (the master
 * allocates addresses from Pool= and publishes them; every daemon applies its own) and
 * persistence (the guid2addr map, so a standby that takes over hands out the same addresses),
 * then sends its whole database to the peer of every up link (sweep-send.c). Received databases
 * are merged record by record (newer generation wins; ages grow hop by hop, so copies of a dead
 * host die out). A change of the fabric's digest (hosts, links, master, assignments) makes a
 * heavy sweep: logged phase by phase, ending "FABRIC UP".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "json.h"
#include "log.h"
#include "negotiate.h"
#include "sweep-priv.h"

#define KICK_USEC 50000ULL

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
	seq = now_usec(CLOCK_REALTIME);
	if (seq <= self->seq)
		seq = self->seq + 1;
	if (seq < s->db.seq_floor)
		seq = s->db.seq_floor;
	self->seq = seq;
	self->origin_usec = now_usec(CLOCK_MONOTONIC);
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

/* ---- the phases of a sweep ------------------------------------------------------------ */

/* Our own silence: run() is called at least every HelloSec, so a call more than two hellos
 * after the last one means this daemon (or its whole machine: a starved VM) did not run and
 * read nothing from its peers meanwhile. The records of others get that time back
 * (fabric_pause()); without it every peer would time out at once and the next run would elect
 * a new master for a moment. */
static void account_stall(Sweep *s, uint64_t now)
{
	if (s->last_run_usec && now - s->last_run_usec > 2 * s->m->config.hello_usec) {
		uint64_t late = now - s->last_run_usec - s->m->config.hello_usec;

		fabric_pause(&s->db, late, now);
		log_notice("sweep: this daemon did not run for %" PRIu64 " ms: peers get that time "
			   "back before timing out", (now - s->last_run_usec) / 1000);
	}
	s->last_run_usec = now;
}

/* Discovery. Returns our device, or NULL when there is nothing to sweep for yet (no module, no
 * device, no GUID): then no other phase runs. Otherwise refreshes what this host knows first
 * hand: the pool address tbrN already has (looked at once), our own record (hosts[0]: priority,
 * address, the peers of our up links as neighbours), the rail negotiation, the Pool6= address;
 * and expires the records of hosts silent for DeadSec=. */
static const Device *discover(Sweep *s, uint64_t now)
{
	const Device *d;
	int gone;

	if (!s->m->kernel_present || !(d = our_device(s)) || !d->guid)
		return NULL;
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
	return d;
}

/* The first two hellos after we found our device only listen: hear the neighbours' databases
 * before electing and assigning, so a (re)started daemon does not briefly believe it is alone
 * (and the master). True while that lasts; our record then names no master and assigns
 * nothing. */
static bool listening(Sweep *s, uint64_t now)
{
	HostRecord *self = &s->db.hosts[0];

	if (!s->start_usec)
		s->start_usec = now;
	if (now - s->start_usec >= 2 * s->m->config.hello_usec)
		return false;
	self->master = 0;
	self->flags = 0;
	self->n_assign = 0;
	return true;
}

/* Election. The master among the live records reachable from us (fabric_elect()), logged when
 * it changes; our record names it, with the master flag if it is us. Returns it (0: none). */
static uint64_t elect(Sweep *s)
{
	HostRecord *self = &s->db.hosts[0];
	uint64_t master = fabric_elect(&s->db);

	if (master != s->master) {
		char g[17], o[17];

		guid_to_string(master, g);
		guid_to_string(s->master, o);
		log_notice("sweep: election: master %s%s (was %s)", g,
			   master == s->db.self ? " (this host takes over)" : "",
			   s->master ? o : "none");
		s->master = master;
	}
	self->master = master;
	self->flags = master == s->db.self ? REC_FLAG_MASTER : 0;
	return master;
}

/* Assignment, only for hosts reachable over two-way links: a record nobody we can reach vouches
 * for (a forged one) gets no address and no map entry. Those hosts' GUIDs go to @guids (*@n of
 * them). The master allocates their addresses (allocate(): map kept, claims adopted, pool
 * exhausted logged) and publishes them in its record; a standby publishes none and copies the
 * master's assignments into its map. Returns true if the map changed. */
static bool assign(Sweep *s, uint64_t master, uint64_t guids[FABRIC_HOSTS_MAX], size_t *n)
{
	HostRecord *self = &s->db.hosts[0], *mr;
	uint32_t claims[FABRIC_HOSTS_MAX], out[FABRIC_HOSTS_MAX];
	bool reach[FABRIC_HOSTS_MAX], dirty = false;
	int k;

	*n = 0;
	fabric_reachable(&s->db, reach);
	for (size_t i = 0; i < s->db.n_hosts; i++) {
		if (!reach[i])
			continue;
		guids[*n] = s->db.hosts[i].guid;
		claims[(*n)++] = s->db.hosts[i].addr;
	}
	self->n_assign = 0;
	self->n_pkey = 0;
	if (master != s->db.self) {
		mr = fabric_find(&s->db, master);
		for (unsigned j = 0; mr && j < mr->n_assign; j++)
			if (addrmap_get(&s->map, mr->assign[j].guid) != mr->assign[j].addr) {
				addrmap_set(&s->map, mr->assign[j].guid, mr->assign[j].addr);
				dirty = true;
			}
		return dirty;
	}
	/* the master publishes the partitions of its [Partition] sections */
	k = partitions_entries(&s->m->config.partitions, self->pkey);
	if (k < 0 && !s->pkey_config_logged) {
		s->pkey_config_logged = true;
		log_error("sweep: partitions: more than %d memberships in [Partition]: not published, "
			  "every host stays in the default partition", PKEY_ENTRIES_MAX);
	}
	self->n_pkey = k > 0 ? (uint8_t)k : 0;
	dirty = allocate(&s->map, &s->pool, guids, claims, *n, out) > 0;
	for (size_t i = 0; i < *n && i < FABRIC_ASSIGN_MAX; i++) {
		if (!out[i]) {
			char g[17];

			guid_to_string(guids[i], g);
			log_warning("sweep: pool %s exhausted: no address for %s", s->m->config.pool,
				    g);
			continue;
		}
		self->assign[self->n_assign].guid = guids[i];
		self->assign[self->n_assign].addr = out[i];
		self->n_assign++;
	}
	return dirty;
}

/* Persistence. The map entries of the live hosts @guids are refreshed, those of hosts gone for
 * MapKeepDays= expire; the map is saved (guid2addr) when that or the assignment (@dirty) changed
 * it. A failed save is logged; the map in memory stays. */
static void persist(Sweep *s, const uint64_t *guids, size_t n, bool dirty)
{
	uint64_t now = now_usec(CLOCK_REALTIME) / 1000000;
	int r;

	for (size_t i = 0; i < n; i++)
		dirty |= addrmap_touch(&s->map, guids[i], now) > 0;
	dirty |= addrmap_expire(&s->map, now, (uint64_t)s->m->config.map_keep_days * 86400) > 0;
	if (!dirty)
		return;
	r = addrmap_save(&s->map, s->map_path);
	if (r < 0)
		log_warning_errno(r, "sweep: saving %s: %m", s->map_path);
}

/* Our address: the one the master's record gives us (s->want), applied to tbrN when it is not
 * what we have; our record reports it once applied. */
static void apply_address(Sweep *s, const Device *d, uint64_t master)
{
	HostRecord *mr = fabric_find(&s->db, master);
	uint32_t want = 0;
	char t[16];
	int r;

	for (unsigned j = 0; mr && j < mr->n_assign; j++)
		if (mr->assign[j].guid == s->db.self)
			want = mr->assign[j].addr;
	s->want = want;
	if (!want || want == s->addr || !d->netdev[0])
		return;
	r = addr_apply(d->netdev, want, s->pool.prefix, s->pool.net);
	ipv4_str(want, t);
	if (r < 0) {
		log_warning_errno(r, "sweep: applying %s/%u to %s: %m", t, s->pool.prefix,
				  d->netdev);
		return;
	}
	log_info("sweep: address %s/%u applied to %s", t, s->pool.prefix, d->netdev);
	s->addr = want;
	s->db.hosts[0].addr = want;
}

/* A heavy sweep: the epoch is the master's count of them (everyone else shows the master's); a
 * changed digest of the database, or a request, makes one, logged phase by phase. */
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

static void heavy_sweep(Sweep *s, uint64_t master, uint64_t now)
{
	HostRecord *mr = fabric_find(&s->db, master);
	uint64_t digest = fabric_digest(&s->db);

	if (master != s->db.self && mr)
		s->epoch = mr->epoch;
	if (digest != s->digest || s->pending_heavy) {
		s->digest = digest;
		s->pending_heavy = false;
		if (master == s->db.self)
			s->epoch++;
		heavy_log(s);
		s->last_heavy_usec = now;
	}
	s->db.hosts[0].epoch = s->epoch;
}

/* Trust (docs/sweep.md "Trust"): a link the kernel held (it came up claiming a GUID its
 * forwarding table reached through another neighbour) is confirmed with LINK_TRUST when that
 * GUID's own record, as it came to us over the links in use, lists us as its neighbour, or when
 * the fabric has no record of that GUID at all (nothing to take over); otherwise it stays held,
 * reported once per link. Rejected links are an administrator's: left alone. Runs after the
 * listening phase only, so a restarted daemon has heard the fabric before it confirms. */
static void trust(Sweep *s, const Device *d)
{
	const Model *mo = &s->m->model;
	uint32_t seen[FABRIC_NEIGH_MAX] = { 0 };
	unsigned n_seen = 0;

	for (size_t i = 0; i < mo->n_links; i++) {
		const Link *l = &mo->links[i];
		FabricTrust t;
		char g[17], msg[256] = "";
		bool logged = false;
		int r;

		if (strcmp(l->device, d->name) || l->trust != TBRDMA_TRUST_HELD)
			continue;
		guid_to_string(l->peer_guid, g);
		t = fabric_trust(&s->db, l->peer_guid);
		if (t == FABRIC_TRUST_HOLD) {
			for (unsigned j = 0; j < FABRIC_NEIGH_MAX; j++)
				logged |= s->held_logged[j] == l->id;
			if (!logged)
				log_warning("sweep: link %u held: claims GUID %s, not confirmed by the "
					    "sweep (%s does not report this host as its neighbour)",
					    l->id, g, g);
			if (n_seen < FABRIC_NEIGH_MAX)
				seen[n_seen++] = l->id;
			continue;
		}
		r = kernel_link_trust(&s->m->kernel, d->name, l->id, TBRDMA_TRUST_USED, msg,
				      sizeof(msg));
		if (r < 0) {
			log_warning_errno(r, "sweep: confirming link %u: %m %s", l->id, msg);
			continue;
		}
		s->confirmed++;
		log_notice("sweep: link %u to %s confirmed: %s", l->id, g,
			   t == FABRIC_TRUST_CONFIRM ? "it reports this host as its neighbour" :
			   "no other host of that GUID in the fabric (first use)");
	}
	memcpy(s->held_logged, seen, sizeof(seen));
}

/* Routing (docs/sweep.md "Routes"): min-hop routes from the database to every host reachable
 * from us, pushed to the kernel's forwarding table whenever they differ from what it holds (and
 * after a failed push, on every sweep until one succeeds). */
static void route(Sweep *s, const Device *d)
{
	static RouteTable t;
	char msg[256] = "", g[17], n[17];
	size_t far = 0;
	int r;

	routes_compute(&s->db, &t);
	/* (another index: the module was reloaded, its table is empty) */
	if (s->routes_set && routes_equal(&t, &s->routes) && d->index == s->route_dev_index)
		return;
	r = kernel_route_set(&s->m->kernel, s->device, s->route_version + 1, &t, msg, sizeof(msg));
	if (r < 0) {
		if (!s->route_errors++ || s->routes_set)
			log_warning_errno(r, "sweep: routes: setting the forwarding table of %s: %m%s%s",
					  s->device, msg[0] ? ": " : "", msg);
		s->routes_set = false;
		return;
	}
	s->route_version++;
	s->route_dev_index = d->index;
	s->routes = t;
	s->routes_set = true;
	for (size_t i = 0; i < t.n; i++)
		far += t.r[i].hops > 1;
	log_info("sweep: routes: version %u, %zu destination(s), %zu over more than one hop%s",
		 s->route_version, t.n, far, t.too_far ? ", some hosts too far (> 16 hops)" : "");
	for (size_t i = 0; i < t.n; i++) {
		guid_to_string(t.r[i].dst, g);
		guid_to_string(t.r[i].next_hop, n);
		log_debug("sweep: route: %s via %s, %u hop(s)", g, n, t.r[i].hops);
	}
}

/* Partitions (docs/sweep.md "Partitions"): our P_Keys from the master's record (none: the
 * default partition; nothing while the master's record does not claim the role), to the kernel
 * when they differ from what it has (PKEY_SET; the kernel keeps
 * a partition that stays in its slot, so its QPs go on). Failures are logged once, then at debug
 * level, and retried on the next sweep. */
static void partition(Sweep *s, const Device *d, uint64_t master)
{
	const HostRecord *mr = fabric_find(&s->db, master);
	uint16_t keys[PARTITIONS_MAX];
	char msg[256] = "", line[PARTITIONS_MAX * 16] = "";
	unsigned n;
	size_t o = 0;
	int r;

	/* only a record whose origin says it is the master: a master still in its discovery phase
	 * (restarted, listening()) publishes nothing yet and must not take everyone's partitions */
	if (!mr || !(mr->flags & REC_FLAG_MASTER))
		return;
	n = partitions_for(mr->pkey, mr->n_pkey, s->db.self, keys);
	if (s->pkeys_set && s->pkeys_dev_index == d->index && n == s->n_pkeys &&
	    !memcmp(keys, s->pkeys, n * sizeof(keys[0])))
		return;
	r = kernel_pkey_set(&s->m->kernel, s->device, keys, n, msg, sizeof(msg));
	if (r < 0) {
		if (!s->pkey_errors++ || s->pkeys_set)
			log_warning_errno(r, "sweep: partitions: setting the P_Keys of %s: %m%s%s",
					  s->device, msg[0] ? ": " : "", msg);
		else
			log_debug_errno(r, "sweep: partitions: PKEY_SET: %m");
		s->pkeys_set = false;
		return;
	}
	memcpy(s->pkeys, keys, n * sizeof(keys[0]));
	s->n_pkeys = n;
	s->pkeys_set = true;
	s->pkeys_dev_index = d->index;
	for (unsigned i = 0; i < n && o < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, " 0x%04x", keys[i]);
	log_info("sweep: partitions: %u P_Key(s):%s", n, n ? line : " none (this host talks to nobody)");
}

/* The fabric key of FabricKeyFile= to the kernel (AUTH_KEY_SET), once per device (a module
 * reload makes a new one, without a key): with it the kernel's link HELLOs carry a MAC, and a
 * peer that cannot prove the key gets no link (docs/protocol.md "Authenticated links"). A new key
 * (a new file, tbrdmad restarted) replaces the kernel's, which accepts the previous one for
 * LinkKeyGraceSec more, so the hosts can follow one by one without a link going down. Without
 * FabricKeyFile= nothing is sent: the kernel's links stay in the trusted-cable mode. */
static void link_key(Sweep *s, const Device *d)
{
	char msg[256] = "";
	int r;

	if (!s->auth || (s->key_set && s->key_dev_index == d->index))
		return;
	r = kernel_auth_key_set(&s->m->kernel, s->device, s->auth->key, s->auth->key_len,
				s->m->config.link_key_grace_ms, msg, sizeof(msg));
	if (r < 0) {
		if (!s->key_errors++)
			log_warning_errno(r, "sweep: handing the fabric key to %s: %m%s%s", s->device,
					  msg[0] ? ": " : "", msg);
		return;
	}
	s->key_set = true;
	s->key_dev_index = d->index;
	log_info("sweep: %s's links authenticated with the fabric key", s->device);
}

/* One sweep: the phases in order, then our database to every neighbour. */
static void run(Sweep *s)
{
	uint64_t master, now = now_usec(CLOCK_MONOTONIC), guids[FABRIC_HOSTS_MAX];
	const Device *d;
	size_t n;
	bool dirty;

	account_stall(s, now);
	d = discover(s, now);
	if (!d)
		return;
	link_key(s, d);
	if (!listening(s, now)) {
		master = elect(s);
		dirty = assign(s, master, guids, &n);
		persist(s, guids, n, dirty);
		apply_address(s, d, master);
		heavy_sweep(s, master, now);
		trust(s, d);
		route(s, d);
		partition(s, d, master);
	}
	sweep_send_state(s, d);
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
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	int r;

	if (!s->device[0] || strcmp(device, s->device))
		return;		/* another host's device (the genl family is not netns-aware) */
	if (s->auth) {
		r = auth_unwrap(s->auth, s->db.self, peer, data, len, &data, &len, now_usec(CLOCK_REALTIME), why,
				sizeof(why));
		if (r < 0) {
			s->rx_unauth++;
			guid_to_string(peer, g);
			if (r == -ENOSPC && !s->auth_full_logged) {
				/* only key holders get a slot: worth saying once */
				s->auth_full_logged = true;
				log_warning("sweep: dropped a datagram from %s on link %u: %s (further "
					    "ones at debug level)", g, link, why);
			} else {
				log_debug("sweep: dropped a datagram from %s on link %u: %s", g, link,
					  why);
			}
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
		r = fabric_merge(&s->db, &msg.rec[i], now, now_usec(CLOCK_REALTIME));
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

uint32_t sweep_peer_lane_mbps(void *ctx, const Rail *r)
{
	Sweep *s = ctx;

	return s ? railneg_peer_lane_mbps(s->neg, r) : 0;
}
