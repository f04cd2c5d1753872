// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_partition.c - libFuzzer target: tbrdmad's [Partition] sections
 * (config_parse_string with partitions.c's PKey=/Members= parsers) on
 * arbitrary configuration text, then what the master makes of them: the
 * membership entries (partitions_entries), sent through the sweep's record
 * codec, and one host's P_Keys (partitions_for).
 *
 * Checks: every kept section has a partition 1..0x7fff given once, at most
 * PARTITION_MEMBERS_MAX members with non-zero GUIDs; the entries survive
 * sweep_encode + sweep_decode unchanged; a host gets at most PARTITIONS_MAX
 * P_Keys, one per partition, ascending, none of partition 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fabric-msg.h"
#include "log.h"
#include "partitions.h"

static SweepMsg m, d;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char head[] = "[Partition]\n";
	uint8_t buf[SWEEP_MSG_MAX];
	uint16_t keys[PARTITIONS_MAX];
	char *text, why[128];
	Config c;
	int n, len;

	if (size > 16384)
		return 0;
	log_set_max_level(-1);
	text = malloc(sizeof(head) + size);
	if (!text || config_init(&c) < 0)
		abort();
	memcpy(text, head, sizeof(head) - 1);
	memcpy(text + sizeof(head) - 1, data, size);
	text[sizeof(head) - 1 + size] = '\0';
	if (config_parse_string(&c, text, "fuzz") < 0)
		abort();
	if (c.partitions.n > PARTITIONS_MAX)
		abort();
	for (unsigned i = 0; i < c.partitions.n; i++) {
		const Partition *p = &c.partitions.p[i];

		if (!p->part || p->part > PKEY_PART || p->n > PARTITION_MEMBERS_MAX)
			abort();
		for (unsigned j = 0; j < i; j++)
			if (c.partitions.p[j].part == p->part)
				abort();
		for (unsigned j = 0; j < p->n; j++)
			if (!p->m[j].guid)
				abort();
	}
	memset(&m.rec[0], 0, sizeof(m.rec[0]));
	n = partitions_entries(&c.partitions, m.rec[0].pkey);
	if (n > PKEY_ENTRIES_MAX)
		abort();
	if (n >= 0) {
		m.type = SWEEP_TYPE_STATE;
		m.sender = m.rec[0].guid = 1;
		m.rec[0].flags = REC_FLAG_MASTER;
		m.n_records = 1;
		m.rec[0].n_pkey = (uint8_t)n;
		len = sweep_encode(&m, buf, sizeof(buf));
		if (len < 0 || sweep_decode(&d, buf, (size_t)len, why, sizeof(why)) < 0 ||
		    d.rec[0].n_pkey != n ||
		    memcmp(d.rec[0].pkey, m.rec[0].pkey, (size_t)n * sizeof(PKeyEntry)))
			abort();
		for (unsigned h = 0; h < 4; h++) {
			uint64_t guid = h < 3 && c.partitions.n && c.partitions.p[0].n > h ?
					c.partitions.p[0].m[h].guid : 0x1234;
			unsigned k = partitions_for(d.rec[0].pkey, d.rec[0].n_pkey, guid, keys);

			if (k > PARTITIONS_MAX)
				abort();
			for (unsigned j = 0; j < k; j++)
				if (!(keys[j] & PKEY_PART) ||
				    (j && (keys[j - 1] & PKEY_PART) >= (keys[j] & PKEY_PART)))
					abort();
		}
	}
	config_done(&c);
	free(text);
	return 0;
}
