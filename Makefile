# The two commands a fresh Debian 12 machine needs: `make demo` and `make test`.
# Both install missing Debian packages (tools/setup-deps.sh), configure and build first: `make demo`
# only the bud binary, `make test` every target.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# `make asan`: ASan + UBSan (Debian's clang) and the libFuzzer targets in their own tree, only
# what the packet, trigger, workload, expression and remote tests need.
ASAN_BUILD ?= build-asan
ASAN_TARGETS = bud test_replay test_trigger test_workload test_onnx test_expr test_remote test_power \
	fuzz_trigger fuzz_workload fuzz_remote fuzz_state_restore
ASAN_TESTS = ^(replay|trigger|workload|onnx|expr|remote|power|fuzz|fuzz-state):
# Tests that measure address space or resident memory (setrlimit(RLIMIT_AS) in corpus isolation,
# RSS growth over 1000 connections) measure the sanitizer's shadow memory and quarantine instead:
# they run in the normal build only. So does the 400-replay sweep (5.5 minutes under ASan; the
# smaller seeds-and-memory sweep covers the same path here). The packet reader's fuzz target is
# built and run (clang, libFuzzer + ASan) by the normal tree's ctest.
ASAN_EXCLUDE = (exhausts its limits|no growth in threads or memory|100 seeds x 4 memory|fuzz-packet-reader)
FUZZ_SECONDS ?= 300
# `make tsan`: ThreadSanitizer (Debian's clang) in its own tree, only what the trigger, remote and
# window-parallel replay tests need, and only those tests: they hold every thread bud starts and
# the session code those threads drive (the trigger evaluation thread, in batch runs and attached
# to a Session; the remote request executor that runs the Session, gRPC's server threads, `bud
# serve`; the window threads of `bud replay P -j N` and of window shards). The
# debugger tests (one thread) stay in the gcc run: building and running them here would not fit
# the CI budget. .ci/run runs it after `make asan` (times in docs/performance.md).
# tools/tsan.supp lists the third-party reports it ignores, each with its reason.
TSAN_BUILD ?= build-tsan
TSAN_TARGETS = bud test_trigger test_remote test_replay
TSAN_TESTS = ^(trigger|remote):|^replay:(window|bud replay P )
TSAN_EXCLUDE = (no growth in threads or memory)

# `make variants`: every MAC-array variant (rtl/npu_facts.toml [array]) Verilated in its own tree
# (the default build keeps only npu8, the fastest to build), and the tests of the extra variants
# (ctest label `variants`: every built-in, the chunked, per-channel and attention edge workloads
# bit-exact on each, replay and bisect on each). `make array-bench`: their figures. CI runs
# `make variants VARIANTS="npu8;npu16"` as a stage of its own (.ci/run), so a regression on a
# variant fails CI; npu32 (the slowest to build) stays in `make variants`.
VARIANTS_BUILD ?= build-variants
VARIANTS ?= npu8;npu16;npu32

.PHONY: all deps configure build demo test bench clean asan tsan fuzz variants array-bench

all: build

deps:
	@bash tools/setup-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

# One line of progress on a terminal, the compiler's output only on failure (tools/build.sh).
build: configure
	@bash tools/build.sh $(BUILD) $(JOBS)

# The demo needs only the `bud` binary (and the model it links): `make test` builds the rest.
demo: configure
	@bash tools/build.sh $(BUILD) $(JOBS) bud
	@bash tools/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
		-DBUD_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@bash tools/build.sh $(ASAN_BUILD) $(JOBS) $(ASAN_TARGETS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS) --timeout 900 -R '$(ASAN_TESTS)' -E '$(ASAN_EXCLUDE)'

tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
		-DBUD_SANITIZE=thread $(CMAKE_FLAGS) >/dev/null
	@bash tools/build.sh $(TSAN_BUILD) $(JOBS) $(TSAN_TARGETS)
	@cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 \
		suppressions=$(CURDIR)/tools/tsan.supp" \
		ctest --output-on-failure -j $(JOBS) --timeout 900 -R '$(TSAN_TESTS)' -E '$(TSAN_EXCLUDE)'

# Longer fuzzing than the ctest runs: FUZZ_SECONDS per target, new inputs kept in
# $(ASAN_BUILD)/fuzz/<target>-corpus (copy the interesting ones into tests/fuzz/<target>/).
fuzz: asan
	@for t in fuzz_trigger fuzz_workload fuzz_remote; do \
		mkdir -p $(ASAN_BUILD)/fuzz/$$t-corpus && \
		ASAN_OPTIONS=detect_leaks=0 $(ASAN_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) \
			-max_len=4096 -artifact_prefix=$(ASAN_BUILD)/fuzz/$$t-artifacts/ \
			$(ASAN_BUILD)/fuzz/$$t-corpus tests/fuzz/$$t || exit 1; \
	done

bench: build
	@bash tests/bench/run.sh $(BUILD)

variants: deps
	@cmake -S . -B $(VARIANTS_BUILD) -DBUD_NPU_VARIANTS="$(VARIANTS)" $(CMAKE_FLAGS) >/dev/null
	@bash tools/build.sh $(VARIANTS_BUILD) $(JOBS) bud test_npu test_e2e test_replay test_bisect
	@cd $(VARIANTS_BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1800 \
		-R '^(array:|npu:.*array|e2e:.*config)'

array-bench: deps
	@bash tests/bench/array_bench.sh

clean:
	@rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(VARIANTS_BUILD)
