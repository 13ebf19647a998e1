// SPDX-License-Identifier: GPL-2.0
/*
 * libsfu_sc_plain.so: the middle of sidecar_unwind's call chain, built
 * -O2 -fomit-frame-pointer without SFrame.  The program calls
 * sc_lib_entry(), which calls sc_lib_mid(), which calls back into the
 * program: a walk from there can only get through these two frames with
 * the section tools/sframe-gen/sframe-gen made from the library's .eh_frame.
 */
#include "sclib.h"

#define NOIPA	__attribute__((noipa))

/* Each frame uses its callee's result, so no call becomes a jump. */
NOIPA long sc_lib_mid(sc_cb cb, long x)
{
	long buf[4] = { x, x + 1, x + 2, x + 3 };

	__asm__ volatile("" : : "r" (buf) : "memory");
	return cb(buf[x & 3]) * 3 + buf[1];
}

NOIPA long sc_lib_entry(sc_cb cb, long x)
{
	return sc_lib_mid(cb, x + 1) + 7;
}
