/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsfu_sc_plain.so (selftests/perf/sclib.c), the library in the middle
 * of sidecar_unwind's call chain; the program finds sc_lib_entry() with
 * dlsym() once it has registered the library's sidecar section.
 */
#ifndef _SELFTESTS_PERF_SCLIB_H
#define _SELFTESTS_PERF_SCLIB_H

typedef long (*sc_cb)(long x);
typedef long (*sc_entry_fn)(sc_cb cb, long x);

#define SC_ENTRY_SYM	"sc_lib_entry"

long sc_lib_entry(sc_cb cb, long x);
long sc_lib_mid(sc_cb cb, long x);

#endif /* _SELFTESTS_PERF_SCLIB_H */
