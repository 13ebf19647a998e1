#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# table-row.sh - the user guide's kernel figures, read off a guest's log
#
# Usage: tools/testing/checks/table-row.sh LOG...
#
# LOG is what tools/testing/qemu/run.sh ARCH KVER printed (make check-all keeps
# it as build/check/qemu-ARCH-KVER.log).  For each, one line in the
# columns of testing.rst's table of figures (Kernel runs): the kernel, the
# architecture, the samples whose stack reaches main under perf record -g
# with the module and without it (perf_callchain.sh), under bpftrace's
# ustack with and without it and for Debian's python3 after sframectl
# sync (bpf_ustack.sh), and the forked children's (perf_fork.sh); then
# the run's "N passed, N failed".  A figure the log does not have (a
# test skipped or not run) is "-".  So the table is copied from runs,
# not retyped.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: ${0##*/} LOG..." >&2; exit 2; }

for log in "$@"; do
	awk '
	function frac(a, b) { return b == "" ? "-" : a "/" b }
	/^# qemu-run: [a-z0-9_]+ kernel / && !kernel {
		arch = $3; kernel = $5; sub(/-(amd64|arm64|s390x)$/, "", kernel)
		if (arch == "x86_64") arch = "x86-64"
	}
	/^# # with: in the program: / && !g { g = $NF; gn = $7; sub(/,/, "", gn) }
	/^# # without: in the program: / && !ng { ng = $NF; ngn = $7; sub(/,/, "", ngn) }
	/^# # with: [0-9]+ samples, [0-9]+ reach / { u = $6; un = $4 }
	/^# # without: [0-9]+ samples, [0-9]+ reach / { nu = $6; nun = $4 }
	/^# # py_sync: [0-9]+ samples, / { py = $6; pyn = $4 }
	/^# # children.s samples from / { c = $10; cn = $7; sub(/,/, "", cn); sub(/;/, "", c) }
	/^# qemu-run-.*: [0-9]+ passed, [0-9]+ failed$/ { res = $(NF-3) " passed, " $(NF-1) " failed" }
	END {
		printf "%-24s %-6s %-9s %-7s %-10s %-7s %-9s %-11s %s\n",
		       kernel, arch, frac(g, gn), frac(ng, ngn),
		       frac(u, un), frac(nu, nun), frac(py, pyn), frac(c, cn),
		       res == "" ? "(no result)" : res
	}' "$log"
done
