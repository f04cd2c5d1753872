// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_sweep.c - libFuzzer target: tbrdmad's management (sweep) message
 * decoder, sweep_decode(), on the raw bytes of a datagram as any peer on the
 * fabric can send it (MGMT_RECV). The decoder's own entry point is called, so
 * every message type it learns is fuzzed without changing this file.
 *
 * Properties checked on what it accepts:
 * - a refusal comes with a NUL-terminated reason;
 * - a STATE message re-encodes (sweep_encode) to exactly as many bytes as it
 *   was (the decoder refuses trailing bytes) and decodes again to the same
 *   message;
 * - its records merge into a fabric database as the daemon does (sweep.c)
 *   without overflowing it, and the election picks one of the hosts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

static SweepMsg m, m2;
static Fabric db;
static uint8_t enc[SWEEP_MSG_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[96];
	uint64_t best;
	int n;

	memset(why, 0x5a, sizeof(why));
	if (sweep_decode(&m, data, size, why, sizeof(why))) {
		if (!memchr(why, '\0', sizeof(why)))
			abort();
		return 0;
	}
	if (!m.sender || m.n_records > FABRIC_HOSTS_MAX)
		abort();
	if (m.type == SWEEP_TYPE_STATE) {
		n = sweep_encode(&m, enc, sizeof(enc));
		if (n < 0 || (size_t)n != size)
			abort();
		if (sweep_decode(&m2, enc, (size_t)n, why, sizeof(why)) ||
		    memcmp(&m, &m2, sizeof(m)))
			abort();
	}
	db.self = 1;
	db.n_hosts = 0;
	db.dead_usec = 10 * 1000000ull;
	for (unsigned i = 0; i < m.n_records && i < FABRIC_HOSTS_MAX; i++)
		if (fabric_merge(&db, &m.rec[i], 20 * 1000000ull) < 0)
			abort();	/* at most FABRIC_HOSTS_MAX distinct GUIDs */
	if (db.n_hosts > FABRIC_HOSTS_MAX)
		abort();
	best = fabric_elect(&db);
	if (db.n_hosts && !fabric_find(&db, best))
		abort();
	fabric_expire(&db, 40 * 1000000ull);
	return 0;
}
