# SPDX-License-Identifier: GPL-2.0
#
# The SFrame library's sources: the one list that every build reads.
# Kbuild (the module and the KUnit module), the Makefile (host tools,
# tests, fuzzers) and selftests/Makefile (the guest programs) all take it
# from here.
#
#   sframe-dec	reading sections: headers, FDEs, FREs, rules, the FDE and
#		row indexes, lookups, validation, rule tables, the
#		section object, printing, the build-id note (kernel and
#		host), each file over the ones before it
#   sframe-enc	writing sections (host tools and tests only)

sframe-dec := decode rule index rows lookup validate table section print note
sframe-enc := encode
