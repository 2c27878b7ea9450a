# Two entry points for people (see README): `make run` and `make test`.
# Everything else here is what they need, installed on first use and cached.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint unit engine bench soak clean

run: $(STAMP) engine
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/arklow dev run

test: lint unit

# The filling kernel (kernel/, Rust, built by maturin through pip; cargo fetches its crates) is a
# required dependency of the package, so it is installed first, and again when its source changes.
$(STAMP): pyproject.toml kernel/pyproject.toml kernel/Cargo.toml kernel/Cargo.lock $(wildcard kernel/src/*.rs)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./kernel
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
	# The policy pack's SDK pins an older protobuf than google-cloud-compute needs; it works with
	# the newer one (docs/whatif.md), so it is installed without its dependencies.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "pulumi-policy==1.21.0"
	touch $(STAMP)

engine:
	scripts/install-pulumi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

unit: $(STAMP) engine
	scripts/install-system-deps
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest

bench: $(STAMP) engine
	scripts/install-system-deps
	$(BIN)/python bench/bench_allocation.py
	$(BIN)/python bench/bench_store.py
	$(BIN)/python bench/bench_supply.py
	$(BIN)/python bench/bench_tick.py
	$(BIN)/python bench/bench_ingest.py
	$(BIN)/python bench/bench_controller.py
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/bench_allocate_cli.py
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/bench_simulate.py
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/bench_whatif.py
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/bench_pulumi.py
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/bench_main_job.py
	bench/collect.sh

# The HA soak: 3 replicas under a chaos schedule (minutes; not part of `make bench`).
soak: $(STAMP) engine
	scripts/install-system-deps
	PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/soak_ha.py
	bench/collect.sh

clean:
	rm -rf $(VENV) .tools .arklow .pytest_cache .mypy_cache .ruff_cache
