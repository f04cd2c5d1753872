// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of rail negotiation (negotiate.c): RAILS codec round trip, hostile input (truncated,
 * wrong version/type, huge counts, repeated ids, random bytes), and the agreement rule. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fabric.h"
#include "model.h"
#include "negotiate.h"

static RailsMsg msg(uint64_t sender, uint32_t max_frame, unsigned n, const RailAdv *rails)
{
	RailsMsg m;

	memset(&m, 0, sizeof(m));
	m.version = RAILS_VERSION;
	m.sender = sender;
	m.link = 3;
	m.max_frame = max_frame;
	m.n_rails = (uint8_t)n;
	if (n)
		memcpy(m.rails, rails, n * sizeof(*rails));
	return m;
}

static void test_roundtrip(void **state)
{
	RailAdv r[3] = { { 0, RAIL_ADV_UP | RAIL_ADV_E2E, 2, 4096 }, { 5, RAIL_ADV_CUT, 1, 9000 },
			 { 15, 0, 0, 0 } };
	RailsMsg a = msg(0x0200000000000001ULL, 8192, 3, r), b;
	uint8_t buf[RAILS_MSG_LEN_MAX];
	char why[128];
	int len;

	(void)state;
	a.best_lane_mbps = 20000;
	len = rails_encode(&a, buf, sizeof(buf));
	assert_int_equal(len, RAILS_HDR_LEN + 3 * RAILS_ENTRY_LEN);
	assert_int_equal(buf[5], SWEEP_TYPE_RAILS);
	assert_int_equal(rails_decode(&b, buf, (size_t)len, why, sizeof(why)), 0);
	assert_true(b.sender == a.sender);
	assert_int_equal(b.link, 3);
	assert_int_equal(b.max_frame, 8192);
	assert_int_equal(b.best_lane_mbps, 20000);
	assert_int_equal(b.n_rails, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(b.rails[i].id, r[i].id);
		assert_int_equal(b.rails[i].flags, r[i].flags);
		assert_int_equal(b.rails[i].lanes, r[i].lanes);
		assert_int_equal(b.rails[i].max_frame, r[i].max_frame);
	}
	/* a sender from before best_lane_mbps left bytes 24..27 zero: unknown */
	memset(buf + 24, 0, 4);
	assert_int_equal(rails_decode(&b, buf, (size_t)len, why, sizeof(why)), 0);
	assert_int_equal(b.best_lane_mbps, 0);
	/* zero rails is a valid advertisement (a link whose rails are all gone) */
	a.n_rails = 0;
	len = rails_encode(&a, buf, sizeof(buf));
	assert_int_equal(len, RAILS_HDR_LEN);
	assert_int_equal(rails_decode(&b, buf, (size_t)len, why, sizeof(why)), 0);
	/* encode refuses what decode would refuse */
	a.n_rails = 17;
	assert_int_equal(rails_encode(&a, buf, sizeof(buf)), -EMSGSIZE);
	a = msg(1, 0, 2, (RailAdv[]){ { 1, 0, 0, 0 }, { 1, 0, 0, 0 } });
	assert_int_equal(rails_encode(&a, buf, sizeof(buf)), -EINVAL);
	a = msg(1, 0, 1, (RailAdv[]){ { 16, 0, 0, 0 } });
	assert_int_equal(rails_encode(&a, buf, sizeof(buf)), -EINVAL);
	a = msg(1, 0, 2, r);
	assert_int_equal(rails_encode(&a, buf, RAILS_HDR_LEN + 8), -EMSGSIZE);
}

static void test_hostile(void **state)
{
	RailAdv r[2] = { { 0, RAIL_ADV_UP, 1, 4096 }, { 1, RAIL_ADV_UP, 1, 4096 } };
	RailsMsg a = msg(0x77, 4096, 2, r), b;
	uint8_t good[RAILS_MSG_LEN_MAX], buf[RAILS_MSG_LEN_MAX + 64];
	char why[128];
	int len = rails_encode(&a, good, sizeof(good));

	(void)state;
	assert_true(len > 0);
	/* every truncation, and one byte too many */
	for (int n = 0; n < len; n++)
		assert_int_equal(rails_decode(&b, good, (size_t)n, why, sizeof(why)), -EBADMSG);
	memcpy(buf, good, (size_t)len);
	buf[len] = 0;
	assert_int_equal(rails_decode(&b, buf, (size_t)len + 1, why, sizeof(why)), -EBADMSG);
#define MUTATE(off, val, err) do { \
		memcpy(buf, good, (size_t)len); \
		buf[off] = (val); \
		assert_int_equal(rails_decode(&b, buf, (size_t)len, why, sizeof(why)), err); \
	} while (0)
	MUTATE(0, 'X', -EBADMSG);			/* magic */
	MUTATE(4, 2, -EPROTONOSUPPORT);			/* sweep header version */
	MUTATE(5, 1, -EBADMSG);				/* a STATE message, not RAILS */
	MUTATE(6, 2, -EPROTONOSUPPORT);			/* RAILS version 2 */
	MUTATE(6, 0, -EPROTONOSUPPORT);
	MUTATE(7, 255, -EBADMSG);			/* huge count */
	MUTATE(7, 17, -EBADMSG);
	MUTATE(7, 3, -EBADMSG);				/* count larger than the bytes */
	MUTATE(7, 1, -EBADMSG);				/* smaller */
	MUTATE(RAILS_HDR_LEN, 200, -EBADMSG);		/* rail id out of range */
	MUTATE(RAILS_HDR_LEN + RAILS_ENTRY_LEN, 0, -EBADMSG);	/* id 0 twice */
	memcpy(buf, good, (size_t)len);
	memset(buf + 8, 0, 8);				/* sender 0 */
	assert_int_equal(rails_decode(&b, buf, (size_t)len, why, sizeof(why)), -EBADMSG);
	/* unknown flag bits are ignored (forward compatible) */
	MUTATE(RAILS_HDR_LEN + 1, 0xf9, 0);
	assert_int_equal(b.rails[0].flags, 0xf9);
	/* random bytes with a valid prefix never crash, and never decode past the buffer */
	srand(6);
	for (int i = 0; i < 200000; i++) {
		size_t n = (size_t)(rand() % (int)sizeof(buf));

		for (size_t j = 0; j < n; j++)
			buf[j] = (uint8_t)rand();
		if (n >= 8 && (i & 1)) {
			memcpy(buf, good, 7);
			buf[7] = (uint8_t)(rand() % 18);
		}
		if (rails_decode(&b, buf, n, why, sizeof(why)) == 0) {
			assert_true(b.n_rails <= RAILS_MAX);
			assert_int_equal(n, RAILS_HDR_LEN + b.n_rails * RAILS_ENTRY_LEN);
		}
	}
	/* a NULL why is fine */
	assert_int_equal(rails_decode(&b, good, 3, NULL, 0), -EBADMSG);
}

static void test_agree(void **state)
{
	RailsMsg a = msg(1, 9000, 3, (RailAdv[]){ { 0, RAIL_ADV_UP | RAIL_ADV_E2E, 2, 4096 },
		{ 1, RAIL_ADV_UP | RAIL_ADV_E2E, 2, 0 }, { 2, RAIL_ADV_UP, 1, 2048 } });
	RailsMsg b = msg(2, 0, 2, (RailAdv[]){ { 1, RAIL_ADV_E2E, 1, 8192 },
		{ 0, RAIL_ADV_UP | RAIL_ADV_E2E, 0, 1500 } });
	RailsMsg none = msg(3, 0, 0, NULL);
	RailsAgreed x, y;

	(void)state;
	rails_agree(&a, &b, &x);
	assert_int_equal(x.n_rails, 2);			/* rail 2 only at a */
	assert_int_equal(x.mask, 0x3);
	assert_int_equal(x.n_up, 1);			/* rail 1 is down at b */
	assert_int_equal(x.max_frame, 1500);		/* min over links and agreed rails */
	assert_true(x.e2e);				/* rails 0 and 1 E2E at both ends */
	assert_int_equal(x.lanes, 2 + 1);		/* rail 0: b unknown -> 2; rail 1: min 1 */
	rails_agree(&b, &a, &y);			/* symmetric */
	assert_true(rails_agreed_equal(&x, &y));
	/* one end without E2E on one agreed rail: no E2E */
	a.rails[1].flags = RAIL_ADV_UP;
	rails_agree(&a, &b, &x);
	assert_false(x.e2e);
	/* rail 2 at b too: agreed, and its 2048 does not lower 1500 */
	b.rails[b.n_rails++] = (RailAdv){ 2, RAIL_ADV_UP, 4, 0 };
	rails_agree(&a, &b, &x);
	assert_int_equal(x.n_rails, 3);
	assert_int_equal(x.n_up, 2);
	assert_int_equal(x.mask, 0x7);
	assert_int_equal(x.max_frame, 1500);
	assert_int_equal(x.lanes, 2 + 1 + 1);
	/* nothing in common: no rails, no E2E; unknown limits stay unknown */
	rails_agree(&a, &none, &x);
	assert_int_equal(x.n_rails, 0);
	assert_int_equal(x.mask, 0);
	assert_false(x.e2e);
	assert_int_equal(x.max_frame, 9000);
	rails_agree(&none, &none, &x);
	assert_int_equal(x.max_frame, 0);
	/* sixteen rails of 16 lanes each: lanes saturate at 255, no overflow */
	for (unsigned i = 0; i < RAILS_MAX; i++)
		a.rails[i] = b.rails[i] = (RailAdv){ (uint8_t)i, 0, 16, 0 };
	a.n_rails = b.n_rails = RAILS_MAX;
	rails_agree(&a, &b, &x);
	assert_int_equal(x.n_rails, 16);
	assert_int_equal(x.mask, 0xffff);
	assert_int_equal(x.lanes, 255);
}

/* model_flag_slow: a tb cable is slow below what both ends showed, not below this host's best */
static void add_rail(Model *m, const char *dev, uint32_t link, uint64_t peer, const char *backend,
		     uint32_t lane_mbps, uint32_t lanes)
{
	Rail *r = model_add_rail(m);

	assert_non_null(r);
	snprintf(r->device, sizeof(r->device), "%s", dev);
	r->link = link;
	r->peer_guid = peer;
	snprintf(r->backend, sizeof(r->backend), "%s", backend);
	r->lane_mbps = lane_mbps;
	r->lanes = lanes;
	r->slow = true;		/* every call sets it */
}

/* the peers' adverts by link: link 1 (peer B) 10 Gb/s per lane, link 2 (peer C) unknown, link 3
 * (peer D) 20 */
static uint32_t peer_best(void *ctx, const Rail *r)
{
	const uint32_t *by_link = ctx;

	return r->link < 4 ? by_link[r->link] : 0;
}

static void test_flag_slow(void **state)
{
	uint32_t adverts[4] = { 0, 10000, 0, 20000 };
	Model m = { 0 };

	(void)state;
	add_rail(&m, "tbrdma0", 1, 0xb, "tb", 10000, 2);	/* to B: B's best is 10 */
	add_rail(&m, "tbrdma0", 2, 0xc, "tb", 20000, 2);	/* to C: this host does 20 */
	add_rail(&m, "tbrdma0", 3, 0xd, "tb", 10000, 2);	/* to D: D showed 20 too */
	add_rail(&m, "tbrdma0", 3, 0xd, "tb", 20000, 1);	/* one lane */
	add_rail(&m, "tbrdma0", 4, 0xe, "emu", 0, 0);
	add_rail(&m, "tbrdma1", 1, 0xf, "tb", 10000, 2);	/* another device: its own best */
	assert_int_equal(model_best_lane_mbps(&m, "tbrdma0"), 20000);
	model_flag_slow(&m, peer_best, adverts);
	assert_false(m.rails[0].slow);	/* B advertised 10: both ends do 10, the cable is not slow */
	assert_false(m.rails[1].slow);
	assert_true(m.rails[2].slow);	/* both ends showed 20 */
	assert_int_equal(m.rails[0].expect_mbps, 10000);
	assert_int_equal(m.rails[2].expect_mbps, 20000);
	assert_int_equal(m.rails[4].expect_mbps, 0);
	assert_true(m.rails[3].slow);	/* one lane, whatever the speed */
	assert_false(m.rails[4].slow);	/* not Thunderbolt */
	assert_false(m.rails[5].slow);
	/* no adverts (no lookup, or a peer daemon from before them): this host's best alone, as
	 * before, so the cable to B is flagged */
	model_flag_slow(&m, NULL, NULL);
	assert_true(m.rails[0].slow);
	assert_int_equal(m.rails[0].expect_mbps, 20000);
	assert_false(m.rails[1].slow);
	assert_true(m.rails[2].slow);
	/* the peer advertises more than this host did: this host's best is the bound */
	adverts[1] = 40000;
	model_flag_slow(&m, peer_best, adverts);
	assert_true(m.rails[0].slow);
	m.rails[1].lane_mbps = 10000;	/* now no cable here trained above 10 */
	m.rails[3].lane_mbps = 10000;
	model_flag_slow(&m, peer_best, adverts);
	assert_false(m.rails[0].slow);
	assert_false(m.rails[2].slow);
	model_clear(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_agree),
		cmocka_unit_test(test_flag_slow),
	};

	return cmocka_run_group_tests_name("tbrdmad_negotiate", tests, NULL, NULL);
}
