# SPDX-License-Identifier: GPL-2.0
#
# stall-filter.awk - a guest's console log without the stall reports that
# have no frame of the module (tools/testing/qemu/run.sh --stalls-ok).
#
# A report starts at a soft lockup or an RCU stall line and ends with the
# last backtrace it prints: at a "</TASK>" or "end trace" line not
# followed by more of the report (an RCU stall dumps the grace-period
# kthread's stack, then "rcu: Stack dump where ..." and the stack of the
# CPU it last ran on), or after 300 lines.  Reports with a frame of the
# module ("[sframe_unwind]" after a symbol: the "Modules linked in:" list
# does not count) are printed as they are; the others are left out and
# named on a "# warning:" line on stderr.  Under TCG a busy host can
# stall the guest's page faults and timers long enough for the kernel to
# report them: that says nothing of the module.

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
	ended = 0
	buf[1] = $0
	next
}

# After a backtrace's end: more of the same report, or the next message.
n && ended && !/(rcu|CPU|task|Call Trace|Sending NMI|NMI backtrace)/ {
	flush()
}

n {
	buf[++n] = $0
	ended = $0 ~ /<\/TASK>|end trace/
	if ($0 ~ /\[sframe_unwind\]/)
		mod = 1
	if (n >= 300)
		flush()
	next
}

{ print }

END { flush() }
