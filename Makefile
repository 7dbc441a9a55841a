# SPDX-License-Identifier: GPL-2.0
#
# ordlock: top-level build.
#
#   make [all]          the module (kmod/ordlock.ko), tools/ and the tests
#   make modules        only the module; C=1 runs sparse, KDIR=... another tree
#   make tools | tests  libordlock | the test programs
#   make unit           build and run the host-side unit tests
#   make check          install what is missing, build everything, run the
#                       unit tests and the in-VM suite on 6.1, 6.12, 6.12-rt
#                       and the debug kernel; ends "N passed, N failed"
#                       (T="name ..." runs only those in-VM tests, KVER=
#                       only that kernel)
#   make vm             run the in-VM suite only (no deps, no build; T= works)
#   make check-debug    the in-VM suite (and failslab tests) on a debug kernel
#                       (KASAN, lockdep, kmemleak, UBSAN...) built from
#                       linux-source-6.1 and cached in /var/cache/ordlock
#                       (ORDLOCK_DEBUG_CACHE=); ends "N passed, N failed"
#   make check-cluster  a three-node corosync/DLM cluster of qemu guests
#                       (tests/cluster/run.sh: own network namespace, no
#                       uplink, link-local addresses) running the cluster
#                       tests on every node; not part of make check (the
#                       guests take ~2.7 GiB and the machine's cores);
#                       ends "N passed, N failed" (T= works)
#   make check-cluster-debug
#                       the same cluster on a debug kernel (check-debug's,
#                       plus the DLM and a network card: tests/debug-kernel/
#                       cluster.config, cached apart), every node judged
#                       by KASAN, lockdep, UBSAN, DEBUG_OBJECTS, kmemleak
#                       too (tests/cluster/check-debug.sh); a long target,
#                       not CI (T= works)
#   make check-faults   the cluster with c_faults alone, over several seeded
#                       schedules (a fresh cluster each) of faults (nodes
#                       killed and restarted, guests stopped, partitions,
#                       holders stopped past their lease, every node
#                       leaving and re-joining, the DLM companion reloaded,
#                       anchors dropped) under transfers, then a checker of
#                       the recorded history (issue 27); a long target, not
#                       CI: FAULT_SEEDS (default "1 2 3 4 5"), FAULTS per
#                       seed (default 40), FAULT_SEED=N replays one; each
#                       schedule with FAULT_POLICIES (default "enforce
#                       detect": detect with ordlock-xdetectd, no victim)
#   make bench-cluster  the same cluster (two guests) timing acquire + release:
#                       the raw DLM calls next to ordlock's (ratios; reports,
#                       does not fail); ICOUNT=1: the local loops in
#                       instructions (qemu -icount), the same every run
#   make demo           boot the VM and run the demo programs, live
#   make fuzz           the long fuzz runs: fuzz-vm-debug (below), then
#                       fuzz-parsers when clang is installed
#   make fuzz-parsers   libFuzzer on ordlockctl's parsers for FUZZ_SECONDS
#                       (default 60; needs clang, optional)
#   make stress         boot the VM and run tests/cases/t_stress.c for
#                       STRESS_SECONDS (default 300; make check runs it ~20 s);
#                       STRESS_KILLS=N: until N SIGKILLs (the seconds are then
#                       the limit), STRESS_KAMIKAZES=K: K victims at once (1-8)
#   make fuzz-vm        boot the VM and run the in-VM ioctl/netlink fuzzer
#                       tests/cases/t_fuzz.c for FUZZ_VM_SECONDS (default 300);
#                       FUZZ_VM_CALLS=N: until N calls (seconds: the limit)
#   make stress-debug | fuzz-vm-debug
#                       the same two on the debug kernel of check-debug
#   make bench          boot the VM and run the benchmarks (tests/bench/):
#                       a table of ordlock against flock, OFD locks, semop...;
#                       results in tests/build/bench-results/ (BENCH="b1_..");
#                       ICOUNT=1: the deterministic mode, instructions per
#                       operation under qemu -icount on one vCPU (b8_insn)
#   make deps           install the build and test dependencies (Debian 12)
#   make install        ordlockctl, libordlock, headers, .pc, man pages, bash
#                       completion, udev rule, Python binding, examples under
#                       $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); see tools/Makefile
#                       for the directories; "make uninstall" removes them
#   make install-module the module into $(DESTDIR)/lib/modules/KVER/updates,
#                       then depmod (-b DESTDIR) for KVER, so that modprobe
#                       finds it
#   make dkms-install   the module sources into /usr/src/ordlock-VERSION, then
#                       dkms add, build, install (DKMS_KVER=: the kernel to
#                       build for, default the running one); dkms-uninstall
#   make dkms-check     build the module through dkms (private dkms and source
#                       trees) against KVER's headers; part of "make unit"
#   make clean
#
# The kernel: "make", "make vm", "make demo", "make install-module" and
# "make dkms-install" build for (and the VM boots) one kernel, KVER, chosen
# by tests/kver.sh: the running kernel when its headers are installed (what
# insmod loads into), else Debian 12's default 6.1 kernel
# (linux-image-amd64), else the newest Debian 6.12 one.  "make check" tests
# every supported kernel (6.1, 6.12, 6.12-rt: tests/kver.sh --matrix), or
# only KVER when KVER= or KDIR= is given.  KVER=, KDIR= and VMLINUZ=
# override.

# given on the command line or in the environment (make check: only that one)
KVER_GIVEN := $(filter-out undefined file default,$(origin KVER) $(origin KDIR))

# tests/kver.sh has the rule (shared with the test scripts)
ifdef KDIR
ifeq ($(origin KVER),undefined)
KVER := $(shell sh tests/kver.sh "$(KDIR)")
endif
else
ifeq ($(origin KVER),undefined)
KVER := $(shell sh tests/kver.sh)
endif
KDIR := /lib/modules/$(KVER)/build
endif
VMLINUZ ?= /boot/vmlinuz-$(KVER)
# Not exported: a "make check" on a fresh machine computes them before
# "make deps" installed the kernel; its sub-makes compute them again.
vm_env = KVER="$(KVER)" VMLINUZ="$(VMLINUZ)"

# make check T="a b": only these in-VM tests
T ?=

.PHONY: all modules tools tests unit check check-debug check-cluster check-cluster-debug check-faults bench-cluster vm demo demo-run bench clean deps \
	stress fuzz fuzz-parsers fuzz-vm stress-debug fuzz-vm-debug \
	kdir-check vm-env install uninstall install-module dkms-source \
	dkms-install dkms-uninstall dkms-check

all: modules tools tests

kdir-check:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No kernel headers found (KDIR=$(KDIR)): run 'make deps' (as root) or set KDIR=" >&2; \
		exit 1; \
	fi

modules: kdir-check
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(C),C=$(C)) modules

tools:
	$(MAKE) -C tools

# tests/Makefile builds libordlock itself through tools/Makefile; ordering
# the two avoids two makes in tools/ at once under -j.
tests: tools
	$(MAKE) -C tests

unit: tools
	$(MAKE) --no-print-directory -C tests unit-run

deps:
	@bash tests/install-deps.sh --demo

# The long fuzz runs: the in-VM ioctl/netlink fuzzer on the debug kernel,
# then libFuzzer on ordlockctl's parsers (when clang is installed)
fuzz: fuzz-vm-debug
	+@if command -v $${FUZZ_CC:-clang} >/dev/null; then $(MAKE) -C tests fuzz; \
	else echo "fuzz: no clang: ordlockctl's parsers not fuzzed (make fuzz-parsers)"; fi

fuzz-parsers:
	$(MAKE) -C tests fuzz

# The whole suite; the last line of output is "N passed, N failed".
check:
	+@T="$(T)" CHECK_KVER="$(if $(KVER_GIVEN),$(KVER))" \
		CHECK_VMLINUZ="$(if $(KVER_GIVEN),$(VMLINUZ))" bash tests/harness/check.sh

# The suite on the debug kernel (tests/debug-kernel/); T= works.
check-debug:
	+@T="$(T)" bash tests/debug-kernel/check.sh

# The cluster tests (tests/cluster/): their packages, the build, the run
check-cluster:
	@bash tests/install-deps.sh --cluster
	+@$(MAKE) --no-print-directory modules tests
	+$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/cluster/kmod \
		KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules
	@$(vm_env) bash tests/cluster/run.sh $(T)

# The cluster tests on the debug kernel (tests/cluster/check-debug.sh
# builds its kernel variant, the modules against it, the programs); T= works
check-cluster-debug:
	+@bash tests/cluster/check-debug.sh $(T)

# The fault-injection case alone, over several seeds, a cluster each
# (tests/cluster/faults.sh: FAULT_SEEDS, FAULT_SEED, FAULTS, FAULT_KINDS
# reach the guests through run.sh's run.env); corosync's token 5000 ms
# unless given: a host busy with other guests starved a guest past 2000 ms
# in the first runs
check-faults:
	@bash tests/install-deps.sh --cluster
	+@$(MAKE) --no-print-directory modules tests
	+$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/cluster/kmod \
		KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules
	@$(vm_env) CLUSTER_TOKEN_MS=$${CLUSTER_TOKEN_MS:-5000} bash tests/cluster/faults.sh

# The cluster benchmark (tests/cluster/bench/): two nodes; reports, does not fail
bench-cluster:
	@bash tests/install-deps.sh --cluster
	+@$(MAKE) --no-print-directory modules tests
	+$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/cluster/kmod \
		KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules
	@$(vm_env) CLUSTER_BENCH=1 CLUSTER_ICOUNT=$${CLUSTER_ICOUNT:-$(ICOUNT)} CLUSTER_NODES=$${CLUSTER_NODES:-2} bash tests/cluster/run.sh $(T)

# Builds the module (for KVER) and the tests first: a stale .ko or test
# binary is never what runs
vm: kdir-check
	+@$(MAKE) --no-print-directory -s modules tests
	@$(vm_env) bash tests/vm/run.sh $(T)

demo:
	@bash tests/install-deps.sh --demo
	+@$(MAKE) --no-print-directory demo-run

# Long runs of the stress test and of the in-VM fuzzer (short in make check);
# run.sh passes ORDLOCK_STRESS_* and ORDLOCK_FUZZ_* into the guest.
STRESS_SECONDS	?= 300
FUZZ_VM_SECONDS	?= 300
STRESS_KILLS	?=
STRESS_KAMIKAZES ?=
FUZZ_VM_CALLS	?=
stress_env	= ORDLOCK_STRESS_SECONDS=$(STRESS_SECONDS) ORDLOCK_STRESS_KILLS=$(STRESS_KILLS) \
		  ORDLOCK_STRESS_KAMIKAZES=$(STRESS_KAMIKAZES)
fuzz_env	= ORDLOCK_FUZZ_SECONDS=$(FUZZ_VM_SECONDS) ORDLOCK_FUZZ_CALLS=$(FUZZ_VM_CALLS)

stress: modules tests
	@$(stress_env) TEST_TIMEOUT=$$(($(STRESS_SECONDS) + 600)) \
		VM_TIMEOUT=$$(($(STRESS_SECONDS) + 1200)) $(vm_env) bash tests/vm/run.sh t_stress

fuzz-vm: modules tests
	@$(fuzz_env) TEST_TIMEOUT=$$(($(FUZZ_VM_SECONDS) + 600)) \
		VM_TIMEOUT=$$(($(FUZZ_VM_SECONDS) + 1200)) $(vm_env) bash tests/vm/run.sh t_fuzz

# The same two on the debug kernel, judged by its checkers (KASAN, lockdep,
# UBSAN, kmemleak after the unload...): tests/debug-kernel/check.sh
stress-debug: tests
	+@$(stress_env) TEST_TIMEOUT=$$(($(STRESS_SECONDS) + 900)) \
		VM_TIMEOUT=$$(($(STRESS_SECONDS) + 2400)) T=t_stress bash tests/debug-kernel/check.sh

fuzz-vm-debug: tests
	+@$(fuzz_env) TEST_TIMEOUT=$$(($(FUZZ_VM_SECONDS) + 900)) \
		VM_TIMEOUT=$$(($(FUZZ_VM_SECONDS) + 2400)) T=t_fuzz bash tests/debug-kernel/check.sh

# Benchmarks report, they do not fail on a missed target (tests/bench/bench.sh)
bench:
	+@BENCH="$(BENCH)" ICOUNT="$(ICOUNT)" bash tests/bench/bench.sh

# what the demo runs, not every test: the module, tools/ (ordlockctl,
# libordlock for the Python binding) and tests/demo's programs
demo-run: modules tools
	+$(MAKE) --no-print-directory -C tests demo
	@$(vm_env) bash tests/vm/run.sh --demo $(T)

# for scripts: what the VM boots
vm-env:
	@echo 'KVER=$(KVER)'
	@echo 'VMLINUZ=$(VMLINUZ)'

# --- installing ---------------------------------------------------------------
VERSION		:= 0.1.0
PREFIX		?= /usr/local
DESTDIR		?=


install: tools
	$(MAKE) -C tools install

uninstall:
	$(MAKE) -C tools uninstall

# kbuild's modules_install runs depmod only when the kernel's build tree
# has a System.map, which Debian's headers do not ship: modprobe would say
# "not found" until "depmod -a".  So depmod runs here, on $(DESTDIR) when
# given (-b), for KVER; without depmod the message says what to run.
DEPMOD		?= $(firstword $(wildcard /sbin/depmod /usr/sbin/depmod) $(shell command -v depmod 2>/dev/null))

# kbuild signs what it installs when the kernel's config says
# CONFIG_MODULE_SIG_ALL, with the key CONFIG_MODULE_SIG_KEY names; Debian
# ships no private key, so sign-file failed (four lines of SSL errors, the
# module installed unsigned all the same). Signing is asked for only with
# the key there; kbuild's own depmod step, which only says it is skipped
# (no System.map), is left out of the log: the depmod below runs instead.
SIG_KEY		= $(shell sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$$/\1/p' $(KDIR)/.config 2>/dev/null)
no_sign		= $(if $(SIG_KEY),$(if $(wildcard $(KDIR)/$(SIG_KEY) $(SIG_KEY)),,CONFIG_MODULE_SIG_ALL=))

install-module: modules
	@echo "$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates $(no_sign) modules_install"
	@log=$$(mktemp) || exit 1; \
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates $(no_sign) modules_install >"$$log" 2>&1; \
	rc=$$?; grep -v -e "Skipping depmod" -e "^  DEPMOD " "$$log"; rm -f "$$log"; exit $$rc
	@$(if $(no_sign),echo "install-module: not signed (no key $(KDIR)/$(SIG_KEY)): a kernel that enforces module signatures (Secure Boot) refuses it")
	@if [ -n "$(DEPMOD)" ]; then \
		echo "$(DEPMOD) $(if $(DESTDIR),-b $(abspath $(DESTDIR)) )-a $(KVER)"; \
		$(DEPMOD) $(if $(DESTDIR),-b $(abspath $(DESTDIR))) -a $(KVER); \
	else \
		echo "install-module: no depmod here: run \"depmod -a $(KVER)\" (kmod) before \"modprobe ordlock\"" >&2; \
	fi

# What DKMS needs to build the module: the kbuild files, kmod/ and the UAPI
# header (kmod/ includes it as ../include/uapi).
DKMS_SRC	?= /usr/src/ordlock-$(VERSION)
DKMS_FILES	:= Kbuild kmod/Kbuild \
		   $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h) \
		   include/uapi/linux/ordlock.h
DKMS_KVER	?=
dkms_k		= $(if $(DKMS_KVER),-k $(DKMS_KVER))

dkms-source:
	rm -rf $(DESTDIR)$(DKMS_SRC)
	for f in $(DKMS_FILES); do \
		install -D -m 0644 $$f $(DESTDIR)$(DKMS_SRC)/$$f || exit 1; \
	done
	install -m 0644 tools/dkms/dkms.conf $(DESTDIR)$(DKMS_SRC)/dkms.conf

dkms-install: dkms-source
	@command -v dkms >/dev/null || { echo "dkms is not installed (apt-get install dkms)" >&2; exit 1; }
	dkms status -m ordlock -v $(VERSION) | grep -q . || dkms add -m ordlock -v $(VERSION)
	dkms build -m ordlock -v $(VERSION) $(dkms_k) --force
	dkms install -m ordlock -v $(VERSION) $(dkms_k) --force

dkms-uninstall:
	-dkms remove -m ordlock -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

dkms-check:
	@KVER="$(KVER)" bash tests/unit/t_dkms.sh

clean:
	if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/cluster/kmod clean; fi
	$(MAKE) -C tools clean
	$(MAKE) -C tests clean
