# Two entry points for people (see README): `make run` and `make test`.
# Everything else here is what they need, installed on first use and cached.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check
# Each stamp says what the venv holds: what `make run` runs (the package, its Rust kernel compiled
# in, with the extras of the main job and the policy pack, pyproject.toml); what `make test` runs
# (every extra and the test tools).
RUNS   := $(VENV)/.installed-run
TESTS  := $(VENV)/.installed-test
RUN_EXTRAS := gcp,charts,local-clouds,policy
TOOLS_PATH := PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH"
# The package is one distribution with its Rust kernel (kernel/, PyO3): the editable install has
# maturin (through pip; cargo fetches the crates) compile it into arklow_pulumi/, so the package is
# installed again whenever the kernel's source changes.
KERNEL_SOURCES := kernel/Cargo.toml kernel/Cargo.lock $(wildcard kernel/src/*.rs)

.PHONY: run test lint unit engine bench soak clean

run: $(RUNS) engine
	$(TOOLS_PATH) $(BIN)/arklow dev run

test: lint unit

$(BIN)/python:
	@echo "make: creating $(VENV); the first install compiles the kernel (minutes)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(RUNS): pyproject.toml $(KERNEL_SOURCES) | $(BIN)/python
	$(PIP) -e ".[$(RUN_EXTRAS)]"
	touch $@

# The test extra holds every other one, so a venv made for the tests also runs `make run`.
$(TESTS): pyproject.toml $(KERNEL_SOURCES) | $(BIN)/python
	$(PIP) -e ".[test]"
	touch $@ $(RUNS)

engine:
	scripts/install-pulumi

lint: $(TESTS)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

unit: $(TESTS) engine
	scripts/install-system-deps
	scripts/install-promtool
	$(TOOLS_PATH) $(BIN)/pytest

bench: $(TESTS) engine
	scripts/install-system-deps
	$(BIN)/python bench/bench_allocation.py
	$(BIN)/python bench/bench_store.py
	$(BIN)/python bench/bench_supply.py
	$(BIN)/python bench/bench_tick.py
	$(BIN)/python bench/bench_ingest.py
	$(BIN)/python bench/bench_controller.py
	$(TOOLS_PATH) $(BIN)/python bench/bench_allocate_cli.py
	$(TOOLS_PATH) $(BIN)/python bench/bench_simulate.py
	$(TOOLS_PATH) $(BIN)/python bench/bench_whatif.py
	$(TOOLS_PATH) $(BIN)/python bench/bench_scaling.py
	$(TOOLS_PATH) $(BIN)/python bench/bench_pulumi.py
	$(TOOLS_PATH) $(BIN)/python bench/bench_main_job.py
	scripts/install-promtool
	$(TOOLS_PATH) $(BIN)/python bench/bench_prometheus.py
	bench/collect.sh

# The HA soak: 3 replicas under a chaos schedule (minutes; not part of `make bench`).
soak: $(TESTS) engine
	scripts/install-system-deps
	$(TOOLS_PATH) $(BIN)/python bench/soak_ha.py
	bench/collect.sh

clean:
	rm -rf $(VENV) .tools .arklow .pytest_cache .mypy_cache .ruff_cache
