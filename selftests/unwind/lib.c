// SPDX-License-Identifier: GPL-2.0
/*
 * libsfu_uw.so: the shared-library link of the unwinder selftests' call
 * chain.  tools/testing/qemu/run.sh builds it with SFrame (libsfu_uw.so), with
 * frame pointers and no SFrame (libsfu_uw_plain_fp.so), with neither
 * (libsfu_uw_plain_nofp.so), and without SFrame then given a V3 section by
 * tools/sframe-gen/sframe-gen --embed (libsfu_uw_gen.so), like the programs that
 * use it.
 */
#include "uw.h"
#include "uwlib.h"

/* Call back into the program: a frame of this library between two. */
__attribute__((noipa)) long uwl_call(long (*fn)(long x), long x)
{
	long r = fn(x + 1);

	r = uw_opaque(r);
	return r + 1;
}
