// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fabric authentication (auth.h, docs/sweep.md "Fabric key"). HMAC-SHA256 from libgcrypt,
 * which libsystemd already links. Envelope, big-endian:
 *
 *	0	4	magic "TBSA"
 *	4	1	version 1
 *	5	3	reserved, 0 (else refused)
 *	8	8	sequence number (sender's CLOCK_REALTIME µs, strictly increasing)
 *	16	8	receiver's GUID
 *	24	n	the datagram (STATE or RAILS, unchanged)
 *	24+n	32	HMAC-SHA256(key, bytes 0 .. 24+n)
 *
 * Replay: per sender the highest sequence number and a 64-bit window below it (datagrams of one
 * link may be reordered across its rails), as IPsec's anti-replay window.
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

static int mac(const Auth *a, const uint8_t *data, size_t len, uint8_t out[AUTH_MAC_LEN])
{
	gcry_md_hd_t h;

	if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
		gcry_check_version(NULL);
		gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
		gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	}
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

int auth_wrap(Auth *a, uint64_t to, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
	      uint64_t real_now)
{
	int r;

	if (len + AUTH_OVERHEAD > cap)
		return -EMSGSIZE;
	a->tx_seq = real_now > a->tx_seq ? real_now : a->tx_seq + 1;
	memset(out, 0, AUTH_HDR_LEN);
	out[0] = AUTH_MAGIC >> 24;
	out[1] = AUTH_MAGIC >> 16 & 0xff;
	out[2] = AUTH_MAGIC >> 8 & 0xff;
	out[3] = AUTH_MAGIC & 0xff;
	out[4] = AUTH_VERSION;
	be_put64(out + 8, a->tx_seq);
	be_put64(out + 16, to);
	memcpy(out + AUTH_HDR_LEN, in, len);
	r = mac(a, out, AUTH_HDR_LEN + len, out + AUTH_HDR_LEN + len);
	return r < 0 ? r : (int)(len + AUTH_OVERHEAD);
}

/* the replay state of @sender, a new (or the least recently used) slot if unknown */
static AuthPeer *peer_of(Auth *a, uint64_t sender, bool *fresh)
{
	size_t lru = 0;

	for (size_t i = 0; i < AUTH_PEERS; i++) {
		if (a->peers[i].sender == sender) {
			*fresh = false;
			return &a->peers[i];
		}
		if (a->peers[i].used < a->peers[lru].used)
			lru = i;
	}
	*fresh = true;
	return &a->peers[lru];
}

int auth_unwrap(Auth *a, uint64_t self, uint64_t sender, const uint8_t *in, size_t len,
		const uint8_t **inner, size_t *inner_len, uint64_t real_now, char *why,
		size_t whylen)
{
	uint8_t want[AUTH_MAC_LEN];
	uint64_t seq, to, diff = 0;
	AuthPeer *p;
	bool fresh;
	int r;

	if (len <= AUTH_OVERHEAD || be_get64(in) >> 32 != AUTH_MAGIC)
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
	seq = be_get64(in + 8);
	to = be_get64(in + 16);
	if (to != self)
		return failf(why, whylen, -EXDEV, "addressed to %016" PRIx64, to);
	p = peer_of(a, sender, &fresh);
	if (fresh) {
		if (seq + AUTH_SKEW_USEC < real_now || seq > real_now + AUTH_SKEW_USEC)
			return failf(why, whylen, -ESTALE, "sequence number %" PRIu64 " is %s",
				    seq, seq < real_now ? "too old" : "in the future");
		memset(p, 0, sizeof(*p));
		p->sender = sender;
		p->top = seq;
	} else if (seq > p->top) {
		uint64_t d = seq - p->top;

		p->seen = d > 64 ? 0 : (d == 64 ? 0 : p->seen << d) | 1ULL << (d - 1);
		p->top = seq;
	} else if (seq == p->top || p->top - seq > AUTH_WINDOW ||
		   (p->seen & (1ULL << (p->top - seq - 1)))) {
		return failf(why, whylen, -ESTALE, "replayed (sequence number %" PRIu64 ")", seq);
	} else {
		p->seen |= 1ULL << (p->top - seq - 1);
	}
	p->used = ++a->stamp;
	*inner = in + AUTH_HDR_LEN;
	*inner_len = len - AUTH_OVERHEAD;
	return 0;
}
