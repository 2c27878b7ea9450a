# Two entry points for people (see README): `make run` and `make test`; and `make check`, the
# contributors' fast loop (CONTRIBUTING.md). Everything else here is what they need, installed on
# first use and cached.

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
STUBTEST := .mypy_cache/.stubtest-passed

.PHONY: run test check lint unit engine bench soak clean docs-outputs

run: $(RUNS) engine
	$(TOOLS_PATH) $(BIN)/arklow dev run

test: lint unit

# Lint, then every test that needs neither the Pulumi engine nor PostgreSQL (nor promtool: those
# are skipped), each property test at the `dev` profile's examples (tests/hypothesis_profiles.py):
# minutes, not the half hour of `make test` (which runs everything, at the `ci` profile). A test
# that uses the engine or PostgreSQL without its marker fails here (tests/e2e/pulumi_cli.py,
# tests/store/postgres_server.py).
#
# The sources' bytecode and pytest's rewritten test modules are cached (__pycache__/, ignored by
# git) even where the environment sets PYTHONDONTWRITEBYTECODE: without them each xdist worker and
# each `arklow` process a test starts compiles them again, a minute of CPU over the run. One
# worker per core and one more: a worker whose test waits on a process, a socket or a deadline
# leaves its core to the others (on 2 cores: 48 s of idle core time in a run with 2 workers, 8 s
# with 3).
CHECK_WORKERS = $$(( $$(getconf _NPROCESSORS_ONLN) + 1 ))
check: lint
	PYTHONDONTWRITEBYTECODE= HYPOTHESIS_PROFILE=dev \
		ARKLOW_TEST_NO_ENGINE=1 ARKLOW_TEST_NO_POSTGRES=1 ARKLOW_SKIP_PROMTOOL=1 \
		$(BIN)/pytest -q -m "not e2e and not postgres" -p no:cacheprovider -n $(CHECK_WORKERS)

$(BIN)/python:
	@echo "make: creating $(VENV); the first install compiles the kernel (minutes)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(RUNS): pyproject.toml $(KERNEL_SOURCES) | $(BIN)/python
	$(PIP) -e ".[$(RUN_EXTRAS)]"
	touch $@

# The test extra holds every other one, so a venv made for the tests also runs `make run`. The
# lint and test tools are pinned to exact versions (constraints/tools.txt): a new release changes
# nothing until that file does.
$(TESTS): pyproject.toml constraints/tools.txt $(KERNEL_SOURCES) | $(BIN)/python
	$(PIP) -e ".[test]" -c constraints/tools.txt
	touch $@ $(RUNS)

engine:
	scripts/install-pulumi

# The kernel's lint (kernel/): its stub against the compiled module, rustfmt, clippy on the pure
# algorithm, its tests and the Python edge (--all-features: the extension-module feature), and its
# unit tests (the pure algorithm alone: no pyo3, so the test binary links). rustfmt and clippy are
# rustup's default components.
lint: $(TESTS) $(STUBTEST)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/vulture
	cargo fmt --manifest-path kernel/Cargo.toml --check
	cargo clippy --quiet --manifest-path kernel/Cargo.toml --all-targets --all-features -- -D warnings
	cargo test --quiet --manifest-path kernel/Cargo.toml

# stubtest (the kernel's stub against the compiled module) has no cache of its own and takes ten
# seconds, so it runs again only when the stub, the module or the venv has changed; the stamp goes
# with mypy's cache.
$(STUBTEST): arklow_pulumi/core/_kernel.pyi $(wildcard arklow_pulumi/core/_kernel*.so) $(TESTS)
	$(BIN)/python -m mypy.stubtest arklow_pulumi.core._kernel
	@mkdir -p $(@D) && touch $@

unit: $(TESTS) engine
	scripts/install-system-deps
	scripts/install-promtool
	HYPOTHESIS_PROFILE=ci $(TOOLS_PATH) $(BIN)/pytest

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

# The outputs README.md and docs/*.md show (after <!-- docs-output -->), run and written in place
# (tests/docs/test_docs_outputs.py compares them; CONTRIBUTING.md says how to mark one).
docs-outputs: $(TESTS)
	$(TOOLS_PATH) $(BIN)/python tools/docs_outputs.py --write

# The HA soak: 3 replicas under a chaos schedule (minutes; not part of `make bench`).
soak: $(TESTS) engine
	scripts/install-system-deps
	$(TOOLS_PATH) $(BIN)/python bench/soak_ha.py
	bench/collect.sh

clean:
	rm -rf $(VENV) .tools .arklow .pytest_cache .mypy_cache .ruff_cache
