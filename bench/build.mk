# SPDX-License-Identifier: GPL-2.0
#
# build.mk - the parallel build that make bench profiles system-wide
# (bench_build.sh): the project's host tools, one object per C file and
# then the links, as a project with many sources builds.  The lists of
# sources are the Makefile's.
#
#   make -C TREE -f bench/build.mk -j N BUILD_OUT=DIR [COPIES=K]
#
# COPIES=K builds it K times over, into DIR/1 ... DIR/K, by sub-makes
# that share the jobs.
# sframectl is built where libmd's <sha2.h> is installed (Debian 12's
# root at /host has it; the Debian 13 root of the 7.x guests does not).

include Makefile

BUILD_OUT	?= $(O)/bench-build
objs		= $(patsubst %.c,$(BUILD_OUT)/%.o,$(1))

BUILD_DUMP	:= $(call objs,$(DUMP).c $(LIB_DIR)/elf-sframe.c $(DECODER_SRCS))
BUILD_GEN	:= $(call objs,$(GEN_SRCS) $(ENCODER_SRCS) $(DECODER_SRCS))
BUILD_CTL	:= $(call objs,$(CTL_SRCS) $(ENCODER_SRCS) $(DECODER_SRCS))
BUILD_PROGS	:= $(BUILD_OUT)/sframe-dump $(BUILD_OUT)/sframe-gen
BUILD_PROGS	+= $(if $(wildcard /usr/include/sha2.h),$(BUILD_OUT)/sframectl)

.DEFAULT_GOAL	:= bench-build
.PHONY: bench-build
ifneq ($(COPIES),)
BUILD_COPIES	:= $(addprefix copy-,$(shell seq $(COPIES)))
.PHONY: $(BUILD_COPIES)
bench-build: $(BUILD_COPIES)
$(BUILD_COPIES): copy-%:
	$(MAKE) -f bench/build.mk BUILD_OUT=$(BUILD_OUT)/$* COPIES=
else
bench-build: $(BUILD_PROGS)
endif

$(BUILD_OUT)/%.o: %.c $(SFRAME_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOSTCFLAGS) -c -o $@ $<

$(BUILD_OUT)/sframe-dump: $(BUILD_DUMP)
	$(CC) -o $@ $^
$(BUILD_OUT)/sframe-gen: $(BUILD_GEN)
	$(CC) -o $@ $^
$(BUILD_OUT)/sframectl: $(BUILD_CTL)
	$(CC) -o $@ $^ $(CTL_LIBS)
