# aorta - one GNU Makefile, everything into build/.
#
#   make            build build/aorta (GPU code too when nvcc is found)
#   make test       the whole suite (unit, CLI golden, real traces, ASan+UBSan, fuzz)
#   make demo       install what is missing, build, analyse the bundled traces
#   make SANITIZE=address,undefined   sanitized build in build-san/
#   make BUILD_GPU=0                  host-only build
#   make fuzz       libFuzzer targets (clang) in build-fuzz/
#   make mpi-tests  MPI tests of the distributed core (needs mpicc)
#   make readme-example   regenerate README.md's example output from build/aorta
#   make install [PREFIX=/usr/local] [DESTDIR=]   make uninstall   make deb
#
# Debian-only libraries (SQLite, libyaml, yajl) are linked statically so the
# binary runs on GPU machines that lack them; zlib, libc and the CUDA
# libraries stay dynamic.  ISA-L, when installed, is loaded at run time.

MPICC ?= mpicc
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
BUILD_GPU ?= $(if $(NVCC),1,0)
CUDA_HOME ?= $(if $(NVCC),$(abspath $(dir $(NVCC))/..),/usr/local/cuda)

CC ?= gcc
ifeq ($(origin CC),default)
CC = gcc
endif
SANITIZE ?=
WERROR ?= $(if $(CI),-Werror,)
OPT ?= -O2

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
       -Wformat=2 -Wno-format-nonliteral $(WERROR)
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) -Isrc -pthread $(CFLAGS)

ifneq ($(SANITIZE),)
BUILD ?= build-san
CFLAGS_ALL += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDSAN = -fsanitize=$(SANITIZE)
else
BUILD ?= build
LDSAN =
endif

STATIC_LIBS = -Wl,-Bstatic -lsqlite3 -lyaml -lyajl_s -Wl,-Bdynamic
LIBS = $(STATIC_LIBS) -lz -lm -ldl -lpthread

# Host sources: everything under src/ except GPU-only code: the folders
# src/gpu and src/comm/nccl*, and any file named *_gpu.c.  The CPU reference
# of the model (src/train/*_cpu.c, model.c, data) builds and is tested
# everywhere.
ALL_C := $(shell find src -name '*.c' | sort)
# MPI backends (*_mpi.c) build only with mpicc, into `make mpi-tests`.
MPI_C := $(filter %_mpi.c,$(ALL_C))
ALL_C := $(filter-out $(MPI_C),$(ALL_C))
# The plot plug-in (src/report/plot_*.c) links cairo and is loaded by
# `aorta report` with dlopen, so build/aorta starts where cairo is absent.
PLOT_C := $(filter src/report/plot_%.c,$(ALL_C))
ALL_C := $(filter-out $(PLOT_C),$(ALL_C))
# Without cairo's headers (pkg-config finds no cairo) the plug-in is left
# out, and the build says so (see "the optional parts" below).
HAVE_CAIRO := $(shell pkg-config --exists cairo fontconfig 2>/dev/null && echo 1 || echo 0)
CAIRO_CFLAGS := $(shell pkg-config --cflags cairo fontconfig 2>/dev/null)
CAIRO_LIBS := $(shell pkg-config --libs cairo fontconfig 2>/dev/null || echo -lcairo -lfontconfig)
PLOT_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(PLOT_C))
PLOT_PLUGIN = $(if $(filter 1,$(HAVE_CAIRO)),$(BUILD)/libaorta-plot.so,)
GPU_C := $(filter src/gpu/% src/comm/nccl% %_gpu.c,$(ALL_C))
HOST_C := $(filter-out $(GPU_C),$(ALL_C))
CU_SRC := $(shell find src -name '*.cu' | sort)

MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null)

ifeq ($(BUILD_GPU),1)
CFLAGS_ALL += -DAORTA_GPU=1 -I$(CUDA_HOME)/include
SRC_C = $(ALL_C)
CU_OBJ = $(patsubst %.cu,$(BUILD)/obj/%.o,$(CU_SRC))
GPU_LIBS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -lcublas -lcublasLt -lnccl -lstdc++
NVCCFLAGS = -O2 -std=c++17 -Isrc -arch=sm_90 -Xcompiler -fPIC,-Wall
GPU_PLUGIN = $(BUILD)/libaorta-gpu.so
# Open MPI for the launcher's one-process-per-GPU mode (src/comm/
# launch_gpu.c, under mpirun/srun): its compile flags for that one file,
# libmpi for the plug-in and the test programs.  Without mpicc the plug-in
# builds without MPI and says so when started under a launcher.
ifneq ($(strip $(MPI_LIBS)),)
$(BUILD)/obj/src/comm/launch_gpu.o: CFLAGS_ALL += -DAORTA_MPI=1 $(MPI_CFLAGS)
GPU_LIBS += $(MPI_LIBS)
endif
else
SRC_C = $(HOST_C)
CU_OBJ =
GPU_LIBS =
GPU_PLUGIN =
endif

# build/aorta holds the host code only and links no CUDA library, so
# `aorta analyze` neither loads nor pays for them (about 200 MB and 0.1 s of
# start-up).  The GPU code (src/gpu, *_gpu.c, *.cu) is the plug-in
# build/libaorta-gpu.so, which `aorta train` loads with dlopen from the
# binary's folder; it resolves the host functions it uses from the binary
# (-rdynamic).  Test programs link everything statically.
OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(SRC_C))
HOST_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(HOST_C))
GPU_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(GPU_C))
$(GPU_OBJ): CFLAGS_ALL += -fPIC
LIB_OBJ = $(filter-out $(BUILD)/obj/src/main.o,$(OBJ))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

# Quiet by default ("  CC  src/x.c"); V=1 shows the commands.
ifeq ($(V),1)
Q =
say = @true
else
Q = @
say = @printf '  %-5s %s\n'
endif

# The MPI plug-in (src/mpi/analyze_mpi.c): `aorta analyze` under mpirun /
# srun loads it, so build/aorta links no MPI.  Built when mpicc is found.
MPI_PLUGIN = $(if $(strip $(MPI_LIBS)),$(BUILD)/libaorta-mpi.so,)

.PHONY: all test demo readme-example clean fuzz unit deps deps-check print-link-libs print-features format gpu-tests check-gpu mpi-tests
# The man pages and the bash completion are generated from the option
# tables by the built binary (scripts/gen_docs.sh), in the plain build only.
DOCS = $(if $(SANITIZE),,$(BUILD)/man/aorta.1)
all: $(BUILD)/aorta $(GPU_PLUGIN) $(PLOT_PLUGIN) $(MPI_PLUGIN) $(DOCS)

$(BUILD)/man/aorta.1: $(BUILD)/aorta scripts/gen_docs.sh docs/cli.md
	$(say) GEN $(BUILD)/man/
	$(Q)bash scripts/gen_docs.sh $(BUILD)/aorta $(BUILD)/man $(BUILD)/aorta.bash-completion

# ---- the optional parts ----------------------------------------------------
# Which optional parts this build has (GPU code, MPI in the GPU plug-in and
# the MPI plug-in, the cairo plot plug-in) depends on what is installed when
# make reads this file.  $(BUILD)/features records it; every object depends
# on that file, so installing or removing one of them (scripts/deps.sh, the
# CUDA toolkit) rebuilds what it changes instead of keeping a build without
# it, and each change is announced with what is left out and why.
define nl


endef
HAVE_MPI := $(if $(strip $(MPI_LIBS)),1,0)
# ISA-L is loaded at run time (src/base/zread.c): the build is the same,
# but the note says when gzip traces will be read with zlib only.
HAVE_ISAL := $(shell /sbin/ldconfig -p 2>/dev/null | grep -q 'libisal\.so\.2 ' && echo 1 || echo 0)
FEATURES := gpu=$(BUILD_GPU) mpi=$(HAVE_MPI) plot=$(HAVE_CAIRO) isal=$(HAVE_ISAL) sanitize=$(SANITIZE)
FEATURES_WHY := $(if $(filter 0,$(BUILD_GPU)),$(nl)  left out: the GPU plug-in ($(BUILD)/libaorta-gpu.so: aorta train, hwq, sdma, tune-tp): $(if $(NVCC),BUILD_GPU=0,no nvcc (the CUDA toolkit is not installed; /usr/local/cuda/bin/nvcc or nvcc on PATH)),)$(if $(filter 0,$(HAVE_MPI)),$(nl)  left out: MPI (the MPI plug-in $(BUILD)/libaorta-mpi.so for mpirun aorta analyze, and mpirun/srun launching of aorta train): no $(MPICC) (scripts/deps.sh installs libopenmpi-dev),)$(if $(filter 0,$(HAVE_CAIRO)),$(nl)  left out: the plot plug-in ($(BUILD)/libaorta-plot.so: the charts of aorta report): pkg-config finds no cairo (scripts/deps.sh installs libcairo2-dev and pkg-config),)$(if $(filter 0,$(HAVE_ISAL)),$(nl)  note: no ISA-L (libisal.so.2) here: aorta reads gzip traces with zlib only (slower; scripts/deps.sh installs libisal2),)
NO_FEATURE_GOALS := test demo clean clean-hip deps deps-check print-link-libs print-hip-files print-features uninstall
# (not under make -n or -q, which must change nothing)
ifneq ($(filter-out $(NO_FEATURE_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS))),)
FEATURES_OLD := $(shell cat $(BUILD)/features 2>/dev/null)
ifneq ($(FEATURES_OLD),$(FEATURES))
$(shell mkdir -p $(BUILD) && printf '%s\n' '$(FEATURES)' > $(BUILD)/features)
$(info aorta: build configuration of $(BUILD)/: $(FEATURES)$(if $(FEATURES_OLD), (was: $(FEATURES_OLD)); rebuilding,)$(FEATURES_WHY))
endif
endif
endif
$(BUILD)/features:
	@mkdir -p $(BUILD) && printf '%s\n' '$(FEATURES)' > $@

# ---- the plug-ins' handshake ---------------------------------------------------
# The binary and each plug-in carry a hash of every header of src/ (the
# interfaces between them; base/plugin.h): a plug-in built from other
# sources is refused by name instead of called with structures it does not
# know.  $(BUILD)/gen/aorta_abi.h is written when the hash changes, so only
# the files that include it are rebuilt.
ABI_HASH := $(shell cat $(sort $(shell find src -name '*.h')) | cksum | cut -d' ' -f1)
ABI_HDR = $(BUILD)/gen/aorta_abi.h
CFLAGS_ALL += -I$(BUILD)/gen
ifneq ($(filter-out $(NO_FEATURE_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS))),)
ifneq ($(shell cat $(ABI_HDR) 2>/dev/null),\#define AORTA_ABI_HASH "$(ABI_HASH)")
$(shell mkdir -p $(BUILD)/gen && printf '#define AORTA_ABI_HASH "%s"\n' '$(ABI_HASH)' > $(ABI_HDR))
endif
endif
endif
$(ABI_HDR):
	@mkdir -p $(dir $@) && printf '#define AORTA_ABI_HASH "%s"\n' '$(ABI_HASH)' > $@
print-features:
	@echo $(FEATURES)

$(BUILD)/aorta: $(HOST_OBJ)
	$(say) LD $@
	$(Q)$(CC) $(LDSAN) -pthread -rdynamic -o $@ $^ $(LIBS)

$(BUILD)/libaorta-gpu.so: $(GPU_OBJ) $(CU_OBJ)
	$(say) LD $@
	$(Q)$(CC) $(LDSAN) -shared -o $@ $^ $(GPU_LIBS) -lm -lpthread

$(PLOT_OBJ): CFLAGS_ALL += -fPIC $(CAIRO_CFLAGS)
$(PLOT_PLUGIN): $(PLOT_OBJ)
	$(say) LD $@
	$(Q)$(CC) $(LDSAN) -shared -o $@ $^ $(CAIRO_LIBS) -lm

$(BUILD)/obj/%.o: %.c $(BUILD)/features
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(BUILD)/obj/%.o: %.cu $(BUILD)/features
	@mkdir -p $(dir $@)
	$(say) NVCC $<
	$(Q)$(NVCC) $(NVCCFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) $(CU_OBJ)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(LIB_OBJ) $(CU_OBJ) $(LDSAN) $(LIBS) $(GPU_LIBS)

unit: $(UNIT_BIN)

# GPU tests (tests/gpu/test_*.c, helpers in tests/gpu/*.cu): built whenever
# nvcc is present, run by `make check-gpu` on a machine with a GPU; each
# skips with a message and exit 0 when no device is found.
GPU_TEST_SRC := $(sort $(wildcard tests/gpu/test_*.c))
GPU_TEST_CU := $(sort $(wildcard tests/gpu/*.cu))
GPU_TEST_CU_OBJ = $(patsubst %.cu,$(BUILD)/obj/%.o,$(GPU_TEST_CU))
ifeq ($(BUILD_GPU),1)
GPU_TEST_BIN = $(patsubst tests/gpu/%.c,$(BUILD)/gpu-tests/%,$(GPU_TEST_SRC))
else
GPU_TEST_BIN =
endif
$(BUILD)/gpu-tests/%: tests/gpu/%.c $(LIB_OBJ) $(CU_OBJ) $(GPU_TEST_CU_OBJ)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS_ALL) -Itests/unit -Itests/gpu -o $@ $< $(LIB_OBJ) $(CU_OBJ) $(GPU_TEST_CU_OBJ) $(LDSAN) $(LIBS) $(GPU_LIBS)
gpu-tests: $(GPU_TEST_BIN)
check-gpu: all gpu-tests
	@bash tests/gpu/run.sh $(BUILD)

# MPI tests (tests/mpi/test_*.c): the distributed core on the CPU over
# Open MPI, run by tests/run.sh under mpirun -np 2 and 4.  These (the
# *_mpi.c objects, compiled with mpicc) and the GPU plug-in link MPI;
# build/aorta does not.
MPI_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(MPI_C))
MPI_TEST_SRC := $(sort $(wildcard tests/mpi/test_*.c))
MPI_TEST_BIN = $(patsubst tests/mpi/%.c,$(BUILD)/mpi-tests/%,$(MPI_TEST_SRC))
$(MPI_OBJ): $(BUILD)/obj/%.o: %.c $(BUILD)/features
	@mkdir -p $(dir $@)
	$(say) MPICC $<
	$(Q)$(MPICC) $(CFLAGS_ALL) -fPIC -MMD -MP -c -o $@ $<
$(BUILD)/libaorta-mpi.so: $(BUILD)/obj/src/mpi/analyze_mpi.o
	$(say) LD $@
	$(Q)$(MPICC) $(LDSAN) -shared -o $@ $^ -lm
$(BUILD)/mpi-tests/%: tests/mpi/%.c $(MPI_OBJ) $(LIB_OBJ) $(CU_OBJ)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(MPICC) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(MPI_OBJ) $(LIB_OBJ) $(CU_OBJ) $(LDSAN) $(LIBS) $(GPU_LIBS)
mpi-tests: $(MPI_TEST_BIN)

# The whole suite; tests/run.sh prints the closing "N passed, N failed".
# test and demo install what is missing first, then build in a second make:
# this one read its flags (pkg-config, mpicc, nvcc) before the install, the
# sub-make reads them after it, so the first run builds what a second would.
test: deps-check
	@$(MAKE) --no-print-directory all unit gpu-tests
	@bash tests/run.sh

deps:
	@bash scripts/deps.sh

deps-check:
	@bash scripts/deps.sh --check-only || bash scripts/deps.sh

# Every library a link line names, for tests/deps_guard.sh.
print-link-libs:
	@echo $(LIBS) $(GPU_LIBS) $(CAIRO_LIBS) $(MPI_LIBS)

demo: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/demo.sh

# ---- install -----------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=]   make uninstall (same variables)
# bin/aorta; the plug-ins in lib/aorta/ (the binary finds them there from its
# own location: ../lib/aorta/, or through AORTA_GPU_LIB, AORTA_PLOT_LIB,
# AORTA_MPI_LIB); config/default.yaml in share/aorta/ (aorta train's default
# from any folder); man pages in share/man/man1/, the bash completion in
# share/bash-completion/completions/, README and docs/ in share/doc/aorta/.
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
PLUGINDIR = $(PREFIX)/lib/aorta
DATADIR = $(PREFIX)/share/aorta
MANDIR = $(PREFIX)/share/man/man1
COMPDIR = $(PREFIX)/share/bash-completion/completions
DOCDIR = $(PREFIX)/share/doc/aorta
INSTALL_PLUGINS = $(notdir $(GPU_PLUGIN) $(PLOT_PLUGIN) $(MPI_PLUGIN))
DOC_FILES = README.md $(sort $(wildcard docs/*.md))
.PHONY: install uninstall deb
INSTALL_DIRS = $(addprefix $(DESTDIR),$(BINDIR) $(PLUGINDIR) $(DATADIR)/config $(MANDIR) $(COMPDIR) $(DOCDIR)/docs)
# the folders install makes (scripts/made_dirs.sh), which uninstall removes when empty
MADE_DIRS = $(DESTDIR)$(DATADIR)/made-dirs
install: all
	@bash scripts/made_dirs.sh record $(BUILD)/made-dirs $(INSTALL_DIRS)
	install -d $(INSTALL_DIRS)
	install -m 644 $(BUILD)/made-dirs $(MADE_DIRS)
	rm -f $(BUILD)/made-dirs
	install -m 755 $(BUILD)/aorta $(DESTDIR)$(BINDIR)/aorta
	$(if $(INSTALL_PLUGINS),install -m 644 $(addprefix $(BUILD)/,$(INSTALL_PLUGINS)) $(DESTDIR)$(PLUGINDIR)/)
	install -m 644 config/default.yaml $(DESTDIR)$(DATADIR)/config/default.yaml
	install -m 644 $(BUILD)/man/aorta*.1 $(DESTDIR)$(MANDIR)/
	install -m 644 $(BUILD)/aorta.bash-completion $(DESTDIR)$(COMPDIR)/aorta
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	install -m 644 $(wildcard docs/*.md) $(DESTDIR)$(DOCDIR)/docs/
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/aorta $(addprefix $(DESTDIR)$(PLUGINDIR)/,libaorta-gpu.so libaorta-plot.so libaorta-mpi.so) \
		$(DESTDIR)$(DATADIR)/config/default.yaml $(DESTDIR)$(MANDIR)/aorta.1 $(DESTDIR)$(MANDIR)/aorta-*.1 \
		$(DESTDIR)$(COMPDIR)/aorta $(addprefix $(DESTDIR)$(DOCDIR)/,$(DOC_FILES))
	@if [ -f $(MADE_DIRS) ]; then bash scripts/made_dirs.sh remove $(MADE_DIRS); \
	else rmdir $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(DATADIR)/config $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)/docs \
		$(DESTDIR)$(DOCDIR) 2>/dev/null || true; fi
# A Debian package of this build (build/aorta_VERSION_ARCH.deb): the install
# above into a staging root with PREFIX=/usr, and a control file whose
# Depends are the packages of the shared libraries build/aorta links;
# cairo's (the plot plug-in) and ISA-L's are Recommends, MPI's Suggests.
deb: all
	@bash scripts/make_deb.sh $(BUILD)

# README.md's example output, regenerated from what build/aorta prints
# (tests/cli/readme.sh fails when the two differ).
readme-example: $(BUILD)/aorta
	@bash scripts/readme_example.sh

# libFuzzer targets, one per reader (clang + libclang-rt); the library is
# compiled once with coverage instrumentation and linked into each target.
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRC))
FUZZ_LIB_C = $(filter-out src/main.c src/cmd/%,$(HOST_C))
FUZZ_OBJ = $(patsubst %.c,build-fuzz/obj/%.o,$(FUZZ_LIB_C))
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -O1 -g -Isrc -I$(BUILD)/gen -pthread -fsanitize=fuzzer-no-link,address,undefined
fuzz: $(FUZZ_BIN)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) CLANG $<
	$(Q)clang $(FUZZ_CFLAGS) -c -o $@ $<
build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p build-fuzz
	$(say) LD $@
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LIBS)

# ==== HIP / ROCm build (docs/rocm.md) ====================================
#   make hip  (or make HIP=1)   the GPU code compiled for AMD GPUs, into build-hip/
#   make hip-check              the same, then tests/hip_check.sh verifies it
# Kernel files (.cu) are compiled as HIP with hipcc for each HIP_ARCH; GPU
# host files (.c) as C with hipcc's clang against the HIP runtime headers;
# both with -DAORTA_HIP (gpu.h's HIP names).  Objects only: the files in
# HIP_SKIP need hipBLAS/rocBLAS, RCCL or a profiler API that Debian 12 does
# not package, so nothing links yet.  A new GPU file is compiled for HIP
# unless added to HIP_SKIP (with its reason in docs/rocm.md).
HIPCC ?= hipcc
# C files: clang-15, the compiler Debian 12's hipcc wraps (hipcc itself on C
# files runs rocm_agent_enumerator, which prints a traceback without a GPU);
# where there is no clang-15, hipcc.
HIP_CC ?= $(firstword $(shell command -v clang-15 2>/dev/null) $(HIPCC))
HIP_ARCH ?= gfx90a
HIP_BUILD ?= build-hip
HIP_SKIP_BLAS := src/kernels/ops_gpu.cu src/kernels/gemm_gpu.c src/sdma/sdma_gpu.c src/tp/tp_session_gpu.c \
                 src/tp/tp_ops_gpu.c src/tp/tp_check_gpu.c src/gpu/check.c
HIP_SKIP_RCCL := src/comm/nccl_comm.c src/hwq/harness_gpu.c src/hwq/wl_comms_compute_overlap_gpu.c \
                 src/hwq/wl_fsdp_tp_gpu.c src/hwq/wl_grad_accum_gpu.c src/comm/launch_gpu.c \
                 src/train/trainer_gpu.c
HIP_SKIP_PROF := src/gpu/cupti.c
HIP_SKIP := $(HIP_SKIP_BLAS) $(HIP_SKIP_RCCL) $(HIP_SKIP_PROF)
HIP_C := $(filter-out $(HIP_SKIP),$(GPU_C))
HIP_CU := $(filter-out $(HIP_SKIP),$(CU_SRC))
HIP_C_OBJ = $(patsubst %.c,$(HIP_BUILD)/obj/%.o,$(HIP_C))
HIP_CU_OBJ = $(patsubst %.cu,$(HIP_BUILD)/obj/%.o,$(HIP_CU))
HIP_DEFS = -DAORTA_HIP -DAORTA_GPU=1 -D__HIP_PLATFORM_AMD__
HIP_CFLAGS = -std=c11 -D_GNU_SOURCE -O2 $(WARN) -Isrc -I$(BUILD)/gen -pthread -fPIC $(HIP_DEFS)
# -MD (not -MMD): the dependency lists name system headers too, which
# tests/hip_check.sh searches for CUDA ones.
# HIP 5.2 marks every runtime function nodiscard; the kernels' launchers
# ignore some results on purpose (errors surface through gpuGetLastError or
# the next synchronising call, as under nvcc, which does not warn), hence
# -Wno-unused-result.
HIP_CUFLAGS = -x hip $(addprefix --offload-arch=,$(HIP_ARCH)) -std=c++17 -O2 -Wall -Wextra \
              -Wno-unused-result $(WERROR) -Isrc -fPIC $(HIP_DEFS)
ifeq ($(HIP),1)
.DEFAULT_GOAL := hip
endif
.PHONY: hip hip-check clean-hip print-hip-files
hip: $(HIP_C_OBJ) $(HIP_CU_OBJ)
hip-check: hip
	@bash tests/hip_check.sh $(HIP_BUILD)
$(HIP_C_OBJ): $(HIP_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) HIPC $<
	$(Q)$(HIP_CC) $(HIP_CFLAGS) -MD -MP -c -o $@ $<
$(HIP_CU_OBJ): $(HIP_BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(say) HIPCC $<
	$(Q)$(HIPCC) $(HIP_CUFLAGS) -MD -MP -c -o $@ $<
# for tests/hip_check.sh and docs/rocm.md
print-hip-files:
	@echo "arch $(HIP_ARCH)"
	@echo "c $(HIP_C)"
	@echo "cu $(HIP_CU)"
	@echo "skip $(HIP_SKIP)"
clean-hip:
	rm -rf $(HIP_BUILD)
-include $(HIP_C_OBJ:.o=.d) $(HIP_CU_OBJ:.o=.d)
# ROCm SMI telemetry on the CPU: test_telemetry_rsmi compiles telemetry.c's
# ROCm SMI half itself (-DAORTA_HIP selects it there; it needs rocm_smi.h,
# not the HIP runtime) and links the host objects, in every build; the test
# double librsmi_double.so beside it gives known readings.
TEL_RSMI_HOST_OBJ = $(filter-out $(BUILD)/obj/src/main.o,$(HOST_OBJ))
$(BUILD)/tests/test_telemetry_rsmi: tests/unit/test_telemetry_rsmi.c src/gpu/telemetry.c $(TEL_RSMI_HOST_OBJ) \
		$(BUILD)/tests/librsmi_double.so
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS_ALL) -DAORTA_HIP -Itests/unit -o $@ $< src/gpu/telemetry.c $(TEL_RSMI_HOST_OBJ) $(LDSAN) $(LIBS)
$(BUILD)/tests/librsmi_double.so: tests/unit/rsmi_double.c
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS_ALL) -fPIC -shared -o $@ $<
# ==== end of the HIP / ROCm build =========================================

clean:
	rm -rf build build-san build-fuzz

-include $(OBJ:.o=.d) $(MPI_OBJ:.o=.d) $(PLOT_OBJ:.o=.d)
