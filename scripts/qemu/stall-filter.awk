# SPDX-License-Identifier: GPL-2.0
#
# stall-filter.awk - a guest's console log without the stall reports that
# have no frame of the module (scripts/qemu/run.sh --stalls-ok).
#
# A report starts at a soft lockup or an RCU stall line and ends with its
# task's backtrace ("</TASK>", an "end trace" line, or 80 lines at most).
# Reports with a frame of the module ("[sframe_unwind]" after a symbol:
# the "Modules linked in:" list does not count) are printed as they are;
# the others are left out and named on a "# warning:" line on stderr.
# Under TCG a busy host can stall the guest's page faults and timers long
# enough for the kernel to report them: that says nothing of the module.

function flush(i) {
	if (!n)
		return
	if (mod)
		for (i = 1; i <= n; i++)
			print buf[i]
	else
		print "# warning: guest stall outside the module: " buf[1] \
			> "/dev/stderr"
	n = 0
}

/soft lockup|rcu: INFO: .*stall/ {
	flush()
	n = 1
	mod = 0
	buf[1] = $0
	next
}

n {
	buf[++n] = $0
	if ($0 ~ /\[sframe_unwind\]/)
		mod = 1
	if ($0 ~ /<\/TASK>|end trace/ || n >= 80)
		flush()
	next
}

{ print }

END { flush() }
