// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the fabric authentication (auth.c, issue 13 item 11): key file checks, the
 * envelope, HMAC with another key or none, tampering, another receiver, replay and its window;
 * issue 46: the sender under the MAC, replay state only for verified senders, no eviction that
 * reopens a replay, epochs: no sequence number locks a sender out. */
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

#include "auth.h"

#define REAL 1700000000000000ULL
#define SELF 0x1111ULL
#define PEER 0x2222ULL

static char dir[] = "/tmp/test_authXXXXXX";

static int key_file(const char *name, const char *key, mode_t mode, char *path, size_t n)
{
	FILE *f;

	snprintf(path, n, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(key, f);
	fclose(f);
	return chmod(path, mode);
}

static void load(Auth *a, const char *key)
{
	char path[256], why[160];

	assert_int_equal(key_file("k", key, 0600, path, sizeof(path)), 0);
	assert_int_equal(auth_key_load(a, path, why, sizeof(why)), 0);
}

static void test_key_file(void **state)
{
	static Auth a;
	char path[256], link[300], why[160];

	(void)state;
	assert_int_equal(key_file("ok", "0123456789abcdef0123\n", 0600, path, sizeof(path)), 0);
	assert_int_equal(auth_key_load(&a, path, why, sizeof(why)), 0);
	assert_int_equal(a.key_len, 20);		/* the newline is not part of it */
	assert_int_equal(chmod(path, 0640), 0);	/* group-readable is the admin's choice */
	assert_int_equal(auth_key_load(&a, path, why, sizeof(why)), 0);
	assert_int_equal(chmod(path, 0644), 0);	/* world-readable: refused */
	assert_int_equal(auth_key_load(&a, path, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "0644"));
	assert_int_equal(a.key_len, 0);
	assert_int_equal(chmod(path, 0602), 0);	/* world-writable: refused */
	assert_int_equal(auth_key_load(&a, path, why, sizeof(why)), -EPERM);
	assert_int_equal(chmod(path, 0600), 0);
	snprintf(link, sizeof(link), "%s/link", dir);	/* a symlink is not followed */
	assert_int_equal(symlink(path, link), 0);
	assert_true(auth_key_load(&a, link, why, sizeof(why)) < 0);
	unlink(link);
	assert_int_equal(key_file("short", "short key", 0600, path, sizeof(path)), 0);
	assert_int_equal(auth_key_load(&a, path, why, sizeof(why)), -EINVAL);
	unlink(path);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(auth_key_load(&a, path, why, sizeof(why)), -ENOENT);
}

static void test_wrap_unwrap(void **state)
{
	static Auth tx, rx, other;
	static const uint8_t msg[] = "TBSW\x01\x01 a sweep datagram";
	uint8_t buf[512], bad[512];
	const uint8_t *in;
	size_t in_len;
	char why[160];
	int n;

	(void)state;
	load(&tx, "the fabric key of this test");
	load(&rx, "the fabric key of this test");
	load(&other, "another key, not the fabric's");
	n = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), buf, sizeof(buf), REAL);
	assert_int_equal(n, (int)sizeof(msg) + AUTH_OVERHEAD);
	assert_memory_equal(buf, "TBSA\x02", 5);
	assert_int_equal(auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), buf, sizeof(msg) + 10, REAL),
			 -EMSGSIZE);
	n = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), buf, sizeof(buf), REAL);
	/* another key: refused, and does not move the replay window */
	assert_int_equal(auth_unwrap(&other, SELF, PEER, buf, (size_t)n, &in, &in_len, REAL, why,
				     sizeof(why)), -EACCES);
	/* no envelope (a daemon without a key) */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, msg, sizeof(msg), &in, &in_len, REAL, why,
				     sizeof(why)), -EBADMSG);
	/* every single flipped bit is refused */
	for (int i = 0; i < n * 8; i++) {
		memcpy(bad, buf, (size_t)n);
		bad[i / 8] ^= (uint8_t)(1 << (i % 8));
		assert_true(auth_unwrap(&rx, SELF, PEER, bad, (size_t)n, &in, &in_len, REAL, why,
					sizeof(why)) < 0);
	}
	/* truncated */
	assert_true(auth_unwrap(&rx, SELF, PEER, buf, (size_t)n - 1, &in, &in_len, REAL, why,
				sizeof(why)) < 0);
	/* addressed to another host */
	assert_int_equal(auth_unwrap(&rx, 0x3333, PEER, buf, (size_t)n, &in, &in_len, REAL, why,
				     sizeof(why)), -EXDEV);
	/* the right one */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, buf, (size_t)n, &in, &in_len, REAL, why,
				     sizeof(why)), 0);
	assert_int_equal(in_len, sizeof(msg));
	assert_memory_equal(in, msg, sizeof(msg));
	/* replayed */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, buf, (size_t)n, &in, &in_len, REAL, why,
				     sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "replayed"));
}

static void test_replay_window(void **state)
{
	static Auth tx, rx;
	static uint8_t saved[100][128];
	static int len[100];
	static const uint8_t msg[] = "RAILS";
	const uint8_t *in;
	size_t in_len;
	char why[160];

	(void)state;
	load(&tx, "the fabric key of this test");
	load(&rx, "the fabric key of this test");
	for (int i = 0; i < 100; i++)
		len[i] = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), saved[i], sizeof(saved[i]), REAL);
	/* reordered within the window: taken once each */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[70], (size_t)len[70], &in, &in_len, REAL,
				     why, sizeof(why)), 0);
	for (int i = 69; i >= 10; i--)
		assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[i], (size_t)len[i], &in, &in_len,
					     REAL, why, sizeof(why)), 0);
	for (int i = 70; i >= 10; i--)
		assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[i], (size_t)len[i], &in, &in_len,
					     REAL, why, sizeof(why)), -ESTALE);
	/* older than the window */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[5], (size_t)len[5], &in, &in_len, REAL,
				     why, sizeof(why)), -ESTALE);
	/* a jump of more than the window forgets it */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[99], (size_t)len[99], &in, &in_len, REAL,
				     why, sizeof(why)), 0);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[71], (size_t)len[71], &in, &in_len, REAL,
				     why, sizeof(why)), 0);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[34], (size_t)len[34], &in, &in_len, REAL,
				     why, sizeof(why)), -ESTALE);
	/* a receiver that restarted takes a sender's first datagram only if it is recent */
	memset(rx.peers, 0, sizeof(rx.peers));
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[80], (size_t)len[80], &in, &in_len,
				     REAL + AUTH_SKEW_USEC + 1000, why, sizeof(why)), -ESTALE);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[80], (size_t)len[80], &in, &in_len,
				     REAL - AUTH_SKEW_USEC - 1000, why, sizeof(why)), -ESTALE);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, saved[80], (size_t)len[80], &in, &in_len,
				     REAL + 1000, why, sizeof(why)), 0);
	/* the sender's timestamps keep increasing even if its clock steps back */
	uint64_t before = tx.tx_time;

	auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), saved[0], sizeof(saved[0]), REAL - 5000000);
	assert_int_equal(tx.tx_time, before + 1);
}

#define OTHER 0x3333ULL

/* issue 46 (1): the MAC covers the sender. A datagram of PEER re-labelled as another sender's
 * (replayed on another link, whose peer is OTHER) is refused, whether or not PEER's own copy was
 * taken; OTHER gains no replay state from it. */
static void test_sender_bound(void **state)
{
	static Auth tx, rx;
	static const uint8_t msg[] = "STATE of PEER";
	uint8_t a[256], b[256];
	const uint8_t *in;
	size_t in_len;
	char why[160];
	int na, nb;

	(void)state;
	load(&tx, "the fabric key of this test");
	load(&rx, "the fabric key of this test");
	na = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), a, sizeof(a), REAL);
	nb = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), b, sizeof(b), REAL);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, a, (size_t)na, &in, &in_len, REAL, why,
				     sizeof(why)), 0);
	/* taken from PEER, then re-labelled as OTHER's */
	assert_int_equal(auth_unwrap(&rx, SELF, OTHER, a, (size_t)na, &in, &in_len, REAL, why,
				     sizeof(why)), -EXDEV);
	assert_non_null(strstr(why, "not the link's peer"));
	/* never taken, first seen as OTHER's: refused, and PEER's copy is still taken */
	assert_int_equal(auth_unwrap(&rx, SELF, OTHER, b, (size_t)nb, &in, &in_len, REAL, why,
				     sizeof(why)), -EXDEV);
	/* its sender field rewritten to OTHER: the MAC covers it */
	b[8 + 6] = OTHER >> 8;
	b[8 + 7] = OTHER & 0xff;
	assert_int_equal(auth_unwrap(&rx, SELF, OTHER, b, (size_t)nb, &in, &in_len, REAL, why,
				     sizeof(why)), -EACCES);
	b[8 + 6] = PEER >> 8;
	b[8 + 7] = PEER & 0xff;
	for (size_t i = 0; i < AUTH_PEERS; i++)	/* OTHER got no replay state */
		assert_true(rx.peers[i].sender != OTHER);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, b, (size_t)nb, &in, &in_len, REAL, why,
				     sizeof(why)), 0);
}

/* issue 46 (2): replay state only after the MAC and the sender verified, and eviction cannot
 * reopen a replay window. 200 copies of a genuine datagram re-labelled with 200 other senders
 * (the old code took an LRU slot for each and evicted PEER), then PEER's first datagram again:
 * refused. */
static void test_replay_eviction(void **state)
{
	static Auth tx, rx;
	static const uint8_t msg[] = "RAILS";
	uint8_t d0[256], d1[256];
	const uint8_t *in;
	size_t in_len;
	char why[160];
	int n0, n1;

	(void)state;
	load(&tx, "the fabric key of this test");
	load(&rx, "the fabric key of this test");
	n0 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d0, sizeof(d0), REAL);
	n1 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d1, sizeof(d1), REAL);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, REAL, why,
				     sizeof(why)), 0);
	for (uint64_t i = 0; i < 200; i++)
		auth_unwrap(&rx, SELF, 0x5000 + i, d1, (size_t)n1, &in, &in_len, REAL, why,
			    sizeof(why));
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, REAL + 1000,
				     why, sizeof(why)), -ESTALE);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d1, (size_t)n1, &in, &in_len, REAL + 1000,
				     why, sizeof(why)), 0);
	/* genuine senders (their own GUID in their envelopes) fill the table; one more, while
	 * every one was heard within AUTH_SKEW_USEC, is refused and evicts nobody */
	static Auth many;
	uint8_t d[256];
	int n;

	load(&many, "the fabric key of this test");
	for (uint64_t i = 1; i < AUTH_PEERS; i++) {
		n = auth_wrap(&many, 0x5000 + i, SELF, msg, sizeof(msg), d, sizeof(d), REAL + 10 + i);
		assert_int_equal(auth_unwrap(&rx, SELF, 0x5000 + i, d, (size_t)n, &in, &in_len,
					     REAL + 1000, why, sizeof(why)), 0);
	}
	n = auth_wrap(&many, 0x6000, SELF, msg, sizeof(msg), d, sizeof(d), REAL + 2000);
	assert_int_equal(auth_unwrap(&rx, SELF, 0x6000, d, (size_t)n, &in, &in_len, REAL + 2000,
				     why, sizeof(why)), -ENOSPC);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, REAL + 2000,
				     why, sizeof(why)), -ESTALE);
	/* AUTH_SKEW_USEC later PEER (the oldest) is evictable and goes for 0x6000, whose datagram,
	 * timestamped now, is taken; PEER's old datagrams stay refused: too old */
	uint64_t later = REAL + 1000 + AUTH_SKEW_USEC + 1;

	n = auth_wrap(&many, 0x6000, SELF, msg, sizeof(msg), d, sizeof(d), later);
	assert_int_equal(auth_unwrap(&rx, SELF, 0x6000, d, (size_t)n, &in, &in_len, later, why,
				     sizeof(why)), 0);
	for (size_t i = 0; i < AUTH_PEERS; i++)
		assert_true(rx.peers[i].sender != PEER);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, later, why,
				     sizeof(why)), -ESTALE);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d1, (size_t)n1, &in, &in_len, later, why,
				     sizeof(why)), -ESTALE);
	/* and PEER itself, sending now, gets the next evictable slot */
	n0 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d0, sizeof(d0), later + 1);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, later + 1,
				     why, sizeof(why)), 0);
}

/* issue 46 (3): no sequence number locks a sender out. A sender whose clock ran an hour ahead
 * (or whose counter reached 2^64) and that then restarts with its clock right, and a counter
 * that wraps, are taken again; what they sent before is not. */
static void test_seq_lockout(void **state)
{
	static Auth tx, tx2, rx;
	static const uint8_t msg[] = "STATE";
	uint8_t d0[256], d1[256], d2[256], d3[256];
	const uint8_t *in;
	size_t in_len;
	char why[160];
	int n0, n1, n2, n3;

	(void)state;
	load(&tx, "the fabric key of this test");
	load(&rx, "the fabric key of this test");
	n0 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d0, sizeof(d0), REAL);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, REAL, why,
				     sizeof(why)), 0);
	/* the sender's clock an hour ahead: refused (not taken as the new top) */
	n1 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d1, sizeof(d1), REAL + 3600000000ULL);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d1, (size_t)n1, &in, &in_len, REAL + 1000,
				     why, sizeof(why)), -ESTALE);
	/* restarted with its clock right: taken */
	load(&tx2, "the fabric key of this test");
	n2 = auth_wrap(&tx2, PEER, SELF, msg, sizeof(msg), d2, sizeof(d2), REAL + 2000000);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d2, (size_t)n2, &in, &in_len, REAL + 2000000,
				     why, sizeof(why)), 0);
	/* a counter at 2^64 - 1: a jump that far is refused, and the next datagram, in a new
	 * epoch, is taken */
	tx2.tx_seq = UINT64_MAX - 1;
	n1 = auth_wrap(&tx2, PEER, SELF, msg, sizeof(msg), d1, sizeof(d1), REAL + 3000000);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d1, (size_t)n1, &in, &in_len, REAL + 3000000,
				     why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "too far ahead"));
	n3 = auth_wrap(&tx2, PEER, SELF, msg, sizeof(msg), d3, sizeof(d3), REAL + 4000000);
	assert_memory_not_equal(d1 + 24, d3 + 24, 8);		/* another epoch */
	assert_memory_equal(d3 + 32, "\0\0\0\0\0\0\0\1", 8);	/* from 1 */
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d3, (size_t)n3, &in, &in_len, REAL + 4000000,
				     why, sizeof(why)), 0);
	/* and a restart after it: taken; nothing sent before is taken again */
	load(&tx, "the fabric key of this test");
	n1 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d1, sizeof(d1), REAL + 5000000);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d1, (size_t)n1, &in, &in_len, REAL + 5000000,
				     why, sizeof(why)), 0);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d0, (size_t)n0, &in, &in_len, REAL + 5000000,
				     why, sizeof(why)), -ESTALE);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d2, (size_t)n2, &in, &in_len, REAL + 5000000,
				     why, sizeof(why)), -ESTALE);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d3, (size_t)n3, &in, &in_len, REAL + 5000000,
				     why, sizeof(why)), -ESTALE);
	/* the furthest a timestamp may be ahead (a key holder, or a clock that then steps back)
	 * holds a restarted sender back only until our clock passes it */
	uint64_t ahead = REAL + 6000000 + AUTH_SKEW_USEC;

	n1 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d1, sizeof(d1), ahead);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d1, (size_t)n1, &in, &in_len, REAL + 6000000,
				     why, sizeof(why)), 0);
	load(&tx, "the fabric key of this test");
	n2 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d2, sizeof(d2), REAL + 7000000);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d2, (size_t)n2, &in, &in_len, REAL + 7000000,
				     why, sizeof(why)), -ESTALE);
	n2 = auth_wrap(&tx, PEER, SELF, msg, sizeof(msg), d2, sizeof(d2), ahead + 1);
	assert_int_equal(auth_unwrap(&rx, SELF, PEER, d2, (size_t)n2, &in, &in_len, ahead + 1, why,
				     sizeof(why)), 0);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_wrap_unwrap),
		cmocka_unit_test(test_replay_window),
		cmocka_unit_test(test_sender_bound),
		cmocka_unit_test(test_replay_eviction),
		cmocka_unit_test(test_seq_lockout),
	};

	return cmocka_run_group_tests_name("tbrdmad_auth", tests, setup, teardown);
}
