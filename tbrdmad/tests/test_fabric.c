// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the sweep's pure logic (fabric.c): message codec with hostile input, election,
 * database merge/expiry, address allocator, guid2addr loader/saver, routes (routes.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <errno.h>

#include "fabric.h"
#include "routes.h"

#define A(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))
#define REAL 1700000000000000ULL	/* CLOCK_REALTIME µs the tests' records are merged at */

static SweepMsg msg, out;
static uint8_t buf[SWEEP_MSG_MAX + 64];

static void make_msg(void)
{
	memset(&msg, 0, sizeof(msg));
	msg.type = SWEEP_TYPE_STATE;
	msg.sender = 0x1111;
	msg.master = 0x1111;
	msg.epoch = 7;
	msg.priority = 100;
	msg.n_records = 2;
	msg.rec[0] = (HostRecord){ .guid = 0x1111, .seq = 42, .priority = 100, .flags = 1,
				   .addr = A(10, 99, 0, 1), .master = 0x1111, .epoch = 7,
				   .n_neigh = 1, .neigh = { 0x2222 }, .n_assign = 2 };
	msg.rec[0].assign[0].guid = 0x1111;
	msg.rec[0].assign[0].addr = A(10, 99, 0, 1);
	msg.rec[0].assign[1].guid = 0x2222;
	msg.rec[0].assign[1].addr = A(10, 99, 0, 2);
	msg.rec[1] = (HostRecord){ .guid = 0x2222, .seq = 9, .age_ms = 300, .priority = 5,
				   .master = 0x1111, .n_neigh = 1, .neigh = { 0x1111 } };
}

static void test_codec_roundtrip(void **state)
{
	char why[128];
	int len;

	(void)state;
	make_msg();
	len = sweep_encode(&msg, buf, sizeof(buf));
	assert_int_equal(len, SWEEP_HDR_LEN + 2 * SWEEP_REC_LEN + 8 + 24 + 8);
	assert_memory_equal(buf, "TBSW\x01\x01", 6);
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), 0);
	assert_int_equal(out.n_records, 2);
	assert_int_equal(out.sender, 0x1111);
	assert_int_equal(out.epoch, 7);
	assert_int_equal(out.rec[0].assign[1].addr, A(10, 99, 0, 2));
	assert_int_equal(out.rec[1].age_ms, 300);
	assert_int_equal(out.rec[1].neigh[0], 0x1111);
	/* too small a buffer */
	assert_int_equal(sweep_encode(&msg, buf, 40), -EMSGSIZE);
}

static void test_codec_hostile(void **state)
{
	char why[128];
	int len;

	(void)state;
	make_msg();
	len = sweep_encode(&msg, buf, sizeof(buf));
	/* every truncation is rejected */
	for (int n = 0; n < len; n++)
		assert_int_equal(sweep_decode(&out, buf, (size_t)n, why, sizeof(why)), -EBADMSG);
	/* trailing bytes */
	assert_int_equal(sweep_decode(&out, buf, (size_t)len + 1, why, sizeof(why)), -EBADMSG);
	/* oversized */
	assert_int_equal(sweep_decode(&out, buf, SWEEP_MSG_MAX + 1, why, sizeof(why)), -EBADMSG);
	/* magic, version, type */
	buf[0] ^= 1;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[0] ^= 1;
	buf[4] = 2;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EPROTONOSUPPORT);
	buf[4] = 1;
	buf[5] = 9;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EPROTONOSUPPORT);
	buf[5] = 1;
	/* record count lies: bigger, zero, huge */
	buf[7] = 3;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[7] = 0;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[6] = 0xff;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[6] = 0;
	buf[7] = 2;
	/* neighbour count beyond the data / beyond the limit */
	buf[SWEEP_HDR_LEN + 22] = 200;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[SWEEP_HDR_LEN + 22] = 1;
	buf[SWEEP_HDR_LEN + 23] = 255;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	buf[SWEEP_HDR_LEN + 23] = 2;
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), 0);
	/* the first record must be the sender's; GUID 0 refused; duplicates refused */
	msg.sender = 0x2222;
	len = sweep_encode(&msg, buf, sizeof(buf));
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	make_msg();
	msg.rec[1].guid = 0x1111;
	len = sweep_encode(&msg, buf, sizeof(buf));
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	make_msg();
	msg.rec[1].neigh[0] = 0;
	len = sweep_encode(&msg, buf, sizeof(buf));
	assert_int_equal(sweep_decode(&out, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	/* random bytes never crash (ASan run) and are nearly always refused */
	srand(1);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)rand() % 600;

		for (size_t j = 0; j < n; j++)
			buf[j] = (uint8_t)rand();
		if (i & 1 && n >= 8)
			memcpy(buf, "TBSW\x01\x01", 6);
		(void)sweep_decode(&out, buf, n, why, sizeof(why));
	}
	/* random mutations of a valid message */
	make_msg();
	len = sweep_encode(&msg, buf, sizeof(buf));
	for (int i = 0; i < 20000; i++) {
		uint8_t save;
		size_t at = (size_t)rand() % (size_t)len;

		save = buf[at];
		buf[at] = (uint8_t)rand();
		(void)sweep_decode(&out, buf, (size_t)len, why, sizeof(why));
		buf[at] = save;
	}
}

/* issue 13 item 12: a database of 40 hosts (one master record with 40 assignments) split to
 * the link's frame size; every message decodes on its own, every record arrives once */
static void test_fragment(void **state)
{
	static SweepMsg all, part, back;
	static const size_t frames[] = { 4096, 1500, 600, 1024 };
	unsigned seen[40];
	char why[128];

	(void)state;
	memset(&all, 0, sizeof(all));
	all.type = SWEEP_TYPE_STATE;
	all.sender = 0x100;
	all.n_records = 40;
	for (unsigned i = 0; i < 40; i++) {
		HostRecord *r = &all.rec[i];

		*r = (HostRecord){ .guid = 0x100 + i, .seq = i + 1, .n_neigh = 2,
				   .neigh = { 0x100 + (i + 39) % 40, 0x100 + (i + 1) % 40 } };
	}
	all.rec[5].flags = REC_FLAG_MASTER;	/* 44 + 16 + 40 * 12 = 540 bytes */
	all.rec[5].n_assign = 40;
	for (unsigned i = 0; i < 40; i++) {
		all.rec[5].assign[i].guid = 0x100 + i;
		all.rec[5].assign[i].addr = A(10, 99, 0, 1 + i);
	}
	/* the whole database is 32 + 40 * 60 + 480 = 2912 bytes */
	for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
		unsigned pos = 0, skipped = 0, msgs = 0;
		int n;

		memset(seen, 0, sizeof(seen));
		while ((n = sweep_fragment(&all, frames[f], &pos, &part, &skipped)) > 0) {
			int len = sweep_encode(&part, buf, frames[f]);

			assert_true(len > 0);
			assert_true((size_t)len <= frames[f]);
			assert_int_equal(sweep_decode(&back, buf, (size_t)len, why, sizeof(why)), 0);
			assert_int_equal(back.rec[0].guid, 0x100);
			for (unsigned i = 0; i < back.n_records; i++)
				seen[back.rec[i].guid - 0x100]++;
			msgs++;
		}
		assert_int_equal(n, 0);
		for (unsigned i = 1; i < 40; i++)
			assert_int_equal(seen[i], frames[f] == 600 && i == 5 ? 0 : 1);
		assert_int_equal(seen[0], msgs);	/* ours leads every message */
		assert_int_equal(skipped, frames[f] == 600);	/* 32 + 60 + 540 > 600 */
		if (frames[f] == 4096)
			assert_int_equal(msgs, 1);
		else
			assert_true(msgs >= 2);
	}
	/* a frame too small for our own record */
	unsigned pos = 0, skipped = 0;

	assert_int_equal(sweep_fragment(&all, 80, &pos, &part, &skipped), -EMSGSIZE);
}

static void test_election(void **state)
{
	Fabric f = { .self = 5, .dead_usec = 4000000 };

	(void)state;
	assert_true(election_better(200, 9, 100, 1));	/* priority first */
	assert_false(election_better(100, 1, 200, 9));
	assert_true(election_better(100, 1, 100, 2));	/* then the lowest GUID */
	assert_false(election_better(100, 2, 100, 1));
	assert_int_equal(fabric_elect(&f), 0);
	/* (only hosts reachable over two-way links are elected: 5 - 3, 5 - 9) */
	f.hosts[0] = (HostRecord){ .guid = 5, .priority = 100, .origin_usec = 1000, .n_neigh = 2,
				   .neigh = { 3, 9 } };
	f.n_hosts = 1;
	assert_int_equal(fabric_elect(&f), 5);
	HostRecord r = { .guid = 3, .seq = 10, .priority = 100, .n_neigh = 1, .neigh = { 5 } };

	assert_int_equal(fabric_merge(&f, &r, 1000000, REAL), 1);
	assert_int_equal(fabric_elect(&f), 3);
	r = (HostRecord){ .guid = 9, .seq = 1, .priority = 150, .age_ms = 1000, .n_neigh = 1,
			  .neigh = { 5 } };
	assert_int_equal(fabric_merge(&f, &r, 1000000, REAL), 1);
	assert_int_equal(fabric_elect(&f), 9);
	/* the master goes silent: after DeadSec the next one takes over, self never expires */
	r = (HostRecord){ .guid = 3, .seq = 11, .priority = 100, .n_neigh = 1, .neigh = { 5 } };
	assert_int_equal(fabric_merge(&f, &r, 4000000, REAL), 1);
	assert_int_equal(fabric_expire(&f, 4100000), 1);	/* 9 was made at 0 */
	assert_int_equal(fabric_elect(&f), 3);
	assert_int_equal(fabric_expire(&f, 9000000), 1);
	assert_int_equal(f.n_hosts, 1);
	assert_int_equal(fabric_elect(&f), 5);
}

/* a stall of ours (the daemon or its VM not scheduled) is not the peers' silence */
static void test_pause(void **state)
{
	Fabric f = { .self = 5, .dead_usec = 4000000 };
	HostRecord r = { .guid = 3, .seq = 10, .n_neigh = 1, .neigh = { 5 } };

	(void)state;
	f.hosts[0] = (HostRecord){ .guid = 5, .origin_usec = 1000000, .n_neigh = 1, .neigh = { 3 } };
	f.n_hosts = 1;
	assert_int_equal(fabric_merge(&f, &r, 1000000, REAL), 1);
	/* we did not run from 1.0 s to 7.0 s: without the pause, 3 would time out at 7 s */
	fabric_pause(&f, 5000000, 7000000);
	assert_int_equal(fabric_find(&f, 3)->origin_usec, 6000000);
	assert_int_equal(fabric_find(&f, 5)->origin_usec, 1000000);	/* self untouched */
	assert_int_equal(fabric_expire(&f, 7000000), 0);
	assert_int_equal(fabric_elect(&f), 3);
	/* a peer that stays silent after we are back still goes, DeadSec after the pause */
	assert_int_equal(fabric_expire(&f, 10000000), 1);
	assert_int_equal(fabric_elect(&f), 5);
	/* never newer than now */
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 1);
	fabric_pause(&f, 60000000, 10500000);
	assert_int_equal(fabric_find(&f, 3)->origin_usec, 10500000);
}

static void test_merge(void **state)
{
	Fabric f = { .self = 5, .dead_usec = 4000000 };
	HostRecord r = { .guid = 7, .seq = 10, .age_ms = 100 };

	(void)state;
	f.hosts[0] = (HostRecord){ .guid = 5 };
	f.n_hosts = 1;
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 1);
	assert_int_equal(fabric_find(&f, 7)->origin_usec, 9900000);
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 0);	/* same: no news */
	r.seq = 9;
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 0);	/* older generation */
	r.seq = 10;
	r.age_ms = 50;						/* same generation, fresher copy */
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 0);
	assert_int_equal(fabric_find(&f, 7)->origin_usec, 9950000);
	r.seq = 11;
	r.age_ms = 5000;					/* a stale copy is not taken */
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 0);
	r.guid = 5;						/* nor a record claiming to be us */
	r.age_ms = 0;
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 0);
	/* table full of records not reachable from us: the oldest makes room (test_forged) */
	for (uint64_t g = 100; f.n_hosts < FABRIC_HOSTS_MAX; g++) {
		r.guid = g;
		assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 1);
	}
	r.guid = 99999;
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 1);
	assert_int_equal(f.evicted, 1);
}

/* issue 13 item 11: forged records (no key) are refused or kept harmless */
static void test_forged(void **state)
{
	static Fabric f;
	HostRecord r;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.self = 5;
	f.dead_usec = 4000000;
	pool_parse(&f.pool, "10.99.0.0/24");
	f.hosts[0] = (HostRecord){ .guid = 5, .seq = REAL, .priority = 100, .n_neigh = 1,
				   .neigh = { 7 } };
	f.n_hosts = 1;
	r = (HostRecord){ .guid = 7, .seq = REAL, .priority = 100, .n_neigh = 1, .neigh = { 5 },
			  .flags = REC_FLAG_MASTER, .n_assign = 2 };
	r.assign[0].guid = 5;
	r.assign[0].addr = A(10, 99, 0, 1);
	r.assign[1].guid = 7;
	r.assign[1].addr = A(10, 99, 0, 2);
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 1);
	assert_int_equal(fabric_elect(&f), 5);

	/* the master's record forged with a generation near UINT64_MAX: refused, 7 stays */
	HostRecord forged = r;

	forged.seq = UINT64_MAX - 1;
	forged.assign[0].addr = A(10, 99, 0, 77);
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	assert_non_null(strstr(f.why, "future"));
	assert_int_equal(fabric_find(&f, 7)->seq, REAL);
	/* ... but 10 minutes ahead is still accepted (clock skew) */
	forged.seq = REAL + SEQ_AHEAD_USEC;
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), 1);
	forged.seq = REAL + SEQ_AHEAD_USEC + 1000000;
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	/* addresses outside the pool: the host's own, an assignment; assignments from a host that
	 * does not claim to be master; two GUIDs with one address */
	forged = r;
	forged.seq = REAL + 1;
	forged.addr = A(192, 168, 1, 1);
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	forged.addr = A(10, 99, 0, 255);		/* the pool's broadcast address */
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	forged.addr = 0;
	forged.assign[0].addr = A(192, 168, 1, 1);
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	assert_non_null(strstr(f.why, "outside the pool"));
	forged.assign[0].addr = A(10, 99, 0, 2);
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	forged.assign[0].addr = A(10, 99, 0, 1);
	forged.flags = 0;
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), -EBADMSG);
	assert_int_equal(f.rejected, 7);

	/* a record of our own GUID, newer than ours: our next generation must beat it */
	forged = (HostRecord){ .guid = 5, .seq = REAL + 5000000, .priority = 255 };
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), 0);
	assert_int_equal(f.seq_floor, REAL + 5000001);
	assert_int_equal(fabric_find(&f, 5)->priority, 100);

	/* a fake high-priority master nobody vouches for (it names us, we do not name it): in
	 * the table, never elected */
	forged = (HostRecord){ .guid = 1, .seq = REAL, .priority = 255, .n_neigh = 1,
			       .neigh = { 5 }, .flags = REC_FLAG_MASTER };
	assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), 1);
	assert_int_equal(fabric_elect(&f), 5);

	/* 61 more fakes fill the table; a real neighbour (two-way) still gets in, evicting the
	 * oldest fake; when every record is reachable, a full table refuses */
	for (uint64_t g = 100; f.n_hosts < FABRIC_HOSTS_MAX; g++) {
		forged = (HostRecord){ .guid = g, .seq = REAL, .age_ms = (uint32_t)(g - 99),
				       .priority = 255 };
		assert_int_equal(fabric_merge(&f, &forged, 10000000, REAL), 1);
	}
	f.hosts[0].neigh[f.hosts[0].n_neigh++] = 9;
	r = (HostRecord){ .guid = 9, .seq = REAL, .priority = 100, .n_neigh = 1, .neigh = { 5 } };
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), 1);
	assert_int_equal(f.n_hosts, FABRIC_HOSTS_MAX);
	assert_int_equal(f.evicted, 1);
	assert_null(fabric_find(&f, 160));		/* the oldest fake (age 61 ms) went */
	assert_non_null(fabric_find(&f, 9));
	assert_int_equal(fabric_elect(&f), 5);
	for (size_t i = 0; i < f.n_hosts; i++) {	/* every record reachable: a chain */
		f.hosts[i].n_neigh = 0;
		if (i) {
			f.hosts[i].neigh[f.hosts[i].n_neigh++] = f.hosts[i - 1].guid;
			f.hosts[i - 1].neigh[f.hosts[i - 1].n_neigh++] = f.hosts[i].guid;
		}
	}
	r.guid = 99999;
	assert_int_equal(fabric_merge(&f, &r, 10000000, REAL), -ENOSPC);
}

static void test_map_expire(void **state)
{
	static AddrMap m;
	Pool p;
	uint64_t g[2] = { 0x10, 0x20 };
	uint32_t o[2];

	(void)state;
	memset(&m, 0, sizeof(m));
	pool_parse(&p, "10.99.0.0/30");	/* two addresses */
	/* fake GUIDs took the whole pool long ago; live hosts get their addresses back, the
	 * least recently seen first */
	addrmap_set(&m, 0xf1, A(10, 99, 0, 1));
	addrmap_set(&m, 0xf2, A(10, 99, 0, 2));
	m.e[0].seen = 2000;
	m.e[1].seen = 1000;
	assert_int_equal(allocate(&m, &p, g, NULL, 1, o), 1);
	assert_int_equal(o[0], A(10, 99, 0, 2));
	assert_int_equal(addrmap_owner(&m, A(10, 99, 0, 2)), 0x10);
	assert_int_equal(allocate(&m, &p, g, NULL, 2, o), 1);
	assert_int_equal(o[1], A(10, 99, 0, 1));
	assert_int_equal(m.n, 2);
	/* touch: refreshed once per MAP_TOUCH_SEC */
	assert_int_equal(addrmap_touch(&m, 0x10, 100000), 1);
	assert_int_equal(addrmap_touch(&m, 0x10, 100000 + MAP_TOUCH_SEC - 1), 0);
	assert_int_equal(addrmap_touch(&m, 0x10, 100000 + MAP_TOUCH_SEC), 1);
	assert_int_equal(addrmap_touch(&m, 0x99, 100000), 0);
	/* expiry: 0x20 was never seen (its "seen" becomes now), 0x10 is gone after @keep */
	assert_int_equal(addrmap_expire(&m, 200000, 100000), 0);
	assert_int_equal(addrmap_expire(&m, 100000 + MAP_TOUCH_SEC + 100000, 100000), 1);
	assert_int_equal(addrmap_get(&m, 0x10), 0);
	assert_int_equal(addrmap_get(&m, 0x20), A(10, 99, 0, 1));
	assert_int_equal(addrmap_expire(&m, 300000, 100000), 1);
	assert_int_equal(m.n, 0);
}

static void test_pool(void **state)
{
	Pool p;

	(void)state;
	assert_int_equal(pool_parse(&p, "10.99.0.7/24"), 0);
	assert_int_equal(p.net, A(10, 99, 0, 0));
	assert_int_equal(p.prefix, 24);
	assert_true(pool_contains(&p, A(10, 99, 0, 1)));
	assert_false(pool_contains(&p, A(10, 99, 0, 0)));
	assert_false(pool_contains(&p, A(10, 99, 0, 255)));
	assert_false(pool_contains(&p, A(10, 98, 0, 1)));
	assert_false(pool_contains(&p, 0));
	assert_int_equal(pool_parse(&p, "10.99.0.0"), -EINVAL);
	assert_int_equal(pool_parse(&p, "10.99.0.0/31"), -EINVAL);
	assert_int_equal(pool_parse(&p, "10.99.0.0/7"), -EINVAL);
	assert_int_equal(pool_parse(&p, "10.99.0/24"), -EINVAL);
	assert_int_equal(pool_parse(&p, "10.99.0.0/24x"), -EINVAL);
	assert_int_equal(pool_parse(&p, "10.99.0.0/"), -EINVAL);
}

static void test_pool6(void **state)
{
	static const char *const bad[] = { "fd74::/48", "fd74::/65", "fd74::", "fd74::/64x",
		"ff02::/64", "fe80::/64", "::/64", "::1/64", "::ffff:10.0.0.0/64", "10.0.0.0/64",
		"fd74:6272:646d:0:0:0:0:0:0/64", "fd74:6272:646d:1111:2222:3333:4444:5555:6666:7777/64" };
	uint8_t a[16], b[16];
	char t[46];
	Pool6 p;

	(void)state;
	assert_int_equal(pool6_parse(&p, ""), 0);
	assert_false(p.enabled);
	assert_int_equal(pool6_parse(&p, "no"), 0);
	assert_false(p.enabled);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pool6_parse(&p, bad[i]), -EINVAL);
	/* host bits of the prefix are ignored; the GUID is the interface id, U/L bit flipped */
	assert_int_equal(pool6_parse(&p, "fd74:6272:646d:7::99/64"), 0);
	assert_true(p.enabled);
	addr6_from_guid(&p, 0x7097f5fffe355e6fULL, a);
	ipv6_str(a, t);
	assert_string_equal(t, "fd74:6272:646d:7:7297:f5ff:fe35:5e6f");
	/* distinct GUIDs, distinct addresses; the flip is its own inverse */
	addr6_from_guid(&p, 0x7297f5fffe355e6fULL, b);
	assert_memory_not_equal(a, b, 16);
	addr6_from_guid(&p, 0x0200000000000000ULL, a);
	ipv6_str(a, t);
	assert_string_equal(t, "fd74:6272:646d:7::");
}

static void test_allocate(void **state)
{
	static AddrMap map;
	Pool p;
	uint64_t g[4] = { 0x30, 0x10, 0x20, 0x40 };
	uint32_t claims[4] = { 0, 0, A(10, 99, 0, 9), A(10, 1, 1, 1) }, o[4];

	(void)state;
	pool_parse(&p, "10.99.0.0/24");
	memset(&map, 0, sizeof(map));
	assert_int_equal(allocate(&map, &p, g, claims, 4, o), 4);
	assert_int_equal(o[0], A(10, 99, 0, 1));
	assert_int_equal(o[1], A(10, 99, 0, 2));
	assert_int_equal(o[2], A(10, 99, 0, 9));	/* its claim adopted */
	assert_int_equal(o[3], A(10, 99, 0, 3));	/* a claim outside the pool is not */
	/* stable: nothing changes the second time, whatever the order */
	uint64_t g2[4] = { 0x40, 0x20, 0x10, 0x30 };

	assert_int_equal(allocate(&map, &p, g2, NULL, 4, o), 0);
	assert_int_equal(o[0], A(10, 99, 0, 3));
	assert_int_equal(o[3], A(10, 99, 0, 1));
	/* a host that left keeps its address reserved; a newcomer claiming it does not get it */
	uint64_t g3[2] = { 0x10, 0x50 };
	uint32_t c3[2] = { 0, A(10, 99, 0, 1) };

	assert_int_equal(allocate(&map, &p, g3, c3, 2, o), 1);
	assert_int_equal(o[0], A(10, 99, 0, 2));
	assert_int_equal(o[1], A(10, 99, 0, 4));
	/* two hosts claiming the same address: the first keeps it */
	memset(&map, 0, sizeof(map));
	uint32_t c4[2] = { A(10, 99, 0, 7), A(10, 99, 0, 7) };

	assert_int_equal(allocate(&map, &p, g3, c4, 2, o), 2);
	assert_int_equal(o[0], A(10, 99, 0, 7));
	assert_int_equal(o[1], A(10, 99, 0, 1));
	/* exhaustion: a /30 has two host addresses */
	memset(&map, 0, sizeof(map));
	pool_parse(&p, "10.99.0.0/30");
	assert_int_equal(allocate(&map, &p, g, NULL, 4, o), 2);
	assert_int_equal(o[0], A(10, 99, 0, 1));
	assert_int_equal(o[1], A(10, 99, 0, 2));
	assert_int_equal(o[2], 0);
	assert_int_equal(o[3], 0);
	/* a mapped address outside a new pool is replaced */
	pool_parse(&p, "10.98.0.0/24");
	assert_int_equal(allocate(&map, &p, g, NULL, 1, o), 1);
	assert_int_equal(o[0], A(10, 98, 0, 1));
}

static void test_map_file(void **state)
{
	static AddrMap m, m2;
	char why[128], dir[] = "/tmp/test_fabricXXXXXX", path[256];
	char *text;

	(void)state;
	memset(&m, 0, sizeof(m));
	addrmap_set(&m, 0x0002c9fffe000001ull, A(10, 99, 0, 1));
	addrmap_set(&m, 0x0002c9fffe000002ull, A(10, 99, 0, 2));
	addrmap_set(&m, 0x0002c9fffe000003ull, A(10, 99, 0, 1));	/* takes .1 over */
	assert_int_equal(m.n, 2);
	text = addrmap_format(&m);
	assert_non_null(strstr(text, "0002c9fffe000003 10.99.0.1 0\n"));
	assert_int_equal(addrmap_parse(&m2, text, strlen(text), why, sizeof(why)), 0);
	assert_int_equal(m2.n, 2);
	free(text);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/guid2addr", dir);
	assert_int_equal(addrmap_load(&m2, path, why, sizeof(why)), 0);	/* missing: empty */
	assert_int_equal(m2.n, 0);
	assert_int_equal(addrmap_save(&m, path), 0);
	assert_int_equal(addrmap_load(&m2, path, why, sizeof(why)), 0);
	assert_int_equal(m2.n, 2);
	assert_int_equal(addrmap_get(&m2, 0x0002c9fffe000002ull), A(10, 99, 0, 2));
	unlink(path);
	rmdir(dir);
}

/* issue 13 item 14: a symlink planted at the temporary path is not followed (the victim keeps
 * its contents, the map is written as a regular file), and no temporary file is left behind */
static void test_map_save_symlink(void **state)
{
	static AddrMap m, m2;
	char why[128], dir[] = "/tmp/test_fabricXXXXXX", path[256], tmp[300], victim[256];
	char got[64] = "";
	struct stat st;
	FILE *f;

	(void)state;
	memset(&m, 0, sizeof(m));
	addrmap_set(&m, 0x0002c9fffe000001ull, A(10, 99, 0, 1));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/guid2addr", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(addrmap_save(&m, path), 0);
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "precious\n");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(lstat(tmp, &st), -1);
	assert_int_equal(addrmap_load(&m2, path, why, sizeof(why)), 0);
	assert_int_equal(addrmap_get(&m2, 0x0002c9fffe000001ull), A(10, 99, 0, 1));
	unlink(path);
	unlink(victim);
	rmdir(dir);
}

static void test_map_hostile(void **state)
{
	static AddrMap m;
	static const char *const bad[] = {
		"",
		"garbage\n",
		"# tbrdmad guid2addr v1",					/* no newline */
		"# tbrdmad guid2addr v3\n",
		"# tbrdmad guid2addr v2\n0002c9fffe000001 10.99.0.1\n",		/* no SEEN */
		"# tbrdmad guid2addr v2\n0002c9fffe000001 10.99.0.1 -1\n",
		"# tbrdmad guid2addr v2\n0002c9fffe000001 10.99.0.1 12x\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1 5\n",	/* SEEN in v1 */
		"# tbrdmad guid2addr v1\n0002c9fffe000001\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1 extra\n",
		"# tbrdmad guid2addr v1\n2c9fffe000001 10.99.0.1\n",		/* short GUID */
		"# tbrdmad guid2addr v1\n0002C9FFFE000001 10.99.0.1\n",		/* upper case */
		"# tbrdmad guid2addr v1\n0000000000000000 10.99.0.1\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.256\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 0.0.0.0\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1\n0002c9fffe000001 10.99.0.2\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1\n0002c9fffe000002 10.99.0.1\n",
		"# tbrdmad guid2addr v1\n0002c9fffe000001 10.99.0.1\n0002c9fffe000002 10.99.0.2",
	};
	char why[128], big[300];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(addrmap_parse(&m, bad[i], strlen(bad[i]), why, sizeof(why)), -EBADMSG);
		assert_true(why[0]);
	}
	assert_int_equal(addrmap_parse(&m, "# tbrdmad guid2addr v1\n\0x\n", 26, why, sizeof(why)),
			 -EBADMSG);
	memset(big, 'a', sizeof(big));
	memcpy(big, "# tbrdmad guid2addr v1\n", 23);
	big[sizeof(big) - 1] = '\n';
	assert_int_equal(addrmap_parse(&m, big, sizeof(big), why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "line 2"));
	/* comments and blank lines are fine */
	const char *ok = "# tbrdmad guid2addr v1\n\n# x\n0002c9fffe000001 10.99.0.1\n";

	assert_int_equal(addrmap_parse(&m, ok, strlen(ok), why, sizeof(why)), 0);
	assert_int_equal(m.n, 1);
}

/* a fabric of @n hosts with GUIDs g[i], host i's neighbours the j with adj(i, j), seen by g[me] */
static void topo(Fabric *f, const uint64_t *g, size_t n, size_t me,
		 bool (*adj)(size_t i, size_t j, size_t n))
{
	memset(f, 0, sizeof(*f));
	f->self = g[me];
	for (size_t i = 0; i < n; i++) {
		HostRecord *h = &f->hosts[f->n_hosts++];

		h->guid = g[i];
		for (size_t j = 0; j < n; j++)
			if (j != i && adj(i, j, n))
				h->neigh[h->n_neigh++] = g[j];
	}
}

static bool chain(size_t i, size_t j, size_t n) { (void)n; return i + 1 == j || j + 1 == i; }
static bool ring(size_t i, size_t j, size_t n) { return (i + 1) % n == j || (j + 1) % n == i; }
/* a 3 x 3 grid: many equal paths between opposite corners */
static bool grid(size_t i, size_t j, size_t n)
{
	(void)n;
	return (i / 3 == j / 3 && (i % 3 + 1 == j % 3 || j % 3 + 1 == i % 3)) ||
	       (i % 3 == j % 3 && (i / 3 + 1 == j / 3 || j / 3 + 1 == i / 3));
}

/* the hosts of the path from a to b in the tables @t, a and b included: its length + 1 */
static size_t walk(const RouteTable *t, const uint64_t *g, size_t n, size_t a, size_t b,
		   size_t *hosts)
{
	size_t x = a, k = 0;

	hosts[k++] = a;
	while (x != b && k <= n) {
		const Route *r = NULL;
		size_t y;

		for (size_t i = 0; i < t[x].n; i++)
			if (t[x].r[i].dst == g[b])
				r = &t[x].r[i];
		assert_non_null(r);
		for (y = 0; y < n && g[y] != r->next_hop; y++)
			;
		assert_true(y < n);
		hosts[k++] = x = y;
	}
	return k;
}

/* every host's table: routes to all others, sorted, min-hop; following the tables hop by hop
 * from any host reaches any other in exactly its hop count (no loop), along the path shown;
 * and the path from b to a is the path from a to b reversed (symmetric: the kernel's
 * reverse-path check drops a frame that does not come in from the way back to its source) */
static void check_tables(const uint64_t *g, size_t n, bool (*adj)(size_t, size_t, size_t),
			 const unsigned *want_hops)
{
	static Fabric f;
	static RouteTable t[9];
	size_t ab[10], ba[10], la, lb;

	for (size_t me = 0; me < n; me++) {
		topo(&f, g, n, me, adj);
		routes_compute(&f, &t[me]);
		assert_int_equal(t[me].n, n - 1);
		for (size_t i = 1; i < t[me].n; i++)
			assert_true(t[me].r[i - 1].dst < t[me].r[i].dst);
	}
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++) {
			size_t x = a, steps = 0;
			const Route *first = NULL;

			if (a == b)
				continue;
			while (x != b) {
				const Route *r = NULL;
				size_t y;

				for (size_t i = 0; i < t[x].n; i++)
					if (t[x].r[i].dst == g[b])
						r = &t[x].r[i];
				assert_non_null(r);
				if (!first)
					first = r;
				for (y = 0; y < n && g[y] != r->next_hop; y++)
					;
				assert_true(y < n && adj(x, y, n));	/* a neighbour */
				assert_int_equal(first->path[steps], g[y]);	/* the path shown */
				x = y;
				assert_true(++steps <= n);
			}
			assert_int_equal(steps, first->hops);
			if (want_hops)
				assert_int_equal(first->hops, want_hops[(b + n - a) % n]);
			la = walk(t, g, n, a, b, ab);
			lb = walk(t, g, n, b, a, ba);
			assert_int_equal(la, lb);
			for (size_t k = 0; k < la; k++)
				assert_int_equal(ab[k], ba[la - 1 - k]);
		}
}

static void test_routes(void **state)
{
	static const uint64_t g4[] = { 0x40, 0x10, 0x30, 0x20 };
	static const uint64_t g5[] = { 0x11, 0x55, 0x33, 0x22, 0x44 };
	static const uint64_t g6[] = { 0x16, 0x15, 0x14, 0x13, 0x12, 0x11 };
	static const uint64_t g9[] = { 0x90, 0x17, 0x5a, 0x23, 0x88, 0x41, 0x36, 0x0c, 0x72 };
	static const unsigned ring4[] = { 0, 1, 2, 1 };
	static const unsigned ring5[] = { 0, 1, 2, 2, 1 }, ring6[] = { 0, 1, 2, 3, 2, 1 };
	static Fabric f;
	static RouteTable t, u;
	uint64_t g[6];
	unsigned pick[2] = { 0, 0 };

	(void)state;
	check_tables(g4, 4, chain, NULL);
	check_tables(g4, 4, ring, ring4);	/* two equal paths to the far host */
	check_tables(g5, 5, ring, ring5);
	check_tables(g6, 6, ring, ring6);	/* the far side of an even ring: two equal paths */
	check_tables(g9, 9, grid, NULL);	/* up to six equal paths */
	/* equal paths: over many fabrics (rings of 6 with other GUIDs), both ways round taken */
	for (uint64_t s = 1; s <= 64; s++) {
		for (size_t i = 0; i < 6; i++)
			g[i] = s * 0x1000 + i * 0x11;
		check_tables(g, 6, ring, ring6);
		topo(&f, g, 6, 0, ring);
		routes_compute(&f, &t);
		for (size_t i = 0; i < t.n; i++)
			if (t.r[i].dst == g[3])
				pick[t.r[i].next_hop == g[1]]++;
	}
	assert_true(pick[0] >= 16 && pick[1] >= 16);
	assert_int_equal(route_edge_weight(g[0], g[1]), route_edge_weight(g[1], g[0]));
	/* the chain A-B-C-D from A: B 1 hop, C 2, D 3, all through B */
	topo(&f, g4, 4, 0, chain);
	routes_compute(&f, &t);
	assert_int_equal(t.n, 3);
	for (size_t i = 0; i < t.n; i++) {
		assert_int_equal(t.r[i].next_hop, 0x10);
		assert_int_equal(t.r[i].hops, t.r[i].dst == 0x10 ? 1 : t.r[i].dst == 0x30 ? 2 : 3);
	}
	assert_true(routes_equal(&t, &t));
	/* a one-way link is no link: D does not list C, so D is unreachable */
	f.hosts[3].n_neigh = 0;
	routes_compute(&f, &u);
	assert_int_equal(u.n, 2);
	assert_false(routes_equal(&t, &u));
	/* no record of ourselves: no routes */
	f.self = 0x99;
	routes_compute(&f, &u);
	assert_int_equal(u.n, 0);
}

/* issue 46, docs/sweep.md "Trust": the chain A-B-C-D, and impostors of C held at A and at D */
static void test_trust(void **state)
{
	static const uint64_t g4[] = { 0x40, 0x10, 0x30, 0x20 };	/* A B C D */
	static Fabric f;
	HostRecord *a;

	(void)state;
	topo(&f, g4, 4, 0, chain);
	/* an impostor claiming C cabled to A: A's record lists C, C's own does not list A */
	a = fabric_find(&f, 0x40);
	a->neigh[a->n_neigh++] = 0x30;
	assert_int_equal(fabric_trust(&f, 0x30), FABRIC_TRUST_HOLD);
	assert_int_equal(fabric_trust(&f, 0x40), FABRIC_TRUST_HOLD);	/* ourselves: never */
	/* the real C cabled to A (C's record lists A): confirmed; from D, a link claiming C still
	 * held (C lists B and A, not D): two claims of C, only the one C names wins */
	fabric_find(&f, 0x30)->neigh[fabric_find(&f, 0x30)->n_neigh++] = 0x40;
	assert_int_equal(fabric_trust(&f, 0x30), FABRIC_TRUST_CONFIRM);
	topo(&f, g4, 4, 3, chain);
	fabric_find(&f, 0x30)->neigh[fabric_find(&f, 0x30)->n_neigh++] = 0x40;
	assert_int_equal(fabric_trust(&f, 0x30), FABRIC_TRUST_CONFIRM);	/* D-C: a real one */
	assert_int_equal(fabric_trust(&f, 0x10), FABRIC_TRUST_HOLD);	/* B does not list D */
	/* a GUID nobody in the fabric has: nothing to take over (first use) */
	assert_int_equal(fabric_trust(&f, 0x77), FABRIC_TRUST_FIRST_USE);
	/* C's record expired (gone for DeadSec): the same */
	topo(&f, g4, 4, 0, chain);
	f.hosts[2] = f.hosts[--f.n_hosts];
	assert_int_equal(fabric_trust(&f, 0x30), FABRIC_TRUST_FIRST_USE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec_roundtrip),
		cmocka_unit_test(test_codec_hostile),
		cmocka_unit_test(test_fragment),
		cmocka_unit_test(test_election),
		cmocka_unit_test(test_pause),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_forged),
		cmocka_unit_test(test_map_expire),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_pool6),
		cmocka_unit_test(test_allocate),
		cmocka_unit_test(test_map_file),
		cmocka_unit_test(test_map_save_symlink),
		cmocka_unit_test(test_map_hostile),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_trust),
	};

	return cmocka_run_group_tests_name("tbrdmad_fabric", tests, NULL, NULL);
}
