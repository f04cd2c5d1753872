// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_auth.c - authenticated links (kernel/core/tbr_auth.c, the auth words
 * of tbr_nego.c and the auth part of tbr_eth_wire.c's HELLO): the right key
 * accepted, a wrong key refused, a replayed HELLO (or reply) refused, a peer
 * without a key refused by one that has one, key rotation with a grace
 * period. HMAC-SHA256 from libgcrypt stands in for the kernel's crypto API.
 */
#include <gcrypt.h>

#include "tcommon.h"
#include "tbr_auth.h"
#include "tbr_eth_wire.h"
#include "tbr_nego.h"

/*
 * One host's keys: the current one and, in its grace period, the previous;
 * @sign: the slot it signs with (the previous one early in the grace).
 */
struct keys {
	const char *key[TBR_AUTH_SLOTS];	/* NULL: none */
	unsigned int sign;
};

static int host_mac(void *ctx, unsigned int slot, const u8 *data, u32 len,
		    u8 *out)
{
	struct keys *k = ctx;
	gcry_md_hd_t h;

	if (slot == TBR_AUTH_SIGN)
		slot = k->sign;
	if (slot >= TBR_AUTH_SLOTS || !k->key[slot])
		return -ENOKEY;
	if (gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC))
		return -ENOMEM;
	gcry_md_setkey(h, k->key[slot], strlen(k->key[slot]));
	gcry_md_write(h, data, len);
	memcpy(out, gcry_md_read(h, GCRY_MD_SHA256), TBR_AUTH_MAC_LEN);
	gcry_md_close(h);
	return 0;
}

static const struct tbr_auth_ops host_ops = { .mac = host_mac };

#define KEY1	"fabric-key-one-0123456789"
#define KEY2	"fabric-key-two-0123456789"

static struct keys k_one = { .key = { KEY1, NULL } };
static struct keys k_two = { .key = { KEY2, NULL } };
static struct keys k_rot = { .key = { KEY2, KEY1 } };	/* rotated from KEY1, late in grace */
static struct keys k_rot_early = { .key = { KEY2, KEY1 }, .sign = TBR_AUTH_PREV };	/* early: signs KEY1 */
static struct keys k_none = { .key = { NULL, NULL } };

static struct tbr_eth_hdr h_unused;	/* a header the test does not look at */

static struct tbr_auth keyring(struct keys *k)
{
	struct tbr_auth a = { .ops = &host_ops, .ctx = k };

	return a;
}

/* ---- Thunderbolt negotiation ---------------------------------------------- */

static void nego_hello(struct tbr_nego_msg *m, u8 type, u64 guid)
{
	unsigned int i;

	tbr_nego_init(m, type);
	m->seq = 3;
	m->guid = guid;
	for (i = 0; i < 16; i++) {
		m->initiator[i] = (u8)(0xa0 + i);
		m->target[i] = (u8)(0xb0 + i);
	}
	m->caps = TBR_NEGO_CAP_E2E;
	m->rails = 1;
	m->nhops = 1;
	m->tx_ring = 256;
	m->rx_ring = 256;
	m->frame_size = 4096;
	m->instance = 0x1234;
	m->hopid[0] = 8;
}

/*
 * The replier's answer to a HELLO with nonce @challenge, signed with @k
 * (NULL: it holds no key), encoded into @w. Returns the words.
 */
static int nego_reply(u32 *w, u64 challenge, struct keys *k, u64 guid)
{
	struct tbr_auth a = keyring(k ? k : &k_none);
	struct tbr_nego_msg r;
	int n;

	nego_hello(&r, TBR_NEGO_HELLO_REPLY, guid);
	r.auth = true;
	r.auth_flags = k ? TBR_NEGO_AUTH_MAC : 0;
	r.nonce = 0x5555aaaa0000ffffull;
	r.peer_nonce = challenge;
	n = tbr_nego_encode(&r, w, TBR_NEGO_MAX_WORDS);
	assert_int_equal(n, TBR_NEGO_AUTH_WORDS);
	if (k)
		assert_int_equal(tbr_nego_sign(&a, w, n), 0);
	return n;
}

static int nego_check(const u32 *w, int n, struct keys *ours, u64 nonce)
{
	struct tbr_auth a = keyring(ours);
	struct tbr_nego_msg d;

	assert_int_equal(tbr_nego_decode(w, n, &d), 0);
	return tbr_nego_verify(&a, w, n, &d, nonce);
}

static void test_nego_layout(void **state)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_MAX_WORDS];

	assert_int_equal(TBR_NEGO_AUTH_WORDS, 40);
	nego_hello(&m, TBR_NEGO_HELLO, 0x1111);
	m.auth = true;
	m.auth_flags = TBR_NEGO_AUTH_MAC;
	m.nonce = 0x0102030405060708ull;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), -EINVAL);
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_MAX_WORDS), 40);
	assert_int_equal(w[1] & 0xff, 40);
	assert_int_equal(w[27], TBR_NEGO_AUTH_MAC);
	assert_int_equal(w[28], 0x01020304);
	assert_int_equal(w[29], 0x05060708);
	assert_int_equal(w[30], 0);
	assert_int_equal(tbr_nego_decode(w, 40, &d), 0);
	assert_true(d.auth);
	assert_int_equal(d.nonce, m.nonce);
	/* a declared length past what arrived: malformed */
	assert_int_equal(tbr_nego_decode(w, 39, &d), -EBADMSG);
	/* without a key: the old fixed size, no auth words */
	m.auth = false;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_MAX_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
	assert_false(d.auth);
	/* the status a keyed replier refuses a keyless HELLO with */
	nego_hello(&m, TBR_NEGO_HELLO_REPLY, 0x1111);
	m.status = TBR_NEGO_ST_AUTH;
	assert_int_equal(tbr_nego_encode(&m, w, TBR_NEGO_WORDS), TBR_NEGO_WORDS);
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), 0);
	assert_int_equal(d.status, TBR_NEGO_ST_AUTH);
	w[3] = TBR_NEGO_ST_AUTH + 1;
	assert_int_equal(tbr_nego_decode(w, TBR_NEGO_WORDS, &d), -ERANGE);
}

static void test_nego_right_key(void **state)
{
	u32 w[TBR_NEGO_MAX_WORDS];
	int n = nego_reply(w, 0xc0ffee, &k_one, 0x2222);

	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffee), 0);
}

static void test_nego_wrong_key(void **state)
{
	u32 w[TBR_NEGO_MAX_WORDS];
	int n = nego_reply(w, 0xc0ffee, &k_two, 0x2222);

	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffee), -EKEYREJECTED);
	/* the right key, but a word changed after signing (the GUID claimed) */
	n = nego_reply(w, 0xc0ffee, &k_one, 0x2222);
	w[5] ^= 1;
	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffee), -EKEYREJECTED);
	/* ... or the instance */
	w[5] ^= 1;
	w[16] ^= 1;
	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffee), -EKEYREJECTED);
}

static void test_nego_replay(void **state)
{
	u32 w[TBR_NEGO_MAX_WORDS];
	int n = nego_reply(w, 0xc0ffee, &k_one, 0x2222);

	/* recorded, played back to our next HELLO (a new nonce) */
	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffef), -ESTALE);
	/* the nonce answered rewritten to ours: the MAC no longer holds */
	w[31] = 0xc0ffef;
	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffef), -EKEYREJECTED);
}

static void test_nego_no_key(void **state)
{
	struct tbr_nego_msg m, d;
	u32 w[TBR_NEGO_MAX_WORDS];
	int n;

	/* a keyless replier answers at the HELLO's size, flags 0: refused */
	n = nego_reply(w, 0xc0ffee, NULL, 0x2222);
	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffee), -ENOKEY);
	/* an older replier: the fixed size, no auth words */
	nego_hello(&m, TBR_NEGO_HELLO_REPLY, 0x2222);
	n = tbr_nego_encode(&m, w, TBR_NEGO_MAX_WORDS);
	assert_int_equal(n, TBR_NEGO_WORDS);
	assert_int_equal(nego_check(w, n, &k_one, 0xc0ffee), -ENOKEY);
	/* a keyless HELLO: no challenge, which a keyed replier refuses */
	nego_hello(&m, TBR_NEGO_HELLO, 0x2222);
	n = tbr_nego_encode(&m, w, TBR_NEGO_MAX_WORDS);
	assert_int_equal(tbr_nego_decode(w, n, &d), 0);
	assert_false(d.auth);
	/* a signed reply met by a host without a key cannot be checked */
	n = nego_reply(w, 0xc0ffee, &k_one, 0x2222);
	assert_int_equal(nego_check(w, n, &k_none, 0xc0ffee), -ENOKEY);
	/* signing needs the flag and a key */
	n = nego_reply(w, 0xc0ffee, NULL, 0x2222);
	assert_int_equal(tbr_nego_sign(&(struct tbr_auth){ &host_ops, &k_one }, w, n),
			 -EINVAL);
	w[27] = TBR_NEGO_AUTH_MAC;
	assert_int_equal(tbr_nego_sign(&(struct tbr_auth){ &host_ops, &k_none }, w, n),
			 -ENOKEY);
}

static void test_nego_rotation(void **state)
{
	u32 w[TBR_NEGO_MAX_WORDS];
	int n;

	/* a peer still on the old key, we rotated: accepted in the grace */
	n = nego_reply(w, 7, &k_one, 0x2222);
	assert_int_equal(nego_check(w, n, &k_rot, 7), 0);
	/* a peer already on the new key */
	n = nego_reply(w, 7, &k_two, 0x2222);
	assert_int_equal(nego_check(w, n, &k_rot, 7), 0);
	/* grace over: the old key is refused */
	n = nego_reply(w, 7, &k_one, 0x2222);
	assert_int_equal(nego_check(w, n, &k_two, 7), -EKEYREJECTED);
	/* early in its grace a rotated host signs with the previous key: taken by
	 * a host that has not rotated yet, and by one that has */
	n = nego_reply(w, 7, &k_rot_early, 0x2222);
	assert_int_equal(nego_check(w, n, &k_one, 7), 0);
	assert_int_equal(nego_check(w, n, &k_rot, 7), 0);
	/* later it signs with the new one: only hosts that have it take it */
	n = nego_reply(w, 7, &k_rot, 0x2222);
	assert_int_equal(nego_check(w, n, &k_one, 7), -EKEYREJECTED);
	assert_int_equal(nego_check(w, n, &k_rot_early, 7), 0);
}

/* ---- eth HELLO ------------------------------------------------------------ */

static const u8 smac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };
static const u8 smac_x[6] = { 0x02, 0, 0, 0, 0, 0x66 };

#define GUID_A	0xa000000000000001ull
#define GUID_B	0xb000000000000002ull

/*
 * B's unicast hello to A answering A's nonce @answer, signed with @k (NULL:
 * no key, but the auth part; @auth false: the 16 bytes of old) as station
 * @smac. Returns the payload length.
 */
static u32 eth_hello(u8 *pkt, struct tbr_eth_hdr *h, u64 answer,
		     struct keys *k, bool auth, const u8 *smac)
{
	struct tbr_auth a = keyring(k ? k : &k_none);
	u32 len = auth ? TBR_ETH_HELLO_AUTH_LEN : TBR_ETH_HELLO_LEN;

	memset(h, 0, sizeof(*h));
	h->version = TBR_ETH_VERSION;
	h->type = TBR_ETH_HELLO;
	h->len = (u16)len;
	h->src = GUID_B;
	h->dst = GUID_A;
	tbr_eth_hdr_build(pkt, h);
	tbr_eth_hello_build(pkt + TBR_ETH_HDR_LEN, 0x77, 0x99, 4096, 1000, 0,
			    TBR_ETH_HEARS_YOU);
	if (auth) {
		tbr_eth_hello_auth_build(pkt + TBR_ETH_HDR_LEN, 0xb0b0, answer,
					 k ? TBR_ETH_AUTH_MAC : 0);
		if (k)
			assert_int_equal(tbr_eth_hello_sign(&a, smac, GUID_B, GUID_A,
							    pkt + TBR_ETH_HDR_LEN), 0);
	}
	return len;
}

/* A (@ours, nonces @cur, @prev) checks the hello in @pkt from station @smac */
static int eth_check(const u8 *pkt, u32 plen, struct keys *ours, u64 cur,
		     u64 prev, const u8 *smac)
{
	struct tbr_auth a = keyring(ours);
	struct tbr_eth_hello hello;
	struct tbr_eth_hdr h;

	assert_int_equal(tbr_eth_hdr_parse(pkt, TBR_ETH_HDR_LEN + plen, &h), 0);
	assert_int_equal(tbr_eth_hello_parse(&h, pkt + TBR_ETH_HDR_LEN, plen,
					     GUID_A, 0x99, &hello), 0);
	assert_true(hello.hears_us);
	return tbr_eth_hello_verify(&a, smac, &h, pkt + TBR_ETH_HDR_LEN, plen,
				    &hello, cur, prev);
}

/*
 * READY and BYE of a keyed session (minor version 2): signed, bound to the
 * session's two HELLO nonces. @ours is the receiver's HELLO nonce the sender
 * answered, @theirs the sender's. Encoded into @w, signed with @k (NULL:
 * unsigned, as an older or keyless sender or an injector sends it).
 */
static int nego_session_msg(u32 *w, u8 type, struct keys *k, u64 ours, u64 theirs)
{
	struct tbr_auth a = keyring(k ? k : &k_none);
	struct tbr_nego_msg m;
	unsigned int i;
	int n;

	tbr_nego_init(&m, type);
	m.seq = 9;
	m.guid = 0x2222;
	for (i = 0; i < 16; i++) {
		m.initiator[i] = (u8)(0xb0 + i);
		m.target[i] = (u8)(0xa0 + i);
	}
	if (type == TBR_NEGO_READY)
		m.ready_rails = 2;
	if (k) {
		m.auth = true;
		m.auth_flags = TBR_NEGO_AUTH_MAC;
		m.nonce = theirs;
		m.peer_nonce = ours;
	}
	n = tbr_nego_encode(&m, w, TBR_NEGO_MAX_WORDS);
	assert_int_equal(n, k ? TBR_NEGO_AUTH_WORDS : TBR_NEGO_WORDS);
	if (k)
		assert_int_equal(tbr_nego_sign(&a, w, n), 0);
	return n;
}

/* what tb_events.c does: the MAC (handler), then the session (event work) */
static int nego_session_check(const u32 *w, int n, struct keys *k, u64 ours, u64 theirs)
{
	struct tbr_auth a = keyring(k);
	struct tbr_nego_msg d;
	int err;

	assert_int_equal(tbr_nego_decode(w, n, &d), 0);
	err = tbr_nego_verify(&a, w, n, &d, d.peer_nonce);
	return err ? err : tbr_nego_session_check(&d, ours, theirs);
}

static void test_nego_ready_bye(void **state)
{
	const u64 ours = 0x1111222233334444ull, theirs = 0x9999888877776666ull;
	u8 types[] = { TBR_NEGO_READY, TBR_NEGO_BYE };
	struct tbr_nego_msg d;
	u32 w[TBR_NEGO_MAX_WORDS];
	unsigned int t;
	int n;

	for (t = 0; t < 2; t++) {
		/* signed in this session: taken; the layout: auth words at 27 */
		n = nego_session_msg(w, types[t], &k_one, ours, theirs);
		assert_int_equal(w[1] & 0xff, 40);
		assert_int_equal(w[1] >> 16, 0x0202);	/* 2.2 */
		assert_int_equal(w[27], TBR_NEGO_AUTH_MAC);
		assert_int_equal(w[28], 0x99998888);
		assert_int_equal(w[31], 0x33334444);
		assert_int_equal(tbr_nego_decode(w, n, &d), 0);
		assert_true(d.auth);
		assert_int_equal(d.type, types[t]);
		if (types[t] == TBR_NEGO_READY)
			assert_int_equal(d.ready_rails, 2);
		assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs), 0);
		/* unsigned (an injector, a keyless or older sender): refused */
		n = nego_session_msg(w, types[t], NULL, ours, theirs);
		assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs), -ENOKEY);
		assert_int_equal(tbr_nego_decode(w, n, &d), 0);
		assert_int_equal(tbr_nego_session_check(&d, ours, theirs), -ENOKEY);
		/* another key: refused */
		n = nego_session_msg(w, types[t], &k_two, ours, theirs);
		assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs), -EKEYREJECTED);
		/* recorded in another session (either nonce): refused */
		n = nego_session_msg(w, types[t], &k_one, ours ^ 1, theirs);
		assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs), -ESTALE);
		n = nego_session_msg(w, types[t], &k_one, ours, theirs ^ 1);
		assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs), -ESTALE);
		/* tampered: the type, the sequence, the rails, a nonce word */
		n = nego_session_msg(w, types[t], &k_one, ours, theirs);
		w[2] ^= 1;
		assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs), -EKEYREJECTED);
		n = nego_session_msg(w, types[t], &k_one, ours, theirs);
		w[30] ^= 0x100;
		assert_int_equal(nego_session_check(w, n, &k_one, ours ^ ((u64)0x100 << 32), theirs),
				 -EKEYREJECTED);
		if (types[t] == TBR_NEGO_READY) {
			/* a READY made a BYE */
			n = nego_session_msg(w, types[t], &k_one, ours, theirs);
			w[1] ^= (TBR_NEGO_READY ^ TBR_NEGO_BYE) << 8;
			assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs),
					 -EKEYREJECTED);
			n = nego_session_msg(w, types[t], &k_one, ours, theirs);
			w[14] = 1;
			assert_int_equal(nego_session_check(w, n, &k_one, ours, theirs),
					 -EKEYREJECTED);
		}
		/* a previous key within its grace: still taken */
		n = nego_session_msg(w, types[t], &k_one, ours, theirs);
		assert_int_equal(nego_session_check(w, n, &k_rot, ours, theirs), 0);
	}
	/* STATUS never carries auth words */
	tbr_nego_init(&d, TBR_NEGO_STATUS);
	d.guid = 1;
	d.auth = true;
	assert_int_equal(tbr_nego_encode(&d, w, TBR_NEGO_MAX_WORDS), TBR_NEGO_WORDS);
}

static void test_eth_right_key(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_HELLO_AUTH_LEN];
	struct tbr_eth_hello hello;
	struct tbr_eth_hdr h;
	u32 n = eth_hello(pkt, &h, 0x1001, &k_one, true, smac_b);

	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0x1000, smac_b), 0);
	/* the nonce before the current one still answers (one rotation) */
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1002, 0x1001, smac_b), 0);
	/* the old parser's view: the first 16 bytes, the rest ignored */
	assert_int_equal(tbr_eth_hello_parse(&h, pkt + TBR_ETH_HDR_LEN,
					     TBR_ETH_HELLO_LEN, GUID_A, 0x99,
					     &hello), 0);
	assert_false(hello.auth);
	assert_int_equal(hello.max_frame, 4096);
}

static void test_eth_wrong_key(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_HELLO_AUTH_LEN];
	u32 n = eth_hello(pkt, &h_unused, 0x1001, &k_two, true, smac_b);

	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0, smac_b),
			 -EKEYREJECTED);
	/* the right key; the session changed after signing */
	n = eth_hello(pkt, &h_unused, 0x1001, &k_one, true, smac_b);
	pkt[TBR_ETH_HDR_LEN + 3] ^= 1;
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0, smac_b),
			 -EKEYREJECTED);
}

static void test_eth_replay(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_HELLO_AUTH_LEN];
	u32 n = eth_hello(pkt, &h_unused, 0x1001, &k_one, true, smac_b);

	/* two rotations later: refused */
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1003, 0x1002, smac_b),
			 -ESTALE);
	/* replayed now from another station: the MAC covers B's address */
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0, smac_x),
			 -EKEYREJECTED);
	/* an answer to "no nonce" is never one */
	n = eth_hello(pkt, &h_unused, 0, &k_one, true, smac_b);
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0, smac_b), -ESTALE);
}

static void test_eth_no_key(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_HELLO_AUTH_LEN];
	struct tbr_auth a = keyring(&k_one);
	struct tbr_eth_hello hello;
	struct tbr_eth_hdr h;
	u32 n;

	/* an older peer: 16 bytes */
	n = eth_hello(pkt, &h, 0x1001, NULL, false, smac_b);
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0, smac_b), -ENOKEY);
	/* a new keyless peer: the auth part without the flag */
	n = eth_hello(pkt, &h, 0x1001, NULL, true, smac_b);
	assert_int_equal(eth_check(pkt, n, &k_one, 0x1001, 0, smac_b), -ENOKEY);
	/* a keyed peer met by a host without a key: cannot be checked */
	n = eth_hello(pkt, &h, 0x1001, &k_one, true, smac_b);
	assert_int_equal(eth_check(pkt, n, &k_none, 0x1001, 0, smac_b), -ENOKEY);
	/* a broadcast hello proves nothing (it answers no challenge) */
	h.dst = 0;
	tbr_eth_hdr_build(pkt, &h);
	assert_int_equal(tbr_eth_hello_parse(&h, pkt + TBR_ETH_HDR_LEN, n, GUID_A,
					     0x99, &hello), 0);
	assert_int_equal(tbr_eth_hello_verify(&a, smac_b, &h, pkt + TBR_ETH_HDR_LEN,
					      n, &hello, 0x1001, 0), -EINVAL);
}

static void test_eth_rotation(void **state)
{
	u8 pkt[TBR_ETH_HDR_LEN + TBR_ETH_HELLO_AUTH_LEN];
	u32 n = eth_hello(pkt, &h_unused, 0x1001, &k_one, true, smac_b);

	assert_int_equal(eth_check(pkt, n, &k_rot, 0x1001, 0, smac_b), 0);
	assert_int_equal(eth_check(pkt, n, &k_two, 0x1001, 0, smac_b),
			 -EKEYREJECTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nego_layout),
		cmocka_unit_test(test_nego_right_key),
		cmocka_unit_test(test_nego_wrong_key),
		cmocka_unit_test(test_nego_replay),
		cmocka_unit_test(test_nego_no_key),
		cmocka_unit_test(test_nego_rotation),
		cmocka_unit_test(test_nego_ready_bye),
		cmocka_unit_test(test_eth_right_key),
		cmocka_unit_test(test_eth_wrong_key),
		cmocka_unit_test(test_eth_replay),
		cmocka_unit_test(test_eth_no_key),
		cmocka_unit_test(test_eth_rotation),
	};

	if (!gcry_check_version(GCRYPT_VERSION))
		return 1;
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
