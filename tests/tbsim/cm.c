// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: what the software connection manager's locking means for service
 * drivers, and the test knobs that drive unplugs through it (no counterpart
 * in the real module). The locking itself is modelled where it happens
 * (xdomain.c): drivers/thunderbolt/tb.c tb_handle_hotplug() holds tb->lock
 * while tb_xdomain_remove() unregisters the XDomain's services (so a service
 * driver's remove runs under it) and then tears down every DMA path left
 * (__tb_disconnect_xdomain_paths(-1, ...)); tb_approve_xdomain_paths() (the
 * CM side of tb_xdomain_enable_paths()) runs under tb->lock and does not
 * look at xd->is_unplugged; tb_disconnect_xdomain_paths() takes tb->lock
 * only while the XDomain is not unplugged, else it does nothing. Same in
 * Debian's 6.1 and 6.12.
 *
 * Knobs:
 *   fault_unplug=STEP   unplug the cable (the first one with an XDomain) the
 *       next time a driver reaches STEP, once: ring_alloc (tb_ring_alloc_tx),
 *       ring_start (tb_ring_start), enable_paths (entry, before tb->lock),
 *       paths_on (tb_xdomain_enable_paths() done), request:DWORD:MASK:VALUE
 *       (a protocol handler's request whose dword matches, e.g. tbrdma's READY
 *       or BYE, before it is sent), disable_paths (entry), ring_stop
 *       (tb_ring_stop), ring_free (tb_ring_free). The unplug is that of a
 *       real cable on this side: the XDomain is removed at once (a worker, as
 *       the CM's hotplug work; the hook returns once that worker holds
 *       tb->lock, so the driver meets the removal in progress), and the cable
 *       carries nothing for fault_unplug_ms (default 6500, more than the
 *       peer's 5 s link timeout, so the peer sees the unplug too); then it is
 *       plugged in again. Reading shows the armed step and how often one fired.
 *   cm_state (read)   rings, input/output HopIDs and DMA paths allocated now
 *       (all 0 once no driver holds any: a leak shows), and the wrong-order
 *       counters: late_paths (paths enabled on an XDomain already removed:
 *       the real CM activates a tunnel nobody tears down), tx_busy_at_disable
 *       (a path disabled on a plugged XDomain while its TX ring still had
 *       frames posted: hardware reports such a transmitter can wedge its
 *       router), late_poll_complete (tb_ring_poll_complete() on a stopped
 *       ring: nhi.c unmasks its interrupt anyway), unplugs (fired).
 */
#include <linux/completion.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "tbsim.h"

atomic_t tbsim_cm_rings, tbsim_cm_in_hopids, tbsim_cm_out_hopids, tbsim_cm_paths;
atomic_t tbsim_cm_late_paths, tbsim_cm_tx_busy, tbsim_cm_late_poll;

static DEFINE_SPINLOCK(step_lock);
static enum tbsim_step armed_step;	/* TBSIM_STEP_NONE: disarmed */
static u32 armed_dword, armed_mask, armed_value;
static unsigned int fired;
static unsigned int mute_ms = 6500;
module_param_named(fault_unplug_ms, mute_ms, uint, 0644);
MODULE_PARM_DESC(fault_unplug_ms, "fault_unplug: how long the cable stays out (ms)");
static unsigned long mute_until;	/* jiffies */
static bool muting;
static DECLARE_COMPLETION(removing);
static struct work_struct unplug_work;

static const char * const step_names[] = {
	[TBSIM_STEP_RING_ALLOC] = "ring_alloc",
	[TBSIM_STEP_RING_START] = "ring_start",
	[TBSIM_STEP_ENABLE_PATHS] = "enable_paths",
	[TBSIM_STEP_PATHS_ON] = "paths_on",
	[TBSIM_STEP_REQUEST] = "request",
	[TBSIM_STEP_DISABLE_PATHS] = "disable_paths",
	[TBSIM_STEP_RING_STOP] = "ring_stop",
	[TBSIM_STEP_RING_FREE] = "ring_free",
};

/* The cable carries nothing while the fault holds it out. Any context. */
bool tbsim_cable_muted(void)
{
	return READ_ONCE(muting) && time_before(jiffies, READ_ONCE(mute_until));
}

/* The CM's hotplug work for the unplug: the first cable's XDomain removed. */
static void unplug_work_fn(struct work_struct *work)
{
	struct tbsim_xd *sxd = NULL;
	struct tbsim_cable *c;

	mutex_lock(&tbsim.lock);
	list_for_each_entry(c, &tbsim.cables, node) {
		if (c->sxd && !sxd) {
			sxd = c->sxd;
			WRITE_ONCE(c->sxd, NULL);
			WRITE_ONCE(c->heard, false);
		}
	}
	mutex_unlock(&tbsim.lock);
	if (!sxd) {
		complete(&removing);
		return;
	}
	dev_info(&tbsim.host, "tbsim: fault_unplug: %s unplugged for %u ms\n",
		 dev_name(&sxd->xd.dev), mute_ms);
	synchronize_net();
	tbsim_xd_unplug(sxd);
}

/* tbsim_xd_unplug(), tb->lock held and is_unplugged set: the hook may go on. */
void tbsim_cm_removing(void)
{
	complete(&removing);
}

/*
 * A driver reached @step (@request: the request's dwords, for
 * TBSIM_STEP_REQUEST). Process context, no stand-in lock held; the caller
 * may hold its own locks (that is the point).
 */
void tbsim_fault_step(enum tbsim_step step, const void *request, size_t size)
{
	const u32 *w = request;
	bool fire = false;

	spin_lock(&step_lock);
	if (armed_step == step &&
	    (step != TBSIM_STEP_REQUEST ||
	     (armed_dword < size / 4 && (w[armed_dword] & armed_mask) == armed_value))) {
		armed_step = TBSIM_STEP_NONE;
		fired++;
		fire = true;
	}
	spin_unlock(&step_lock);
	if (!fire)
		return;
	pr_info("tbsim: fault_unplug at %s\n", step_names[step]);
	reinit_completion(&removing);
	WRITE_ONCE(mute_until, jiffies + msecs_to_jiffies(mute_ms));
	WRITE_ONCE(muting, true);
	queue_work(system_unbound_wq, &unplug_work);
	if (!wait_for_completion_timeout(&removing, 10 * HZ))
		pr_warn("tbsim: fault_unplug: the removal did not start within 10 s\n");
}

static int step_set(const char *val, const struct kernel_param *kp)
{
	u32 dw = 0, mask = 0, value = 0;
	enum tbsim_step step;
	size_t len;

	for (step = TBSIM_STEP_RING_ALLOC; step < TBSIM_STEP_MAX; step++) {
		len = strlen(step_names[step]);
		if (!strncmp(val, step_names[step], len) &&
		    (!val[len] || val[len] == '\n' || val[len] == ':'))
			break;
	}
	if (step == TBSIM_STEP_MAX) {
		if (strcmp(val, "none") && strcmp(val, "none\n"))
			return -EINVAL;
		step = TBSIM_STEP_NONE;
	} else if (step == TBSIM_STEP_REQUEST) {
		if (sscanf(val + len, ":%u:%x:%x", &dw, &mask, &value) != 3 ||
		    dw >= TBSIM_CTL_MAX / 4)
			return -EINVAL;
	}
	spin_lock(&step_lock);
	armed_step = step;
	armed_dword = dw;
	armed_mask = mask;
	armed_value = value;
	spin_unlock(&step_lock);
	return 0;
}

static int step_get(char *buf, const struct kernel_param *kp)
{
	int n;

	spin_lock(&step_lock);
	n = sysfs_emit(buf, "%s fired=%u\n",
		       armed_step == TBSIM_STEP_NONE ? "none" : step_names[armed_step], fired);
	spin_unlock(&step_lock);
	return n;
}

static const struct kernel_param_ops step_ops = { .set = step_set, .get = step_get };
module_param_cb(fault_unplug, &step_ops, NULL, 0644);
MODULE_PARM_DESC(fault_unplug, "unplug the cable when a driver reaches this step (test only)");

static int state_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "rings=%d in_hopids=%d out_hopids=%d paths=%d late_paths=%d "
			  "tx_busy_at_disable=%d late_poll_complete=%d unplugs=%u\n",
			  atomic_read(&tbsim_cm_rings), atomic_read(&tbsim_cm_in_hopids),
			  atomic_read(&tbsim_cm_out_hopids), atomic_read(&tbsim_cm_paths),
			  atomic_read(&tbsim_cm_late_paths), atomic_read(&tbsim_cm_tx_busy),
			  atomic_read(&tbsim_cm_late_poll), READ_ONCE(fired));
}

static const struct kernel_param_ops state_ops = { .get = state_get };
module_param_cb(cm_state, &state_ops, NULL, 0444);
MODULE_PARM_DESC(cm_state, "allocations and connection-manager order counters (read only)");

void tbsim_cm_init(void)
{
	INIT_WORK(&unplug_work, unplug_work_fn);
}

/* Module unload, before the cables go. */
void tbsim_cm_exit(void)
{
	cancel_work_sync(&unplug_work);
}
