/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tests/fuzz/fuzz_mac.h: a stand-in for the kernel's HMAC-SHA256 in the
 * fuzzers of the authenticated HELLOs (tbr_auth.h): fast and deterministic,
 * and, like a MAC, different for any two inputs of one length that differ
 * in a byte (FNV-1a is a bijection of its state per step), so "a changed
 * byte fails the check" is a property a fuzzer can assert. One key: it
 * signs (TBR_AUTH_SIGN) and is the current one; no previous key.
 */
#ifndef FUZZ_MAC_H
#define FUZZ_MAC_H

#include <errno.h>
#include <stdint.h>
#include "tbr_auth.h"

static int fuzz_mac(void *ctx, unsigned int slot, const u8 *data, u32 len, u8 *out)
{
	unsigned int i, r;
	uint64_t h;

	if (slot != TBR_AUTH_CUR && slot != TBR_AUTH_SIGN)
		return -ENOKEY;
	for (r = 0; r < TBR_AUTH_MAC_LEN / 8; r++) {
		h = 0xcbf29ce484222325ULL ^ (uint64_t)(uintptr_t)ctx ^ r;
		for (i = 0; i < len; i++)
			h = (h ^ data[i]) * 0x100000001b3ULL;
		for (i = 0; i < 8; i++)
			out[8 * r + i] = (u8)(h >> (8 * i));
	}
	return 0;
}

static const struct tbr_auth_ops fuzz_mac_ops = { .mac = fuzz_mac };
/* the key: ctx is mixed into the state */
static const struct tbr_auth fuzz_auth = { &fuzz_mac_ops, (void *)0x6b6579 };

#endif
