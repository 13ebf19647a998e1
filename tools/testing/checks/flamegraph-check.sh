#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# flamegraph-check.sh - open flame graphs in a browser and check what they
# draw
#
# Usage: flamegraph-check.sh [options] COMM WITHOUT.html WITH.html
#   COMM           the program's command name: the flame graph's frames
#                  "COMM (PID)" (perf's flamegraph report) hold its samples
#   WITHOUT.html   perf script report flamegraph of a run without the module
#   WITH.html      the same with the module
#   --reach RE     the frames that count as reaching the program's start
#                  (an extended regular expression; default ^main$)
#   --with PCT     at least PCT% of COMM's samples must reach it with the
#                  module (default 95)
#   --without PCT  at most PCT% may without it (default 5)
#   --of RE        count the share of the width of the frames matching RE
#                  (a function of the program: those inside a frame
#                  matching --reach, of all) instead of COMM's
#   --png PREFIX   also write PREFIX-without.png and PREFIX-with.png
#
# Each page is rendered by headless Chromium (Debian's chromium, which
# scripts/setup-host.sh browser installs); the frames it drew are read
# back from the page's DOM, so an empty profile, a broken template or a
# script error fails, where a look at the HTML file would not.  The share
# of COMM's width covered by frames matching --reach is what a reader of
# the picture sees: how many samples have a stack up to main.
# Prints TAP and "flamegraph: N passed, N failed".
set -uo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

reach='^main$'
with_min=95
without_max=5
png=""
of=""
while [ $# -gt 3 ]; do
	case $1 in
	--reach) reach=$2; shift 2 ;;
	--with) with_min=$2; shift 2 ;;
	--without) without_max=$2; shift 2 ;;
	--png) png=$2; shift 2 ;;
	--of) of=$2; shift 2 ;;
	*) echo "flamegraph-check: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -eq 3 ] || { echo "usage: flamegraph-check.sh [options] COMM WITHOUT.html WITH.html" >&2; exit 2; }
comm=$1
whose="$comm's"
[ -z "$of" ] || whose="/$of/'s"
"$root/scripts/setup-host.sh" browser > /dev/null || exit 2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Without background networking Chromium does not try to reach Google's
# hosts, which a closed network refuses at every start.
chrome=(timeout 180 chromium --headless --no-sandbox --disable-gpu
	--disable-quic --no-first-run --disable-background-networking
	--disable-component-update --disable-sync --hide-scrollbars
	--user-data-dir="$work/profile" --virtual-time-budget=10000)

# frames DOM: one line per frame drawn, "X WIDTH NAME".
frames() {
	sed 's/<g /\n<g /g' "$1" | awk '
		/^<g / && / class="frame/ {
			if (!match($0, /translate\([-0-9.e]+/))
				next
			x = substr($0, RSTART + 10, RLENGTH - 10)
			if (!match($0, / width="[-0-9.e]+"/))
				next
			w = substr($0, RSTART + 8, RLENGTH - 9)
			if (!match($0, / name="[^"]*"/))
				next
			print x, w, substr($0, RSTART + 7, RLENGTH - 8)
		}'
}

# share FRAMES: the percentage of COMM's width under frames matching
# --reach (a frame under another matching one counts once); with --of,
# of the width of the outermost frames matching it in COMM, the part
# inside frames matching --reach.
share() {
	awk -v comm="$comm" -v re="$reach" -v of="$of" '
		{
			name = $0
			sub(/^[^ ]+ [^ ]+ /, "", name)
			x = $1 + 0; w = $2 + 0
			if (name ~ ("^" comm " \\([0-9]+\\)$")) {
				cx[nc] = x; cw[nc++] = w; total += w
			} else if (name ~ re) {
				rx[nr] = x; rw[nr++] = w
			} else if (of != "" && name ~ of) {
				ox[no] = x; ow[no++] = w
			}
		}
		function inside(x, w, ox, ow) {
			return x >= ox - 0.01 && x + w <= ox + ow + 0.01
		}
		# outermost(I, X, W, N): frame I of the N in X, W is under no
		# other of them (of two alike, the first counts).
		function outermost(i, x, w, n,  j) {
			for (j = 0; j < n; j++)
				if (j != i && inside(x[i], w[i], x[j], w[j]) &&
				    (w[j] > w[i] || j < i))
					return 0
			return 1
		}
		# in_any(X, W, I, N, OX, OW): frame I of X, W is inside one of
		# the N frames OX, OW.
		function in_any(x, w, i, n, ox, ow,  j) {
			for (j = 0; j < n; j++)
				if (inside(x[i], w[i], ox[j], ow[j]))
					return 1
			return 0
		}
		END {
			if (of != "") {
				total = 0
				for (i = 0; i < no; i++)
					if (outermost(i, ox, ow, no) &&
					    in_any(ox, ow, i, nc, cx, cw)) {
						total += ow[i]
						if (in_any(ox, ow, i, nr, rx, rw))
							covered += ow[i]
					}
			} else {
				for (i = 0; i < nr; i++)
					if (outermost(i, rx, rw, nr) &&
					    in_any(rx, rw, i, nc, cx, cw))
						covered += rw[i]
			}
			printf "%.1f\n", total ? 100 * covered / total : -1
		}' "$1"
}

# check RUN HTML: render HTML, count its frames, and compare the share.
check() {
	local run=$1 html=$2 dom=$work/$1.dom drawn pct height

	if [ ! -s "$html" ]; then
		not_ok "$run: $html is missing or empty"
		return
	fi
	"${chrome[@]}" --window-size=1200,800 --dump-dom "file://$(realpath "$html")" \
		> "$dom" 2> "$work/$run.err"
	frames "$dom" > "$work/$run.frames"
	drawn=$(wc -l < "$work/$run.frames")
	pct=$(share "$work/$run.frames")
	echo "# $run: $drawn frames drawn, $pct% of $whose width up to /$reach/"
	if [ "$drawn" -lt 3 ] || [ "$pct" = -1.0 ]; then
		not_ok "$run: the page drew no frames of $comm"
		grep -v -i dbus "$work/$run.err" | tail -3 | sed 's/^/# /'
	elif [ "$run" = with ] &&
	     awk -v p="$pct" -v m="$with_min" 'BEGIN { exit !(p >= m) }'; then
		ok "$run: $pct% of $whose samples reach /$reach/ (at least $with_min%)"
	elif [ "$run" = without ] &&
	     awk -v p="$pct" -v m="$without_max" 'BEGIN { exit !(p <= m) }'; then
		ok "$run: $pct% of $whose samples reach /$reach/ (at most $without_max%)"
	else
		not_ok "$run: $pct% of $whose samples reach /$reach/"
	fi
	if [ -n "$png" ]; then
		# As tall as the graph (the page's buttons above it).
		height=$(grep -ao '<svg [^>]*height="[0-9.]*"' "$dom" | head -1 |
			 sed 's/.*height="\([0-9.]*\)"/\1/')
		height=$(awk -v h="${height:-0}" 'BEGIN { h += 80; print int(h < 400 ? 400 : h) }')
		"${chrome[@]}" --window-size="1200,$height" \
			--screenshot="$(realpath -m "$png-$run.png")" \
			"file://$(realpath "$html")" > /dev/null 2>&1
		tap_check "$run: picture $png-$run.png" test -s "$png-$run.png"
	fi
}

echo "TAP version 13"
check without "$2"
check with "$3"
tap_end flamegraph
