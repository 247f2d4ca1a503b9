# gk -- one hand-written Makefile.  Outputs go to $(B) (default build/);
# generated sources (re2c, Lemon, embedded kernels) to $(G).
#
#   make              build build/gk, build/libgk.a, build/libgk.so
#   make run          build and run examples/tour.gk
#   make test         build and run every test that needs no GPU (CI runs this)
#   make test-gpu     the suites on the cuda backend (run on a GPU machine)
#   make test-nvrtc   compile every generated kernel of the .gk suite with NVRTC
#   make golden       regenerate the generated golden cases (tests/gen_golden.py; hand-written ones untouched)
#   make bench        gk vs torch, torch.compile, CUB on a GPU machine (tests/bench/)
#   make bench-cpu    gk's cpu backend vs numpy on the same .npy inputs (tests/bench/bench_cpu.py)
#   make asan         the unit and API tests under ASan+UBSan (part of make test)
#   make tsan         the thread and interrupt API tests under TSan (part of make test)
#   make fuzz         libFuzzer over the front end, the whole pipeline and .npy files
#                     (clang; FUZZ_SECONDS each, default 1800; corpora in build/fuzz)
#   make python       the Python package installed in a venv, build/pyenv (docs/python.md)
#   make test-python  its pytest suite on the cpu backend (part of make test)
#   make install PREFIX=/usr/local DESTDIR=
#   make debug        -O0 build in build/debug
#   V=1               print every command in full (default: one short line a file)

B       ?= build
G       := build/gen
PREFIX  ?= /usr/local
CC      ?= cc
OPT     ?= -O2
CFLAGS  ?=
SANFLAGS ?=
ALL_CFLAGS = -std=c11 $(OPT) -g -fPIC -ffp-contract=off -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
             -I. -I$(G) -pthread -MMD -MP $(SANFLAGS) $(CFLAGS)
LDLIBS  = -ldl -lpthread -lm

# Quiet by default: "CC lang/ast.c"; V=1 shows the commands.  $(call say,TAG,FILE)
# goes first in a recipe line (it carries the line's '@'); $(Q) silences a line.
V ?= 0
ifeq ($(V),1)
say =
Q =
else
say = @printf '  %-5s %s\n' '$(1)' '$(2)';
Q = @
endif
SONAME  = libgk.so.0
VERSION = 0.1.0

LIB_SRC  := $(wildcard lang/*.c compiler/*.c runtime/*.c api/*.c)
GEN_SRC  := $(G)/lexer.c $(G)/grammar.c $(G)/kernels_embed.c
LIB_OBJ  := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC)) $(patsubst $(G)/%.c,$(B)/obj/gen/%.o,$(GEN_SRC))
CLI_OBJ  := $(patsubst %.c,$(B)/obj/%.o,$(wildcard cli/*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
comma := ,
FUZZ_BIN := $(patsubst tests/fuzz/fuzz_%.c,$(B)/tests/test_fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
API_BIN  := $(patsubst tests/api/%.c,$(B)/tests/api_%,$(wildcard tests/api/*.c))
DOCS     := docs/language.md docs/fusion.md docs/limits.md docs/embedding.md docs/python.md README.md
KERNELS  := $(sort $(wildcard kernels/*.cuh) kernels/gk_scalar.h)

.PHONY: default kernels golden all run test test-gpu test-nvrtc sort-emu tile-emu colscan-emu reduce-emu transpose-emu rowscan-emu cols-emu rowgrid-emu asan tsan fuzz debug install deps clean unit bench python test-python
# `make`: the library, the binary and the shipped kernels (where NVRTC is);
# `make all`: without the kernels (what the tests need)
default: all kernels
all: $(B)/gk $(B)/libgk.a $(B)/libgk.so

# --- tools this build needs; installed on a fresh machine ------------------
deps: build/.deps
build/.deps:
	@mkdir -p build
	@need=""; \
	 command -v re2c >/dev/null 2>&1 || need="$$need re2c"; \
	 command -v lemon >/dev/null 2>&1 || need="$$need lemon"; \
	 [ -f /usr/include/histedit.h ] || [ -f /usr/include/editline/readline.h ] || need="$$need libedit-dev"; \
	 command -v python3 >/dev/null 2>&1 || need="$$need python3"; \
	 if [ -n "$$need" ] && [ "$$(id -u)" != 0 ]; then \
	   echo "gk: the build needs:$$need"; \
	   echo "    install them (Debian/Ubuntu): sudo apt-get install$$need"; \
	   echo "    (Fedora: re2c lemon libedit-devel python3; macOS/Homebrew: re2c lemon libedit)"; \
	   echo "    then run make again (as root, make installs them itself)"; exit 1; fi; \
	 if [ -n "$$need" ]; then echo "installing:$$need"; \
	   (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need) >/dev/null || \
	   { echo "could not install$$need"; exit 1; }; fi
	@python3 -c 'import numpy' 2>/dev/null || python3 -m pip install -q numpy 2>/dev/null || \
	 ([ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy >/dev/null) || \
	 { [ "$$(id -u)" != 0 ] || { echo "could not install numpy"; exit 1; }; \
	   echo "gk: note: make test needs numpy: pip install --user numpy (or: sudo apt-get install python3-numpy)"; }
	@touch $@

# --- generated sources ----------------------------------------------------
$(G)/lexer.c: lang/lexer.re | build/.deps
	@mkdir -p $(G)
	$(call say,RE2C,$<)re2c -W --no-generation-date --no-version -o $@ $<

$(G)/grammar.c: lang/grammar.y lang/lemon/lempar.c | build/.deps
	@mkdir -p $(G)
	$(call say,LEMON,$<)cp lang/grammar.y $(G)/grammar.y
	$(Q)lemon -q -Tlang/lemon/lempar.c $(G)/grammar.y
	@rm -f $(G)/grammar.y

$(G)/grammar.h: $(G)/grammar.c

$(G)/kernels_embed.c: $(KERNELS) Makefile
	@mkdir -p $(G)
	$(call say,GEN,$@){ echo '/* generated from the kernels/ headers by the Makefile; do not edit */'; \
	   n=0; for f in $(KERNELS); do \
	     echo "static const char k$$n[] ="; \
	     sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; \
	     echo ";"; n=$$((n+1)); done; \
	   echo "const int gk_kernel_header_count = $$n;"; \
	   echo "const char *const gk_kernel_header_names[] = {"; \
	   for f in $(KERNELS); do echo "  \"$$(basename $$f)\","; done; echo "  0 };"; \
	   echo "const char *const gk_kernel_header_srcs[] = {"; \
	   n=0; for f in $(KERNELS); do echo "  k$$n,"; n=$$((n+1)); done; echo "  0 };"; } > $@

# The REPL's help text (docs/help.txt, written by docs/gen_language.py) as one C string.
$(G)/help_embed.c: docs/help.txt
	@mkdir -p $(G)
	$(call say,GEN,$@){ echo '/* generated from docs/help.txt by the Makefile; do not edit */'; \
	   echo 'const char cli_help_text[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	   echo ';'; } > $@

# --- objects and products -------------------------------------------------
# Generated parsers build with NDEBUG: Lemon's asserts would be an abort path in the library.
$(B)/obj/%.o: %.c | $(G)/grammar.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The cpu backend's inner loops (the op loops, the folds, the heavy ops) at -O3, so loops of
# unknown trip count vectorise (GCC's -O2 cost model leaves them scalar); same bits: no fast-math.
VEC_OBJ := $(patsubst %.c,$(B)/obj/%.o,runtime/ops.c runtime/host_sort.c runtime/host_ops.c $(wildcard runtime/cpu*.c))
$(VEC_OBJ): ALL_CFLAGS += $(if $(filter -O0,$(OPT)),,-O3)

$(B)/obj/gen/%.o: $(G)/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -DNDEBUG -Wno-unused-variable -Wno-sign-compare -c -o $@ $<

$(B)/libgk.a: $(LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(B)/gk.map: Makefile
	@mkdir -p $(B)
	@printf '{ global: gk_*; local: *; };\n' > $@

$(B)/libgk.so: $(LIB_OBJ) $(B)/gk.map
	$(call say,LD,$@)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(B)/gk.map $(SANFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)

# the Python package's C helper (python/gk/gkpy.c: DLPack deleters; no Python headers)
$(B)/libgkpy.so: python/gk/gkpy.c
	@mkdir -p $(B)
	$(call say,LD,$@)$(CC) -std=c11 $(OPT) -fPIC -shared -Wall -Wextra $(SANFLAGS) -o $@ $<

$(B)/gk: $(CLI_OBJ) $(B)/obj/gen/help_embed.o $(B)/libgk.a
	$(call say,LD,$@)$(CC) $(SANFLAGS) -o $@ $(CLI_OBJ) $(B)/obj/gen/help_embed.o $(B)/libgk.a -ledit $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libgk.a
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libgk.a $(LDLIBS)

$(B)/tests/api_%: tests/api/%.c $(B)/libgk.a gk.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libgk.a $(LDLIBS)

# The fuzz targets' corpora and crashes replayed without libFuzzer (tests/fuzz/replay.c).
$(B)/tests/test_fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz_common.h $(B)/libgk.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) '-DFZ_DIRS="tests/fuzz/corpus/$*", "tests/fuzz/crashes/$*"$(if $(filter lang,$*),$(comma) "tests/fuzz/corpus/gk")' -o $@ $< tests/fuzz/replay.c $(B)/libgk.a $(LDLIBS)

unit: $(UNIT_BIN) $(API_BIN) $(FUZZ_BIN) $(B)/embed

# The benchmark (GPU machine with torch and nvcc): libgkbench.so holds its
# host-clock loops (its gk_* calls resolve against libgk.so, which the driver
# loads first); libcubpeer.so the CUB and cudaMemcpy peers.
# BENCH_ARGS=--quick for a short run; $$OUT gets bench.json and bench.txt.
NVCC    ?= nvcc
$(B)/libgkbench.so: tests/bench/bench_gk.c gk.h
	$(CC) $(ALL_CFLAGS) -shared -o $@ $<

$(B)/libcubpeer.so: tests/bench/cub_peer.cu
	$(NVCC) -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -Xlinker -Bsymbolic -o $@ $<

bench: $(B)/libgk.so $(B)/libgkbench.so $(B)/libcubpeer.so
	B=$(B) python3 tests/bench/bench_gk.py $(BENCH_ARGS)

# gk's cpu backend against numpy on the same .npy inputs (no GPU needed); BENCH_CPU_ARGS="--reps 15".
.PHONY: bench-cpu
bench-cpu: $(B)/libgk.so $(B)/libgkpy.so
	B=$(B) python3 tests/bench/bench_cpu.py $(BENCH_CPU_ARGS)

# The folder a device call carries (tests/bench/device_run.sh says how to run it).
BENCH_DEV ?= .dev/bench
.PHONY: bench-dev
bench-dev: $(B)/libgk.so $(B)/libgkbench.so $(B)/libcubpeer.so
	mkdir -p $(BENCH_DEV)
	cp $^ tests/bench/*.py tests/bench/cub_peer.cu tests/bench/device_run.sh tests/bench/ncu_cases.txt $(BENCH_DEV)/
	git rev-parse --short HEAD > $(BENCH_DEV)/COMMIT

$(B)/embed: examples/embed.c $(B)/libgk.a gk.h
	$(call say,CC,$<)$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libgk.a $(LDLIBS)

# --- running -----------------------------------------------------------------
run: all
	@$(B)/gk examples/tour.gk

test: build/.deps all unit
	@B=$(B) sh tests/run_all.sh

test-gpu: all unit
	@B=$(B) GK_BACKEND=cuda sh tests/run_all.sh --gpu

# --- Python (python/, docs/python.md) ----------------------------------------
PYENV := $(B)/pyenv
$(PYENV)/.installed: $(B)/libgk.so $(B)/libgkpy.so $(wildcard python/gk/*.py) python/setup.py python/pyproject.toml
	@[ -x $(PYENV)/bin/python ] || python3 -m venv $(PYENV)
	@GK_PREBUILT_DIR=$(abspath $(B)) $(PYENV)/bin/python -m pip install -q --disable-pip-version-check ./python
	@$(PYENV)/bin/python -c 'import pytest' 2>/dev/null || \
	  $(PYENV)/bin/python -m pip install -q --disable-pip-version-check pytest
	@touch $@

python: $(PYENV)/.installed

test-python: python
	@cd python/tests && GK_TEST_BACKENDS=$${GK_TEST_BACKENDS:-cpu} $(abspath $(PYENV))/bin/python -m pytest -q -p no:cacheprovider .

golden:
	python3 tests/gen_golden.py

test-nvrtc: all
	@B=$(B) sh tests/run_nvrtc.sh

# kernels/gk_sort.cuh's onesweep passes run on the host against std::stable_sort (no GPU)
sort-emu: $(B)/sort_emu
	@$(B)/sort_emu 7 9001
$(B)/sort_emu: tests/sort_emu.cpp kernels/gk_sort.cuh
	@mkdir -p $(B)
	$(CXX) -O1 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -o $@ $<

# kernels/gk_cols.cuh's column scan look-back (blocks as threads, descriptors torn and withheld) against float64 (no GPU)
colscan-emu: $(B)/colscan_emu
	@$(B)/colscan_emu 7 quick
$(B)/colscan_emu: tests/colscan_emu.cpp tests/emu_cuda.h tests/emu_pthreads.h kernels/gk_cols.cuh kernels/gk_scan.cuh kernels/gk_reduce.cuh kernels/gk_block.cuh kernels/gk_warp.cuh kernels/gk_common.cuh kernels/gk_scalar.h kernels/launch.h
	@mkdir -p $(B)
	$(CXX) -O2 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-local-typedefs -Ikernels -o $@ $<

# kernels/gk_reduce.cuh's grid reduce of the online max / sum-exp pair (gk_fused.cuh), block trees aligned or not, against float64 (no GPU)
reduce-emu: $(B)/reduce_emu
	@$(B)/reduce_emu 11
$(B)/reduce_emu: tests/reduce_emu.cpp tests/emu_cuda.h tests/emu_pthreads.h kernels/gk_fused.cuh kernels/gk_reduce.cuh kernels/gk_block.cuh kernels/gk_warp.cuh kernels/gk_common.cuh kernels/gk_scalar.h
	@mkdir -p $(B)
	$(CXX) -O2 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-local-typedefs -Ikernels -o $@ $<

# kernels/gk_rows.cuh's gk_row_tile and gk_row_stream run on the host against float64 loops (no GPU)
tile-emu: $(B)/tile_emu
	@$(B)/tile_emu 1901
# (a copy of gk_rows.cuh with `extern __shared__` as `extern` and alignas first: the emulation's __shared__ is `static`)
$(B)/tile_emu: tests/tile_emu.cpp tests/emu_cuda.h tests/emu_pthreads.h kernels/gk_rows.cuh kernels/gk_reduce.cuh kernels/gk_block.cuh kernels/gk_warp.cuh kernels/gk_common.cuh kernels/gk_scalar.h kernels/launch.h
	@mkdir -p $(B)/emu
	sed -e 's/extern __shared__/extern/' -e 's/__shared__ alignas(16)/alignas(16) __shared__/' kernels/gk_rows.cuh > $(B)/emu/gk_rows.cuh
	$(CXX) -O1 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-local-typedefs -I$(B)/emu -Ikernels -o $@ $<

# kernels/gk_rows.cuh's gk_row_grid runs on the host, its blocks at once (a process each), against float64 loops (no GPU)
rowgrid-emu: $(B)/rowgrid_emu
	@$(B)/rowgrid_emu 2026
# (a copy of gk_rows.cuh as tile-emu's, with the host's atomics for the barrier's and counted polls for nanosleep)
$(B)/rowgrid_emu: tests/rowgrid_emu.cpp tests/emu_cuda.h tests/emu_pthreads.h kernels/gk_rows.cuh kernels/gk_reduce.cuh kernels/gk_block.cuh kernels/gk_warp.cuh kernels/gk_common.cuh kernels/gk_scalar.h kernels/launch.h
	@mkdir -p $(B)/emu-grid
	sed -e 's/extern __shared__/extern/' -e 's/__shared__ alignas(16)/alignas(16) __shared__/' \
	    -e 's/^  asm volatile("ld.acquire.gpu.u32 .*/  v = __atomic_load_n(p, __ATOMIC_ACQUIRE);/' \
	    -e 's/{ asm volatile("nanosleep.u32 .*/{ (void)ns; emu_nap(); }/' \
	    -e 's/atomicAdd(bar/emu_atomic_add(bar/g' -e 's/atomicExch(bar/emu_atomic_exch(bar/g' kernels/gk_rows.cuh > $(B)/emu-grid/gk_rows.cuh
	$(CXX) -O1 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-local-typedefs -I$(B)/emu-grid -Ikernels -o $@ $<

# kernels/gk_cols.cuh's gk_col_reduce runs on the host against float64 loops (no GPU)
cols-emu: $(B)/cols_emu
	@$(B)/cols_emu 2027
# (a copy of gk_cols.cuh without the column scan, whose inline PTX does not build on the host)
$(B)/cols_emu: tests/cols_emu.cpp tests/emu_cuda.h kernels/gk_cols.cuh kernels/gk_reduce.cuh kernels/gk_block.cuh kernels/gk_warp.cuh kernels/gk_common.cuh kernels/gk_scalar.h kernels/launch.h
	@mkdir -p $(B)/emu
	sed -e '/#include "gk_scan.cuh"/d' -e '/struct gk_col_scan_policy/,$$d' kernels/gk_cols.cuh > $(B)/emu/gk_cols.cuh
	echo '#endif' >> $(B)/emu/gk_cols.cuh
	$(CXX) -O2 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-local-typedefs -I$(B)/emu -Ikernels -o $@ $<

# kernels/gk_scan.cuh's gk_row_scan_lb runs on the host against float64 / integer loops (no GPU)
rowscan-emu: $(B)/rowscan_emu
	@$(B)/rowscan_emu 2027
# (a copy of gk_scan.cuh with plain loads and stores for the relaxed PTX ones and counted polls for nanosleep)
$(B)/rowscan_emu: tests/rowscan_emu.cpp tests/emu_cuda.h tests/emu_pthreads.h kernels/gk_scan.cuh kernels/gk_reduce.cuh kernels/gk_block.cuh kernels/gk_warp.cuh kernels/gk_common.cuh kernels/gk_scalar.h kernels/launch.h
	@mkdir -p $(B)/emu-scan
	sed -e 's/^  asm volatile("st.relaxed.gpu.u64 .*/  *p = a;/' -e 's/^  asm volatile("st.relaxed.gpu.v2.u64 .*/  p[0] = a; p[1] = b;/' \
	    -e 's/^  asm volatile("ld.relaxed.gpu.u64 .*/  a = *p;/' -e 's/^  asm volatile("ld.relaxed.gpu.v2.u64 .*/  a = p[0]; b = p[1];/' \
	    -e 's/{ asm volatile("nanosleep.u32 .*/{ (void)ns; emu_spin(); }/' kernels/gk_scan.cuh > $(B)/emu-scan/gk_scan.cuh
	$(CXX) -O1 -std=c++17 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-local-typedefs -Wno-maybe-uninitialized -I$(B)/emu-scan -Ikernels -o $@ $<

# kernels/gk_transpose.cuh's gk_transpose_narrow runs on the host against a loop transpose (no GPU);
# `$(B)/transpose_emu SEED` adds 3 x 1000003 and 1000003 x 3 (40 s)
transpose-emu: $(B)/transpose_emu
	@$(B)/transpose_emu 2501 quick
$(B)/transpose_emu: tests/transpose_emu.cpp tests/emu_cuda.h kernels/gk_transpose.cuh kernels/gk_common.cuh kernels/gk_scalar.h kernels/launch.h
	@mkdir -p $(B)
	$(CXX) -O1 -std=c++17 -Wall -Wno-unknown-pragmas -Ikernels -o $@ $<

asan:
	@$(MAKE) --no-print-directory B=build/asan OPT=-O1 \
	  SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  build/asan/gk unit >/dev/null
	@ASAN_OPTIONS=detect_leaks=1 B=build/asan sh tests/run_all.sh --asan

tsan:
	@$(MAKE) --no-print-directory B=build/tsan OPT=-O1 SANFLAGS="-fsanitize=thread" \
	  build/tsan/tests/api_threads build/tsan/tests/api_hang >/dev/null
	@TSAN_OPTIONS="halt_on_error=1 report_signal_unsafe=0" build/tsan/tests/api_threads && \
	 TSAN_OPTIONS="halt_on_error=1 report_signal_unsafe=0" build/tsan/tests/api_hang

# libFuzzer (clang): each target for FUZZ_SECONDS into build/fuzz/corpus_NAME,
# seeded with tests/fuzz/corpus/NAME; a crash is written to build/fuzz/art_NAME/
# (add it to tests/fuzz/crashes/NAME once fixed: make test replays it).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 1800
FUZZ_SRC = $(LIB_SRC) $(GEN_SRC)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_SRC) | $(G)/grammar.c
	@mkdir -p build/fuzz
	$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -DNDEBUG \
	  -I. -I$(G) -pthread -o $@ $< $(if $(filter build/fuzz/fuzz_lang,$@),lang/ast.c lang/parse.c lang/tree.c $(G)/lexer.c $(G)/grammar.c,$(FUZZ_SRC)) -ldl -lm

fuzz: build/fuzz/fuzz_lang build/fuzz/fuzz_gk build/fuzz/fuzz_npy
	@for t in lang gk npy; do \
	   mkdir -p build/fuzz/corpus_$$t build/fuzz/art_$$t; \
	   [ -d tests/fuzz/corpus/$$t ] && cp -n tests/fuzz/corpus/$$t/* build/fuzz/corpus_$$t/ 2>/dev/null; \
	   TMPDIR=$${TMPDIR:-/tmp} build/fuzz/fuzz_$$t build/fuzz/corpus_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	     -timeout=20 -rss_limit_mb=2560 -dict=tests/fuzz/gk.dict -artifact_prefix=build/fuzz/art_$$t/ \
	     > build/fuzz/fuzz_$$t.log 2>&1 & \
	 done; wait; grep -h 'stat::number_of_executed_units\|ERROR' build/fuzz/fuzz_*.log; \
	 ! ls build/fuzz/art_*/* >/dev/null 2>&1 || { echo "crashes in build/fuzz/art_*"; exit 1; }

debug:
	@$(MAKE) --no-print-directory B=build/debug OPT=-O0 all unit

# The kernels gk ships compiled (kernels/ship.py): every op's and primitive's
# kernel structure on its own, compiled with NVRTC for sm_$(SHIP_ARCH) on the
# cpu backend (no GPU needed; nothing is written without NVRTC) into
# $(B)/gk-kernels, which gk finds beside build/gk and libgk.so and `make
# install` puts in $(PREFIX)/lib/gk/kernels.  A first run then loads them
# instead of waiting for NVRTC (GK_KERNELS=0: off).  ~5 minutes on 2 cores.
SHIP_ARCH ?= 90
SHIP_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
kernels: $(B)/.kernels.stamp
$(B)/.kernels.stamp: $(B)/gk kernels/ship.py
	python3 kernels/ship.py --gk $(B)/gk --out $(B)/gk-kernels --arch $(SHIP_ARCH) -j $(SHIP_JOBS)
	@touch $@

install: all kernels
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/gk $(DESTDIR)$(PREFIX)/bin/gk
	install -m 644 gk.h $(DESTDIR)$(PREFIX)/include/gk.h
	install -m 644 $(B)/libgk.a $(DESTDIR)$(PREFIX)/lib/libgk.a
	install -m 755 $(B)/libgk.so $(DESTDIR)$(PREFIX)/lib/libgk.so.$(VERSION)
	ln -sf libgk.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libgk.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' docs/gk.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gk.pc
	install -m 644 docs/gk.1 $(DESTDIR)$(PREFIX)/share/man/man1/gk.1
	install -d $(DESTDIR)$(PREFIX)/share/doc/gk
	install -m 644 $(DOCS) $(DESTDIR)$(PREFIX)/share/doc/gk/
	rm -rf $(DESTDIR)$(PREFIX)/lib/gk/kernels
	if [ -d $(B)/gk-kernels ]; then install -d $(DESTDIR)$(PREFIX)/lib/gk/kernels && \
	  install -m 644 $(B)/gk-kernels/*.bin $(DESTDIR)$(PREFIX)/lib/gk/kernels/; fi

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
