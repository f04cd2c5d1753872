// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_sweep.c - libFuzzer target: tbrdmad's management message decoders on
 * the raw bytes of a datagram as any peer on the fabric can send it
 * (MGMT_RECV), dispatched as sweep.c's receive handler does: type 2 (RAILS,
 * rail negotiation) to rails_decode() (negotiate.c), everything else to
 * sweep_decode() (fabric.c). The decoders' own entry points are called, so
 * what they learn is fuzzed without changing this file.
 *
 * Properties checked on what sweep_decode() accepts:
 * - a refusal comes with a NUL-terminated reason;
 * - a STATE message re-encodes (sweep_encode) to exactly as many bytes as it
 *   was (the decoder refuses trailing bytes) and decodes again to the same
 *   message;
 * - its records merge into a fabric database as the daemon does (sweep.c)
 *   without overflowing it; every record merged passed fabric_validate()
 *   (generation window, addresses in the pool, assignments only from a
 *   master); the election picks a host reachable from ours, or ours.
 * Authenticated format (issue 13, tbrdmad/auth.c): an input starting with
 * the envelope magic "TBSA" goes through auth_unwrap() with the fuzz key
 * (the seeds are wrapped with it, from PEER to SELF) as the daemon does with
 * FabricKeyFile= (envelope version 2: sender and receiver GUIDs, epoch,
 * sequence number, timestamp under the MAC); what it accepts re-wraps
 * (auth_wrap from PEER, same epoch, sequence number and timestamp) to exactly
 * the input, the same bytes again are refused as a replay, and the datagram
 * inside is checked as below.
 * On what rails_decode() accepts:
 * - it re-encodes (rails_encode) to the same bytes but the reserved ones and
 *   decodes again to the same message;
 * - the agreement with a local advertisement is symmetric and never has more
 *   rails (or rails up) than either side, and its mask has one bit per rail.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "fabric.h"
#include "negotiate.h"

#define FUZZ_KEY "tbrdma fuzz_sweep key 0123456789"	/* gen_seeds.py wraps with it */
#define SELF 1ULL
#define PEER 0x1111ULL

#define REAL 1700000000000000ULL	/* CLOCK_REALTIME µs of the merge */

static SweepMsg m, m2;
static Fabric db;
static uint8_t enc[SWEEP_MSG_MAX];

static RailsMsg rm, rm2;

static void rails(const uint8_t *data, size_t size)
{
	static const RailsMsg local = {
		.version = RAILS_VERSION, .sender = 0x1111, .link = 1, .max_frame = 4096,
		.n_rails = 3,
		.rails = { { 0, RAIL_ADV_UP | RAIL_ADV_E2E, 2, 4096 },
			   { 1, RAIL_ADV_UP, 0, 0 },
			   { 5, RAIL_ADV_CUT | RAIL_ADV_E2E, 1, 2048 } },
	};
	RailsAgreed a, b;
	char why[96];
	int n;

	memset(why, 0x5a, sizeof(why));
	if (rails_decode(&rm, data, size, why, sizeof(why))) {
		if (!memchr(why, '\0', sizeof(why)))
			abort();
		return;
	}
	if (rm.n_rails > RAILS_MAX || !rm.sender)
		abort();
	n = rails_encode(&rm, enc, sizeof(enc));
	if (n < 0 || (size_t)n != size || memcmp(enc, data, 8) ||
	    rails_decode(&rm2, enc, (size_t)n, why, sizeof(why)) || memcmp(&rm, &rm2, sizeof(rm)))
		abort();
	rails_agree(&local, &rm, &a);
	rails_agree(&rm, &local, &b);
	if (!rails_agreed_equal(&a, &b) || a.n_rails > local.n_rails || a.n_rails > rm.n_rails ||
	    a.n_up > a.n_rails || __builtin_popcount(a.mask) != a.n_rails)
		abort();
}

static Auth auth;

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint8_t wrapped[SWEEP_MSG_MAX + AUTH_OVERHEAD];

/* 1: @data is an envelope, (*@data, *@size) now the datagram inside it; 0: not authentic */
static int unwrap(const uint8_t **data, size_t *size)
{
	const uint8_t *in;
	size_t len;
	char why[96];
	int n;

	memset(&auth, 0, sizeof(auth));
	memcpy(auth.key, FUZZ_KEY, sizeof(FUZZ_KEY) - 1);
	auth.key_len = sizeof(FUZZ_KEY) - 1;
	memset(why, 0x5a, sizeof(why));
	if (auth_unwrap(&auth, SELF, PEER, *data, *size, &in, &len, REAL, why, sizeof(why))) {
		if (!memchr(why, '\0', sizeof(why)))
			abort();
		return 0;
	}
	if (in != *data + AUTH_HDR_LEN || len + AUTH_OVERHEAD != *size)
		abort();
	/* the sender's state that makes the same envelope: its epoch, the sequence number and
	 * timestamp before it */
	auth.tx_epoch = be64(*data + 24);
	auth.tx_seq = be64(*data + 32) - 1;
	auth.tx_time = be64(*data + 40) - 1;
	n = auth_wrap(&auth, PEER, SELF, in, len, wrapped, sizeof(wrapped), 0);
	if (n < 0 || (size_t)n != *size || memcmp(wrapped, *data, *size))
		abort();
	if (auth_unwrap(&auth, SELF, PEER, *data, *size, &in, &len, REAL, why, sizeof(why)) !=
	    -ESTALE)
		abort();	/* a replay */
	*data = in;
	*size = len;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[96];
	uint64_t best;
	int n;

	if (size >= 4 && !memcmp(data, "TBSA", 4) && !unwrap(&data, &size))
		return 0;

	if (size >= 6 && data[5] == SWEEP_TYPE_RAILS) {	/* as sweep.c dispatches */
		rails(data, size);
		return 0;
	}
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
	memset(&db, 0, sizeof(db));
	db.self = 1;
	db.dead_usec = 10 * 1000000ull;
	pool_parse(&db.pool, "10.99.0.0/24");
	db.hosts[0] = (HostRecord){ .guid = 1, .n_neigh = 1, .neigh = { m.sender } };
	db.n_hosts = 1;
	for (unsigned i = 0; i < m.n_records && i < FABRIC_HOSTS_MAX; i++) {
		int v = fabric_validate(&db, &m.rec[i], REAL, why, sizeof(why));
		int r = fabric_merge(&db, &m.rec[i], 20 * 1000000ull, REAL);

		if ((v < 0) != (r == -EBADMSG) || (r < 0 && r != -EBADMSG && r != -ENOSPC))
			abort();
	}
	if (db.n_hosts > FABRIC_HOSTS_MAX)
		abort();
	for (size_t i = 1; i < db.n_hosts; i++)
		if (fabric_validate(&db, &db.hosts[i], REAL, why, sizeof(why)))
			abort();
	best = fabric_elect(&db);
	if (!fabric_find(&db, best))
		abort();
	fabric_expire(&db, 40 * 1000000ull);
	return 0;
}
