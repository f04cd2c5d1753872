// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fabric authentication (auth.h, docs/sweep.md "Fabric key"). HMAC-SHA256 from libgcrypt,
 * which libsystemd already links. Envelope (version 2), big-endian:
 *
 *	0	4	magic "TBSA"
 *	4	1	version 2
 *	5	3	reserved, 0 (else refused)
 *	8	8	sender's GUID (must be the peer of the link it came in on)
 *	16	8	receiver's GUID
 *	24	8	sender's epoch: random, non-zero, drawn at every daemon start
 *	32	8	sequence number within the epoch: 1, 2, 3, ... (a new epoch before it wraps)
 *	40	8	timestamp: sender's CLOCK_REALTIME µs, strictly increasing
 *	48	n	the datagram (STATE or RAILS, unchanged)
 *	48+n	32	HMAC-SHA256(key, bytes 0 .. 48+n)
 *
 * Every field a receiver acts on is under the MAC. Receive rules, in order (nothing before the
 * last step reads or writes the replay state, so nothing unverified can evict a slot):
 *  1. the envelope, its version and the MAC (constant-time compare);
 *  2. sender == the link's peer, receiver == us, epoch and sequence number non-zero;
 *  3. the timestamp is at most AUTH_SKEW_USEC ahead of our clock (so no state ever holds a
 *     timestamp further ahead, and no sender can be locked out for longer than that);
 *  4. per sender (a table of AUTH_PEERS), same epoch as tracked: the IPsec anti-replay window
 *     on the sequence number (AUTH_WINDOW below the highest; a jump of more than AUTH_SEQ_JUMP
 *     is refused); another epoch, or a sender not in the table: taken only if its timestamp is
 *     within AUTH_SKEW_USEC of our clock and newer than the newest taken from that sender, and
 *     then the sender's state starts over in that epoch. A restarted sender (new epoch, counter
 *     from 1) is so taken at once, and what it sent in an earlier epoch is not (older
 *     timestamps).
 *  5. a new sender takes a free slot, else the slot whose newest timestamp is the oldest, and
 *     only if that is more than AUTH_SKEW_USEC old: every datagram the evicted sender had taken
 *     is then too old for rule 4, so eviction cannot reopen a replay. When every slot holds a
 *     sender heard within AUTH_SKEW_USEC, the new sender is refused (-ENOSPC) until one ages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gcrypt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "util.h"

int auth_key_load(Auth *a, const char *path, char *why, size_t whylen)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	uint8_t buf[AUTH_KEY_MAX + 2];
	struct stat st;
	ssize_t n;

	memset(a, 0, sizeof(*a));
	if (fd < 0)
		return failf(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return failf(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return failf(why, whylen, -EPERM, "%s: not a regular file", path);
	if (st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP))
		return failf(why, whylen, -EPERM, "%s: mode %04o: others may read or write the key "
			    "(chmod 0600)", path, (unsigned)(st.st_mode & 07777));
	if (st.st_uid != geteuid())
		return failf(why, whylen, -EPERM, "%s: owned by uid %u, not %u", path,
			    (unsigned)st.st_uid, (unsigned)geteuid());
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return failf(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n < AUTH_KEY_MIN || n > AUTH_KEY_MAX)
		return failf(why, whylen, -EINVAL, "%s: the key must be %d to %d bytes", path,
			    AUTH_KEY_MIN, AUTH_KEY_MAX);
	memcpy(a->key, buf, (size_t)n);
	a->key_len = (size_t)n;
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

static void gcrypt_init(void)
{
	if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
		gcry_check_version(NULL);
		gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
		gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	}
}

static int mac(const Auth *a, const uint8_t *data, size_t len, uint8_t out[AUTH_MAC_LEN])
{
	gcry_md_hd_t h;

	gcrypt_init();
	if (gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC))
		return -ENOMEM;
	if (gcry_md_setkey(h, a->key, a->key_len)) {
		gcry_md_close(h);
		return -EINVAL;
	}
	gcry_md_write(h, data, len);
	memcpy(out, gcry_md_read(h, GCRY_MD_SHA256), AUTH_MAC_LEN);
	gcry_md_close(h);
	return 0;
}

static uint64_t new_epoch(uint64_t old)
{
	uint8_t b[8];
	uint64_t e;

	gcrypt_init();
	do {
		gcry_create_nonce(b, sizeof(b));
		e = be_get64(b);
	} while (!e || e == old);
	return e;
}

int auth_wrap(Auth *a, uint64_t from, uint64_t to, const uint8_t *in, size_t len, uint8_t *out,
	      size_t cap, uint64_t real_now)
{
	int r;

	if (len + AUTH_OVERHEAD > cap)
		return -EMSGSIZE;
	if (!a->tx_epoch || a->tx_seq == UINT64_MAX) {
		a->tx_epoch = new_epoch(a->tx_epoch);
		a->tx_seq = 0;
	}
	a->tx_seq++;
	a->tx_time = real_now > a->tx_time ? real_now : a->tx_time + 1;
	memset(out, 0, AUTH_HDR_LEN);
	be_put32(out, AUTH_MAGIC);
	out[4] = AUTH_VERSION;
	be_put64(out + 8, from);
	be_put64(out + 16, to);
	be_put64(out + 24, a->tx_epoch);
	be_put64(out + 32, a->tx_seq);
	be_put64(out + 40, a->tx_time);
	memcpy(out + AUTH_HDR_LEN, in, len);
	r = mac(a, out, AUTH_HDR_LEN + len, out + AUTH_HDR_LEN + len);
	return r < 0 ? r : (int)(len + AUTH_OVERHEAD);
}

/* the slot of @sender, or NULL with *@slot a free or evictable one (NULL: the table is full of
 * senders heard within AUTH_SKEW_USEC) */
static AuthPeer *peer_of(Auth *a, uint64_t sender, uint64_t real_now, AuthPeer **slot)
{
	AuthPeer *oldest = NULL;

	*slot = NULL;
	for (size_t i = 0; i < AUTH_PEERS; i++) {
		AuthPeer *p = &a->peers[i];

		if (p->sender == sender)
			return p;
		if (!p->sender) {
			if (!*slot)
				*slot = p;
		} else if (!oldest || p->last_time < oldest->last_time) {
			oldest = p;
		}
	}
	if (!*slot && oldest && oldest->last_time + AUTH_SKEW_USEC < real_now)
		*slot = oldest;
	return NULL;
}

int auth_unwrap(Auth *a, uint64_t self, uint64_t sender, const uint8_t *in, size_t len,
		const uint8_t **inner, size_t *inner_len, uint64_t real_now, char *why,
		size_t whylen)
{
	uint8_t want[AUTH_MAC_LEN];
	uint64_t from, to, epoch, seq, t, diff = 0;
	AuthPeer *p, *slot;
	int r;

	if (len <= AUTH_OVERHEAD || be_get32(in) != AUTH_MAGIC)
		return failf(why, whylen, -EBADMSG, "not authenticated (no envelope)");
	if (in[4] != AUTH_VERSION)
		return failf(why, whylen, -EBADMSG, "envelope version %u", in[4]);
	if (in[5] || in[6] || in[7])
		return failf(why, whylen, -EBADMSG, "reserved envelope bytes set");
	r = mac(a, in, len - AUTH_MAC_LEN, want);
	if (r < 0)
		return failf(why, whylen, r, "HMAC: %s", strerror(-r));
	/* constant time: a timing oracle must not tell how much of a forged MAC was right */
	for (size_t i = 0; i < AUTH_MAC_LEN; i++)
		diff |= want[i] ^ in[len - AUTH_MAC_LEN + i];
	if (diff)
		return failf(why, whylen, -EACCES, "bad HMAC (another key, or none)");
	from = be_get64(in + 8);
	to = be_get64(in + 16);
	epoch = be_get64(in + 24);
	seq = be_get64(in + 32);
	t = be_get64(in + 40);
	if (from != sender)
		return failf(why, whylen, -EXDEV, "sent by %016" PRIx64 ", not the link's peer",
			     from);
	if (to != self)
		return failf(why, whylen, -EXDEV, "addressed to %016" PRIx64, to);
	if (!epoch || !seq)
		return failf(why, whylen, -EBADMSG, "epoch or sequence number 0");
	if (t > real_now + AUTH_SKEW_USEC)
		return failf(why, whylen, -ESTALE, "timestamp %" PRIu64 " is in the future", t);
	p = peer_of(a, sender, real_now, &slot);
	if (p && p->epoch == epoch) {
		if (seq > p->top) {
			uint64_t d = seq - p->top;

			if (d > AUTH_SEQ_JUMP)
				return failf(why, whylen, -ESTALE, "sequence number %" PRIu64
					     " too far ahead of %" PRIu64, seq, p->top);
			p->seen = d > 64 ? 0 : (d == 64 ? 0 : p->seen << d) | 1ULL << (d - 1);
			p->top = seq;
		} else if (seq == p->top || p->top - seq > AUTH_WINDOW ||
			   (p->seen & (1ULL << (p->top - seq - 1)))) {
			return failf(why, whylen, -ESTALE, "replayed (sequence number %" PRIu64 ")",
				     seq);
		} else {
			p->seen |= 1ULL << (p->top - seq - 1);
		}
		if (t > p->last_time)
			p->last_time = t;
	} else {
		/* a new epoch of a known sender (it restarted), or a sender new to us */
		if (t + AUTH_SKEW_USEC < real_now)
			return failf(why, whylen, -ESTALE, "timestamp %" PRIu64 " too old for a "
				     "new epoch", t);
		if (p && t <= p->last_time)
			return failf(why, whylen, -ESTALE, "epoch %016" PRIx64 " older than the "
				     "one taken", epoch);
		if (!p && !slot)
			return failf(why, whylen, -ENOSPC, "%d senders heard within %llu s, none "
				     "evictable", AUTH_PEERS, AUTH_SKEW_USEC / 1000000);
		if (!p)
			p = slot;
		*p = (AuthPeer){ .sender = sender, .epoch = epoch, .top = seq, .last_time = t };
	}
	*inner = in + AUTH_HDR_LEN;
	*inner_len = len - AUTH_OVERHEAD;
	return 0;
}
