// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sweep's fabric database (docs/sweep.md "Database", "Validation", "Election"): one record
 * per host, validated and merged from untrusted peers, aged and expired, the hosts reachable
 * over two-way links, the election, the digest that tells a heavy sweep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fabric.h"
#include "util.h"

/* ---- election -------------------------------------------------------------------------- */

bool election_better(uint8_t pa, uint64_t ga, uint8_t pb, uint64_t gb)
{
	if (pa != pb)
		return pa > pb;
	return ga < gb;
}

/* ---- database ---------------------------------------------------------------------------- */

/* Two neighbours of two hosts that both claim @peer cannot both be confirmed: the one host
 * @peer's record names wins. The record is live (fabric_expire()), and came over links the
 * kernel uses: a held link delivers nothing, so the impostor cannot vouch for itself. */
FabricTrust fabric_trust(const Fabric *f, uint64_t peer)
{
	for (size_t i = 0; i < f->n_hosts; i++) {
		const HostRecord *r = &f->hosts[i];

		if (r->guid != peer || peer == f->self)
			continue;
		for (unsigned j = 0; j < r->n_neigh; j++)
			if (r->neigh[j] == f->self)
				return FABRIC_TRUST_CONFIRM;
		return FABRIC_TRUST_HOLD;
	}
	return peer == f->self ? FABRIC_TRUST_HOLD : FABRIC_TRUST_FIRST_USE;
}

HostRecord *fabric_find(Fabric *f, uint64_t guid)
{
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].guid == guid)
			return &f->hosts[i];
	return NULL;
}

int fabric_validate(const Fabric *f, const HostRecord *r, uint64_t real_now, char *why,
		    size_t whylen)
{
	if (r->seq > real_now + SEQ_AHEAD_USEC)
		return failf(why, whylen, -EBADMSG, "generation %" PRIu64 " is %" PRIu64
			   " s in the future", r->seq, (r->seq - real_now) / 1000000);
	if (r->addr && !pool_contains(&f->pool, r->addr))
		return failf(why, whylen, -EBADMSG, "address outside the pool");
	if ((r->n_assign || r->n_pkey) && !(r->flags & REC_FLAG_MASTER))
		return failf(why, whylen, -EBADMSG, "assignments from a host that is not master");
	for (unsigned i = 0; i < r->n_assign; i++) {
		if (!pool_contains(&f->pool, r->assign[i].addr))
			return failf(why, whylen, -EBADMSG, "assignment %u outside the pool", i);
		for (unsigned j = 0; j < i; j++)
			if (r->assign[j].addr == r->assign[i].addr ||
			    r->assign[j].guid == r->assign[i].guid)
				return failf(why, whylen, -EBADMSG, "assignment %u: duplicate", i);
	}
	return 0;
}

void fabric_reachable(const Fabric *f, bool out[FABRIC_HOSTS_MAX])
{
	size_t queue[FABRIC_HOSTS_MAX], head = 0, tail = 0;

	memset(out, 0, FABRIC_HOSTS_MAX * sizeof(bool));
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].guid == f->self) {
			out[i] = true;
			queue[tail++] = i;
		}
	while (head < tail) {
		const HostRecord *a = &f->hosts[queue[head++]];

		for (unsigned k = 0; k < a->n_neigh; k++)
			for (size_t j = 0; j < f->n_hosts; j++) {
				const HostRecord *b = &f->hosts[j];
				bool back = false;

				if (out[j] || b->guid != a->neigh[k])
					continue;
				for (unsigned l = 0; l < b->n_neigh; l++)
					back |= b->neigh[l] == a->guid;
				if (back) {
					out[j] = true;
					queue[tail++] = j;
				}
			}
	}
}

/* a full table: drops the oldest record not reachable from us; false if every one is */
static bool evict_unreachable(Fabric *f)
{
	bool reach[FABRIC_HOSTS_MAX];
	size_t victim = SIZE_MAX;

	fabric_reachable(f, reach);
	for (size_t i = 0; i < f->n_hosts; i++)
		if (!reach[i] && (victim == SIZE_MAX ||
				  f->hosts[i].origin_usec < f->hosts[victim].origin_usec))
			victim = i;
	if (victim == SIZE_MAX)
		return false;
	f->hosts[victim] = f->hosts[--f->n_hosts];
	f->evicted++;
	return true;
}

int fabric_merge(Fabric *f, const HostRecord *r, uint64_t now, uint64_t real_now)
{
	uint64_t age = (uint64_t)r->age_ms * 1000, origin;
	HostRecord *cur;

	if (fabric_validate(f, r, real_now, f->why, sizeof(f->why)) < 0) {
		f->rejected++;
		return -EBADMSG;
	}
	if (r->guid == f->self) {
		/* our own record comes from us; one newer than ours is someone else's (or ours
		 * from before a clock step): make our next generation newer, as OSPF does */
		if (r->seq >= f->seq_floor)
			f->seq_floor = r->seq + 1;
		return 0;
	}
	if (age >= f->dead_usec)
		return 0;		/* a stale copy is dropped */
	origin = now > age ? now - age : 0;
	cur = fabric_find(f, r->guid);
	if (cur) {
		if (r->seq < cur->seq || (r->seq == cur->seq && origin <= cur->origin_usec))
			return 0;
		if (r->seq == cur->seq) {	/* same generation by a shorter path: just fresher */
			cur->origin_usec = origin;
			return 0;
		}
	} else {
		if (f->n_hosts >= FABRIC_HOSTS_MAX && !evict_unreachable(f))
			return -ENOSPC;
		cur = &f->hosts[f->n_hosts++];
	}
	*cur = *r;
	cur->origin_usec = origin;
	return 1;
}

int fabric_expire(Fabric *f, uint64_t now)
{
	int gone = 0;

	for (size_t i = 0; i < f->n_hosts;) {
		HostRecord *h = &f->hosts[i];

		if (h->guid != f->self && now - h->origin_usec >= f->dead_usec) {
			f->hosts[i] = f->hosts[--f->n_hosts];
			gone++;
		} else {
			i++;
		}
	}
	return gone;
}

void fabric_pause(Fabric *f, uint64_t usec, uint64_t now)
{
	for (size_t i = 0; i < f->n_hosts; i++) {
		HostRecord *h = &f->hosts[i];

		if (h->guid != f->self)
			h->origin_usec = h->origin_usec + usec < now ? h->origin_usec + usec : now;
	}
}

uint64_t fabric_elect(const Fabric *f)
{
	const HostRecord *best = NULL;
	bool reach[FABRIC_HOSTS_MAX];

	fabric_reachable(f, reach);
	for (size_t i = 0; i < f->n_hosts; i++)
		if (reach[i] && (!best || election_better(f->hosts[i].priority, f->hosts[i].guid,
							  best->priority, best->guid)))
			best = &f->hosts[i];
	return best ? best->guid : 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

uint64_t fabric_digest(const Fabric *f)
{
	uint64_t h = 0, hosts = 0;

	/* order-independent: sum of per-host hashes */
	for (size_t i = 0; i < f->n_hosts; i++) {
		const HostRecord *r = &f->hosts[i];
		uint64_t x = mix(mix(0, r->guid), r->priority), ns = 0;

		for (unsigned j = 0; j < r->n_neigh; j++)
			ns += mix(1, r->neigh[j]);
		x = mix(x, ns);
		for (unsigned j = 0; j < r->n_assign; j++)
			x = mix(x, mix(r->assign[j].guid, r->assign[j].addr));
		for (unsigned j = 0; j < r->n_pkey; j++)
			x = mix(x, mix(r->pkey[j].guid, r->pkey[j].pkey));
		hosts += x;
	}
	h = mix(hosts, fabric_elect(f));
	return h;
}
