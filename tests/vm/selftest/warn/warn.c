// SPDX-License-Identifier: GPL-2.0
/*
 * dst_selftest_warn: a module whose only job is to WARN when loaded, so the
 * guest runner's self-test can prove that a kernel splat fails a run.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init dst_selftest_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit dst_selftest_warn_exit(void)
{
}

module_init(dst_selftest_warn_init);
module_exit(dst_selftest_warn_exit);
MODULE_DESCRIPTION("DST runner self-test: WARN_ON(1) at load");
MODULE_LICENSE("GPL");
