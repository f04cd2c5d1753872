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
	struct { uint64_t guid; uint32_t addr; } e[FABRIC_ASSIGN_MAX * 4];
} AddrMap;

uint32_t addrmap_get(const AddrMap *m, uint64_t guid);	/* 0 if absent */
uint64_t addrmap_owner(const AddrMap *m, uint32_t addr);	/* 0 if free */
int addrmap_set(AddrMap *m, uint64_t guid, uint32_t addr);	/* replaces; -ENOSPC */
/* text file "guid2addr": parse @text; -EBADMSG with "line N: why" in @why */
int addrmap_parse(AddrMap *m, const char *text, size_t len, char *why, size_t whylen);
char *addrmap_format(const AddrMap *m);		/* malloc'd text */
/* file I/O: load (missing file: empty map, 0), save: tmp file (O_EXCL|O_NOFOLLOW) + fsync +
 * rename + fsync of the directory */
int addrmap_load(AddrMap *m, const char *path, char *why, size_t whylen);
int addrmap_save(const AddrMap *m, const char *path);

/* The master's allocation for @hosts (live GUIDs, with the address each claims or 0):
 * keeps a host's mapped address, else adopts its claim if free, else the lowest free address of
 * the pool not mapped to anyone (mapped addresses stay reserved, like opensm's guid2lid).
 * Updates @map; @out[i] is the address of @guids[i] (0: pool exhausted). Returns how many
 * map entries changed. */
int allocate(AddrMap *map, const Pool *pool, const uint64_t *guids, const uint32_t *claims,
	     size_t n, uint32_t *out);

/* ---- the database ------------------------------------------------------------------------ */
typedef struct Fabric {
	uint64_t self;
	HostRecord hosts[FABRIC_HOSTS_MAX];	/* hosts[0] is self once set */
	size_t n_hosts;
	uint64_t dead_usec;
} Fabric;

HostRecord *fabric_find(Fabric *f, uint64_t guid);
/* merges one received record (now: local time); returns 1 if it was news, 0 if not, -ENOSPC */
int fabric_merge(Fabric *f, const HostRecord *r, uint64_t now);
/* drops records older than dead_usec (not self); returns how many went */
int fabric_expire(Fabric *f, uint64_t now);
/* the elected master among the live records (0 if none) */
uint64_t fabric_elect(const Fabric *f);
/* a digest of what a heavy sweep depends on (hosts, links, master, assignments) */
uint64_t fabric_digest(const Fabric *f);



void ipv4_str(uint32_t a, char buf[16]);
