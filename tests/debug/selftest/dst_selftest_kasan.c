// SPDX-License-Identifier: GPL-2.0
/*
 * make check-debug's self-test: reads one byte past an allocation,
 * which KASAN must report (and the runner then fail the guest).
 */
#include <linux/module.h>
#include <linux/slab.h>

static int __init dst_selftest_kasan_init(void)
{
	char *p = kmalloc(16, GFP_KERNEL);
	size_t i = 16;

	if (!p)
		return -ENOMEM;
	OPTIMIZER_HIDE_VAR(i);
	pr_info("dst_selftest_kasan: byte past the end: %d\n", READ_ONCE(p[i]));
	kfree(p);
	return 0;
}

static void __exit dst_selftest_kasan_exit(void)
{
}

module_init(dst_selftest_kasan_init);
module_exit(dst_selftest_kasan_exit);
MODULE_DESCRIPTION("DST debug-kernel self-test: an access KASAN must report");
MODULE_LICENSE("GPL");
