/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sweep's management message (docs/sweep.md "Message format"): host records, the STATE
 * message, its codec and fragmentation. Pure; unit-tested in tests/test_fabric.c, fuzzed in
 * tests/fuzz/fuzz_sweep.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "partitions.h"

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
	uint8_t n_pkey;
	PKeyEntry pkey[PKEY_ENTRIES_MAX];	/* master only: partition memberships */
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
