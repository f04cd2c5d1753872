/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Fabric authentication of management datagrams (docs/sweep.md "Fabric key"), in the spirit of
 * InfiniBand's SM_Key: with a shared key (FabricKeyFile=) every datagram a daemon sends is
 * wrapped in an envelope with a sequence number, the receiver's GUID and an HMAC-SHA256 over
 * both and the datagram; the receiver drops anything unauthenticated, addressed to another
 * host, or replayed. Pure (no I/O but the key file); unit-tested in tests/test_auth.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_MAGIC		0x54425341u	/* "TBSA" */
#define AUTH_VERSION		1
#define AUTH_HDR_LEN		24		/* magic, version, 3 reserved, seq, receiver */
#define AUTH_MAC_LEN		32		/* HMAC-SHA256 */
#define AUTH_OVERHEAD		(AUTH_HDR_LEN + AUTH_MAC_LEN)
#define AUTH_KEY_MIN		16
#define AUTH_KEY_MAX		256
#define AUTH_WINDOW		64		/* sequence numbers below the highest still taken */
#define AUTH_PEERS		32		/* senders whose sequence numbers are tracked */
#define AUTH_SKEW_USEC		(600 * 1000000ULL)	/* first datagram of a sender: its sequence
							 * number (realtime µs) must be this close */

typedef struct AuthPeer {
	uint64_t sender;
	uint64_t top, seen;		/* highest seq; bit k: top - (k + 1) was taken */
	uint64_t used;			/* LRU stamp */
} AuthPeer;

typedef struct Auth {
	uint8_t key[AUTH_KEY_MAX];
	size_t key_len;
	uint64_t tx_seq;		/* last sequence number sent */
	AuthPeer peers[AUTH_PEERS];
	uint64_t stamp;
} Auth;

/* Reads the key file: 16..256 bytes (a trailing newline is not part of the key). Refuses
 * (-EPERM, reason in @why) a file others can read or write, or one not owned by our euid; a
 * symlink is not followed. */
int auth_key_load(Auth *a, const char *path, char *why, size_t whylen);
/* Wraps datagram @in for receiver @to into @out (@cap bytes); @real_now: CLOCK_REALTIME µs (the
 * sequence number is max(real_now, last + 1)). Returns the length or -EMSGSIZE. */
int auth_wrap(Auth *a, uint64_t to, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
	      uint64_t real_now);
/* Checks an envelope from @sender (the link's peer GUID) to @self: 0 with the datagram in
 * *@inner, *@inner_len; -EBADMSG (not an envelope), -EACCES (bad MAC: another or no key),
 * -EXDEV (for another host), -ESTALE (replayed, or too old for a first datagram), reason in
 * @why. Only an authentic datagram moves the replay window. */
int auth_unwrap(Auth *a, uint64_t self, uint64_t sender, const uint8_t *in, size_t len,
		const uint8_t **inner, size_t *inner_len, uint64_t real_now, char *why,
		size_t whylen);
