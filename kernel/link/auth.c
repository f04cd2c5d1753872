// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the fabric keys of authenticated links (link/rail.h, docs/
 * protocol.md "Authenticated links"). tbrdmad hands the key of its
 * FabricKeyFile in over genl (ctl/route_nl.c, admin only); it is never read
 * back. Each key is an HMAC-SHA256 transform keyed once at set time, so the
 * HELLOs' MACs (any context, softirq included: shash never sleeps) only
 * read it. A new key makes the current one the previous one, which still
 * signs for a grace period and is accepted for twice as long (tbr_auth.h),
 * so the peers can follow one by one without a link going down.
 *
 * Locks: the key set is replaced whole under tbr_ctl_mutex and read under
 * RCU; a replaced set is freed after a grace period (synchronize_rcu, in
 * the setter's process context).
 */
#include <crypto/hash.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "tbrdma.h"
#include "link/rail.h"

struct tbr_auth_keys {
	struct crypto_shash *tfm[TBR_AUTH_SLOTS];	/* [CUR] set; [PREV] may be NULL */
	unsigned long sign_prev_until;	/* jiffies: [PREV] signs until then */
	unsigned long prev_until;	/* jiffies: [PREV] is accepted until then */
};

static struct tbr_auth_keys *tbr_auth_keys(struct tbr_dev *tdev)
{
	return rcu_dereference_protected(tdev->rails.auth,
					 lockdep_is_held(&tbr_ctl_mutex));
}

static struct crypto_shash *tbr_auth_tfm(const u8 *key, u32 len)
{
	struct crypto_shash *tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	int err;

	if (IS_ERR(tfm))
		return tfm;
	err = crypto_shash_setkey(tfm, key, len);
	if (err) {
		crypto_free_shash(tfm);
		return ERR_PTR(err);
	}
	return tfm;
}

int tbr_link_auth_set(struct tbr_dev *tdev, const u8 *key, u32 len,
		      u32 grace_ms)
{
	struct tbr_auth_keys *old = tbr_auth_keys(tdev), *k = NULL;
	struct crypto_shash *tfm;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (len && (len < TBR_AUTH_KEY_MIN || len > TBR_AUTH_KEY_MAX))
		return -EINVAL;
	if (len) {
		k = kzalloc(sizeof(*k), GFP_KERNEL);
		if (!k)
			return -ENOMEM;
		tfm = tbr_auth_tfm(key, len);
		if (IS_ERR(tfm)) {
			kfree(k);
			return PTR_ERR(tfm);
		}
		k->tfm[TBR_AUTH_CUR] = tfm;
		/* the current key goes on as the previous, for @grace_ms */
		if (old && grace_ms) {
			k->tfm[TBR_AUTH_PREV] = old->tfm[TBR_AUTH_CUR];
			old->tfm[TBR_AUTH_CUR] = NULL;
			k->sign_prev_until = jiffies + msecs_to_jiffies(grace_ms);
			k->prev_until = jiffies + 2 * msecs_to_jiffies(grace_ms);
		}
	}
	rcu_assign_pointer(tdev->rails.auth, k);
	pr_info("tbrdma: %s: fabric key %s%s\n", tbr_dev_name(tdev),
		!len ? "cleared: links are not authenticated" :
		old ? "rotated" : "set: links are authenticated",
		len && old && grace_ms ?
		", the previous one signs for the grace period, accepted twice as long" : "");
	if (old) {
		synchronize_rcu();	/* no MAC under @old any more */
		crypto_free_shash(old->tfm[TBR_AUTH_CUR]);
		crypto_free_shash(old->tfm[TBR_AUTH_PREV]);
		kfree(old);
	}
	return 0;
}

void tbr_link_auth_release(struct tbr_dev *tdev)
{
	lockdep_assert_held(&tbr_ctl_mutex);
	if (rcu_access_pointer(tdev->rails.auth))
		tbr_link_auth_set(tdev, NULL, 0, 0);
}

bool tbr_link_auth_keyed(struct tbr_dev *tdev)
{
	return rcu_access_pointer(tdev->rails.auth) != NULL;
}

/* tbr_auth_ops.mac: any context; RCU read side inside. */
static int tbr_link_auth_mac(void *ctx, unsigned int slot, const u8 *data,
			     u32 len, u8 *out)
{
	struct tbr_dev *tdev = ctx;
	struct tbr_auth_keys *k;
	struct crypto_shash *tfm;
	int ret = -ENOKEY;

	rcu_read_lock();
	k = rcu_dereference(tdev->rails.auth);
	if (k && slot == TBR_AUTH_SIGN)	/* the previous key, in its grace */
		slot = k->tfm[TBR_AUTH_PREV] &&
		       time_before(jiffies, k->sign_prev_until) ?
		       TBR_AUTH_PREV : TBR_AUTH_CUR;
	tfm = k && slot < TBR_AUTH_SLOTS ? k->tfm[slot] : NULL;
	if (tfm && slot == TBR_AUTH_PREV && time_after_eq(jiffies, k->prev_until))
		tfm = NULL;	/* accepted no more */
	if (tfm) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		ret = crypto_shash_digest(desc, data, len, out);
		shash_desc_zero(desc);
	}
	rcu_read_unlock();
	return ret;
}

static const struct tbr_auth_ops tbr_link_auth_ops = {
	.mac = tbr_link_auth_mac,
};

void tbr_link_auth_get(struct tbr_dev *tdev, struct tbr_auth *a)
{
	a->ops = &tbr_link_auth_ops;
	a->ctx = tdev;
}

void tbr_link_auth_refused(struct tbr_dev *tdev)
{
	atomic64_inc(&tdev->rails.auth_refused);
}

u64 tbr_link_auth_refused_count(struct tbr_dev *tdev)
{
	return atomic64_read(&tdev->rails.auth_refused);
}
