#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Walks through a library without SFrame of its own, with a section that
# tools/sframe-gen/sframe-gen made on the host from the library's .eh_frame and
# that is registered with SFRAME_UNWIND_IOC_ADD_FILE before the library is
# mapped: selftests/perf/sidecar.c says what is checked.

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

if [ ! -x "$dir/sidecar_unwind" ]; then
	echo "TAP version 13"
	skip_all "no sidecar_unwind program was built for $(uname -m)"
fi
exec "$dir/sidecar_unwind"
