# SPDX-License-Identifier: GPL-2.0
#
# chain_share.awk - of the samples of a runtime's program, those taken in
# its chain's deepest function, and those of them whose stack holds the
# whole chain
#
#   awk -v lang=py|js|java -v chain="F1 F2 ..." -v native=K
#       -v roots="SYM|SYM" -v miss=FILE -f chain_share.awk SAMPLES
#
# SAMPLES is perf script -F ip,sym,dso: a sample a paragraph, innermost
# frame first.  A sample counts when its innermost frame of the runtime's
# code is F1 (chain, deepest first); it is whole when it holds F1, F2, ... in
# that order, a native frame (not the runtime's) between F(K-1) and FK
# (K = native; 0: none asked), and after them a frame named by the regex
# alternation roots (the native root: _start, say).  Prints
# "whole counted"; the first counted sample that is not whole goes to
# miss.

BEGIN {
	RS = ""
	nc = split(chain, want, " ")
}

# The runtime's own code is what perf names from its /tmp/perf-PID.map.
function ours(i) {
	return dso[i] ~ /\/perf-[0-9]+\.map$/
}

# perf names CPython's trampolines py::FUNCTION:FILE, V8's code
# JS:<tier>FUNCTION PLACE (the tier a mark: ~ interpreted, ^ baseline,
# + and * optimised; node 18's V8 says LazyCompile: or Function:), HotSpot's compiled methods TYPE CLASS.METHOD(ARGS)
# (fn is CLASS.METHOD then) and every interpreted one "Interpreter": a
# caller in the chain (k > 1) may be that, the deepest must be named.
function is(i, fn, k) {
	if (lang == "py")
		return index(sym[i], "py::" fn ":") == 1
	if (lang == "js")
		return sym[i] ~ ("^(JS|LazyCompile|Function):[~^+*]?" fn "( |$)")
	if (k > 1 && sym[i] == "Interpreter")
		return 1
	return index(sym[i], " " fn "(") > 0
}

function missed(sample) {
	if (!nmiss++)
		print sample > miss
}

{
	n = split($0, line, "\n")
	for (i = 1; i <= n; i++) {
		s = line[i]
		sub(/^[ \t]*[0-9a-f]+ /, "", s)
		dso[i] = s
		sub(/ \([^()]*\)$/, "", s)
		sym[i] = s
		sub(/^.* \(/, "", dso[i])
		sub(/\)$/, "", dso[i])
	}
	i = 1
	while (i <= n && !ours(i))
		i++
	if (i > n || !is(i, want[1], 1))
		next
	counted++
	k = 1
	seen_native = 0
	for (; i <= n && k <= nc; i++) {
		if (is(i, want[k], k)) {
			if (k == native && !seen_native)
				break
			k++
		} else if (k == native && !ours(i)) {
			seen_native = 1
		}
	}
	if (k <= nc) {
		missed($0)
		next
	}
	for (; i <= n; i++)
		if (sym[i] ~ ("^(" roots ")$")) {
			whole++
			next
		}
	missed($0)
}

END {
	print whole + 0, counted + 0
}
