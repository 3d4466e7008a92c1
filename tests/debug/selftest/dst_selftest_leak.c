// SPDX-License-Identifier: GPL-2.0
/*
 * make check-debug's self-test: loses one allocation, which the guest's
 * kmemleak scan after the job (tests/vm/guest-init) must report.
 */
#include <linux/module.h>
#include <linux/slab.h>

static int __init dst_selftest_leak_init(void)
{
	char *p = kmalloc(1024, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	WRITE_ONCE(*p, 1);
	pr_info("dst_selftest_leak: 1024 bytes lost on purpose\n");
	return 0;
}

static void __exit dst_selftest_leak_exit(void)
{
}

module_init(dst_selftest_leak_init);
module_exit(dst_selftest_leak_exit);
MODULE_DESCRIPTION("DST debug-kernel self-test: a leak kmemleak must find");
MODULE_LICENSE("GPL");
