/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* P_Key partitions (docs/sweep.md "Partitions"): the [Partition] sections of tbrdmad.conf, the
 * membership list the master publishes in its record, and the P_Keys one host takes from it.
 * Pure; unit-tested in tests/test_partitions.c, the parser fuzzed in tests/fuzz/fuzz_partition.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARTITIONS_MAX		16	/* a port's P_Key slots (TBRDMA_PKEYS_MAX) */
#define PARTITION_MEMBERS_MAX	64	/* FABRIC_HOSTS_MAX */
#define PARTITION_NAME_MAX	64
#define PKEY_FULL		0x8000
#define PKEY_PART		0x7fff
#define PKEY_DEFAULT_PART	0x7fff	/* the default partition (P_Key 0xffff / 0x7fff) */
#define PKEY_ENTRIES_MAX	128	/* entries of a master's record (docs/sweep.md) */

enum { MEMBER_NONE, MEMBER_LIMITED, MEMBER_FULL };

typedef struct Partition {
	char name[PARTITION_NAME_MAX];
	uint16_t part;			/* 1..0x7fff; 0: not given (yet) */
	uint8_t all;			/* MEMBER_*: every host */
	unsigned n;
	struct { uint64_t guid; uint8_t type; } m[PARTITION_MEMBERS_MAX];	/* MEMBER_LIMITED/FULL */
} Partition;

typedef struct PartitionConfig {
	unsigned n;
	Partition p[PARTITIONS_MAX];
} PartitionConfig;

/* One membership as the master publishes it: a host (0: every host) and the P_Key it gets,
 * bit 15 set for a full member. */
typedef struct PKeyEntry {
	uint64_t guid;
	uint16_t pkey;
} PKeyEntry;

/* "0x8001", "0x0001", "32769": a partition number; bit 15 (membership) is ignored, as in opensm's
 * partitions.conf. 0 and 0x8000 are refused. Returns 0 with *@part = 1..0x7fff, or -EINVAL. */
int partition_parse_pkey(const char *v, uint16_t *part);
/* Members=: space-separated "ALL" / GUID (16 hex digits, optional 0x), each with an optional
 * "=full" or "=limited" (default limited, as opensm's), added to @p; a host named twice keeps
 * the stronger membership. -EINVAL with the reason in @why (@p unchanged), -E2BIG beyond
 * PARTITION_MEMBERS_MAX. */
int partition_parse_members(Partition *p, const char *v, char *why, size_t whylen);
/* The entries the master publishes for @c (into @e, room for PKEY_ENTRIES_MAX): every membership,
 * and the default partition for every host, full, unless @c has a section for it. Returns the
 * count, or -E2BIG. With no section at all: 0 (the default partition for all, implied). */
int partitions_entries(const PartitionConfig *c, PKeyEntry *e);
/* The P_Keys of host @guid from the master's @n entries, at most one per partition, ascending by
 * partition (full wins over limited): what goes to the kernel (PKEY_SET). @n == 0: the default
 * partition, full. Returns the count (0..PARTITIONS_MAX). */
unsigned partitions_for(const PKeyEntry *e, unsigned n, uint64_t guid, uint16_t *keys);
