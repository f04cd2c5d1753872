// SPDX-License-Identifier: GPL-2.0
/*
 * VM harness self-test: loading this module prints one real kernel WARNING
 * (with its backtrace) and then refuses to stay loaded. tests/vm's
 * selftest-warn scenario loads it from a script that exits 0 and expects the
 * harness to fail the test anyway.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init tbr_selftest_warn_init(void)
{
	WARN(1, "tbr_selftest_warn: deliberate warning for the VM harness self-test\n");
	return -ENODEV;
}

module_init(tbr_selftest_warn_init);
MODULE_DESCRIPTION("tbrdma VM harness self-test: emits one WARNING");
MODULE_LICENSE("GPL");
