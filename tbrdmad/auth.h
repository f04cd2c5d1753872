/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Fabric authentication of management datagrams (docs/sweep.md "Fabric key"), in the spirit of
 * InfiniBand's SM_Key: with a shared key (FabricKeyFile=) every datagram a daemon sends is
 * wrapped in an envelope naming its sender and receiver GUIDs, the sender's epoch (random per
 * daemon start), a sequence number within that epoch and a timestamp, with an HMAC-SHA256 over
 * all of it and the datagram; the receiver drops anything unauthenticated, from another sender
 * than the link's peer, addressed to another host, or replayed. Pure (no I/O but the key file
 * and the random epoch); unit-tested in tests/test_auth.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_MAGIC		0x54425341u	/* "TBSA" */
#define AUTH_VERSION		2
#define AUTH_HDR_LEN		48	/* magic, version, 3 reserved, sender, receiver, epoch,
					 * seq, time */
#define AUTH_MAC_LEN		32		/* HMAC-SHA256 */
#define AUTH_OVERHEAD		(AUTH_HDR_LEN + AUTH_MAC_LEN)
#define AUTH_KEY_MIN		16
#define AUTH_KEY_MAX		256
#define AUTH_WINDOW		64		/* sequence numbers below the highest still taken */
#define AUTH_PEERS		64		/* senders whose replay state is kept */
#define AUTH_SKEW_USEC		(600 * 1000000ULL)	/* a new epoch's timestamp must be this
							 * close to our CLOCK_REALTIME; none may be
							 * further ahead */
#define AUTH_SEQ_JUMP		(1ULL << 32)	/* a sequence number further ahead of the
						 * highest taken (same epoch) is refused */

typedef struct AuthPeer {
	uint64_t sender;		/* 0: free slot */
	uint64_t epoch;			/* the sender's epoch being tracked */
	uint64_t top, seen;		/* highest seq of it; bit k: top - (k + 1) was taken */
	uint64_t last_time;		/* newest timestamp taken from the sender, any epoch */
} AuthPeer;

typedef struct Auth {
	uint8_t key[AUTH_KEY_MAX];
	size_t key_len;
	uint64_t tx_epoch;		/* ours, non-zero random; 0: draw one at the next wrap */
	uint64_t tx_seq;		/* last sequence number sent in tx_epoch */
	uint64_t tx_time;		/* last timestamp sent (strictly increasing) */
	AuthPeer peers[AUTH_PEERS];
} Auth;

/* Reads the key file: 16..256 bytes (a trailing newline is not part of the key). Refuses
 * (-EPERM, reason in @why) a file others can read or write, or one not owned by our euid; a
 * symlink is not followed. */
int auth_key_load(Auth *a, const char *path, char *why, size_t whylen);
/* Wraps datagram @in from @from (our GUID) for receiver @to into @out (@cap bytes); @real_now:
 * CLOCK_REALTIME µs (the timestamp is max(real_now, last + 1)). The first call, and one whose
 * sequence number would wrap, draws a new epoch. Returns the length, -EMSGSIZE, or -ENOMEM /
 * -EINVAL from libgcrypt. */
int auth_wrap(Auth *a, uint64_t from, uint64_t to, const uint8_t *in, size_t len, uint8_t *out,
	      size_t cap, uint64_t real_now);
/* Checks an envelope that came in on the link to @sender (the link's peer GUID) at @self: 0
 * with the datagram in *@inner, *@inner_len; -EBADMSG (not an envelope, or a malformed one),
 * -EACCES (bad MAC: another or no key), -EXDEV (from another sender than @sender, or for
 * another host), -ESTALE (replayed, too old, too far ahead), -ENOSPC (a new sender and every
 * slot holds a sender heard within AUTH_SKEW_USEC), reason in @why. Only a datagram whose MAC,
 * sender and receiver verified reads or changes the replay state; the rules are in auth.c. */
int auth_unwrap(Auth *a, uint64_t self, uint64_t sender, const uint8_t *in, size_t len,
		const uint8_t **inner, size_t *inner_len, uint64_t real_now, char *why,
		size_t whylen);
