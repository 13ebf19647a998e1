# SPDX-License-Identifier: GPL-2.0
#
# chain.py - a known chain of Python functions for perf: fib <- leaf <-
# sorted() (C) <- middle <- outer <- <module>, for SECS seconds
# (python_perf.sh, and make demo's Python flame graphs).
#
# Usage: python3 -X perf chain.py SECS
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def leaf(x):
    return fib(12) + x


def middle(xs):
    return sorted(xs, key=leaf)


def outer(secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        middle(list(range(8)))


outer(float(sys.argv[1]))
