# The two commands a user needs: `make demo` and `make test`. Each installs what is missing
# (scripts/install-deps.sh), configures, builds with all cores and runs.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
CTEST = cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
# Labels kept out of the default run (STYLE.md, "Tests"): they have their own targets.
SLOW_LABELS = ^(e2e-large|cuda|python)$$

.PHONY: all deps configure build test test-large test-python test-gpu test-sanitize fuzz demo ops-doc clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || \
	  (cat $(BUILD).configure.log; exit 1)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	$(CTEST) -LE '$(SLOW_LABELS)'

test-large: build
	@scripts/install-deps.sh --torch
	$(CTEST) -L '^e2e-large$$'

# The Python package installed by `pip install .` into a fresh virtual environment
# (build/python-venv; packages from PyPI) and its pytest suite run against it.
test-python: build
	$(CTEST) -L '^python$$'

# The unit and differential tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (a build of its own; any report fails its test).
SANITIZE_BUILD ?= build-sanitize
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORCHID_SANITIZE=ON \
	  > $(SANITIZE_BUILD).configure.log 2>&1 || (cat $(SANITIZE_BUILD).configure.log; exit 1)
	cmake --build $(SANITIZE_BUILD) -j$(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j$(JOBS) -L '^(unit|diff)$$'

# libFuzzer on the ONNX loader, the text IR parser and the plan reader (clang, a build of its
# own): each target until FUZZ_RUNS executions or FUZZ_SECONDS, whichever comes first
# (fuzz/run.sh; findings in $(FUZZ_BUILD)/fuzz-findings). `make fuzz FUZZ_TARGETS=ir_parser`
# runs one.
FUZZ_BUILD ?= build-fuzz
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 7200
FUZZ_TARGETS ?= onnx_loader ir_parser plan_loader
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORCHID_FUZZ=ON \
	  -DORCHID_BUILD_TESTS=OFF > $(FUZZ_BUILD).configure.log 2>&1 || (cat $(FUZZ_BUILD).configure.log; exit 1)
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target onnx_loader_fuzz ir_parser_fuzz plan_loader_fuzz
	fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_RUNS) $(FUZZ_TARGETS)

# On a machine with an NVIDIA GPU: the CUDA differential tests and the GPU kernel benchmark
# (bench/gpu/run.sh; results in bench/results/gpu).
test-gpu: build
	bench/gpu/run.sh $(BUILD)

ORCHID = $(BUILD)/tools/orchid/orchid

# Writes the example ONNX models (examples/make_models.py), inspects one, compiles it into a
# verified artifact (printing the report summary), runs and times the artifact, then runs the
# attention block written in text IR.
demo: build
	/usr/bin/python3 examples/make_models.py $(BUILD)/examples
	$(ORCHID) inspect $(BUILD)/examples/attention.onnx
	$(ORCHID) compile $(BUILD)/examples/attention.onnx -o $(BUILD)/examples/attention.orchid
	$(ORCHID) run $(BUILD)/examples/attention.orchid --seed 1
	$(ORCHID) run $(BUILD)/examples/attention.orchid --bench --min-time 0.5
	$(ORCHID) ir-run examples/attention.oir --seed 1

# docs/ops.md: the supported operators and the node-test results, regenerated.
ops-doc: build
	$(BUILD)/tests/conformance/orchid_conformance --markdown docs/ops.md > /dev/null

clean:
	rm -rf $(BUILD) $(BUILD).configure.log

# Benchmarks (bench/README.md): the models exported by Debian's torch, the peers from PyPI in a
# virtual environment, Orchid's columns once `orchid compile` exists. Not part of `make test`.
# BENCH_ARGS passes options to bench.harness.run (e.g. --runtimes onnxruntime,openvino).
BENCH_VENV = $(BUILD)/bench-venv
BENCH_CACHE = $(BUILD)/bench-cache
BENCH_ARGS ?=
BENCH_EXPORT = OMP_NUM_THREADS=$(JOBS) /usr/bin/python3 -m bench.models.export --cache $(BENCH_CACHE) --orchid $(ORCHID)
BENCH_RUN = $(BENCH_VENV)/bin/python -m bench.harness.run --cache $(BENCH_CACHE) --orchid $(ORCHID)

.PHONY: bench bench-full bench-deps bench-tune-tvm bench-micro bench-cost-model bench-tune

bench-deps: build
	@scripts/install-deps.sh --torch
	@scripts/setup-bench-venv.sh $(BENCH_VENV)

# The default subset (under 20 minutes on 2 cores).
bench: bench-deps
	$(BENCH_EXPORT) --models default
	$(BENCH_RUN) --models default $(BENCH_ARGS)

# Every model.
bench-full: bench-deps
	$(BENCH_EXPORT) --models all
	$(BENCH_RUN) --models all $(BENCH_ARGS)

# MetaSchedule tuning for TVM (hours on 2 cores); later `make bench` runs reuse its databases.
bench-tune-tvm: bench-deps
	$(BENCH_EXPORT) --models default
	$(BENCH_RUN) --models default --runtimes onnxruntime,tvm --tvm-tune --load-timeout 14400 --rounds 1 \
	  --out-dir $(BUILD)/bench-logs --name tvm-tuning $(BENCH_ARGS)

# Micro-benchmarks: fused kernels against the DRAM bound and their time in cache
# (bench/micro/: softmax, layernorm, x*sigmoid(x) and relu over f32[4096,4096], each one greedy
# kernel; writes bench/results/<date>-fused-rows.md), and
# Orchid's vector math against glibc (bench/vmath.cpp; writes bench/results/<date>-vmath.md),
# and f32 GEMM against oneDNN and OpenBLAS (bench/gemm.cpp; bench/results/<date>-gemm.md).
bench-micro: build
	/usr/bin/python3 bench/micro/fused_rows.py --orchid $(ORCHID) --threads $(JOBS)
	$(BUILD)/bench/vmath_bench --markdown bench/results/$$(date +%F)-vmath.md
	$(BUILD)/bench/gemm_bench --threads $(JOBS) --markdown bench/results/$$(date +%F)-gemm.md
	$(BUILD)/bench/conv_bench --threads $(JOBS) --markdown bench/results/$$(date +%F)-conv.md

# The analytic cost model (src/tile/cost.h) against measured time: the Spearman correlation of
# the two rankings of random schedules of 22 kernels, and of the plans cutting them into
# consecutive kernels (bench/tile_rank.cpp; writes bench/results/<date>-cost-model.md).
bench-cost-model: build
	$(BUILD)/bench/tile_rank_bench --threads $(JOBS) --markdown bench/results/$$(date +%F)-cost-model.md

# Schedule search strategies on ten kernels, DPAnsor's experiment (bench/tune_search.cpp;
# about 20 minutes, resumable: kernels already in the state file are not tuned again).
bench-tune: build
	$(BUILD)/bench/tune_search_bench --threads $(JOBS) --state $(BUILD)/tune-search.jsonl \
	  --markdown bench/results/$$(date +%F)-tune-search.md
