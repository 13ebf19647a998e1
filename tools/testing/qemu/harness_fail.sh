#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fails on purpose.  Only the harness's own tests put it in a guest, to
# show that a failing selftest turns the run red.
echo "failing on purpose"
exit 1
