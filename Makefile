# SPDX-License-Identifier: GPL-2.0
#
# sframe-unwind: SFrame user-space stack unwinding as a loadable module.
#
#   make                 host tools (sframe-dump, sframe-gen, sframectl)
#   make module KDIR=..  the module against a kernel build or header tree
#                        (CONFIG_SFRAME_UNWIND_DEBUG=y: with the test and
#                        debug interfaces the selftests use)
#   make demo            perf record -g without and with the module, Debian
#                        13's stock 6.12 (ARCH=arm64: the same, ARCH=s390x:
#                        Debian 12's 6.1; KVER=7: the newest 7.x, with
#                        --call-graph fp,defer too)
#   make pictures        the demo's flame graph pictures, to
#                        Documentation/images (README.md)
#   make check           host tests, x86-64 6.12 and 7.x guests, harness
#                        tests (README.md)
#   make check-all       also 6.1, 6.12-rt, Debian 13's 6.12 and 7.x on
#                        x86-64, arm64 and s390x
#   make check-builds    the module with W=1 against every kernel of the
#                        matrix (KERNELS="x86_64:7.3 arm64:7 ...": these)
#   make selftests ARCH=x86_64|arm64|s390x KVER=6.12|6.1|6.12-rt|debug|
#                        6.12-deb13|7|7.3|7-rt|...  (tools/testing/qemu/run.sh)
#   make -C selftests [CROSS_COMPILE=aarch64-linux-gnu-|s390x-linux-gnu-]
#                        the selftests' programs only (build/selftests/ARCH)
#   make kunit ARCH=x86_64|arm64|s390   KUnit on a 6.12 debug kernel
#   make fuzz-smoke      libFuzzer on the decoder and the CFI reader, FUZZ_SECONDS
#   make fuzz-long       both until FUZZ_RUNS (100M) executions, at nice 19;
#                        FUZZ_MERGE=1 merges new inputs into the tree corpus
#   make bench           process, walk, perf.data and memory costs, and a
#                        parallel build profiled system-wide, in the
#                        stock 6.12 guest (KVER=7: the newest 7.x)
#   make soak            half an hour of everything at once with the
#                        daemon and every profiler, debug guest (KVER=7:
#                        the newest 7.x)
#   make bench-host      lookup cost for 1k..1M FDEs, and bench-native
#   make bench-native    the module's walk on the host's CPU against a
#                        frame-pointer walk of the same stack
#   make sizes           SFrame sizes against .eh_frame (RST table)
#   make memory          kernel memory per file against .eh_frame (RST table)
#   make check-table     the rule table against the lookup in real files
#   make style           checkpatch.pl on the sources
#   make man             manual pages of the tools (build/man, rst2man)
#   make install         tools, manual pages, systemd unit (DESTDIR, prefix)
#   make dkms-install    module source to /usr/src, built and installed by DKMS
#                        for the running kernel (or DKMS_KERNELS="rel...")
#   make dkms-remove     the reverse
#   make deb             Debian packages sframe-unwind-{dkms,tools} (build/deb)
#   make check-deb       build them, lintian, DKMS in a Debian chroot, guest

KDIR		?= /lib/modules/$(shell uname -r)/build
CC		?= cc
# The library's headers, the tools' shared code and each tool's headers.
HOSTINC		:= -Iinclude -Itools/include -Itools/lib -Itools/sframe-gen \
		   -Itools/sframectl
# The tests' too: the reference sections of kunit/ and the KUnit shim.
TESTINC		:= -Ikunit -Itools/testing
HOSTCFLAGS	:= -O2 -g -Wall -Wextra -Wno-unused-parameter -Wshadow \
		   -Wstrict-prototypes -Wmissing-prototypes -std=gnu11 \
		   $(HOSTINC)
O		:= build
FUZZ_SECONDS	?= 60
VERSION		:= $(shell sed -n 's/^\#define SFU_VERSION[[:space:]]*"\(.*\)"/\1/p' \
		     include/sframe/version.h)

prefix		?= /usr/local
bindir		?= $(prefix)/bin
sbindir		?= $(prefix)/sbin
mandir		?= $(prefix)/share/man
unitdir		?= $(prefix)/lib/systemd/system
DKMS_SRC	:= /usr/src/sframe-unwind-$(VERSION)
MAN_PAGES	:= $(O)/man/sframectl.8 $(O)/man/sframe-gen.1 $(O)/man/sframe-dump.1

include lib/sframe/sources.mk
DECODER_SRCS	:= $(patsubst %,lib/sframe/%.c,$(sframe-dec))
ENCODER_SRCS	:= $(patsubst %,lib/sframe/%.c,$(sframe-enc))
SFRAME_HDRS	:= $(wildcard include/sframe/*.h lib/sframe/*.h \
		     tools/include/sframe/*.h)
# The host programs (tools/): each in its directory, their shared code in
# tools/lib/.  sframectl links the generator's library too.
LIB_DIR		:= tools/lib
GEN_DIR		:= tools/sframe-gen
CTL_DIR		:= tools/sframectl
DUMP_DIR	:= tools/sframe-dump
DUMP		:= $(DUMP_DIR)/sframe-dump
GEN		:= $(GEN_DIR)/sframe-gen
CTL		:= $(CTL_DIR)/sframectl
# The host tests and the KUnit shim (tools/testing/), the fuzzers
# (tools/testing/fuzz/).
TEST_DIR	:= tools/testing
FUZZ_DIR	:= $(TEST_DIR)/fuzz

TEST_SRCS	:= kunit/sframe_decode_kunit.c kunit/sframe_test_sections.c \
		   $(TEST_DIR)/kunit-host.c $(TEST_DIR)/ctl-cache-test.c \
		   $(CTL_DIR)/sframectl-cache.c $(CTL_DIR)/sframectl-fs.c
TEST_HDRS	:= $(wildcard kunit/*.h) $(TEST_DIR)/kunit-host.h \
		   $(CTL_DIR)/sframectl.h

GEN_LIB_SRCS	:= $(addprefix $(GEN_DIR)/,gen.c gen-fre.c gen-encode.c \
		     gen-report.c eh-frame.c eh-cfi.c elf-embed.c \
		     sframe-reenc.c) $(LIB_DIR)/elf-sframe.c
GEN_SRCS	:= $(GEN_DIR)/sframe-gen.c $(GEN_LIB_SRCS)
GEN_HDRS	:= $(addprefix $(GEN_DIR)/,gen.h gen-internal.h eh-frame.h \
		     eh-frame-internal.h elf-embed.h sframe-reenc.h) \
		   $(LIB_DIR)/elf-sframe.h
CTL_SRCS	:= $(addprefix $(CTL_DIR)/,sframectl.c sframectl-core.c \
		     sframectl-sync.c sframectl-daemon.c sframectl-cache.c \
		     sframectl-child.c sframectl-pool.c sframectl-fs.c \
		     sframectl-warm.c sframectl-subid.c \
		     sframectl-symbolize.c) $(GEN_LIB_SRCS)
CTL_DEPS	:= $(CTL_SRCS) $(GEN_HDRS) $(CTL_DIR)/sframectl.h \
		   include/uapi/linux/sframe_unwind.h \
		   $(DECODER_SRCS) $(ENCODER_SRCS) $(SFRAME_HDRS)
# The cache's SHA-256 is libmd's (<sha2.h>, libmd-dev; libmd0 is in every
# Debian root: dpkg pre-depends on it).
CTL_LIBS	:= -lmd
HOST_TOOLS	:= $(DUMP) $(GEN) $(CTL)

.PHONY: all module modules clean pictures check check-all check-builds \
	check-host check-corpus check-table check-gen fuzz-smoke fuzz-long \
	bench bench-host bench-native soak style help selftests demo kunit sizes memory man \
	install dkms-src dkms-install dkms-remove deb check-deb module-src

all: $(HOST_TOOLS)

help:
	@sed -n 's/^#   //p' Makefile

$(O):
	@mkdir -p $@

$(DUMP): $(DUMP).c $(LIB_DIR)/elf-sframe.c $(LIB_DIR)/elf-sframe.h \
	 $(DECODER_SRCS) $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ \
		$(DUMP).c $(LIB_DIR)/elf-sframe.c $(DECODER_SRCS)

$(GEN): $(GEN_SRCS) $(GEN_HDRS) $(DECODER_SRCS) $(ENCODER_SRCS) \
	$(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ \
		$(GEN_SRCS) $(ENCODER_SRCS) $(DECODER_SRCS)

$(CTL): $(CTL_DEPS) | $(O)
	$(CC) $(HOSTCFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ \
		$(CTL_SRCS) $(ENCODER_SRCS) $(DECODER_SRCS) $(CTL_LIBS)

# sframectl for the arm64 and s390x guests (make demo ARCH=...), with
# libmd.a from Debian 12's libmd-dev of the guest's architecture
# (scripts/fetch-debs.sh, cached) unpacked in build/cross-TRIPLET/libmd:
# no package of another architecture on the host, which Debian 12's
# security updates no longer cover for s390x.
$(O)/cross-%/libmd/.unpacked:
	rm -rf $(dir $@) && mkdir -p $(dir $@)
	deb=$$(scripts/fetch-debs.sh -d $(patsubst aarch64,arm64,$*) libmd-dev) && \
		dpkg -x "$$deb" $(dir $@)
	touch $@
.PRECIOUS: $(O)/cross-%/libmd/.unpacked

$(O)/cross-%/sframectl: $(CTL_DEPS) $(O)/cross-%/libmd/.unpacked
	$*-linux-gnu-gcc $(HOSTCFLAGS) -I$(O)/cross-$*/libmd/usr/include \
		-o $@ $(CTL_SRCS) $(ENCODER_SRCS) $(DECODER_SRCS) \
		$(O)/cross-$*/libmd/usr/lib/$*-linux-gnu/libmd.a

$(O)/decode-test: $(TEST_SRCS) $(TEST_HDRS) $(DECODER_SRCS) \
		  $(ENCODER_SRCS) $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) $(TESTINC) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ $(TEST_SRCS) \
		$(DECODER_SRCS) $(ENCODER_SRCS) $(CTL_LIBS)

$(O)/fuzz-decode: $(FUZZ_DIR)/fuzz-decode.c $(DECODER_SRCS) \
		  $(ENCODER_SRCS) $(SFRAME_HDRS) | $(O)
	clang -O1 -g $(HOSTINC) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(FUZZ_DIR)/fuzz-decode.c \
		$(DECODER_SRCS) $(ENCODER_SRCS)

$(O)/fuzz-ehframe: $(FUZZ_DIR)/fuzz-ehframe.c $(GEN_DIR)/eh-frame.c \
		   $(GEN_DIR)/eh-cfi.c $(LIB_DIR)/elf-sframe.c \
		   $(GEN_DIR)/eh-frame.h $(GEN_DIR)/eh-frame-internal.h \
		   $(LIB_DIR)/elf-sframe.h lib/sframe/note.c $(SFRAME_HDRS) | $(O)
	clang -O1 -g $(HOSTINC) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(FUZZ_DIR)/fuzz-ehframe.c \
		$(GEN_DIR)/eh-frame.c $(GEN_DIR)/eh-cfi.c $(LIB_DIR)/elf-sframe.c \
		lib/sframe/note.c

$(O)/fuzz-seed: $(FUZZ_DIR)/fuzz-seed.c $(DECODER_SRCS) $(ENCODER_SRCS) \
		kunit/sframe_test_sections.c $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) $(TESTINC) -o $@ $(FUZZ_DIR)/fuzz-seed.c \
		kunit/sframe_test_sections.c $(DECODER_SRCS) $(ENCODER_SRCS)

$(O)/bench-lookup: bench/lookup.c kunit/sframe_test_sections.c \
		   $(DECODER_SRCS) $(ENCODER_SRCS) $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) $(TESTINC) -o $@ bench/lookup.c \
		kunit/sframe_test_sections.c $(DECODER_SRCS) $(ENCODER_SRCS)

# The module's walk on the host's CPU (bench/native.c): bench/walk.c with
# SFrame (as 2.40 and later: --gsframe) and frame pointers, so that both
# walks unwind the same stack, and without frame pointers, as the
# programs SFrame serves are built; x86-64 hosts only.
NATIVE_SRCS	:= bench/walk.c bench/native.c
$(O)/walk-native: $(NATIVE_SRCS) bench/native.h bench/copy-step.h \
		  $(DECODER_SRCS) $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) -DWALK_NATIVE -fno-omit-frame-pointer \
		-Wa,--gsframe -o $@ $(NATIVE_SRCS) $(DECODER_SRCS) -ldl
$(O)/walk-native-nofp: $(NATIVE_SRCS) bench/native.h bench/copy-step.h \
		       $(DECODER_SRCS) $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) -DWALK_NATIVE -DNATIVE_NO_FP \
		-fomit-frame-pointer -Wa,--gsframe -o $@ $(NATIVE_SRCS) \
		$(DECODER_SRCS) -ldl

# Real programs' stacks replayed (bench/replay.c): the walk's step over
# perf's stack copies, with the tables the module would hold; the
# program replayed both ways is sframe-gen, built with and without frame
# pointers.
$(O)/replay-native: bench/replay.c bench/copy-step.h $(GEN_LIB_SRCS) \
		    $(GEN_HDRS) $(DECODER_SRCS) $(ENCODER_SRCS) \
		    $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) -o $@ bench/replay.c $(GEN_LIB_SRCS) \
		$(ENCODER_SRCS) $(DECODER_SRCS)
$(O)/gen-fp $(O)/gen-nofp: $(O)/gen-%: $(GEN_SRCS) $(GEN_HDRS) \
				$(DECODER_SRCS) $(ENCODER_SRCS) \
				$(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) \
		$(if $(filter fp,$*),-fno-omit-frame-pointer,-fomit-frame-pointer) \
		-o $@ $(GEN_SRCS) $(ENCODER_SRCS) $(DECODER_SRCS)

module modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# No pipe: its status would be tee's, and a failed case would pass.
check-host: $(O)/decode-test $(O)/seen-test
	$(O)/decode-test >$(O)/decode-test.tap; rc=$$?; \
		cat $(O)/decode-test.tap; [ $$rc -eq 0 ] || exit $$rc; \
		$(O)/seen-test

# The daemon's table of handled files, with sanitizers.
$(O)/seen-test: $(TEST_DIR)/seen-test.c $(CTL_DIR)/sframectl-sync.c \
		$(CTL_DIR)/sframectl-fs.c $(CTL_DIR)/sframectl-subid.c \
		$(CTL_DIR)/sframectl.h | $(O)
	$(CC) $(HOSTCFLAGS) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ $(TEST_DIR)/seen-test.c \
		$(CTL_DIR)/sframectl-sync.c $(CTL_DIR)/sframectl-fs.c \
		$(CTL_DIR)/sframectl-subid.c

check-corpus: $(DUMP)
	tools/testing/checks/corpus.sh $(O)/corpus

$(O)/sframe-gen-asan: $(GEN_SRCS) $(GEN_HDRS) $(DECODER_SRCS) \
		      $(ENCODER_SRCS) $(SFRAME_HDRS) | $(O)
	$(CC) $(HOSTCFLAGS) -O1 -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ $(GEN_SRCS) $(ENCODER_SRCS) \
		$(DECODER_SRCS)

# The rule table against the lookup in real files of three architectures.
check-table: $(GEN) $(DUMP)
	tools/testing/checks/table-real.sh $(O)/table-real

check-gen: $(GEN) $(DUMP) $(O)/sframe-gen-asan
	GEN=$(CURDIR)/$(GEN) DUMP=$(CURDIR)/$(DUMP) \
		GEN_ASAN=$(CURDIR)/$(O)/sframe-gen-asan \
		tools/testing/checks/gen-oracle.sh $(O)/gen

check:
	tools/testing/check.sh

demo:
	scripts/demo.sh $(or $(ARCH),x86_64) $(KVER)

pictures:
	scripts/demo.sh x86_64
	mkdir -p Documentation/images
	install -m 644 build/demo/python3-without.png build/demo/python3-with.png \
		build/demo/python3-xperf-without.png \
		build/demo/python3-xperf-with.png \
		build/demo/workload-without.png build/demo/workload-with.png \
		Documentation/images/

kunit:
	tools/testing/kunit/kunit.sh $(or $(ARCH),x86_64)

check-all:
	tools/testing/check.sh --all

check-builds:
	tools/testing/checks/build-matrix.sh $(KERNELS)

selftests:
	tools/testing/qemu/run.sh $(or $(ARCH),x86_64) $(or $(KVER),6.12)

# make soak: selftests/soak.sh, SOAK_SECONDS (1800) of everything at once
# with the daemon, on the debug kernel (KASAN, lockdep, kmemleak) or,
# with KVER=7, the newest 7.x; the guest's bound is the soak's and an
# hour more.
SOAK_SECONDS	?= 1800
soak:
	SOAK_SECONDS=$(SOAK_SECONDS) tools/testing/qemu/run.sh x86_64 \
		$(or $(KVER),debug) --tests soak.sh \
		--timeout $$(($(SOAK_SECONDS) + 3600))

fuzz-smoke: $(O)/fuzz-decode $(O)/fuzz-seed $(O)/fuzz-ehframe
	tools/testing/checks/fuzz-smoke.sh $(FUZZ_SECONDS)

fuzz-long: $(O)/fuzz-decode $(O)/fuzz-ehframe
	nice -n 19 tools/testing/checks/fuzz-long.sh

sizes: $(GEN)
	tools/testing/checks/sizes.sh $(O)/sizes

memory: $(GEN) $(DUMP)
	tools/testing/checks/memory.sh $(O)/memory

# The benchmarks are in bench/ (run.sh takes them from there, make -C
# selftests bench builds their programs); first the host's table of
# kernel memory per file (make memory); sframectl_first_run.sh prints
# the first runs' shares with and without the module's wait.
# bench_walk.sh alone takes about twelve minutes under TCG on 6.12, twice
# that on 7.x.  A stall the guest reports outside the module (TCG on a
# busy host) is a warning here.
# bench_build.sh builds the project's tools in the guest from the
# sources copied to $(O)/bench-extra/src (its /extra/src).
BENCH_BUILD_SRC	:= Makefile bench/build.mk lib/sframe include tools/include \
		   $(LIB_DIR) $(GEN_DIR) $(DUMP_DIR) $(CTL_DIR)
bench: memory bench-native
	rm -rf $(O)/bench-extra && mkdir -p $(O)/bench-extra/src
	tar -cf - --exclude='*.o' $(addprefix --exclude=,$(HOST_TOOLS)) \
		$(BENCH_BUILD_SRC) | tar -xf - -C $(O)/bench-extra/src
	tools/testing/qemu/run.sh x86_64 $(or $(KVER),6.12) --timeout 9000 \
		--stalls-ok --extra $(O)/bench-extra --tests "bench_exec.sh \
			bench_daemon.sh sframectl_first_run.sh unwind_budget \
			bench_walk.sh bench_build.sh"

bench-host: $(O)/bench-lookup bench-native
	tools/testing/checks/bench-host.sh $(O)/bench-lookup

bench-native: $(if $(filter x86_64,$(shell uname -m)),$(O)/walk-native \
		$(O)/walk-native-nofp $(O)/replay-native $(O)/gen-fp \
		$(O)/gen-nofp)
	tools/testing/checks/bench-native.sh $(O)/walk-native \
		$(O)/walk-native-nofp $(O)/replay-native $(O)/gen-fp \
		$(O)/gen-nofp

style:
	scripts/checkpatch.sh

$(O)/man/%.8: Documentation/man/%.rst
	@mkdir -p $(dir $@)
	rst2man --strict $< $@

$(O)/man/%.1: Documentation/man/%.rst
	@mkdir -p $(dir $@)
	rst2man --strict $< $@

man: $(MAN_PAGES)

install: all man
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) \
		$(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man8 \
		$(DESTDIR)$(unitdir)
	install -m 755 $(GEN) $(DUMP) $(DESTDIR)$(bindir)
	install -m 755 $(CTL) $(DESTDIR)$(sbindir)
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(mandir)/man1
	install -m 644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(mandir)/man8
	for u in sframectl.service sframectl-warm.service; do \
		sed 's|/usr/local/sbin/sframectl|$(sbindir)/sframectl|' \
			scripts/systemd/$$u > $(DESTDIR)$(unitdir)/$$u && \
		chmod 644 $(DESTDIR)$(unitdir)/$$u || exit 1; \
	done

# The module's source tree, Kbuild, Kconfig, kernel/, lib/ and include/,
# copied to MODULE_SRC: what DKMS and the QEMU harness build the module
# from.
module-src:
	@test -n "$(MODULE_SRC)" || { echo "make module-src: MODULE_SRC=dir" >&2; exit 2; }
	install -d $(MODULE_SRC)
	cp Kbuild Kconfig $(MODULE_SRC)/
	find kernel lib include -type f \( -name '*.[ch]' -o -name '*.mk' \) \
		-exec install -D -m 644 {} $(MODULE_SRC)/{} \;

# The module's source as DKMS wants it: module-src and dkms.conf.
dkms-src:
	$(MAKE) module-src MODULE_SRC=$(DESTDIR)$(DKMS_SRC)
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DESTDIR)$(DKMS_SRC)/dkms.conf

# DKMS_KERNELS: kernel releases to build for (default: the running one).
dkms-install: dkms-src
	dkms add -m sframe-unwind -v $(VERSION)
	dkms install -m sframe-unwind -v $(VERSION) $(addprefix -k ,$(DKMS_KERNELS))

dkms-remove:
	dkms remove -m sframe-unwind -v $(VERSION) --all
	rm -rf $(DESTDIR)$(DKMS_SRC)

deb:
	scripts/deb.sh build

check-deb:
	scripts/deb.sh check

clean:
	rm -rf $(O) $(HOST_TOOLS)
	if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
