// SPDX-License-Identifier: GPL-2.0
/*
 * Debug-kernel self-test: loading this module with bug=NAME commits one class
 * of kernel bug on purpose, then refuses to stay loaded. Only meaningful on
 * the debug kernel of tests/vm (lib/setup-debug-kernel), whose checkers must
 * report it; the VM tests selftest-{kasan,lockdep,sleep,kmemleak} expect the
 * harness to fail them for that report.
 *   uaf      reads a freed slab object (KASAN)
 *   lockdep  takes two mutexes in both orders (lockdep: circular dependency)
 *   sleep    calls a sleeping function under a spinlock (DEBUG_ATOMIC_SLEEP)
 *   leak     loses the only pointer to three slab objects (kmemleak)
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "uaf | lockdep | sleep | leak");

static DEFINE_MUTEX(tbr_selftest_a);
static DEFINE_MUTEX(tbr_selftest_b);
static DEFINE_SPINLOCK(tbr_selftest_lock);

static noinline void tbr_selftest_uaf(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	pr_info("tbr_selftest_debug: read after free: %d\n", READ_ONCE(p[8]));
}

static noinline void tbr_selftest_lockdep(void)
{
	mutex_lock(&tbr_selftest_a);
	mutex_lock(&tbr_selftest_b);
	mutex_unlock(&tbr_selftest_b);
	mutex_unlock(&tbr_selftest_a);
	mutex_lock(&tbr_selftest_b);
	mutex_lock(&tbr_selftest_a);
	mutex_unlock(&tbr_selftest_a);
	mutex_unlock(&tbr_selftest_b);
}

static noinline void tbr_selftest_sleep(void)
{
	spin_lock(&tbr_selftest_lock);
	might_sleep();
	spin_unlock(&tbr_selftest_lock);
}

static noinline void tbr_selftest_leak(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = kmalloc(256, GFP_KERNEL);

		if (p)
			memset(p, 0x5a, 256);	/* holds no pointer that could keep it */
	}
}

static int __init tbr_selftest_debug_init(void)
{
	if (!strcmp(bug, "uaf"))
		tbr_selftest_uaf();
	else if (!strcmp(bug, "lockdep"))
		tbr_selftest_lockdep();
	else if (!strcmp(bug, "sleep"))
		tbr_selftest_sleep();
	else if (!strcmp(bug, "leak"))
		tbr_selftest_leak();
	else
		return -EINVAL;
	return -ENODEV;
}

module_init(tbr_selftest_debug_init);
MODULE_DESCRIPTION("tbrdma VM harness self-test: one deliberate bug per checker of the debug kernel");
MODULE_LICENSE("GPL");
