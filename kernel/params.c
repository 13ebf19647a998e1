// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters shared by the registry, the hooks and the device; in a
 * file of their own so that the KUnit suites link them without main.c.
 */
#include <linux/moduleparam.h>

#include <sframe/table.h>

#include "params.h"

/* Default bounds: far above real programs, far below harm. */
#define SFU_DEF_MAX_SECTIONS		1024
#define SFU_DEF_MAX_SECTION_BYTES	(64UL << 20)
#define SFU_DEF_MAX_MM_BYTES		(64UL << 20)
#define SFU_DEF_MAX_TOTAL_BYTES		(256UL << 20)

unsigned int sfu_max_sections = SFU_DEF_MAX_SECTIONS;
module_param_named(max_sections, sfu_max_sections, uint, 0644);
MODULE_PARM_DESC(max_sections,
		 "Most SFrame sections registered per process (default 1024)");

unsigned long sfu_max_section_bytes = SFU_DEF_MAX_SECTION_BYTES;
module_param_named(max_section_bytes, sfu_max_section_bytes, ulong, 0644);
MODULE_PARM_DESC(max_section_bytes,
		 "Largest .sframe section accepted, in bytes (default 64 MiB)");

unsigned long sfu_max_mm_bytes = SFU_DEF_MAX_MM_BYTES;
module_param_named(max_mm_bytes, sfu_max_mm_bytes, ulong, 0644);
MODULE_PARM_DESC(max_mm_bytes,
		 "Most kernel memory for one process's registry, in bytes (default 64 MiB)");

unsigned long sfu_max_total_bytes = SFU_DEF_MAX_TOTAL_BYTES;
module_param_named(max_total_bytes, sfu_max_total_bytes, ulong, 0644);
MODULE_PARM_DESC(max_total_bytes,
		 "Most kernel memory for all registries, sidecars and section copies, in bytes (default 256 MiB)");

bool sfu_validate_fres;
module_param_named(validate_fres, sfu_validate_fres, bool, 0644);
MODULE_PARM_DESC(validate_fres,
		 "Check every FRE of a section at registration (default: header and FDE index only)");

module_param_named(rule_cache, sfu_table_hot_enabled, bool, 0644);
MODULE_PARM_DESC(rule_cache,
		 "Answer rule-table lookups of recent PCs from their hot entries (default Y)");
