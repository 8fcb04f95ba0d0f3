# SPDX-License-Identifier: MIT
# fplab - low-precision floating-point lab.  GNU Make.
#
#   make            build libfplab (static and shared) and the fplab binary
#   make demo       build, then run a short demonstration
#   make check      build and run the test suite (prints "N passed, N failed")
#   make check SANITIZE=1   the same under AddressSanitizer and UBSan
#   make check-long the exhaustive cross products, 10^7 random cases, fuzzers
#   make bench      speed, as ratios against baselines measured in the same run
#   make install PREFIX=/usr/local DESTDIR=
#
# User variables come first; the flags fplab needs are kept apart so that
# CFLAGS=... on the command line cannot drop them.

CC       ?= cc
CFLAGS   ?= -O2 -g
LDFLAGS  ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
SANITIZE ?=
NATIVE   ?= 1
WERROR   ?=
V        ?=

ifeq ($(origin CC),default)
CC := cc
endif

ifeq ($(SANITIZE),1)
BUILD    ?= build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD    ?= build/rel
SAN_FLAGS :=
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wformat=2 -Wvla
ENGINE_WARN := -Wconversion
ifeq ($(WERROR),1)
WARN += -Werror
endif

REQ_CFLAGS  := -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -fPIC -fvisibility=hidden -ffp-contract=off \
	-pthread -MMD -MP $(WARN) $(SAN_FLAGS)
REQ_LDFLAGS := -pthread $(SAN_FLAGS)
LIBS_IO     := -ljansson -lzip -lz
LIBS        := $(LIBS_IO) -lmpfr -lgmp -lm
TEST_LIBS   := -lmpfr -lgmp

# Kernels are always optimized so their block loops vectorize.
KERNEL_OPT := -O3 -fno-math-errno
# Only the native translation units get ISA flags; the rest is baseline x86-64.
X86_AVX512_FLAGS := -mavx2 -mfma -mavx512f -mavx512dq -mavx512bw -mavx512vl
X86_AVX2_FLAGS   := -mavx2 -mfma
X86_F16C_FLAGS   := -mavx -mf16c
X86_BF16_FLAGS   := $(X86_AVX512_FLAGS) -mavx512bf16
X86_AMX_FLAGS    := $(X86_BF16_FLAGS) -mamx-tile -mamx-bf16
X86_FP16_FLAGS   := $(X86_AVX512_FLAGS) -mavx512fp16

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

SOVERSION := 0
VERSION   := 0.1.0

# ---------------------------------------------------------------- sources
# Engine: formats, rounding, operations, encodings, state.
ENGINE_SRCS := \
	src/engine/error.c \
	src/engine/version.c \
	src/engine/state.c \
	src/engine/format.c \
	src/engine/format_catalogue.c \
	src/engine/format_load.c \
	src/engine/classify.c \
	src/engine/round_pack.c \
	src/engine/nan.c \
	src/engine/round.c \
	src/engine/round_parts.c \
	src/engine/add.c \
	src/engine/mul.c \
	src/engine/div.c \
	src/engine/sqrt.c \
	src/engine/fma.c \
	src/engine/minmax.c \
	src/engine/codec.c \
	src/engine/flip.c

# Array operations and the kernel table (portable parts).
KERNEL_SRCS := \
	src/kernels/cpu.c \
	src/kernels/kernels.c \
	src/kernels/round_ref.c \
	src/kernels/array.c \
	src/kernels/array_ops.c \
	src/util/parallel.c \
	src/util/scratch.c \
	src/util/errmsg.c \
	src/util/sbuf.c \
	src/util/gen.c

# Native kernels: compiled with ISA flags, selected at run time.
ifeq ($(NATIVE),1)
X86_SRCS := \
	src/block/x86/block_f32_avx2.c \
	src/block/x86/block_f32_avx512.c \
	src/kernels/x86/round_avx2.c \
	src/kernels/x86/round_avx512.c \
	src/kernels/x86/round_direct.c \
	src/kernels/x86/round_direct_avx2.c \
	src/native/x86/cvt_f16c.c \
	src/native/x86/gemm_fma32.c \
	src/native/x86/gemm_fma32_avx512.c \
	src/native/x86/cvt_avx512bf16.c \
	src/native/x86/gemm_avx512bf16.c \
	src/native/x86/gemm_amx.c \
	src/native/x86/arith_avx512fp16.c \
	src/native/x86/gemm_avx512fp16.c \
	src/hist/x86/classify_avx2.c \
	src/hist/x86/classify_avx512.c \
	src/accum/x86/chain_ne_avx512.c \
	src/accum/x86/chain_ne64_avx2.c \
	src/accum/x86/chain_ro32_avx512.c \
	src/accum/x86/chain_ro32_avx2.c \
	src/accum/x86/chain_sp_avx512.c \
	src/accum/x86/chain_sp_avx2.c \
	src/accum/x86/chain_fused_avx2.c \
	src/accum/x86/chain_fused_avx512.c \
	src/accum/x86/chain_blocked_avx2.c \
	src/accum/x86/chain_blocked_avx512.c \
	src/accum/x86/exact_gemm_avx2.c \
	src/accum/x86/exact_gemm_avx512.c
NATIVE_DEFS := -DFPL_HAVE_X86_KERNELS
else
X86_SRCS :=
NATIVE_DEFS :=
endif

# The native kernel registry (fplab/native.h): portable; the kernels are
# in X86_SRCS above.
NATIVE_SRCS := src/native/native.c

# Tensor I/O (npy, npz, safetensors, raw, text).
IO_SRCS := \
	src/io/dtype.c \
	src/io/escape.c \
	src/io/number.c \
	src/io/tensor.c \
	src/io/npy.c \
	src/io/npz.c \
	src/io/safetensors.c \
	src/io/raw.c \
	src/io/text.c \
	src/io/npy_write.c \
	src/io/zip_write.c \
	src/io/safetensors_write.c \
	src/hist/hist.c \
	src/hist/classify.c \
	src/hist/suggest.c \
	src/hist/block_view.c

# Block-scaled formats (fplab/block.h): MX, NVFP4, per-block scaling.
BLOCK_SRCS := $(sort $(wildcard src/block/*.c))

# Accumulation models: exact accumulator, dot products, GEMM, reductions.
ACCUM_SRCS := $(sort $(wildcard src/accum/*.c))

# Optimizer steps under a precision policy.
OPTIM_SRCS := $(sort $(wildcard src/optim/*.c))

# Training: data sets, the MLP, policies, the data-parallel loop.
TRAIN_SRCS := $(sort $(wildcard src/train/*.c))

# The command line.
CLI_SRCS := \
	src/cli/main.c \
	src/cli/cli.c \
	src/cli/cli_input.c \
	src/cli/cli_output.c \
	src/cli/cli_report.c \
	src/cli/cli_round.c \
	src/cli/cmd_calc.c \
	src/cli/cmd_formats.c \
	src/cli/cmd_help.c \
	src/cli/cmd_hist.c \
	src/cli/hist_render.c \
	src/cli/cmd_info.c \
	src/cli/cmd_round.c \
	src/cli/cli_model.c \
	src/cli/cli_accum_input.c \
	src/cli/cli_accum.c \
	src/cli/cli_native.c \
	src/cli/cli_onednn.c \
	src/cli/cli_round_native.c \
	src/cli/cli_progress.c \
	src/cli/cmd_dot.c \
	src/cli/cmd_gemm.c \
	src/cli/cmd_reduce.c \
	src/cli/cmd_allreduce.c \
	src/cli/cli_layers.c \
	src/cli/cmd_optim.c \
	src/cli/cli_optim_input.c \
	src/cli/cli_hyper.c \
	src/cli/cmd_train.c \
	src/cli/cli_train_io.c \
	src/cli/cli_plot.c \
	src/cli/cmd_models.c

# Test programs: tests/<name>.c, each linked with the harness and the oracle.
TESTS := \
	tswitch \
	tround16 \
	tnative \
	tnative_kernels \
	tarith8 \
	twide \
	tarray \
	tspecial \
	tcodec \
	tstochastic \
	tflip \
	tformat \
	toracle \
	tminmax \
	tio \
	thist \
	thist_block \
	tparts \
	tstate \
	tnumber \
	texact \
	texactfast \
	tgemmref \
	th100 \
	taccum \
	taccum_fast \
	taccum_blocked \
	taccerr \
	treduce \
	tallreduce \
	toptim \
	tdataset \
	ttrain \
	tblock \
	tblockfast \
	tblockgemm \
	thadamard \

TEST_SUPPORT := \
	tests/harness.c \
	tests/oracle.c \
	tests/exhaust.c

BENCHES := \
	bround \
	barith \
	bhist \
	bgemm \
	btrain \
	bnative \
	bblock \

# ---------------------------------------------------------------- objects
LIB_SRCS := $(ENGINE_SRCS) $(KERNEL_SRCS) $(NATIVE_SRCS) $(IO_SRCS) $(BLOCK_SRCS) $(ACCUM_SRCS) \
	    $(OPTIM_SRCS) $(TRAIN_SRCS)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(X86_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_SUPPORT_OBJS := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)
TEST_BINS := $(TESTS:%=$(BUILD)/tests/%)
BENCH_BINS := $(BENCHES:%=$(BUILD)/tests/bench/%)

STATIC_LIB := $(BUILD)/libfplab.a
SHARED_LIB := $(BUILD)/libfplab.so.$(VERSION)
FPLAB      := $(BUILD)/fplab

ALL_CFLAGS = $(REQ_CFLAGS) $(NATIVE_DEFS) $(CFLAGS)

.PHONY: all deps demo check check-long bench install uninstall clean FORCE
# Keep test and bench objects: they are intermediate files to make.
.SECONDARY:
.DEFAULT_GOAL := all

all: $(FPLAB) $(STATIC_LIB) $(SHARED_LIB) fplab mpi

# A convenience link at the top: ./fplab runs the build being used.
fplab: $(FPLAB)
	$(Q)ln -sf $(FPLAB) fplab

# ------------------------------------------------------- dependencies
# Every Debian package fplab uses, each with its reason in README.md's
# "Dependencies" (keep the lists the same), is installed by ONE rule,
# $(DEPS_STAMP), in ONE apt-get call, and every other rule that needs a
# package waits for it: apt-get calls from parallel rules (make -j) would
# fight over the dpkg lock and all but one would fail.
#   required, to build: MPFR and GMP (the library reads decimals exactly
#     with MPFR; the tests compare against it), jansson (.safetensors
#     headers), libzip and zlib (.npz);
#   required, for the tests: pkg-config and xmllint (install and SVG
#     tests), rsvg-convert (renders every SVG), numpy (files written and
#     read back by numpy);
#   optional: Open MPI (fplab-mpi, the helper of `fplab allreduce --mpi`)
#     and Fashion-MNIST (`fplab train`'s data set).  Without them make
#     says what is skipped and their tests and experiments skip.
# As root the missing ones are installed; otherwise make stops with the
# exact command when a required one is missing, and prints the command
# for the optional ones.  `make deps` (or deps-mpi, deps-data) tries again.
DEPS_STAMP := build/.deps-ok
DATA_PKGS  := dataset-fashion-mnist
DATA_DIR   := /usr/share/datasets/fashion-mnist
MPICC      ?= mpicc
MPI_PKGS   := libopenmpi-dev openmpi-bin

.PHONY: deps deps-data deps-mpi
deps deps-data deps-mpi:
	$(Q)rm -f $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory $(DEPS_STAMP)
$(DEPS_STAMP):
	$(Q)mkdir -p build
	$(Q)missing=""; optional=""; what=""; \
	for h in mpfr.h:libmpfr-dev gmp.h:libgmp-dev jansson.h:libjansson-dev zip.h:libzip-dev zlib.h:zlib1g-dev; do \
		printf '#include <%s>\n' "$${h%%:*}" | $(CC) -E -x c - >/dev/null 2>&1 || missing="$$missing $${h##*:}"; \
	done; \
	for c in pkg-config:pkg-config xmllint:libxml2-utils rsvg-convert:librsvg2-bin; do \
		command -v "$${c%%:*}" >/dev/null 2>&1 || missing="$$missing $${c##*:}"; \
	done; \
	{ python3 -c 'import numpy' || /usr/bin/python3 -c 'import numpy'; } >/dev/null 2>&1 \
		|| missing="$$missing python3-numpy"; \
	{ command -v $(MPICC) && command -v mpirun; } >/dev/null 2>&1 \
		|| { optional="$$optional $(MPI_PKGS)"; what="Open MPI (fplab-mpi)"; }; \
	[ -e $(DATA_DIR)/train-images-idx3-ubyte.gz ] \
		|| { optional="$$optional $(DATA_PKGS)"; what="$${what:+$$what and }Fashion-MNIST (fplab train)"; }; \
	if [ -n "$$missing$$optional" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "fplab: installing$$missing$$optional (one apt-get call, log in build/apt.log)"; \
			( export DEBIAN_FRONTEND=noninteractive; \
			  apt-get install -y -q $$missing $$optional || { apt-get update -q && apt-get install -y -q $$missing $$optional; } \
			  || { [ -n "$$missing" ] && apt-get install -y -q $$missing; } ) >build/apt.log 2>&1 </dev/null; \
			for p in $$missing; do \
				dpkg -s $$p >/dev/null 2>&1 || { echo "fplab: apt-get could not install $$p, see build/apt.log"; exit 1; }; \
			done; \
			for p in $$optional; do \
				dpkg -s $$p >/dev/null 2>&1 || echo "fplab: optional $$p not installed (its tests skip), see build/apt.log"; \
			done; \
		elif [ -n "$$missing" ]; then \
			echo "fplab: missing packages:$$missing"; \
			echo "run: sudo apt-get install -y$$missing$$optional"; exit 1; \
		else \
			echo "fplab: optional packages missing: $$what, their tests skip; run: sudo apt-get install -y$$optional"; \
		fi; \
	fi
	$(Q)touch $@

# ------------------------------------------------- Fashion-MNIST (optional)
# `fplab train`'s data set is Debian's dataset-fashion-mnist (IDX files
# under $(DATA_DIR)), installed by the deps rule above; without it the
# tests and experiments that need it skip with a message.
DATA_STAMP := $(DEPS_STAMP)

# ------------------------------------------------------ Open MPI (optional)
# fplab-mpi, the helper that `fplab allreduce --mpi` runs under mpirun
# (fplab itself never links Open MPI), is built with mpicc when Open MPI
# is present (installed by the deps rule above).  Without mpicc, `make`
# says fplab-mpi is skipped, and its test and bench skip with a message:
# nothing else needs it.
MPI_STAMP  := $(DEPS_STAMP)
FPLAB_MPI  := $(BUILD)/fplab-mpi
MPI_SIM    := $(BUILD)/fplab-mpi-sim
MPI_JOB_OBJ := $(BUILD)/src/mpi/ar_job.o
MPI_OBJS   := $(BUILD)/src/mpi/fplab_mpi.mpi.o $(BUILD)/src/mpi/ar_mpi.mpi.o
BENCH_MPI  := $(BUILD)/tests/bench/bmpi
MPI_MISSING_MSG := fplab: Open MPI (mpicc) not found: fplab-mpi is not built and its test and bench skip; run: sudo apt-get install -y $(MPI_PKGS)

.PHONY: mpi
# `mpi` builds fplab-mpi when mpicc exists (a sub-make,
# so that a mpicc installed by this very run is seen).
mpi: $(STATIC_LIB) $(MPI_JOB_OBJ) | $(MPI_STAMP)
	@if command -v $(MPICC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory BUILD=$(BUILD) $(FPLAB_MPI); \
	else \
		echo "$(MPI_MISSING_MSG)"; \
	fi

$(BUILD)/%.mpi.o: %.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,MPICC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)OMPI_CC="$(CC)" $(MPICC) $(ALL_CFLAGS) -c $< -o $@

# fplab-mpi runs `fplab allreduce` itself on every rank: the CLI's
# objects, with main.c's main renamed fplab_cli_main (fplab_mpi.c calls
# it after MPI_Init).
MPI_CLI_MAIN := $(BUILD)/src/cli/main.mpicli.o
MPI_CLI_OBJS := $(filter-out $(BUILD)/src/cli/main.o,$(CLI_OBJS)) $(MPI_CLI_MAIN)
$(MPI_CLI_MAIN): src/cli/main.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Dmain=fplab_cli_main -Wno-missing-prototypes -c $< -o $@

$(FPLAB_MPI): $(MPI_OBJS) $(MPI_JOB_OBJ) $(MPI_CLI_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)OMPI_CC="$(CC)" $(MPICC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BENCH_MPI): $(BUILD)/tests/bench/bmpi.mpi.o $(BUILD)/src/mpi/ar_mpi.mpi.o $(MPI_JOB_OBJ) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)OMPI_CC="$(CC)" $(MPICC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# The simulation side of the MPI test (no MPI): fpl_allreduce on the same
# generated gradients, written as fplab-mpi writes its result.
$(MPI_SIM): $(BUILD)/src/mpi/ar_sim.o $(MPI_JOB_OBJ) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# Objects rebuild when the flags change.
FLAGS_STAMP := $(BUILD)/.flags
$(FLAGS_STAMP): FORCE
	$(Q)mkdir -p $(BUILD)
	$(Q)echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS)' | cmp -s - $@ || echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS)' > $@

$(BUILD)/%.o: %.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(EXTRA_OPT) -c $< -o $@

# The accumulation chains' scans and conversions are block loops too.
EXTRA_OPT =
$(BUILD)/src/accum/chain_%.o: EXTRA_OPT = $(KERNEL_OPT)
$(BUILD)/src/accum/exact_fast.o: EXTRA_OPT = $(KERNEL_OPT)
$(BUILD)/src/accum/exact_gemm.o: EXTRA_OPT = $(KERNEL_OPT)
$(BUILD)/src/block/block_f32.o: EXTRA_OPT = $(KERNEL_OPT)
$(BUILD)/src/block/block_fast.o: EXTRA_OPT = $(KERNEL_OPT)

$(BUILD)/src/engine/%.o: src/engine/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ENGINE_WARN) -c $< -o $@

$(BUILD)/src/kernels/%.o: src/kernels/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(KERNEL_OPT) -c $< -o $@

# Each native file gets its own ISA: AVX-512 by default, AVX2 for the avx2 set.
X86_ISA = $(X86_AVX512_FLAGS)
$(BUILD)/src/kernels/x86/round_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/kernels/x86/round_direct_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/native/x86/cvt_f16c.o: X86_ISA = $(X86_F16C_FLAGS)
$(BUILD)/src/native/x86/gemm_fma32.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/native/x86/gemm_fma32_avx512.o: X86_ISA = $(X86_AVX512_FLAGS)
$(BUILD)/src/native/x86/cvt_avx512bf16.o: X86_ISA = $(X86_BF16_FLAGS)
$(BUILD)/src/native/x86/gemm_avx512bf16.o: X86_ISA = $(X86_BF16_FLAGS)
$(BUILD)/src/native/x86/gemm_amx.o: X86_ISA = $(X86_AMX_FLAGS)
$(BUILD)/src/native/x86/arith_avx512fp16.o: X86_ISA = $(X86_FP16_FLAGS)
$(BUILD)/src/native/x86/gemm_avx512fp16.o: X86_ISA = $(X86_FP16_FLAGS)
$(BUILD)/src/block/x86/block_f32_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/hist/x86/classify_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/hist/x86/classify_avx512.o: X86_ISA = $(X86_AVX512_FLAGS)
$(BUILD)/src/accum/x86/chain_blocked_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/accum/x86/chain_ro32_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/accum/x86/chain_fused_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/accum/x86/chain_ne64_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/accum/x86/exact_gemm_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)
$(BUILD)/src/accum/x86/chain_sp_avx2.o: X86_ISA = $(X86_AVX2_FLAGS)

$(BUILD)/src/kernels/x86/%.o: src/kernels/x86/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(KERNEL_OPT) $(X86_ISA) -c $< -o $@

$(BUILD)/src/native/x86/%.o: src/native/x86/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(KERNEL_OPT) $(X86_ISA) -c $< -o $@

$(BUILD)/src/accum/x86/%.o: src/accum/x86/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(KERNEL_OPT) $(X86_ISA) -c $< -o $@

$(BUILD)/src/block/x86/%.o: src/block/x86/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(KERNEL_OPT) $(X86_ISA) -c $< -o $@

$(BUILD)/src/hist/x86/%.o: src/hist/x86/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(KERNEL_OPT) $(X86_ISA) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libfplab.so.$(SOVERSION) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)
	$(Q)ln -sf libfplab.so.$(VERSION) $(BUILD)/libfplab.so.$(SOVERSION)
	$(Q)ln -sf libfplab.so.$(VERSION) $(BUILD)/libfplab.so

$(FPLAB): $(CLI_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(STATIC_LIB) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) $(TEST_LIBS)

$(BUILD)/tests/bench/%: $(BUILD)/tests/bench/%.o $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# bnative compares with oneDNN's matmul when its header is here at build
# time (libdnnl-dev, optional: `make bench` installs it as root); without
# it bnative builds anyway and says oneDNN is skipped.  The stamp makes
# bnative.o rebuild when the package comes or goes; `private` keeps the
# flag off the prerequisites (the flags stamp of every other object).
BNATIVE_DNNL_CFLAGS := $(if $(wildcard /usr/include/dnnl.h),-DFPL_HAVE_DNNL)
BNATIVE_DNNL_LIBS   := $(if $(BNATIVE_DNNL_CFLAGS),-ldnnl)
BNATIVE_DNNL_STAMP  := $(BUILD)/.bnative-dnnl
$(BNATIVE_DNNL_STAMP): FORCE
	$(Q)mkdir -p $(BUILD)
	$(Q)echo '$(BNATIVE_DNNL_CFLAGS)' | cmp -s - $@ || echo '$(BNATIVE_DNNL_CFLAGS)' > $@
$(BUILD)/tests/bench/bnative.o: private ALL_CFLAGS += $(BNATIVE_DNNL_CFLAGS)
$(BUILD)/tests/bench/bnative.o: $(BNATIVE_DNNL_STAMP)
$(BUILD)/tests/bench/bnative: $(BUILD)/tests/bench/bnative.o $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(REQ_LDFLAGS) $(LDFLAGS) -o $@ $(BUILD)/tests/bench/bnative.o $(STATIC_LIB) \
		$(LIBS) $(BNATIVE_DNNL_LIBS)
# experiments/bf16-speedup.sh runs bnative --speedup.
experiments: $(BUILD)/tests/bench/bnative

# ---------------------------------------------------------------- running
demo: all
	@sh experiments/demo.sh $(FPLAB)

# The experiments beside their papers (each under a minute): every
# experiments/*.sh but the demo and lib.sh (their shared helpers).
.PHONY: experiments
experiments: $(FPLAB) | $(DATA_STAMP)
	@for e in $(filter-out experiments/demo.sh experiments/lib.sh,$(sort $(wildcard experiments/*.sh))); do \
		echo "== $$e"; sh $$e $(FPLAB) || exit 1; echo; done

check: all $(TEST_BINS) $(MPI_SIM) | $(DATA_STAMP)
	@BUILD=$(BUILD) FPLAB=$(CURDIR)/$(FPLAB) sh tests/run.sh $(TESTS)

# check-long fuzzes each target for a minute (FUZZ_TIME=N on the command
# line still wins).
check-long: FUZZ_TIME = 60
check-long: all $(TEST_BINS) fuzz
	@FPLAB_LONG=1 BUILD=$(BUILD) FPLAB=$(CURDIR)/$(FPLAB) sh tests/run.sh $(TESTS)

# Fuzz the tensor readers and the commands (hist, round, dot, gemm,
# reduce, allreduce, optim, train: tests/fuzz/fuzz_cli.c) with libFuzzer
# (clang) for FUZZ_TIME seconds each; skipped with a message when clang or
# its fuzzer runtime is missing.  FUZZ_TARGETS="cli npy" picks targets.
FUZZ_TIME ?= 20
FUZZ_OUT ?= $(BUILD)/fuzz
.PHONY: fuzz
fuzz: | $(DEPS_STAMP)
	@ENGINE_SRCS="$(ENGINE_SRCS) $(KERNEL_SRCS) $(NATIVE_SRCS) $(BLOCK_SRCS) $(ACCUM_SRCS) $(OPTIM_SRCS) $(TRAIN_SRCS)" X86_SRCS="$(X86_SRCS)" \
		IO_SRCS="$(IO_SRCS)" CLI_SRCS="$(CLI_SRCS)" X86_FLAGS="$(X86_AVX512_FLAGS)" \
		X86_AVX2_FLAGS="$(X86_AVX2_FLAGS)" NATIVE_DEFS="$(NATIVE_DEFS)" \
		FUZZ_TIME=$(FUZZ_TIME) sh tests/fuzz/run.sh $(FUZZ_OUT)

# bgemm and bnative compare with OpenBLAS's sgemm (loaded at run time),
# bnative with oneDNN's matmul (libdnnl-dev, needed when bnative is
# compiled): installed here as root, like deps, and bnative rebuilt with
# oneDNN; otherwise the command is printed and those figures are skipped.
bench: all $(BENCH_BINS) | $(DATA_STAMP)
	@missing=""; \
	ls /usr/lib/*/libopenblas.so.0 /usr/lib/libopenblas.so.0 2>/dev/null | grep -q . || missing="$$missing libopenblas-dev"; \
	[ -e /usr/include/dnnl.h ] || missing="$$missing libdnnl-dev"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "fplab: installing$$missing (bench baselines)"; \
			( export DEBIAN_FRONTEND=noninteractive; \
			  apt-get install -y -q $$missing || { apt-get update -q && apt-get install -y -q $$missing; } ) \
				>build/apt-bench.log 2>&1 </dev/null || echo "fplab: apt-get failed, see build/apt-bench.log"; \
		else \
			echo "fplab: bench baselines missing: run: sudo apt-get install -y$$missing"; \
		fi; \
	fi
	@# oneDNN installed just now: bnative was compiled without it, rebuild it.
	@if [ -z "$(BNATIVE_DNNL_CFLAGS)" ] && [ -e /usr/include/dnnl.h ]; then \
		$(MAKE) --no-print-directory BUILD=$(BUILD) $(BUILD)/tests/bench/bnative; \
	fi
	@: >$(BUILD)/bench.log; for b in $(BENCH_BINS); do \
		echo "== $$b" | tee -a $(BUILD)/bench.log; \
		{ $$b; echo $$? >$(BUILD)/bench.rc; } 2>&1 | tee -a $(BUILD)/bench.log; \
		[ "$$(cat $(BUILD)/bench.rc)" = 0 ] || exit 1; \
	done
	@# The packed 8-bit ring against MPI_Allreduce on fp32, 4 ranks, under mpirun.
	@if command -v $(MPICC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory BUILD=$(BUILD) $(BENCH_MPI) && echo "== $(BENCH_MPI)" && sh tests/bench/bmpi.sh $(BENCH_MPI); \
	else \
		echo "== bmpi: skipped: $(MPI_MISSING_MSG)"; \
	fi
	@sh tests/bench/floors.sh $(BUILD)/bench.log

# ---------------------------------------------------------------- install
BINDIR  := $(DESTDIR)$(PREFIX)/bin
LIBDIR  := $(DESTDIR)$(PREFIX)/lib
INCDIR  := $(DESTDIR)$(PREFIX)/include
MANDIR  := $(DESTDIR)$(PREFIX)/share/man
DATADIR := $(DESTDIR)$(PREFIX)/share/fplab
PCDIR   := $(LIBDIR)/pkgconfig

install: all
	install -d $(BINDIR) $(LIBDIR) $(INCDIR)/fplab $(MANDIR)/man1 $(MANDIR)/man3 \
		$(MANDIR)/man5 $(MANDIR)/man7 $(DATADIR)/formats $(PCDIR)
	install -m 755 $(FPLAB) $(BINDIR)/fplab
	if [ -x $(FPLAB_MPI) ]; then install -m 755 $(FPLAB_MPI) $(BINDIR)/fplab-mpi; fi
	install -m 644 $(STATIC_LIB) $(LIBDIR)/libfplab.a
	install -m 755 $(SHARED_LIB) $(LIBDIR)/libfplab.so.$(VERSION)
	ln -sf libfplab.so.$(VERSION) $(LIBDIR)/libfplab.so.$(SOVERSION)
	ln -sf libfplab.so.$(VERSION) $(LIBDIR)/libfplab.so
	install -m 644 include/fplab/*.h $(INCDIR)/fplab/
	for f in man/*.1; do [ -e "$$f" ] && install -m 644 "$$f" $(MANDIR)/man1/ || true; done
	for f in man/*.3; do [ -e "$$f" ] && install -m 644 "$$f" $(MANDIR)/man3/ || true; done
	for f in man/*.5; do [ -e "$$f" ] && install -m 644 "$$f" $(MANDIR)/man5/ || true; done
	for f in man/*.7; do [ -e "$$f" ] && install -m 644 "$$f" $(MANDIR)/man7/ || true; done
	install -m 644 formats/*.fmt $(DATADIR)/formats/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
		'Name: fplab' 'Description: low-precision floating-point emulation' \
		'Version: $(VERSION)' 'Libs: -L$${libdir} -lfplab' \
		'Libs.private: $(LIBS) -pthread' 'Requires.private:' \
		'Cflags: -I$${includedir}' > $(PCDIR)/fplab.pc
	@# The dynamic linker finds libfplab.so.$(SOVERSION) in /usr/lib and
	@# /usr/local/lib once its cache is refreshed: done here as root for a
	@# real install (no DESTDIR); otherwise say what to do.
	@case '$(DESTDIR):$(PREFIX)' in \
	:/usr|:/usr/|:/usr/local|:/usr/local/) \
		if [ "$$(id -u)" = 0 ]; then \
			PATH="$$PATH:/sbin:/usr/sbin" ldconfig || echo "fplab: ldconfig failed; run it as root"; \
		else \
			echo "fplab: run 'sudo ldconfig' so that programs find libfplab.so"; \
		fi ;; \
	:*) echo "fplab: $(LIBDIR) is not searched by the dynamic linker: set LD_LIBRARY_PATH=$(LIBDIR)," \
		"or list it in /etc/ld.so.conf.d/ and run ldconfig, or link with -Wl,-rpath,$(LIBDIR)" ;; \
	esac

uninstall:
	rm -f $(BINDIR)/fplab $(BINDIR)/fplab-mpi $(LIBDIR)/libfplab.a $(LIBDIR)/libfplab.so* $(PCDIR)/fplab.pc
	rm -rf $(INCDIR)/fplab $(DATADIR)
	rm -f $(MANDIR)/man1/fplab*.1 $(MANDIR)/man3/fplab*.3 $(MANDIR)/man5/fplab*.5 $(MANDIR)/man7/fplab*.7

clean:
	rm -rf build fplab

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
