// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_unwind: the module's entry points.  Load sets up, in order, the
 * task work, the registry, deferred unwinding, the hooks, the device and
 * debugfs, registers what running processes map (scan.c), and then sends
 * perf's and ftrace's user stacks through SFrame (callchain.c); unload
 * takes them down in the reverse order.
 *
 * Each part has an init and an exit; a part with work in flight (deferred
 * requests, first-map waits, task work) also has a stop, which refuses
 * new work and waits for what runs, and every stop comes before any exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>

#include <sframe/version.h>
#include <sframe/decode.h>

#include "callchain.h"
#include "chardev.h"
#include "debugfs.h"
#include "deferred.h"
#include "filecache.h"
#include "mm_hooks.h"
#include "registry.h"
#include "scan.h"
#include "sidecar.h"
#include "sidecar_wait.h"
#include "stats.h"
#include "twork.h"

static bool sfu_scan_on_load = true;
module_param_named(scan_on_load, sfu_scan_on_load, bool, 0444);
MODULE_PARM_DESC(scan_on_load,
		 "Register the sections of processes already running at load (default on)");

static int __init sfu_init(void)
{
	u8 abi = sfu_native_abi();
	int ret;

	if (abi == SFU_ABI_ANY) {
		pr_err("SFrame defines no ABI for this architecture\n");
		return -ENODEV;
	}
	ret = sfu_stats_init();
	if (ret)
		return ret;
	ret = sfu_sidecar_init();
	if (ret)
		goto exit_stats;
	sfu_twork_init();
	sfu_first_map_init();
	ret = sfu_registry_init();
	if (ret)
		goto exit_sidecars;
	ret = sfu_deferred_module_init();
	if (ret)
		goto exit_registry;
	ret = sfu_mm_hooks_init();
	if (ret)
		goto exit_deferred;
	ret = sfu_chardev_init();
	if (ret) {
		pr_err("cannot register /dev/%s (%d)\n", KBUILD_MODNAME, ret);
		goto exit_hooks;
	}
	sfu_debugfs_init();
	if (sfu_scan_on_load)
		sfu_scan_all();
	sfu_callchain_init();
	pr_info("loaded, native SFrame ABI %s (%u)\n",
		sfu_abi_info(abi)->name, abi);
	return 0;

exit_hooks:
	sfu_mm_hooks_exit();
exit_deferred:
	sfu_deferred_stop();
	sfu_first_map_stop();
	sfu_twork_stop();
	sfu_deferred_module_exit();
exit_registry:
	sfu_registry_exit();
exit_sidecars:
	/* Hooks that ran before the failure may have made both. */
	sfu_sidecar_exit();
	sfu_fcache_exit();
exit_stats:
	sfu_stats_exit();
	return ret;
}

static void __exit sfu_exit(void)
{
	/* perf and ftrace first, the debugfs readers, what adds regions. */
	sfu_callchain_exit();
	sfu_debugfs_exit();
	sfu_chardev_exit();
	sfu_mm_hooks_exit();
	sfu_deferred_stop();
	sfu_first_map_stop();
	sfu_twork_stop();
	sfu_deferred_module_exit();
	sfu_registry_exit();
	sfu_sidecar_exit();
	sfu_fcache_exit();
	sfu_stats_exit();
}

module_init(sfu_init);
module_exit(sfu_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("User stack unwinding with SFrame");
MODULE_AUTHOR("sframe-unwind developers");
MODULE_VERSION(SFU_VERSION);
