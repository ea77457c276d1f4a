# KernelAscent: one GNU Makefile.
#   make            build ka, the recorders and the runners that this machine can build
#   make test       what CI checks (.ci/run): format-check, lint, the quick tier built
#                   with -Werror, and the unit tests under the sanitizers (san-unit)
#   make quick      the quick tier alone (no GPU), ends with "N passed, N failed, N skipped"
#   make test-gpu   GPU tier (skips with a message where there is no GPU)
#   make san-unit   the unit tests built with address + undefined sanitizers (build-san)
#   make san        the whole quick tier under those sanitizers
#   make format / make format-check / make lint / make bench / make clean
# nvcc and OpenCL are detected; a missing one turns its programs off.

CC      ?= cc
BUILD   ?= build
CSTD    := -std=c17
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
# -Werror where a warning must stop the build: `make test` passes it to the
# builds it runs, and CI=true sets it for any build. A plain `make` (or `make
# main`) only warns, so that a newer compiler's new warning does not stop a
# user's build. `make test WERROR=` turns it off.
ifeq ($(CI),true)
WERROR  ?= -Werror
endif
OPT     ?= -O2 -g
SAN     ?=
# Include paths say which program a file belongs to: the recorder, the runner
# and src/common/ see only src/common/ and include/ (tests/e2e/layout.sh
# checks it too); the parent sees its own groups as well.
INC_TRUSTED := -Iinclude -Isrc/common
INC_PARENT  := $(INC_TRUSTED) -Isrc -Isrc/models -Isrc/tracks -Isrc/board
INC         = $(INC_PARENT)
CFLAGS_ALL = $(CSTD) $(WARN) $(WERROR) $(OPT) $(SAN) -D_GNU_SOURCE -ffp-contract=off \
             $(INC) $(shell pkg-config --cflags jansson 2>/dev/null)
LDSAN    = $(SAN)
# The flags every object depends on (through $(FLAGS_STAMP)): changing
# WERROR, OPT or SAN rebuilds what was built without them, so a build that
# passed without -Werror cannot pass `make test` on stale objects.
FLAGS_STAMP = $(BUILD)/.flags
FLAGS_NOW   = $(CSTD) $(WARN) $(WERROR) $(OPT) $(SAN) $(NVCC_WARN)

HAVE_OPENCL := $(shell [ -f /usr/include/CL/cl.h ] && ( [ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || pkg-config --exists OpenCL 2>/dev/null ) && echo 1)
NVCC        ?= $(shell command -v nvcc 2>/dev/null || ( [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc ))
HAVE_NVCC   := $(if $(NVCC),1,)
CUDA_HOME   ?= $(if $(NVCC),$(abspath $(dir $(NVCC))/..),)
# Host-compiler warnings for the CUDA runner (nvcc compiles it as C++);
# with WERROR, nvcc's own warnings and the host compiler's stop the build.
NVCC_WARN   := -Xcompiler -Wall,-Wextra,-Wshadow,-Wmissing-declarations \
               $(if $(WERROR),-Werror all-warnings -Xcompiler -Werror)

# Modules shared by every program: src/common/.
COMMON_SRC := $(wildcard src/common/*.c)
# The parent: src/ and its groups (models, tracks, board).
PARENT_SRC := $(wildcard src/*.c src/models/*.c src/tracks/*.c src/board/*.c)
# Recorder: shared sandbox/driver code plus one recording API per target.
REC_CUDA   := src/recorder/record_cuda.c src/recorder/record_cublas.c
REC_SHARED := $(filter-out src/recorder/record_opencl.c $(REC_CUDA),$(wildcard src/recorder/*.c))
# Runner: shared protocol loop plus one replay engine per target.
RUN_SHARED := $(filter-out src/runner/run_opencl.c src/runner/run_cuda.cu,$(wildcard src/runner/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

PARENT_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lsqlite3 -lcurl -lssl -lcrypto \
               $(shell pkg-config --libs lua5.4 2>/dev/null) -lz -lm -ldl -lpthread -fopenmp
LUA_CFLAGS  := $(shell pkg-config --cflags lua5.4 2>/dev/null)

PROGS := $(BUILD)/ka $(BUILD)/ka-record-opencl $(BUILD)/ka-goldbox
ifneq ($(wildcard src/recorder/record_cuda.c),)
PROGS += $(BUILD)/ka-record-cuda
endif
ifeq ($(HAVE_OPENCL),1)
PROGS += $(BUILD)/ka-run-opencl $(BUILD)/ka-clc
endif
PROGS += $(BUILD)/ka-cudaphases $(BUILD)/ka-forkshim.so
ifeq ($(HAVE_NVCC),1)
ifneq ($(wildcard src/runner/run_cuda.cu),)
PROGS += $(BUILD)/ka-run-cuda
endif
endif

.PHONY: all test quick test-bank test-train test-gpu san san-unit format format-check lint bench clean FORCE
all: $(PROGS)

# Rewritten only when the flags differ, so its time says when they changed.
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' >$@

$(BUILD)/obj/src/common/%.o $(BUILD)/obj/src/recorder/%.o $(BUILD)/obj/src/runner/%.o \
$(BUILD)/obj/src/goldbox/%.o: INC = $(INC_TRUSTED)
$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA_CFLAGS) -fopenmp -MMD -MP -c $< -o $@

$(BUILD)/ka: $(call obj,$(PARENT_SRC) $(COMMON_SRC))
	$(CC) $(LDSAN) -o $@ $^ $(PARENT_LIBS)

# Recorders export their API, and nothing else, to the candidate's shared
# object: src/recorder/record_<target>.dynlist lists it (equal to
# `ka-record-<target> --exports`, tests/e2e/record_exports.sh). They link no
# real OpenCL or CUDA library. Under sanitizers the recorder's ASan options
# hook must be visible to the sanitizer runtime too.
REC_LDFLAGS = $(if $(findstring address,$(SAN)),-Wl$(comma)--export-dynamic-symbol=__asan_default_options)
comma := ,
$(BUILD)/ka-record-opencl: $(call obj,$(REC_SHARED) src/recorder/record_opencl.c $(COMMON_SRC)) \
                           src/recorder/record_opencl.dynlist
	$(CC) $(LDSAN) $(REC_LDFLAGS) -Wl,--dynamic-list=src/recorder/record_opencl.dynlist -o $@ \
	    $(filter %.o,$^) -ljansson -ldl -lm

$(BUILD)/ka-record-cuda: $(call obj,$(REC_SHARED) $(REC_CUDA) $(COMMON_SRC)) \
                         src/recorder/record_cuda.dynlist
	$(CC) $(LDSAN) $(REC_LDFLAGS) -Wl,--dynamic-list=src/recorder/record_cuda.dynlist -o $@ \
	    $(filter %.o,$^) -ljansson -ldl -lm -lstdc++

# ka-goldbox: the confined gold of a task whose ref.c is not trusted bank code
# (a frontier proposal's): model code, so it links only what it needs
# (docs/grader.md, "Gold that is not bank code").
$(BUILD)/ka-goldbox: $(call obj,src/goldbox/goldbox.c src/common/util.c src/common/jail.c src/common/lockdown.c)
	$(CC) $(LDSAN) -o $@ $^ -ldl -fopenmp

$(BUILD)/ka-run-opencl: $(call obj,$(RUN_SHARED) src/runner/run_opencl.c $(COMMON_SRC))
	$(CC) $(LDSAN) -o $@ $^ -ljansson -lOpenCL -lm -lpthread

# ka-clc: trusted helper that builds OpenCL C source on the OpenCL platform
# (PoCL here) and prints the build log: bank validation uses it.
$(BUILD)/ka-clc: $(call obj,tools/clc.c src/common/util.c src/common/jail.c src/common/lockdown.c)
	$(CC) $(LDSAN) -o $@ $^ -lOpenCL

# ka-cudaphases: trusted helper that runs nvcc's phases in parallel inside the
# compile jail (the split CUDA compile, docs/compile.md). Never sanitized: it
# starts under the jail's address-space cap, where a sanitizer's runtime
# cannot map its shadow memory.
CUDAPHASES_SRC := tools/cudaphases.c src/common/util.c src/common/jail.c src/common/lockdown.c
$(BUILD)/ka-cudaphases: $(CUDAPHASES_SRC) tools/forkshim.h $(wildcard src/common/*.h) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(WERROR) -O2 -g -D_GNU_SOURCE -Iinclude -Isrc/common -o $@ $(CUDAPHASES_SRC)

# ka-forkshim.so: the fork server that ka-cudaphases preloads into cicc and
# cudafe++ (docs/compile.md, section 7). Never sanitized: it lives inside
# NVIDIA's binaries.
FORKSHIM_SRC := tools/forkshim.c src/common/lockdown.c
$(BUILD)/ka-forkshim.so: $(FORKSHIM_SRC) tools/forkshim.h src/common/lockdown.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(WERROR) -O2 -g -D_GNU_SOURCE -Isrc/common -fPIC -shared -o $@ \
	    $(FORKSHIM_SRC) -ldl

# The CUDA runner: CUDA C++ built by nvcc, linked against the driver (the
# toolkit's stub library at build time), CUPTI and the runtime; jansson is
# linked statically so the binary runs where only the driver is installed.
# -export-dynamic gives trusted native baselines the runner's ka_workspace.
$(BUILD)/ka-run-cuda: $(call obj,$(RUN_SHARED) $(COMMON_SRC)) src/runner/run_cuda.cu \
                      src/runner/devcheck.cu \
                      $(wildcard src/runner/runner.h src/runner/devcheck.h src/common/*.h include/*.h) $(FLAGS_STAMP)
	@mkdir -p $(BUILD)/obj
	$(NVCC) -O2 -std=c++17 $(NVCC_WARN) $(INC_TRUSTED) -I$(CUDA_HOME)/extras/CUPTI/include -x cu \
	    -c src/runner/run_cuda.cu -o $(BUILD)/obj/run_cuda.o
	$(NVCC) -O2 -std=c++17 $(NVCC_WARN) $(INC_TRUSTED) -x cu \
	    -c src/runner/devcheck.cu -o $(BUILD)/obj/devcheck.o
	$(NVCC) -o $@ $(call obj,$(RUN_SHARED) $(COMMON_SRC)) $(BUILD)/obj/run_cuda.o $(BUILD)/obj/devcheck.o \
	    -L$(CUDA_HOME)/lib64/stubs -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 \
	    -Xlinker -rpath -Xlinker $(CUDA_HOME)/lib64:$(CUDA_HOME)/extras/CUPTI/lib64 \
	    -Xlinker -export-dynamic -lcuda -lcupti -lcublas -Xlinker -Bstatic -ljansson -Xlinker -Bdynamic \
	    -lm -lpthread -ldl -lgomp $(addprefix -Xcompiler=,$(LDSAN))

# Unit tests: tests/unit/test_*.c, each linked with the parent's modules.
TEST_SRC  := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
$(BUILD)/tests/%: tests/unit/%.c tests/unit/ka_test.h $(FLAGS_STAMP) $(call obj,$(filter-out src/main.c,$(PARENT_SRC)) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA_CFLAGS) -fopenmp -Itests/unit -o $@ $(filter %.c %.o,$^) $(PARENT_LIBS) $(LDSAN)

# The README's test command runs this (and .ci/run runs the README's command).
# Cheapest first; the first that fails stops it. Each step prints its time.
# About an hour on 2 cores (64 minutes on 2026-12-07): docs/architecture.md gives the figures.
# Without -j it builds with one job per core.
test:
	@$(call timed,format-check,$(MAKE) --no-print-directory format-check)
	@$(call timed,lint,$(MAKE) --no-print-directory lint)
	@$(call timed,quick tier (-Werror),$(MAKE) --no-print-directory $(JOBS) WERROR=-Werror quick)
	@$(call timed,train tier,$(MAKE) --no-print-directory $(JOBS) WERROR=-Werror test-train)
	@$(call timed,san-unit,$(MAKE) --no-print-directory $(JOBS) san-unit)
	@$(call timed,bank tier,$(MAKE) --no-print-directory $(JOBS) WERROR=-Werror test-bank)
timed = t0=$$(date +%s); $(2) || { echo "make test: $(1) failed"; exit 1; }; \
	echo "make test: $(1) passed ($$(( $$(date +%s) - t0 ))s)"
JOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))

quick: all $(TEST_BINS)
	@BUILD=$(BUILD) tests/run.sh quick

# Every task of bank/public: compiles, OpenCL solution ok on PoCL, CUDA
# solution records (tests/bank/); the quick tier covers the starters only.
test-bank: all $(BUILD)/tests/test_cudasplit
	@BUILD=$(BUILD) KA_TEST_TIMEOUT=$${KA_TEST_TIMEOUT:-2400} tests/run.sh bank

# The tracks that train a tiny model with torch on the CPU (tests/train/:
# weight RSI and harness RSI end to end; they SKIP where torch is missing).
test-train: all
	@BUILD=$(BUILD) tests/run.sh train

test-gpu: all $(TEST_BINS)
	@BUILD=$(BUILD) tests/run.sh gpu

# Sanitizer flags are spelled one sanitizer a flag (no commas) so that nvcc
# can pass them on with -Xcompiler=; a UB report stops the program like an
# ASan one (-fno-sanitize-recover), so a test cannot pass over it.
SAN_BUILD ?= build-san
SAN_FLAGS := -fsanitize=address -fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# Not held to -Werror: at -O1 with the sanitizers gcc's flow analysis warns
# where the -O2 build does not (format-truncation); the -Werror build is the
# quick tier's.
SAN_MAKE   = $(MAKE) --no-print-directory BUILD=$(SAN_BUILD) SAN="$(SAN_FLAGS)" OPT="-O1 -g" WERROR=
san:
	+$(SAN_MAKE) quick
# The unit tests alone (the programs they start are built sanitized too).
san-unit:
	+$(SAN_MAKE) all $(patsubst $(BUILD)/%,$(SAN_BUILD)/%,$(TEST_BINS))
	@BUILD=$(SAN_BUILD) tests/run.sh unit

# Figures of docs/PERF.md: compile latency (tools/bench_compile.sh, split
# path beside nvcc; record stage only where there is no GPU) and the GPU
# figures (tools/bench_gpu.sh says so and exits 0 where there is no GPU).
BENCH_OUT ?= out/bench
bench: all
	@tools/bench_compile.sh $(BENCH_OUT)/compile
	@tools/bench_gpu.sh $(BENCH_OUT)

# Not formatted: bank/ and tests/data/ (task sources and fixtures: expected
# verdicts quote their line numbers), src/board/board_assets.c (generated by
# tools/embed.sh) and include/ (the ABI headers are shown to models verbatim:
# a reflow would change every prompt and its cache key).
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' | grep -vE '^(bank|tests/data|include)/|^src/board/board_assets\.c$$')
format:
	clang-format -i $(FORMAT_FILES)

# Fails, naming each file `make format` would change, unless there is none.
format-check:
	@command -v clang-format >/dev/null || { echo "format-check: clang-format is not installed (tools/setup.sh installs it)"; exit 1; }
	@bad=0; for f in $(FORMAT_FILES); do \
	    clang-format "$$f" | cmp -s "$$f" - || { echo "$$f: not formatted (make format fixes it)"; bad=1; }; \
	done; exit $$bad

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	    --suppress=missingIncludeSystem $(INC_PARENT) src tools

clean:
	rm -rf build $(SAN_BUILD)

# The leaderboard's web/ assets are embedded into ka: src/board/board_assets.c is
# generated by tools/embed.sh (checked in; regenerated when web/ changes).
src/board/board_assets.c: $(wildcard web/*.js web/*.css) tools/embed.sh
	sh tools/embed.sh $(wildcard web/*.js web/*.css) > $@.tmp && mv $@.tmp $@

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# The main job (README): track 1 with the archive: model (the bank's verified
# solutions) on the best target here (CUDA with a GPU, else OpenCL on PoCL),
# timing capped for a CPU. Needs no GPU, network or credentials.
MAIN_OUT  ?= out
MAIN_ARGS ?= --k 2 --max-seconds 1 --min-samples 5
.PHONY: main
main: all
	$(BUILD)/ka --track capability --api-model archive:bank/public --tier all --target auto \
	    --out $(MAIN_OUT) --fresh $(MAIN_ARGS)
	@echo "main: scorecard at $(MAIN_OUT)/scorecard.json"
