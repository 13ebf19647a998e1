#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The walker without SFrame: unwind_chain's source (selftests/unwind/
# chain.c) built twice without SFrame, program and library alike:
#   chain_plain_fp    with frame pointers (-fno-omit-frame-pointer; on
#                     s390x -mbackchain, whose back chain is the fallback
#                     there): both call chains must still be exact up to
#                     main, every step by the fallback (fallback > 0,
#                     sframe == 0);
#   chain_plain_nofp  with neither (-fomit-frame-pointer): the walk must
#                     end cleanly with frame 0 in the innermost function;
#                     what it finds beyond that is printed, not checked.
# The two programs' TAP is merged into one plan.
# shellcheck disable=SC3043  # busybox ash has local

dir=/selftests/unwind
KSFT_SKIP=4
n=0
fail=0
skipped=0

# run PROG MODE: its results renumbered into ours, the rest as comments.
run() {
	local out="/tmp/unwind_fp_fallback.$2" rc

	"$dir/$1" "$2" > "$out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*|"not ok "[0-9]*)
			n=$((n + 1))
			echo "$line" | sed -E "s/^(ok|not ok) [0-9]+/\\1 $n/"
			;;
		1..0*) echo "# $line" ;;
		"TAP version"*|1..*) ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done < "$out"
	rm -f "$out"
	case $rc in
	0) ;;
	"$KSFT_SKIP") skipped=$((skipped + 1)) ;;
	*) fail=1; echo "# $1 $2 exited $rc" ;;
	esac
}

echo "TAP version 13"
run chain_plain_fp fp
run chain_plain_nofp nofp
echo "1..$n"
[ "$fail" -eq 0 ] || exit 1
[ "$skipped" -lt 2 ] || exit "$KSFT_SKIP"
exit 0
