/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sweep's fabric database (docs/sweep.md): one record per host, flooded hop by hop, aged;
 * master election by (priority, GUID); the hosts reachable over two-way links. Pure; times are
 * CLOCK_MONOTONIC microseconds passed in; unit-tested in tests/test_fabric.c. The message codec
 * is fabric-msg.h's, the addresses addrmap.h's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addrmap.h"
#include "fabric-msg.h"

/* ---- election ------------------------------------------------------------------------------ */
/* true if (pa, ga) beats (pb, gb): higher priority, then lower GUID */
bool election_better(uint8_t pa, uint64_t ga, uint8_t pb, uint64_t gb);

/* ---- the database ------------------------------------------------------------------------ */
#define SEQ_AHEAD_USEC	(600 * 1000000ULL)	/* a generation more than this ahead of our
						 * CLOCK_REALTIME is refused */

typedef struct Fabric {
	uint64_t self;
	HostRecord hosts[FABRIC_HOSTS_MAX];	/* hosts[0] is self once set */
	size_t n_hosts;
	uint64_t dead_usec;
	Pool pool;			/* every address in a record must be in it */
	uint64_t seq_floor;		/* someone sent our GUID with a newer generation: ours
					 * must be above it (re-origination, as OSPF does) */
	uint64_t rejected, evicted;	/* records refused by fabric_validate(), pushed out */
	char why[96];			/* why the last one was refused */
} Fabric;

HostRecord *fabric_find(Fabric *f, uint64_t guid);
/* Is received record @r acceptable (@real_now: our CLOCK_REALTIME µs)? 0, or -EBADMSG with the
 * reason in @why: a generation more than SEQ_AHEAD_USEC ahead, an address outside the pool,
 * assignments from a record without REC_FLAG_MASTER, an assignment outside the pool, two GUIDs
 * with one address. */
int fabric_validate(const Fabric *f, const HostRecord *r, uint64_t real_now, char *why,
		    size_t whylen);
/* merges one received record (now: local monotonic time, real_now: CLOCK_REALTIME, both µs);
 * returns 1 if it was news, 0 if not, -EBADMSG if fabric_validate() refused it (counted in
 * f->rejected, the reason in f->why), -ENOSPC if the table is full of hosts reachable from us. A full table makes
 * room by evicting the oldest record not reachable from us (counted in f->evicted). */
int fabric_merge(Fabric *f, const HostRecord *r, uint64_t now, uint64_t real_now);
/* which records are reachable from ours over two-way links (each end lists the other as a
 * neighbour): out[i] for hosts[i]. Only those are elected and given addresses. */
void fabric_reachable(const Fabric *f, bool out[FABRIC_HOSTS_MAX]);
/* drops records older than dead_usec (not self); returns how many went */
int fabric_expire(Fabric *f, uint64_t now);
/* this host did not listen for @usec (its daemon or its whole machine was not scheduled): the
 * records of others are made @usec younger (never newer than @now), so they do not time out for
 * a silence that was ours */
void fabric_pause(Fabric *f, uint64_t usec, uint64_t now);
/* the elected master among the live records reachable from us (0 if none) */
uint64_t fabric_elect(const Fabric *f);
/* a digest of what a heavy sweep depends on (hosts, links, master, assignments) */
uint64_t fabric_digest(const Fabric *f);

/* The sweep's decision on a held link from this host to @peer (docs/sweep.md "Trust"): the
 * kernel held it because it came up claiming a GUID its table reached through another
 * neighbour, and nothing comes over it (our database holds no copy from it). */
typedef enum FabricTrust {
	FABRIC_TRUST_HOLD,	/* @peer's record does not list us: held (reported) */
	FABRIC_TRUST_CONFIRM,	/* @peer's own record lists us as its neighbour */
	FABRIC_TRUST_FIRST_USE,	/* no record of @peer: nothing to take over, as at first boot */
} FabricTrust;
FabricTrust fabric_trust(const Fabric *f, uint64_t peer);
