// SPDX-License-Identifier: GPL-2.0
/*
 * make check-debug's self-test: reads one byte past an allocation,
 * which KASAN must report (and the runner then fail the guest).
 *
 * 13 bytes, not 16: the byte past a 16-byte object is the first of the
 * next object in kmalloc-16, valid whenever that one is allocated, so
 * the report came and went.  Byte 13 shares its 8-byte shadow granule
 * with bytes 8..12, and generic KASAN records that only 5 of them are
 * valid: the read is caught every time.
 */
#include <linux/module.h>
#include <linux/slab.h>

static int __init dst_selftest_kasan_init(void)
{
	char *p = kmalloc(13, GFP_KERNEL);
	size_t i = 13;

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
