# alys-bpf: eBPF allocation tracer for Crystal programs.
#   make            build bin/alys-bpf and bin/alys_converter
#   make SAN=1      the same with ASan+UBSan, into bin-san/
#   make check      unit tests, then end-to-end tests (root, BPF) on both builds
#   make demo       trace the bundled demo program, write a flamegraph and report
#   make fuzz       fuzz the converter's trace reader for FUZZ_SECONDS (60)

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH    := x86

ifeq ($(SAN),1)
BUILD   := build-san
BIN     := bin-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD   := build
BIN     := bin
SANFLAGS :=
endif

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
# src/: the daemon, by job: base/ (process plumbing below the rest),
# core/ (a session: target, trace, probes), gc/ (the collector's machine
# code and data, read from outside), unwind/, modes/ (what a session is
# asked to do) and agent/ (every process on a host).
SRC_DIRS := src src/base src/core src/gc src/unwind src/modes src/agent
# Includes name their layer: "core/session.h", "lib/u64_table.h" (DESIGN.md,
# Pieces); include/'s format headers go by their bare names.
CPPFLAGS := -Iinclude -I. -Isrc -I$(BUILD) -D_GNU_SOURCE
ALL_CFLAGS := $(CFLAGS) $(WARN) $(SANFLAGS) -std=gnu11

DAEMON_LIBS    := -lbpf -lelf -lz -lzstd -lmsgpackc -lcapstone -ldw -lmicrohttpd -lcurl -lm -lpthread
CONVERTER_LIBS := -ldw -lelf -lz -lzstd -lmsgpackc -lcapstone -lm

# lib/: code both programs use (one rule, one copy); profile/: the trace's
# reader, model, symbolizer and pprof writer, which the converter renders
# files with and the daemon its live profiles.
LIB_SRCS       := $(wildcard lib/*.c) $(wildcard profile/*.c)
DAEMON_SRCS    := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)) $(LIB_SRCS)
CONVERTER_SRCS := $(wildcard converter/*.c) $(LIB_SRCS)
DAEMON_OBJS    := $(DAEMON_SRCS:%.c=$(BUILD)/%.o)
CONVERTER_OBJS := $(CONVERTER_SRCS:%.c=$(BUILD)/%.o)
HEADERS        := $(wildcard include/*.h lib/*.h profile/*.h converter/*.h) \
		  $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.h))

# make keeps the skeletons, which make's chains would delete as intermediate.
.SECONDARY:
.PHONY: all clean check unit-tests demo fuzz
all: $(BIN)/alys-bpf $(BIN)/alys_converter

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

# One BPF object per bpf/*.bpf.c, each with its skeleton (NAME_bpf).
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard include/*.h) $(BUILD)/vmlinux.h
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Iinclude -I$(BUILD) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

# Only the loaders include the generated skeletons.
$(BUILD)/src/core/session.o $(BUILD)/src/core/bpf_setup.o $(BUILD)/src/core/probe_attach.o \
	$(BUILD)/src/core/bpf_pool.o $(BUILD)/src/core/bpf_load.o \
	$(BUILD)/src/core/direct_map.o: $(BUILD)/alys.skel.h
$(BUILD)/src/agent/exec_watch.o: $(BUILD)/exec_watch.skel.h

$(BUILD)/converter/%.o: converter/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/lib/%.o: lib/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/profile/%.o: profile/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BIN)/alys-bpf: $(DAEMON_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(DAEMON_LIBS)

$(BIN)/alys_converter: $(CONVERTER_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(CONVERTER_LIBS)

# C unit tests, one binary each, built with the same flags as the programs.
$(BUILD)/tests/test_unwind_table: tests/unit/test_unwind_table.c src/unwind/unwind_table.c \
		src/unwind/cfa_program.c src/unwind/unwind_ref.c lib/elf_file.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -ldw -lelf

# The tables of many files built on threads against one after another.
$(BUILD)/tests/test_unwind_maps: tests/unit/unit_check.h tests/unit/test_unwind_maps.c \
		src/unwind/unwind_maps.c src/unwind/unwind_table.c src/unwind/cfa_program.c \
		lib/elf_file.c lib/util.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -ldw -lelf -lbpf -lpthread

$(BUILD)/tests/test_crystal_names: tests/unit/unit_check.h tests/unit/test_crystal_names.c lib/crystal_names.c \
		lib/crystal_display.c lib/str_table.c lib/util.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

# Writes test traces from a script (tests/unit/test_converter.sh, the fuzz
# corpus): built like the programs, so the sanitizers watch it too.
$(BUILD)/tests/test_converter_gen: tests/unit/test_converter_gen.c lib/alys_records.c \
		$(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -lmsgpackc -lzstd

$(BUILD)/tests/test_mp_scan: tests/unit/unit_check.h tests/unit/test_mp_scan.c profile/mp_scan.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -lmsgpackc

$(BUILD)/tests/test_u64_table: tests/unit/unit_check.h tests/unit/test_u64_table.c lib/u64_table.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

$(BUILD)/tests/test_stack_table: tests/unit/unit_check.h tests/unit/test_stack_table.c src/unwind/stack_table.c \
		lib/u64_table.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

# crystal_qualify reads sources: Debian's standard library and a fixture.
$(BUILD)/tests/test_inline_names: tests/unit/unit_check.h tests/unit/test_inline_names.c \
		profile/crystal_source.c lib/util.c lib/crystal_display.c lib/crystal_names.c \
		lib/str_table.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

# The sink's records, through the writer, read back by the trace reader.
$(BUILD)/tests/test_record_sink: tests/unit/unit_check.h tests/unit/test_record_sink.c \
		src/core/record_sink.c src/core/trace_writer.c src/unwind/stack_table.c \
		lib/u64_table.c lib/util.c lib/alys_records.c profile/trace.c profile/mp_scan.c \
		profile/progress.c profile/alloc_tally.c profile/counted_blocks.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -lmsgpackc -lzstd -lm

$(BUILD)/tests/test_container_info: tests/unit/unit_check.h tests/unit/test_container_info.c \
		src/core/container_info.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

$(BUILD)/tests/test_cpu_paging: tests/unit/unit_check.h tests/unit/test_cpu_paging.c \
		src/base/cpu_paging.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@

# The attach and the collector's count are stubs in the test.
$(BUILD)/tests/test_refill_windows: tests/unit/unit_check.h tests/unit/test_refill_windows.c \
		src/core/refill_windows.c src/core/duty_cycle.c src/core/link_reaper.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(filter %.c,$^) -o $@ -lpthread

unit-tests: $(BUILD)/tests/test_unwind_table $(BUILD)/tests/test_unwind_maps \
	$(BUILD)/tests/test_crystal_names \
	$(BUILD)/tests/test_u64_table $(BUILD)/tests/test_stack_table \
	$(BUILD)/tests/test_mp_scan $(BUILD)/tests/test_refill_windows $(BUILD)/tests/test_converter_gen \
	$(BUILD)/tests/test_container_info $(BUILD)/tests/test_inline_names \
	$(BUILD)/tests/test_record_sink $(BUILD)/tests/test_cpu_paging

check:
	tests/run-all.sh

demo: all
	scripts/demo.sh

# libFuzzer (clang, libclang-rt-14-dev) with ASan+UBSan; fails on any finding.
FUZZ_SECONDS ?= 60
fuzz:
	tests/fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-san bin bin-san tests/build
