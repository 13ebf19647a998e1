/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the registry selftests and their helper programs: where the
 * test files live in the guest, and small readers for the module's
 * debugfs files (sections, stats, lookup).
 */
#ifndef _SELFTESTS_REGISTRY_H
#define _SELFTESTS_REGISTRY_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The guest's layout, set up by tools/testing/qemu/run.sh. */
#define SFU_BIN_DIR		"/selftests/bin"
#define SFU_LIB_DIR		"/selftests/lib"
#define SFU_PROG		SFU_BIN_DIR "/sfu_prog"
#define SFU_PROG2		SFU_BIN_DIR "/sfu_prog2"
#define SFU_LIB(n)		SFU_LIB_DIR "/libsfu_" n ".so"

#define SFU_DBG_DIR		"/sys/kernel/debug/sframe_unwind"
#define SFU_DBG_SECTIONS	SFU_DBG_DIR "/sections"
#define SFU_DBG_STATS		SFU_DBG_DIR "/stats"
#define SFU_DBG_LOOKUP		SFU_DBG_DIR "/lookup"
#define SFU_PARAM_DIR		"/sys/module/sframe_unwind/parameters"

/* One lookup answer: "0x<pc>: <rule>" or "0x<pc>: error: <text>". */
#define SFU_LINE_MAX		256
/* The whole sections listing of the guest stays well below this. */
#define SFU_LISTING_MAX		(1024 * 1024)

/* Every test library exports these two (selftests/registry/lib.c). */
#define SFU_LIB_CALL_SYM	"sfu_lib_call"
#define SFU_LIB_PC_SYM		"sfu_lib_pc"
long sfu_lib_call(long x);
unsigned long sfu_lib_pc(void);

const char *reg_err_name(int err);
char *reg_read_file(const char *path, size_t *len);
int reg_stat(const char *name, unsigned long long *val);
int reg_lookup(const unsigned long *pcs, unsigned int nr, char *out,
	       size_t len);
int reg_lookup_one(unsigned long pc, char *line, size_t len);
int reg_listing(pid_t pid, char *out, size_t len);
int reg_listed(pid_t pid, const char *needle);
int reg_elf_text(int fd, Elf64_Phdr *text, uint64_t *span);

#endif /* _SELFTESTS_REGISTRY_H */
