#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Java frames under unmodified perf: Debian's OpenJDK (the root at /host)
# runs with -XX:+PreserveFramePointer a known chain, Chain.fib <- leaf <-
# (a Comparator's lambda, Arrays.sort and TimSort, which HotSpot may
# inline into each other) <- middle <- outer <- main, and perf record -g
# (and --call-graph fp,defer where the kernel has deferred user stacks)
# samples it; the JVM writes /tmp/perf-PID.map at its exit
# (-XX:+DumpPerfMapAtExit), which names the compiled methods (interpreted
# ones are all "Interpreter").  The chain's own methods are kept from
# being inlined (a CompileCommandFile), so that each is a frame.  HotSpot
# keeps frame pointers in libjvm and, with -XX:+PreserveFramePointer, in
# its compiled code: the module must keep that whole, not make it better.
# Of the samples whose innermost named Java frame is fib, the share whose
# stack holds fib, leaf, middle and outer in order (a caller interpreted
# at the time counts by the name the map gives it, "Interpreter") down to
# libjli's JavaMain must be at least 95% with the module (the rest: code
# freed before the map was written, during the JVM's warm-up), and is
# printed without it.  Leaves the module loaded.

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/java_perf
tag=java_perf
dir_java=/tmp/java_perf		# in the root at /host
secs=8
run="/usr/bin/java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions"
run="$run -XX:+DumpPerfMapAtExit -XX:CompileCommandFile=$dir_java/compile"
run="$run -cp $dir_java Chain $secs"
lang=java
chain="Chain.fib Chain.leaf Chain.middle Chain.outer"
native=0
roots="JavaMain|start_thread"
# shellcheck source=selftests/perf/runtime.sh
. /selftests/perf/runtime.sh

write_prog() {
	mkdir -p "/host$dir_java"
	cat > "/host$dir_java/compile" << EOF
quiet
dontinline Chain.*
EOF
	cat > "/host$dir_java/Chain.java" << EOF
import java.util.Arrays;

public class Chain {
	static int fib(int n)
	{
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static int leaf(Integer a, Integer b)
	{
		return (fib(12) & 0) + a - b;
	}

	static void middle(Integer[] xs)
	{
		Arrays.sort(xs, Chain::leaf);
	}

	static void outer(int times)
	{
		for (int i = 0; i < times; i++)
			middle(new Integer[] { 5, 3, 7, 1, 6, 2, 8, 4 });
	}

	public static void main(String[] args)
	{
		long end = System.nanoTime() +
			   Long.parseLong(args[0]) * 1000000000L;

		while (System.nanoTime() < end)
			outer(10);
	}
}
EOF
	chroot /host /usr/bin/javac -d "$dir_java" "$dir_java/Chain.java" \
		> "$out.javac" 2>&1 || {
		sed 's/^/# javac: /' "$out.javac"
		return 1
	}
}

echo "TAP version 13"
[ -x /selftests/bin/sframectl ] || skip_all "no sframectl was built for $(uname -m)"
chroot /host test -x /usr/bin/javac ||
	skip_all "the root at /host has no JDK (javac)"
check "the module is loaded" load
echo "# $(chroot /host /usr/bin/java -version 2>&1 | head -1)"
check "javac of the chain" write_prog && rt_checks 95
rm -rf "/host$dir_java" /host/tmp/perf-*.map
tap_exit
