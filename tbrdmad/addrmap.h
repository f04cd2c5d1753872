/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sweep's addresses (docs/sweep.md): Pool= and Pool6=, the persisted GUID -> address map
 * (guid2addr) and the master's allocator. No I/O but the map file; unit-tested in
 * tests/test_fabric.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric-msg.h"

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

void ipv4_str(uint32_t a, char buf[16]);
