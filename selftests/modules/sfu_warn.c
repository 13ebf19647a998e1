// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the QEMU harness's own tests: its init triggers a kernel
 * warning, which the harness must report as a failure.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init sfu_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit sfu_warn_exit(void)
{
}

module_init(sfu_warn_init);
module_exit(sfu_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("sframe-unwind harness test: WARN_ON(1) at load");
