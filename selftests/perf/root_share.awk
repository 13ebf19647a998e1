# SPDX-License-Identifier: GPL-2.0
#
# root_share.awk - of a recording's samples, those whose user stack
# reaches the program's root (main, or libc's frames that call it)
#
#   awk -v want=REGEX [-v by_comm=1] -f root_share.awk SAMPLES
#
# SAMPLES is perf script -F comm,pid,ip,sym,dso: a sample a paragraph,
# its header line (command, pid) first, then its frames, innermost first.
# Only the samples of commands matching want count.  Not counted are the
# samples of a program's start, which cannot reach main yet: those of a
# process that has not yet run an instruction outside the dynamic linker
# (exec, ld.so loading and relocating the libraries: told by the file,
# since the root's ld.so need not have symbols, Debian 13's has none),
# stacks through execve or ld.so's _dl_start, and those taken while the
# module registers the mappings of exec (in its task work, with at most
# the entry point as user stack: a registered process past its start has
# more), nor those of its end (in exit_group() with no user frame: the
# stack is gone with the mm).  Any other sample with no user frame cannot
# tell: it is the
# start's if its process is later seen past it, and counted (as not
# reaching main) if it never is, as on a kernel that gives no user stack
# without the module (s390x 6.1) for a program that has no SFrame.
#
# Prints "reaching total"; with by_comm, a line "COMM reaching total
# start" per command instead.  The first two samples of each command
# that are counted and do not reach go to standard error.

/^[^ \t]/ {
	if (n)
		done()
	n = 0; u = 0; s = ""; inner = ""; reach = 0
	comm = $1; pid = $2
	next
}

/^[ \t]*$/ {
	if (n)
		done()
	n = 0
	next
}

{
	n++
	# Debian 12's perf names a versioned symbol with its version:
	# __libc_start_main@@GLIBC_2.34.
	if ($2 ~ /^(main|__libc_start_call_main|__libc_start_main)(@@[A-Z_0-9.]+)?$/)
		reach = 1
	# User frames: in a file, [unknown] or [vdso]; those of the kernel
	# and modules are in "([kernel.kallsyms])", "([name])".
	if ($NF !~ /^\(\[[A-Za-z0-9_.]+\]\)$/ ||
	    $NF ~ /^\(\[(unknown|vdso|vsyscall)\]\)$/) {
		if (!u++)
			inner = $NF
	}
	s = s " " $2
}

# started(): the sample is past the start of its process, the first one
# whose pc is in a file other than the dynamic linker.
function started(key) {
	if (ran[key])
		return 1
	if (inner == "" || inner ~ /^\(\[/ ||
	    inner ~ /\/(ld-linux[-a-z0-9_]*|ld64)\.so\.[0-9]+\)$/)
		return 0
	ran[key] = 1
	return 1
}

function done(   key) {
	if (comm !~ want)
		return
	# A process is its pid (and its command, by_comm: exec renames it).
	key = (by_comm ? comm : "") SUBSEP pid
	seen[comm] = 1
	comm_of[key] = comm
	if (!started(key) && !u && !reach && s !~ /execve|_dl_start/) {
		unknown[key]++
		return
	}
	# The end of a process: in exit_group() with no user frame left.
	if (!u && s ~ / do_exit /) {
		start[comm]++
		return
	}
	if (!started(key) || (!reach && (s ~ /execve|_dl_start/ ||
				       (u <= 1 && s ~ / sfu_twork_run /)))) {
		start[comm]++
		return
	}
	total[comm]++
	good[comm] += reach
	if (!reach && shown[comm]++ < 2)
		print "# incomplete (" comm "):" s > "/dev/stderr"
}

END {
	if (n)
		done()
	for (key in unknown) {
		if (ran[key])
			start[comm_of[key]] += unknown[key]
		else
			total[comm_of[key]] += unknown[key]
	}
	for (c in seen) {
		all_good += good[c]
		all_total += total[c]
		all_start += start[c]
		if (by_comm)
			printf "%s %d %d %d\n", c, good[c], total[c], start[c]
	}
	if (by_comm)
		exit
	if (all_start)
		printf "# %d samples of the start or the end not counted\n", all_start > "/dev/stderr"
	printf "%d %d\n", all_good, all_total
}
