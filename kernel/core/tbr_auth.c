// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_auth.c - signing and checking the MACs of authenticated links
 * (tbr_auth.h).
 */
#include "tbr_auth.h"

int tbr_auth_sign(const struct tbr_auth *a, const u8 *data, u32 len, u8 *mac)
{
	if (!a || !a->ops)
		return -ENOKEY;
	return a->ops->mac(a->ctx, TBR_AUTH_SIGN, data, len, mac);
}

/* Constant time: how many bytes differ must not show in the time taken. */
static bool tbr_auth_equal(const u8 *x, const u8 *y)
{
	unsigned int i;
	u8 d = 0;

	for (i = 0; i < TBR_AUTH_MAC_LEN; i++)
		d |= x[i] ^ y[i];
	return !d;
}

int tbr_auth_verify(const struct tbr_auth *a, const u8 *data, u32 len,
		    const u8 *mac)
{
	u8 want[TBR_AUTH_MAC_LEN];
	unsigned int slot;
	int ret = -ENOKEY;

	if (!a || !a->ops)
		return -ENOKEY;
	for (slot = 0; slot < TBR_AUTH_SLOTS; slot++) {
		if (a->ops->mac(a->ctx, slot, data, len, want))
			continue;
		if (tbr_auth_equal(want, mac))
			return 0;
		ret = -EKEYREJECTED;
	}
	return ret;
}
