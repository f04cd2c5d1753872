// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of P_Key partitions: the [Partition] sections (config.c, partitions.c), the
 * master's membership entries, one host's P_Keys, and the entries in the sweep's record. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "fabric-msg.h"
#include "partitions.h"

#define A 0x04b492fffe0b087bull
#define B 0xf82f4ffffe456161ull
#define C 0x0200000000000003ull

static void test_parse(void **state)
{
	Config c;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(c.partitions.n, 0);
	assert_int_equal(config_parse_string(&c,
		"[Daemon]\nPriority=7\n"
		"[Partition]\nName=tenant-a\nPKey=0x8001\n"
		"Members=ALL=limited 04b492fffe0b087b=full\n"
		"Members=0xf82f4ffffe456161\n"
		"[Partition]\nPKey=0x7fff\nMembers=ALL\n"
		"[Partition]\nName=nokey\nMembers=ALL=full\n"		/* no PKey: dropped */
		"[Partition]\nPKey=1\nMembers=ALL=full\n"		/* 0x0001 again: dropped */
		"[Partition]\nPKey=0x8000\nName=bad name\nPKey=0x12\nMembers=XYZ=full\n"
		"[Daemon]\nMapKeepDays=3\n", "t"), 0);
	assert_int_equal(c.priority, 7);
	assert_int_equal(c.map_keep_days, 3);
	assert_int_equal(c.partitions.n, 3);
	assert_string_equal(c.partitions.p[0].name, "tenant-a");
	assert_int_equal(c.partitions.p[0].part, 1);
	assert_int_equal(c.partitions.p[0].all, MEMBER_LIMITED);
	assert_int_equal(c.partitions.p[0].n, 2);
	assert_int_equal(c.partitions.p[0].m[0].guid, A);
	assert_int_equal(c.partitions.p[0].m[0].type, MEMBER_FULL);
	assert_int_equal(c.partitions.p[0].m[1].guid, B);
	assert_int_equal(c.partitions.p[0].m[1].type, MEMBER_LIMITED);	/* opensm's default */
	assert_string_equal(c.partitions.p[1].name, "default");
	assert_int_equal(c.partitions.p[1].part, 0x7fff);
	/* the bad values were ignored, the good ones kept */
	assert_int_equal(c.partitions.p[2].part, 0x12);
	assert_string_equal(c.partitions.p[2].name, "");
	assert_int_equal(c.partitions.p[2].n, 0);
	config_done(&c);
}

static void test_members(void **state)
{
	Partition p = { .part = 5 };
	char why[128];

	(void)state;
	assert_int_equal(partition_parse_members(&p, "", why, sizeof(why)), 0);
	assert_int_equal(partition_parse_members(&p, "0200000000000003=limited, 0200000000000003=full",
						 why, sizeof(why)), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.m[0].type, MEMBER_FULL);
	/* a bad token refuses the whole line */
	assert_int_equal(partition_parse_members(&p, "ALL=full 0000000000000000", why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(p.all, MEMBER_NONE);
	assert_int_equal(partition_parse_members(&p, "ALL=both", why, sizeof(why)), -EINVAL);
	assert_int_equal(partition_parse_members(&p, "123", why, sizeof(why)), -EINVAL);
	assert_int_equal(partition_parse_pkey("0", &p.part), -EINVAL);
	assert_int_equal(partition_parse_pkey("0x10000", &p.part), -EINVAL);
	assert_int_equal(partition_parse_pkey("-1", &p.part), -EINVAL);
	assert_int_equal(partition_parse_pkey("0xffff", &p.part), 0);
	assert_int_equal(p.part, 0x7fff);
}

static void test_entries_and_hosts(void **state)
{
	PartitionConfig pc = { 0 };
	PKeyEntry e[PKEY_ENTRIES_MAX];
	uint16_t k[PARTITIONS_MAX];
	char why[128];
	int n;

	(void)state;
	/* nothing configured: the default partition, full, for all */
	assert_int_equal(partitions_entries(&pc, e), 0);
	assert_int_equal(partitions_for(e, 0, A, k), 1);
	assert_int_equal(k[0], 0xffff);
	/* one partition: A full, B limited, C not in it; the default stays for all */
	pc.n = 1;
	pc.p[0].part = 0x0010;
	assert_int_equal(partition_parse_members(&pc.p[0], "04b492fffe0b087b=full f82f4ffffe456161",
						 why, sizeof(why)), 0);
	n = partitions_entries(&pc, e);
	assert_int_equal(n, 3);
	assert_int_equal(partitions_for(e, (unsigned)n, A, k), 2);
	assert_int_equal(k[0], 0x8010);
	assert_int_equal(k[1], 0xffff);
	assert_int_equal(partitions_for(e, (unsigned)n, B, k), 2);
	assert_int_equal(k[0], 0x0010);
	assert_int_equal(partitions_for(e, (unsigned)n, C, k), 1);
	assert_int_equal(k[0], 0xffff);
	/* the default partition restricted: everyone limited, A full; C then only limited */
	pc.n = 2;
	pc.p[1].part = 0x7fff;
	assert_int_equal(partition_parse_members(&pc.p[1], "ALL=limited 04b492fffe0b087b=full",
						 why, sizeof(why)), 0);
	n = partitions_entries(&pc, e);
	assert_int_equal(n, 4);
	assert_int_equal(partitions_for(e, (unsigned)n, A, k), 2);
	assert_int_equal(k[1], 0xffff);
	assert_int_equal(partitions_for(e, (unsigned)n, C, k), 1);
	assert_int_equal(k[0], 0x7fff);
	/* no default partition for C at all: nothing */
	pc.p[1].all = MEMBER_NONE;
	n = partitions_entries(&pc, e);
	assert_int_equal(partitions_for(e, (unsigned)n, C, k), 0);
}

/* the master's entries go in its record (byte 40 the count, 10 bytes each) and come back */
static void test_record_codec(void **state)
{
	static SweepMsg m, d;
	uint8_t buf[SWEEP_MSG_MAX];
	char why[128];
	int len;

	(void)state;
	m.type = SWEEP_TYPE_STATE;
	m.sender = A;
	m.n_records = 1;
	m.rec[0].guid = A;
	m.rec[0].flags = REC_FLAG_MASTER;
	m.rec[0].n_pkey = 2;
	m.rec[0].pkey[0] = (PKeyEntry){ 0, 0x8001 };
	m.rec[0].pkey[1] = (PKeyEntry){ B, 0x0002 };
	len = sweep_encode(&m, buf, sizeof(buf));
	assert_int_equal(len, SWEEP_HDR_LEN + SWEEP_REC_LEN + 20);
	assert_int_equal(buf[SWEEP_HDR_LEN + 40], 2);
	assert_int_equal(sweep_decode(&d, buf, (size_t)len, why, sizeof(why)), 0);
	assert_int_equal(d.rec[0].n_pkey, 2);
	assert_int_equal(d.rec[0].pkey[1].guid, B);
	assert_int_equal(d.rec[0].pkey[1].pkey, 0x0002);
	/* partition 0 refused, a count beyond the data refused */
	buf[len - 1] = 0;
	buf[len - 2] = 0x80;
	assert_int_equal(sweep_decode(&d, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[SWEEP_HDR_LEN + 40] = 3;
	assert_int_equal(sweep_decode(&d, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[SWEEP_HDR_LEN + 40] = PKEY_ENTRIES_MAX + 1;
	assert_int_equal(sweep_decode(&d, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_entries_and_hosts),
		cmocka_unit_test(test_record_codec),
	};

	return cmocka_run_group_tests_name("tbrdmad_partitions", tests, NULL, NULL);
}
