/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sweep's pure logic (docs/sweep.md): the management message codec, the fabric database
 * (one record per host, flooded hop by hop, aged), master election by (priority, GUID), the
 * master's address allocator and the persisted GUID -> address map. No I/O but the map file;
 * unit-tested in tests/test_fabric.c. Times are CLOCK_MONOTONIC microseconds passed in. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define SWEEP_MAGIC		0x54425357u	/* "TBSW" */
#define SWEEP_VERSION		1
#define SWEEP_TYPE_STATE	1
#define SWEEP_HDR_LEN		32
#define SWEEP_REC_LEN		44
#define SWEEP_MSG_MAX		4096		/* TBRDMA_MGMT_MAX */
#define FABRIC_HOSTS_MAX	64
#define FABRIC_NEIGH_MAX	16
#define FABRIC_ASSIGN_MAX	64
#define REC_FLAG_MASTER		0x01		/* the origin believes it is the master */

typedef struct HostRecord {
	uint64_t guid;
	uint64_t seq;			/* origin's generation (realtime µs): newer wins */
	uint32_t age_ms;		/* on the wire: time since the origin made it */
	uint8_t priority, flags;
	uint32_t addr;			/* IPv4 the origin has applied (host order), 0 none */
	uint64_t master;		/* the master the origin believes in */
	uint32_t epoch;			/* the origin's view of the fabric epoch */
	uint8_t n_neigh, n_assign;
	uint64_t neigh[FABRIC_NEIGH_MAX];	/* peer GUIDs of the origin's up links */
	struct { uint64_t guid; uint32_t addr; } assign[FABRIC_ASSIGN_MAX];	/* master only */
	/* local only */
	uint64_t origin_usec;		/* local estimate of when the origin made it */
} HostRecord;

typedef struct SweepMsg {
	uint8_t version, type;
	uint64_t sender, master;
	uint32_t epoch;
	uint8_t priority;
	uint16_t n_records;
	HostRecord rec[FABRIC_HOSTS_MAX];
} SweepMsg;

/* encodes into @buf (@len bytes); returns the length, or -EMSGSIZE */
int sweep_encode(const SweepMsg *m, uint8_t *buf, size_t len);
/* Fragments: the next message of at most @frame bytes (encoded) out of @m, whose rec[0] is the
 * sender's: @out gets @m's header, rec[0] and, from *@pos on, the records that fit. Start with
 * *@pos = 0. Returns the message's record count (>= 1), 0 when every record was sent, or
 * -EMSGSIZE when rec[0] alone does not fit. A record too big to go with rec[0] in any message is
 * skipped and counted in *@skipped. Every message is a complete STATE message on its own. */
int sweep_fragment(const SweepMsg *m, size_t frame, unsigned *pos, SweepMsg *out,
		   unsigned *skipped);
/* strict decode of untrusted bytes: 0, or -EBADMSG/-EPROTONOSUPPORT with the reason in @why */
int sweep_decode(SweepMsg *m, const uint8_t *buf, size_t len, char *why, size_t whylen);

/* ---- election ------------------------------------------------------------------------------ */
/* true if (pa, ga) beats (pb, gb): higher priority, then lower GUID */
bool election_better(uint8_t pa, uint64_t ga, uint8_t pb, uint64_t gb);

/* ---- addresses ----------------------------------------------------------------------------- */
typedef struct Pool {
	uint32_t net;		/* host order, masked */
	unsigned prefix;	/* 8..30 */
} Pool;

int pool_parse(Pool *p, const char *s);		/* "10.99.0.0/24"; -EINVAL */
bool pool_contains(const Pool *p, uint32_t a);	/* a usable host address of the pool */

/* IPv6: Pool6= is a /64; a host's address is the prefix plus its GUID as the interface
 * identifier (modified EUI-64: the universal/local bit flipped), so it needs no assignment. */
typedef struct Pool6 {
	uint8_t prefix[8];
	bool enabled;
} Pool6;

int pool6_parse(Pool6 *p, const char *s);	/* "fd74:6272:646d::/64", "" or "no": off; -EINVAL */
void addr6_from_guid(const Pool6 *p, uint64_t guid, uint8_t out[16]);
void ipv6_str(const uint8_t a[16], char buf[46]);

typedef struct AddrMap {
	size_t n;
	struct {
		uint64_t guid;
		uint32_t addr;
		uint64_t seen;	/* CLOCK_REALTIME s the host was last in the fabric, 0 unknown */
	} e[FABRIC_ASSIGN_MAX * 4];
} AddrMap;

#define MAP_TOUCH_SEC	3600	/* a live host's "seen" is refreshed (and saved) this often */

uint32_t addrmap_get(const AddrMap *m, uint64_t guid);	/* 0 if absent */
uint64_t addrmap_owner(const AddrMap *m, uint32_t addr);	/* 0 if free */
int addrmap_set(AddrMap *m, uint64_t guid, uint32_t addr);	/* replaces; -ENOSPC */
/* @guid is live at @now (s): its entry's "seen" is refreshed when MAP_TOUCH_SEC old; returns 1
 * if it changed (worth saving), 0 if not or absent */
int addrmap_touch(AddrMap *m, uint64_t guid, uint64_t now);
/* drops entries not seen for @keep s (an unknown "seen" becomes @now); returns how many */
int addrmap_expire(AddrMap *m, uint64_t now, uint64_t keep);
/* text file "guid2addr": parse @text; -EBADMSG with "line N: why" in @why */
int addrmap_parse(AddrMap *m, const char *text, size_t len, char *why, size_t whylen);
char *addrmap_format(const AddrMap *m);		/* malloc'd text */
/* file I/O: load (missing file: empty map, 0), save: tmp file (O_EXCL|O_NOFOLLOW) + fsync +
 * rename + fsync of the directory */
int addrmap_load(AddrMap *m, const char *path, char *why, size_t whylen);
int addrmap_save(const AddrMap *m, const char *path);

/* The master's allocation for @hosts (live GUIDs, with the address each claims or 0):
 * keeps a host's mapped address, else adopts its claim if free, else the lowest free address of
 * the pool not mapped to anyone (mapped addresses stay reserved, like opensm's guid2lid), else
 * (pool exhausted) the address of the least recently seen mapped host that is not live.
 * Updates @map; @out[i] is the address of @guids[i] (0: pool exhausted). Returns how many
 * map entries changed. */
int allocate(AddrMap *map, const Pool *pool, const uint64_t *guids, const uint32_t *claims,
	     size_t n, uint32_t *out);

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



void ipv4_str(uint32_t a, char buf[16]);
