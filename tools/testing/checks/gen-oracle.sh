#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gen-oracle.sh - sframe-gen checked against readelf's reading of .eh_frame
#
# Usage: gen-oracle.sh [OUTDIR]     (default build/gen)
#
# For each test binary (tools/testing/corpus/corpus-src.c with -O2
# -fomit-frame-pointer, -O0 and -O2 -fno-omit-frame-pointer, a DRAP
# function, hand-written CFI; Debian's libc.so.6, ld-linux, libstdc++.so.6,
# bash and python3 of the host; the corpus cross-compiled for aarch64 and
# s390x, and Debian's arm64 and s390x packages of the same five, unpacked
# with dpkg -x by scripts/fetch-debs.sh):
#   - generates SFrame V3 (at a high --vaddr) and V2 (at --vaddr 0);
#   - checks that the decoder accepts the section (sframe-dump --validate);
#   - decodes the rule at every address (sframe-dump --expand --vaddr) and
#     compares CFA, RA and FP with the rule in force at the same address in
#     `readelf --debug-dump=frames-interp` (CFA/register "exp" entries are
#     resolved from the expressions in `readelf --debug-dump=frames`, ld's
#     x86-64 PLT expression entry by entry).  Every address SFrame
#     describes must agree; the coverage printed is the addresses SFrame
#     describes over the addresses with CFI;
#   - compares every row of the CFI interpreter (sframe-gen --dump-rows),
#     expressible in SFrame or not, with readelf's rows.
# Also: copies with the section embedded (--embed) have GNU_SFRAME, read
# back as the raw section, and (x86-64: a test program and bash) still
# run; gas-built V1 programs upgraded with --from-v1 keep every rule and
# agree with the .eh_frame-derived V3.
# Malformed .eh_frame copies must give an error naming the offset, never a
# crash (sframe-gen is built with ASan and UBSan for them), and a file
# without section headers is read through PT_GNU_EH_FRAME.
# Prints TAP and "# gen-oracle: N passed, N failed".
set -u

root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:-$root/build/gen}
# The tools, built by make check-gen (GEN_ASAN with ASan and UBSan).
gen=${GEN:-$root/tools/sframe-gen/sframe-gen}
dump=${DUMP:-$root/tools/sframe-dump/sframe-dump}
gen_asan=${GEN_ASAN:-$root/build/sframe-gen-asan}
# V3 sections are encoded for a high address to exercise PC-relative
# starts; V2 keeps 32-bit starts, so it is encoded near the code.
v3_vaddr=0x7f0000000000
v2_vaddr=0
cd "$root" || exit 2
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"
prog="gen-oracle"
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

indent() {
	sed 's/^/# /'
}

# ---- readelf's rows as address intervals ----
#
# readelf_rules ARCH FRAMES INTERP
# Input: `readelf --debug-dump=frames` then `--debug-dump=frames-interp`.
# Output: "LO HI RULE" (decimal, [LO, HI)), RULE in sfu_rule_format()'s
# words: "cfa=sp+8 ra=*(cfa-8) fp=same", "outermost", or with "?" where
# SFrame has no equivalent.  readelf prints "u" both for a register with
# no rule yet and for DW_CFA_undefined; "u" is taken as undefined only
# where the record or its CIE has a DW_CFA_undefined for that register.
readelf_rules() {
	awk -v arch="$1" '
	BEGIN {
		if (arch == "x86_64") {
			k = split("rax rdx rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 rip", names, " ")
			SP = 7
			FP = 6
		} else if (arch == "aarch64") {
			for (k = 0; k <= 30; k++)
				names[k + 1] = "x" k
			names[++k] = "sp"
			SP = 31
			FP = 29
		} else {
			for (k = 0; k <= 15; k++)
				names[k + 1] = "r" k
			SP = 15
			FP = 11
		}
		for (i = 1; i <= k; i++)
			REGNO[names[i]] = i - 1
		FPCOL = names[FP + 1]
	}
	function canon_reg(r) {
		return r == SP ? "sp" : r == FP ? "fp" : "r" r
	}
	function off_str(o) {
		return o == 0 ? "" : sprintf("%+d", o)
	}
	# "DW_OP_breg7 (rsp): 160; DW_OP_deref[; DW_OP_plus_uconst: 8]" ->
	# "7 160 1 8" (register, offset, loads, added after the load), else "".
	function parse_expr(t,   p, k, reg, off, deref, add) {
		k = split(t, p, "; ")
		if (k < 1 || k > 3 || p[1] !~ /^DW_OP_breg[0-9]+ \([a-z0-9]+\): -?[0-9]+$/)
			return ""
		deref = k > 1 && p[2] == "DW_OP_deref"
		add = 0
		if (k > 1 + deref) {
			if (p[k] !~ /^DW_OP_plus_uconst: [0-9]+$/ || k > 2 + deref)
				return ""
			add = substr(p[k], 20) + 0
		}
		reg = substr(p[1], 11)
		sub(/ .*/, "", reg)
		off = p[1]
		sub(/.*: /, "", off)
		if (!deref)
			return reg " " (off + add) " 0 0"
		return reg " " off " 1 " add
	}
	# The value an expression computes, with @extra more loads; ld'"'"'s
	# x86-64 PLT CFA, rsp + 8 + (((rip & 15) >= T) << 3), as "pltT".
	function expr_value(t, extra,   e, f) {
		if (extra == 0 && match(t, /^DW_OP_breg7 \(rsp\): 8; DW_OP_breg16 \(rip\): 0; DW_OP_lit15; DW_OP_and; DW_OP_lit[0-9]+; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus$/)) {
			e = t
			sub(/.*DW_OP_and; DW_OP_lit/, "", e)
			sub(/;.*/, "", e)
			return "plt" e
		}
		e = parse_expr(t)
		if (e == "")
			return "?exp"
		split(e, f, " ")
		f[3] += extra
		if (f[3] > 1)
			return "?exp"
		if (f[3])
			return "*(" canon_reg(f[1]) sprintf("%+d", f[2]) ")" off_str(f[4] + 0)
		return canon_reg(f[1]) off_str(f[2] + 0)
	}
	# Expressions by record and key, each with the address it starts at:
	# a row takes the last one set at or before its address.
	function remember(key, v,   n) {
		n = ++NEXP[rec, key]
		EXPLOC[rec, key, n] = loc
		EXP[rec, key, n] = v
	}
	function expr_at(r, key,   i, v) {
		v = ""
		for (i = 1; i <= NEXP[r, key]; i++)
			if (EXPLOC[r, key, i] <= row_loc || r == cie)
				v = EXP[r, key, i]
		return v
	}
	function lookup(key,   a, b) {
		a = expr_at(rec, key)
		b = is_fde ? expr_at(cie, key) : ""
		if (a == "" && b == "")
			return "?exp"
		return a != "" ? a : b
	}
	# DW_CFA_undefined for register @r is in force at this row.
	function undefined(r) {
		if ((rec, r) in UNDEF && (!is_fde || row_loc >= UNDEF[rec, r]))
			return 1
		return is_fde && (cie, r) in UNDEF
	}
	function reg_value(v, r, undef) {
		if (v == "u" && undefined(r))
			return undef
		if (v == "u" || v == "s")
			return "same"
		if (v ~ /^c[+-][0-9]+$/)
			return "*(cfa" substr(v, 2) ")"
		if (v ~ /^v[+-][0-9]+$/)
			return "cfa" off_str(substr(v, 2) + 0)
		if (v == "exp")
			return lookup("r" r)
		if (v == "vexp")
			return lookup("v" r)
		# DW_CFA_register: "r1 (rdx)"
		if (v ~ /^r[0-9]+ \(/) {
			sub(/ .*/, "", v)
			return canon_reg(substr(v, 2) + 0)
		}
		return "?" v
	}
	function cfa_value(v,   name) {
		if (v == "exp")
			return lookup("cfa")
		if (!match(v, /[+-][0-9]+$/))
			return "?" v
		name = substr(v, 1, RSTART - 1)
		if (!(name in REGNO))
			return "?" v
		return canon_reg(REGNO[name]) off_str(substr(v, RSTART) + 0)
	}
	# The row'"'"'s values; a register is printed as two words, "r1 (rdx)".
	function split_row(   i, k) {
		k = 0
		for (i = 1; i <= NF; i++) {
			VAL[++k] = $i
			if (i < NF && $(i + 1) ~ /^\(/)
				VAL[k] = VAL[k] " " $(++i)
		}
		return k
	}
	function row_rule(   i, k, cfa, ra, fp) {
		cfa = "?"
		ra = "same"
		fp = "same"
		k = split_row()
		for (i = 2; i <= k; i++) {
			if (COL[i] == "CFA")
				cfa = cfa_value(VAL[i])
			else if (COL[i] == "ra")
				ra = reg_value(VAL[i], ranum, "outermost")
			else if (COL[i] == FPCOL)
				fp = reg_value(VAL[i], FP, "undef")
		}
		if (ra == "outermost")
			return ra
		return "cfa=" cfa " ra=" ra " fp=" fp
	}
	function emit(a, b, rule,   t, rest, blk) {
		if (a < lo)
			a = lo
		if (b > hi)
			b = hi
		if (rule !~ /^cfa=plt[0-9]+ /) {
			if (a < b)
				printf "%.0f %.0f %s\n", a, b, rule
			return
		}
		# The PLT rule, 16-byte entry by entry.
		t = substr(rule, 8, index(rule, " ") - 8) + 0
		rest = substr(rule, index(rule, " "))
		for (blk = a - a % 16; blk < b; blk += 16) {
			emit_part(a, b, blk, blk + t, "cfa=sp+8" rest)
			emit_part(a, b, blk + t, blk + 16, "cfa=sp+16" rest)
		}
	}
	function emit_part(a, b, x, y, rule) {
		if (x < a)
			x = a
		if (y > b)
			y = b
		if (x < y)
			printf "%.0f %.0f %s\n", x, y, rule
	}
	function flush() {
		if (in_rec && is_fde && nrows)
			emit(prev_loc, hi, prev_rule)
		else if (in_rec && is_fde)
			emit(lo, hi, (cie in CIE_RULE) ? CIE_RULE[cie] : "?cie")
		in_rec = 0
	}
	function start_rec(   i, pr) {
		rec = $1
		in_rec = 1
		nrows = 0
		ncol = 0
		is_fde = $4 == "FDE"
		if (!is_fde) {
			for (i = 5; i <= NF; i++)
				if ($i ~ /^ra=/)
					RA_OF[rec] = substr($i, 4)
			cie = rec
			ranum = RA_OF[rec]
			return
		}
		cie = substr($5, 5)
		ranum = RA_OF[cie]
		split(substr($6, 4), pr, "[.][.]")
		lo = ("0x" pr[1]) + 0
		hi = ("0x" pr[2]) + 0
	}
	# Pass 1: the expressions, by record.
	FNR == NR {
		if ($0 ~ /^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ (CIE|FDE)/) {
			rec = $1
			loc = 0
			if ($4 == "FDE")
				loc = ("0x" substr($6, 4, index($6, ".") - 4)) + 0
			next
		}
		t = $0
		if (match(t, /^ *DW_CFA_advance_loc[0-9]*: [0-9]+ to [0-9a-f]+$/)) {
			loc = ("0x" $NF) + 0
		} else if (match(t, /^ *DW_CFA_undefined: r[0-9]+/)) {
			r = substr(t, RSTART, RLENGTH)
			sub(/.* r/, "", r)
			if (!((rec, r + 0) in UNDEF))
				UNDEF[rec, r + 0] = loc
		} else if (sub(/^ *DW_CFA_def_cfa_expression \(/, "", t)) {
			sub(/\)$/, "", t)
			remember("cfa", expr_value(t, 0))
		} else if (match(t, /^ *DW_CFA_(val_)?expression: r[0-9]+ /)) {
			val = t ~ /DW_CFA_val_/
			r = substr(t, RSTART, RLENGTH)
			sub(/.* r/, "", r)
			sub(/ $/, "", r)
			sub(/^ *DW_CFA_(val_)?expression: r[0-9]+ (\([a-z0-9]+\) )?\(/, "", t)
			sub(/\)$/, "", t)
			remember((val ? "v" : "r") r, expr_value(t, val ? 0 : 1))
		}
		next
	}
	# Pass 2: the rows.
	/^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ (CIE|FDE)/ {
		flush()
		start_rec()
		next
	}
	/ZERO terminator/ {
		flush()
		next
	}
	in_rec && $1 == "LOC" {
		for (i = 1; i <= NF; i++)
			COL[i] = $i
		next
	}
	in_rec && /^[0-9a-f]+ / {
		row_loc = ("0x" $1) + 0
		rule = row_rule()
		if (!is_fde) {
			CIE_RULE[rec] = rule
			next
		}
		loc = ("0x" $1) + 0
		if (nrows)
			emit(prev_loc, loc, prev_rule)
		prev_loc = loc
		prev_rule = rule
		nrows++
	}
	END {
		flush()
	}' "$2" "$3"
}

# ---- the comparison ----
#
# Input: sorted readelf intervals, then `sframe-dump --expand` lines, then
# the architecture.  Output: "covered with_cfi mismatches", after up to 10
# "# " lines that show mismatches.  A rule with the module's SP word
# ("cfa=*(sp+152) ra=*(cfa+0) ... sp=cfa+8", see SFU_FLEX_CTRL_SP) is
# compared in readelf's words ("cfa=*(sp+152)+8 ra=*(cfa-8) ...").
compare_rules() {
	awk -v arch="$3" '
	BEGIN {
		nr = 0
		k = 0
		SPOFF = arch == "s390x" ? -160 : 0
	}
	# "*(cfa+0)" with the CFA moved by -@a: "*(cfa-8)" for @a 8.
	function unfold(loc, a,   o) {
		if (!match(loc, /cfa[+-][0-9]+/))
			return loc
		o = substr(loc, RSTART + 3, RLENGTH - 3) - a
		return substr(loc, 1, RSTART + 2) sprintf("%+d", o) substr(loc, RSTART + RLENGTH)
	}
	FNR == NR {
		LO[nr] = $1 + 0
		HI[nr] = $2 + 0
		r = $3
		for (i = 4; i <= NF; i++)
			r = r " " $i
		RULE[nr++] = r
		total += $2 - $1
		next
	}
	$2 == "error:" {
		next
	}
	{
		pc = substr($1, 1, length($1) - 1) + 0
		got = $2 == "outermost" ? "outermost" : $2 " " $3 " " $4
		if ($5 ~ /^sp=cfa[+-][0-9]+$/) {
			a = substr($5, 7) - SPOFF
			got = $2 sprintf("%+d", a) " " unfold($3, a) " " unfold($4, a)
		}
		if (pc < last)
			k = 0
		last = pc
		while (k < nr && HI[k] <= pc)
			k++
		if (!(k < nr && LO[k] <= pc)) {
			# No CFI: padding between merged functions.
			pad++
			next
		}
		want = RULE[k]
		covered++
		if (got != want && ++bad <= 10)
			printf "# %s sframe \"%s\" readelf \"%s\"\n", $1, got, want
	}
	END {
		printf "%.0f %.0f %.0f %.0f\n", covered, total, bad, pad
	}' "$1" "$2"
}

# check_rules NAME VERSION VADDR BIN SFRAME ARCH
# The addresses SFrame describes without CFI must be exactly the padding
# that sframe-gen --stats says it verified between merged functions.
check_rules() {
	local name=$1 ver=$2 vaddr=$3 bin=$4 sf=$5 arch=$6 res covered total bad
	local pad gen_pad

	readelf --debug-dump=frames "$bin" > "$out/$name.frames" 2>&1
	readelf --debug-dump=frames-interp "$bin" > "$out/$name.interp" 2>&1
	readelf_rules "$arch" "$out/$name.frames" "$out/$name.interp" |
		sort -n -k1,1 -k2,2 > "$out/$name.rows"
	"$dump" --expand --vaddr "$vaddr" "$sf" > "$out/$name.v$ver.expand"
	res=$(compare_rules "$out/$name.rows" "$out/$name.v$ver.expand" "$arch")
	read -r covered total bad pad < <(printf '%s\n' "$res" | tail -1)
	gen_pad=$(sed -n 's/.*(\([0-9]*\) padding bytes between)$/\1/p' \
		  "$out/$name.v$ver.stats")
	if [ "${bad:-1}" -eq 0 ] && [ "${covered:-0}" -gt 0 ] &&
	   [ "${pad:-x}" = "${gen_pad:-y}" ]; then
		ok "$name: V$ver agrees with readelf at every covered address, coverage $covered/$total ($(awk -v c="$covered" -v t="$total" 'BEGIN { printf "%.2f", t ? 100 * c / t : 0 }')%), $pad padding bytes between merged functions"
	else
		not_ok "$name: V$ver differs from readelf (${bad:-?} of ${covered:-?} addresses; ${pad:-?} without CFI, sframe-gen verified ${gen_pad:-?} padding bytes)"
		printf '%s\n' "$res" | grep '^#'
	fi
}

# merge_rows: sort "LO HI RULE" lines and join neighbours with equal rules.
merge_rows() {
	sort -n -k1,1 -k2,2 | awk '
	{
		rule = substr($0, length($1) + length($2) + 3)
	}
	n && $1 == hi && rule == last {
		hi = $2
		next
	}
	{
		if (n++)
			print lo, hi, last
		lo = $1
		hi = $2
		last = rule
	}
	END {
		if (n)
			print lo, hi, last
	}'
}

# check_rows NAME ARCH BIN: the interpreter's rows against readelf's, for
# every FDE, whether SFrame can express the rows or not.
check_rows() {
	local name=$1 arch=$2 bin=$3 rows

	[ -f "$out/$name.frames" ] ||
		readelf --debug-dump=frames "$bin" > "$out/$name.frames" 2>&1
	[ -f "$out/$name.interp" ] ||
		readelf --debug-dump=frames-interp "$bin" > "$out/$name.interp" 2>&1
	readelf_rules "$arch" "$out/$name.frames" "$out/$name.interp" |
		merge_rows > "$out/$name.readelf-rows"
	if ! "$gen" --dump-rows "$bin" 2> "$out/$name.dump.err" |
		merge_rows > "$out/$name.gen-rows"; then
		not_ok "$name: sframe-gen --dump-rows failed"
		indent < "$out/$name.dump.err"
		return
	fi
	rows=$(wc -l < "$out/$name.gen-rows")
	if [ "$rows" -gt 0 ] &&
	   cmp -s "$out/$name.readelf-rows" "$out/$name.gen-rows"; then
		ok "$name ($arch): all $rows CFI row ranges equal readelf's"
	else
		not_ok "$name ($arch): CFI rows differ from readelf's"
		diff "$out/$name.readelf-rows" "$out/$name.gen-rows" |
			head -10 | indent
	fi
}

# standard SFRAME: no two FDEs share FREs: their FRE counts add up to the
# header's, which is what binutils' libsframe requires of a section whose
# byte order it swaps.
standard() {
	"$dump" "$1" | awk '
		/^element / { for (i = 1; i < NF; i++) if ($i == "fres") want = $(i + 1) }
		/^  fde / { for (i = 1; i < NF; i++) if ($i == "fres") sum += $(i + 1) }
		END { exit !(want > 0 && sum == want) }'
}

# check_binary NAME BIN [ARCH]
check_binary() {
	local name=$1 bin=$2 arch=${3:-x86_64} ver vaddr sf

	for ver in 3 2; do
		vaddr=$v3_vaddr
		[ "$ver" = 2 ] && vaddr=$v2_vaddr
		sf=$out/$name.v$ver.sframe
		if "$gen" --version=$ver --vaddr $vaddr --stats -o "$sf" "$bin" \
			> "$out/$name.v$ver.stats" 2> "$out/$name.v$ver.err"; then
			ok "$name: sframe-gen --version=$ver ($(awk '$1 == "FDEs" { f = $2 } $1 == "bytes" { b = $2 } END { print f " FDEs, " b " bytes" }' "$out/$name.v$ver.stats"))"
		else
			not_ok "$name: sframe-gen --version=$ver failed"
			indent < "$out/$name.v$ver.err"
			continue
		fi
		if "$dump" --validate --vaddr $vaddr "$sf"; then
			ok "$name: V$ver section validates"
		else
			not_ok "$name: V$ver section does not validate"
		fi
		check_rules "$name" "$ver" "$vaddr" "$bin" "$sf" "$arch"
	done
	if standard "$out/$name.v3.sframe"; then
		ok "$name: V3 section is standard (each FDE owns its FREs, as libsframe needs to swap its byte order)"
	else
		not_ok "$name: V3 section has FDEs that share FREs"
	fi
	sed -n 's/^  \(FDEs\|skipped\|cut\|coverage\)/#   \1/p' "$out/$name.v3.stats"
	check_rows "$name" "$arch" "$bin"
}

# covered STATS: the bytes a section describes, from sframe-gen --stats.
covered() {
	awk '$1 == "coverage" { print $2 }' "$1"
}

# check_sp_word NAME BIN: --sp-word describes more of BIN than the standard
# section (the CFAs of the form *(reg+off)+k), still agrees with readelf at
# every address it describes, and --embed refuses it.
check_sp_word() {
	local name=$1-sp bin=$2 sf more

	sf=$out/$name.v3.sframe
	if ! "$gen" --sp-word --vaddr $v3_vaddr --stats -o "$sf" "$bin" \
		> "$out/$name.v3.stats" 2> "$out/$name.v3.err"; then
		not_ok "$name: sframe-gen --sp-word failed"
		return
	fi
	more=$(( $(covered "$out/$name.v3.stats") -
		 $(covered "$out/$1.v3.stats") ))
	if [ "$more" -gt 0 ] && "$dump" --validate --vaddr $v3_vaddr "$sf"; then
		ok "$name: --sp-word describes $more more bytes, validates"
	else
		not_ok "$name: --sp-word describes $more more bytes, or does not validate"
	fi
	check_rules "$name" 3 "$v3_vaddr" "$bin" "$sf" x86_64
	if "$gen" --sp-word --embed "$out/$name.emb" "$bin" 2> /dev/null; then
		not_ok "$name: --embed took the module-only --sp-word"
	else
		ok "$name: --embed refuses --sp-word"
	fi
}

# check_shared NAME BIN [ARCH]: sframectl's form (--share-rows --sp-word)
# is smaller than the standard section, is not standard, and still agrees
# with readelf at every address.
check_shared() {
	local name=$1-shared bin=$2 arch=${3:-x86_64} sf std

	sf=$out/$name.v3.sframe
	std=$out/$1.v3.sframe
	if ! "$gen" --share-rows --sp-word --vaddr $v3_vaddr --stats \
		-o "$sf" "$bin" > "$out/$name.v3.stats" 2> "$out/$name.v3.err"; then
		not_ok "$name: sframe-gen --share-rows failed"
		return
	fi
	if [ "$(stat -c %s "$sf")" -lt "$(stat -c %s "$std")" ] &&
	   ! standard "$sf" && "$dump" --validate --vaddr $v3_vaddr "$sf"; then
		ok "$name: --share-rows: $(stat -c %s "$sf") bytes against $(stat -c %s "$std"), FDEs share FREs, validates"
	else
		not_ok "$name: --share-rows is not smaller, not shared, or does not validate"
	fi
	check_rules "$name" 3 "$v3_vaddr" "$bin" "$sf" "$arch"
}

# check_embed NAME BIN [RUN...]: a copy with the V3 section embedded has
# GNU_SFRAME, reads back as the raw section written with it, and (given a
# command line, the copy standing in for "{}") still runs.
check_embed() {
	local name=$1 bin=$2 emb=$out/$1.emb vaddr rc
	local -a cmd

	shift 2
	if ! "$gen" --embed "$emb" -o "$emb.sframe" "$bin" 2> "$emb.err"; then
		not_ok "$name: sframe-gen --embed failed"
		indent < "$emb.err"
		return
	fi
	if readelf -lW "$emb" | grep -q '^ *GNU_SFRAME '; then
		ok "$name: embedded copy has a GNU_SFRAME program header"
	else
		not_ok "$name: no GNU_SFRAME in readelf -lW"
	fi
	vaddr=$(readelf -SW "$emb" | sed -n 's/.*\] \.sframe  *[A-Z]*  *\([0-9a-f]*\) .*/0x\1/p')
	if "$dump" --validate "$emb" &&
	   cmp -s <("$dump" "$emb" | tail -n +2) \
		  <("$dump" --vaddr "${vaddr:-0}" "$emb.sframe" | tail -n +2); then
		ok "$name: embedded section at $vaddr reads back as the raw one"
	else
		not_ok "$name: embedded section differs from the raw one"
	fi
	[ $# -gt 0 ] || return
	cmd=("${@//\{\}/$emb}")
	"${cmd[@]}" > "$emb.run" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && cmp -s "$emb.run" <("${@//\{\}/$bin}" 2>&1); then
		ok "$name: embedded copy runs like the original ($(head -c 40 "$emb.run" | tr '\n' ' '))"
	else
		not_ok "$name: embedded copy: exit $rc or different output"
		indent < "$emb.run" | head -5
	fi
}

# check_from_v1 NAME CC: a gas-built (V1) program upgraded with --from-v1
# keeps every rule of its V1 section, and agrees with sframe-gen's own V3
# for the same program wherever both describe an address.
check_from_v1() {
	local name=$1 cc=$2 bin=$out/$1 res

	if ! "$cc" -O2 -Wa,--gsframe -o "$bin" \
		"$root/tools/testing/corpus/corpus-src.c"; then
		not_ok "$name: compile with --gsframe"
		return
	fi
	if ! "$gen" --from-v1 --stats --vaddr $v3_vaddr -o "$bin.up" "$bin" \
		> "$bin.up.stats" 2>&1 ||
	   ! "$gen" --vaddr $v3_vaddr -o "$bin.gen" "$bin" 2>> "$bin.up.stats"; then
		not_ok "$name: sframe-gen --from-v1 failed"
		indent < "$bin.up.stats"
		return
	fi
	"$dump" --expand "$bin" > "$bin.v1.expand"
	"$dump" --expand --vaddr $v3_vaddr "$bin.up" > "$bin.up.expand"
	"$dump" --expand --vaddr $v3_vaddr "$bin.gen" > "$bin.gen.expand"
	if [ -s "$bin.v1.expand" ] && cmp -s "$bin.v1.expand" "$bin.up.expand"; then
		ok "$name: --from-v1 V3 has the V1 rule at all $(wc -l < "$bin.v1.expand") addresses ($(sed 's/.*: //' "$bin.up.stats"))"
	else
		not_ok "$name: --from-v1 output differs from the V1 section"
		diff "$bin.v1.expand" "$bin.up.expand" | head -5 | indent
	fi
	res=$(join <(awk '{ print $1, $2, $3, $4 }' "$bin.up.expand" | sort) \
		   <(awk '{ print $1, $2, $3, $4 }' "$bin.gen.expand" | sort) |
	      awk '{ n++ } $2 != $5 || $3 != $6 || $4 != $7 { bad++ }
		   END { print n + 0, bad + 0 }')
	if [ "${res#* }" = 0 ] && [ "${res% *}" -gt 0 ]; then
		ok "$name: --from-v1 and .eh_frame-derived V3 agree at all ${res% *} addresses both describe"
	else
		not_ok "$name: --from-v1 and .eh_frame-derived V3 differ (${res#* } of ${res% *})"
	fi
}

# expect_rule NAME EXPAND PATTERN: a rule the generator must have produced.
expect_rule() {
	if grep -q -- "$3" "$2"; then
		ok "$1: has a row with $3"
	else
		not_ok "$1: no row with $3"
	fi
}

# ---- test programs ----

drap_src() {
	cat <<'EOF'
#include <string.h>

__attribute__((noinline)) int drap(int n)
{
	char *p = __builtin_alloca(n);
	double __attribute__((aligned(32))) v[4];

	memset(p, 1, n);
	v[0] = p[0];
	__asm__ volatile("" : : "m"(v));
	return p[n - 1] + (int)v[0];
}

int main(int argc, char **argv)
{
	return drap(argc + 10) == 2 ? 0 : 1;
}
EOF
}


# ---- malformed input ----

# patch FILE OFFSET HEXBYTES: overwrite bytes in place.
patch() {
	printf '%b' "$(printf '%s' "$3" | sed 's/\(..\)/\\x\1/g')" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

le32() {
	printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255))
}

# bad_input NAME BASE EH_OFF REC_OFF HEXBYTES EXPECT_RC MESSAGE
bad_input() {
	local name=$1 base=$2 eh=$3 at=$4 bytes=$5 want=$6 msg=$7 f rc

	f=$out/bad-$name
	cp "$base" "$f"
	patch "$f" $((eh + at)) "$bytes"
	ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99 \
		"$gen_asan" -o "$f.sframe" "$f" > "$f.out" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -q -- "$msg" "$f.out"; then
		ok "malformed: $name: exit $rc, \"$(grep -m1 -- "$msg" "$f.out" | sed 's/^sframe-gen: [^:]*: //')\""
	else
		not_ok "malformed: $name: exit $rc, wanted $want and \"$msg\""
		indent < "$f.out"
	fi
}

check_malformed() {
	local base=$1 eh fde ptr

	eh=$(readelf -SW "$base" |
	     awk '$2 == ".eh_frame" { print "0x" $5 } $3 == ".eh_frame" { print "0x" $6 }' |
	     head -1)
	eh=$((eh))
	# The first FDE after the first CIE, and its CIE pointer.
	fde=$(readelf --debug-dump=frames "$base" |
	      awk '$4 == "FDE" { print "0x" $1; exit }')
	fde=$((fde))
	ptr=$((fde + 4))
	bad_input length-past-end "$base" $eh 0 "f0ffff7f" 1 \
		"0x0: record runs past the end of .eh_frame"
	bad_input truncated-64bit-length "$base" $eh 0 "ffffffffffffff" 1 \
		"runs past the end of .eh_frame"
	bad_input reserved-length "$base" $eh 0 "f5ffffff" 1 \
		"0x0: reserved record length"
	bad_input cie-cycle "$base" $eh $ptr "$(le32 4)" 1 \
		"$(printf '0x%x' $ptr): CIE pointer does not lead to a CIE"
	bad_input cie-out-of-range "$base" $eh $ptr "$(le32 $((ptr + 64)))" 1 \
		"$(printf '0x%x' $ptr): CIE pointer points before .eh_frame"
	bad_input cie-into-record "$base" $eh $ptr "$(le32 $((ptr - 2)))" 1 \
		"CIE pointer does not lead to a CIE"
	bad_input unknown-opcode "$base" $eh $((fde + 17)) "3f" 0 \
		"$(printf '0x%x' $((fde + 17))): unknown CFA opcode"
	bad_input cie-version "$base" $eh 8 "07" 1 \
		"0x8: unsupported CIE version"
	bad_input leb-overflow "$base" $eh 12 "ffffffffffffffffffff7f" 1 \
		"0xc: LEB128 number does not fit 64 bits"
	bad_input leb-truncated "$base" $eh 12 "808080808080808080808080" 1 \
		"0xc: truncated LEB128 number"
	bad_input fde-too-short "$base" $eh $fde "$(le32 6)" 1 \
		"$(printf '0x%x' $((fde + 8))): truncated pointer"
}

# A copy without section headers: .eh_frame through PT_GNU_EH_FRAME.
check_no_shdr() {
	local base=$1 f=$out/no-shdr
	# Elf64_Ehdr: e_shoff at 40 (8 bytes), e_shnum and e_shstrndx at 60.
	local shoff_at=40 shnum_at=60

	cp "$base" "$f"
	patch "$f" $shoff_at 0000000000000000
	patch "$f" $shnum_at 00000000
	if "$gen" --dump-rows "$f" > "$f.rows" 2>&1 &&
	   "$gen" --dump-rows "$base" > "$f.want" 2>&1 &&
	   [ -s "$f.rows" ] && cmp -s "$f.rows" "$f.want"; then
		ok "no section headers: .eh_frame found through PT_GNU_EH_FRAME"
	else
		not_ok "no section headers: rows differ"
		diff "$f.want" "$f.rows" | head -5 | indent
	fi
}

# ---- main ----

echo "TAP version 13"
for t in "$gen" "$dump" "$gen_asan"; do
	if [ ! -x "$t" ]; then
		not_ok "$t is not built (run make check-gen)"
		tap_end gen-oracle
		exit 1
	fi
done

src=$root/tools/testing/corpus/corpus-src.c
bins=()
for v in "O2-omit-fp:-O2 -fomit-frame-pointer" "O0:-O0" \
	 "O2-fp:-O2 -fno-omit-frame-pointer"; do
	name=corpus-${v%%:*}
	# shellcheck disable=SC2086
	if gcc ${v#*:} -o "$out/$name" "$src"; then
		bins+=("$name:$out/$name")
	else
		not_ok "$name: compile"
	fi
done
drap_src > "$out/drap.c"
if gcc -O2 -mstackrealign -o "$out/drap" "$out/drap.c"; then
	bins+=("drap:$out/drap")
else
	not_ok "drap: compile"
fi
if gcc -shared -nostdlib -o "$out/cfi-asm.so" \
	"$root/tools/testing/corpus/cfi-asm.s"; then
	bins+=("cfi-asm:$out/cfi-asm.so")
else
	not_ok "cfi-asm: assemble"
fi
for f in /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 \
	 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /bin/bash /usr/bin/python3 \
	 /usr/lib/x86_64-linux-gnu/libcrypto.so.3; do
	if [ -r "$f" ]; then
		bins+=("$(basename "$f"):$f")
	else
		skip "$f" "not installed"
	fi
done

for b in "${bins[@]}"; do
	rm -f "$out/${b%%:*}.frames" "$out/${b%%:*}.interp"
	check_binary "${b%%:*}" "${b#*:}"
done
[ -r /lib/x86_64-linux-gnu/libc.so.6 ] &&
	check_shared libc.so.6 /lib/x86_64-linux-gnu/libc.so.6
# The module's SP word: OpenSSL's assembly and the same CFI by hand.
[ -r "$out/cfi-asm.so" ] && check_sp_word cfi-asm "$out/cfi-asm.so"
if [ -r /usr/lib/x86_64-linux-gnu/libcrypto.so.3 ]; then
	check_sp_word libcrypto.so.3 /usr/lib/x86_64-linux-gnu/libcrypto.so.3
	check_shared libcrypto.so.3 /usr/lib/x86_64-linux-gnu/libcrypto.so.3
fi

# The other architectures, s390x big-endian: cross-compiled test programs.
for arch in aarch64 s390x; do
	if ! command -v "$arch-linux-gnu-gcc" > /dev/null; then
		skip "$arch" "no $arch-linux-gnu-gcc"
		continue
	fi
	for v in "O2:-O2" "O0-fp:-O0 -fno-omit-frame-pointer"; do
		name=$arch-corpus-${v%%:*}
		rm -f "$out/$name.frames" "$out/$name.interp"
		# shellcheck disable=SC2086
		if "$arch-linux-gnu-gcc" ${v#*:} -o "$out/$name" "$src"; then
			check_binary "$name" "$out/$name" "$arch"
		else
			not_ok "$name: compile"
		fi
	done
done

# Debian's own binaries for those architectures, unpacked with dpkg -x.
for arch in aarch64 s390x; do
	deb_arch=$arch
	[ "$arch" = aarch64 ] && deb_arch=arm64
	if ! droot=$("$root/scripts/fetch-debs.sh" "$deb_arch" libc6 \
		     libstdc++6 bash python3.11-minimal 2> "$out/$arch-debs.err"); then
		skip "$arch Debian binaries" "fetch-debs.sh failed: $(tail -1 "$out/$arch-debs.err")"
		continue
	fi
	ld="ld-linux-aarch64.so.1"
	[ "$arch" = s390x ] && ld=ld64.so.1
	for f in "lib/$arch-linux-gnu/libc.so.6" "lib/$arch-linux-gnu/$ld" \
		 "usr/lib/$arch-linux-gnu/libstdc++.so.6" bin/bash \
		 usr/bin/python3.11; do
		name=$arch-deb-$(basename "$f")
		rm -f "$out/$name.frames" "$out/$name.interp"
		if [ -r "$droot/$f" ]; then
			check_binary "$name" "$(readlink -f "$droot/$f")" "$arch"
			[ "${f##*/}" = libc.so.6 ] &&
				check_shared "$name" "$(readlink -f "$droot/$f")" "$arch"
		else
			not_ok "$name: $f not in the unpacked packages"
		fi
	done
done

# binutils' own reader: libsframe of Debian's unstable binutils (a master
# snapshot, V3), loaded by tools/testing/corpus/libsframe-check.c, must read
# every default V3 section of the binaries above, in both byte orders (the
# s390x ones are big-endian), and refuse the shared form of s390x libc,
# whose FDEs count rows twice, and the module's SP word.
check_libsframe() {
	local lroot lib std=() f

	if ! lroot=$(FETCH_DEBS_SUITE=sid "$root/scripts/fetch-debs.sh" \
		     amd64 libsframe3 2> "$out/libsframe.err"); then
		skip "libsframe" "fetch-debs.sh could not get Debian unstable's libsframe3: $(tail -1 "$out/libsframe.err")"
		return
	fi
	lib=$lroot/usr/lib/x86_64-linux-gnu/libsframe.so.3
	if ! gcc -O2 -Wall -Werror -o "$out/libsframe-check" \
		"$root/tools/testing/corpus/libsframe-check.c" -ldl; then
		not_ok "libsframe-check: build"
		return
	fi
	for f in "$out"/*.v3.sframe; do
		case $f in
		*-shared.v3.sframe | *-sp.v3.sframe) ;;
		*) std+=("$f") ;;
		esac
	done
	if "$out/libsframe-check" "$lib" "${std[@]}" > "$out/libsframe.log"; then
		ok "libsframe ($(basename "$(readlink -f "$lib")")) reads all ${#std[@]} default V3 sections, every row, both byte orders"
	else
		not_ok "libsframe refuses a default V3 section"
		grep -v ': ok,' "$out/libsframe.log" | indent
	fi
	sed -n 's|^.*/\(s390x-deb-libc.so.6.v3.sframe: .*\)|#   \1|p' "$out/libsframe.log"
	f=$out/s390x-deb-libc.so.6-shared.v3.sframe
	if [ -f "$f" ]; then
		if "$out/libsframe-check" "$lib" "$f" > "$out/libsframe.shared.log"; then
			not_ok "libsframe reads s390x libc's shared form (it was expected to refuse it)"
		else
			ok "libsframe refuses s390x libc's --share-rows form: $(sed 's/.*refused: //' "$out/libsframe.shared.log")"
		fi
	fi
	f=$out/libcrypto.so.3-sp.v3.sframe
	if [ -f "$f" ]; then
		if "$out/libsframe-check" "$lib" "$f" > "$out/libsframe.sp.log"; then
			not_ok "libsframe reads the module's SP word (a standard reader was expected to refuse it)"
		else
			ok "libsframe refuses libcrypto's --sp-word form: $(sed 's/.*refused: //' "$out/libsframe.sp.log")"
		fi
	fi
}
check_libsframe

# Post-link injection: programs still run with the section embedded.
if [ -x "$out/corpus-O2-omit-fp" ]; then
	check_embed corpus-O2-omit-fp "$out/corpus-O2-omit-fp" "{}"
fi
if [ -x /bin/bash ]; then
	# shellcheck disable=SC2016  # expanded by the embedded bash
	check_embed bash /bin/bash "{}" -c 'for i in 1 2 3; do echo "$i $BASH_VERSION"; done | sort -r'
fi
for arch in aarch64 s390x; do
	[ -x "$out/$arch-corpus-O2" ] &&
		check_embed "$arch-corpus-O2" "$out/$arch-corpus-O2"
done

# binutils 2.40's V1 sections upgraded to V3.
check_from_v1 v1-x86_64 gcc
if command -v aarch64-linux-gnu-gcc > /dev/null; then
	check_from_v1 v1-aarch64 aarch64-linux-gnu-gcc
else
	skip v1-aarch64 "no aarch64-linux-gnu-gcc"
fi

# The size goal: the section sframectl registers for x86-64 libc (shared
# rows) at most 0.8 times .eh_frame plus .eh_frame_hdr (make sizes prints
# the whole table).
if [ -f "$out/libc.so.6-shared.v3.stats" ]; then
	eh=$(($(section_size /lib/x86_64-linux-gnu/libc.so.6 .eh_frame) +
	      $(section_size /lib/x86_64-linux-gnu/libc.so.6 .eh_frame_hdr)))
	v3=$(awk '$1 == "bytes" { print $2 }' "$out/libc.so.6-shared.v3.stats")
	ratio=$(awk -v a="${v3:-0}" -v b="$eh" 'BEGIN { printf "%.3f", b ? a / b : 9 }')
	if awk -v r="$ratio" 'BEGIN { exit !(r > 0 && r <= 0.8) }'; then
		ok "libc.so.6: sframectl's V3 (shared rows) is $ratio times .eh_frame + .eh_frame_hdr ($v3 of $eh bytes; goal 0.8)"
	else
		not_ok "libc.so.6: sframectl's V3 (shared rows) is $ratio times .eh_frame + .eh_frame_hdr ($v3 of $eh bytes; goal 0.8)"
	fi
fi

# The flexible paths must have been taken where the input needs them.
if [ -f "$out/drap.v3.expand" ]; then
	expect_rule drap "$out/drap.v3.expand" "cfa=\*(fp-8) ra=\*(cfa-8) fp=\*(fp+0)"
	expect_rule drap "$out/drap.v3.expand" "cfa=r10 "
fi
if [ -f "$out/cfi-asm.v3.expand" ]; then
	for r in "ra=r1 fp=r9" "cfa=r12+16" "cfa=\*(sp+160) ra=\*(sp+168) fp=\*(sp+120)" \
		 "outermost" "cfa=sp+24 ra=\*(cfa-8) fp=\*(cfa+24)" "fp=\*(cfa+16)"; do
		expect_rule cfi-asm "$out/cfi-asm.v3.expand" "$r"
	done
fi

if [ -x "$out/corpus-O0" ]; then
	check_malformed "$out/corpus-O0"
	check_no_shdr "$out/corpus-O0"
fi

tap_end gen-oracle
