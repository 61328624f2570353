# The two commands a user needs: `make demo` and `make test`. Each installs what is missing
# (scripts/install-deps.sh), configures, builds with all cores and runs.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
CTEST = cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
# Labels kept out of the default run (STYLE.md, "Tests"): they have their own targets.
SLOW_LABELS = ^(e2e-large|cuda|python)$$

.PHONY: all deps configure build test test-large demo ops-doc clean

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

ORCHID = $(BUILD)/tools/orchid/orchid

# Writes the example ONNX models (examples/make_models.py), inspects and runs one, then
# runs the attention block written in text IR.
demo: build
	/usr/bin/python3 examples/make_models.py $(BUILD)/examples
	$(ORCHID) inspect $(BUILD)/examples/attention.onnx
	$(ORCHID) run $(BUILD)/examples/attention.onnx --seed 1
	$(ORCHID) ir-run examples/attention.oir --seed 1

# docs/ops.md: the supported operators and the node-test results, regenerated.
ops-doc: build
	$(BUILD)/tests/conformance/orchid_conformance --markdown docs/ops.md > /dev/null

clean:
	rm -rf $(BUILD) $(BUILD).configure.log
