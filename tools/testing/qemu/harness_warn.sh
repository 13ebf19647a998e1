#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Loads a module whose init hits WARN_ON(1).  With panic_on_warn=1 the
# guest dies here; only the harness's own tests run it.
insmod /lib/test-modules/sfu_warn.ko
echo "still alive after WARN_ON"
exit 0
