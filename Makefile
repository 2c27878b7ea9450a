# Two entry points for people (see README): `make run` and `make test`; and `make check`, the
# contributors' fast loop (CONTRIBUTING.md). Everything else here is what they need, installed on
# first use and cached.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check
# Each stamp says what the venv holds: the kernel; what `make run` runs (the package with the
# extras of the main job, pyproject.toml); what `make test` runs (every extra and the test tools).
KERNEL := $(VENV)/.installed-kernel
RUNS   := $(VENV)/.installed-run
TESTS  := $(VENV)/.installed-test
RUN_EXTRAS := gcp,charts,local-clouds
TOOLS_PATH := PATH="$(CURDIR)/.tools/bin:$(CURDIR)/$(BIN):$$PATH"

.PHONY: run test check lint unit engine bench soak clean

run: $(RUNS) engine
	$(TOOLS_PATH) $(BIN)/arklow dev run

test: lint unit

# Lint, then every test that needs neither the Pulumi engine nor PostgreSQL (nor promtool: those
# are skipped), each property test at the `dev` profile's examples (tests/hypothesis_profiles.py):
# minutes, not the half hour of `make test` (which runs everything, at the `ci` profile). A test
# that uses the engine or PostgreSQL without its marker fails here (tests/e2e/pulumi_cli.py,
# tests/store/postgres_server.py).
check: lint
	HYPOTHESIS_PROFILE=dev ARKLOW_TEST_NO_ENGINE=1 ARKLOW_TEST_NO_POSTGRES=1 ARKLOW_SKIP_PROMTOOL=1 \
		$(BIN)/pytest -q -m "not e2e and not postgres" -p no:cacheprovider -n auto

# The filling kernel (kernel/, Rust, built by maturin through pip; cargo fetches its crates) is a
# required dependency of the package, so it is installed first, and again when its source changes.
$(KERNEL): kernel/pyproject.toml kernel/Cargo.toml kernel/Cargo.lock $(wildcard kernel/src/*.rs)
	@echo "make: building the kernel and installing Python packages into $(VENV) (first time: minutes)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) --force-reinstall --no-deps ./kernel
	touch $@

$(RUNS): pyproject.toml $(KERNEL)
	$(PIP) -e ".[$(RUN_EXTRAS)]"
	touch $@

# The test extra holds every other one, so a venv made for the tests also runs `make run`. The
# lint and test tools are pinned to exact versions (constraints/tools.txt): a new release changes
# nothing until that file does.
$(TESTS): pyproject.toml policy/requirements.txt constraints/tools.txt $(KERNEL)
	$(PIP) -e ".[test]" -c constraints/tools.txt
	# The policy pack's requirements (policy/requirements.txt): its SDK pins an older protobuf than
	# google-cloud-compute needs and works with the newer one, so without its dependencies.
	$(PIP) --no-deps -r policy/requirements.txt
	touch $@ $(RUNS)

engine:
	scripts/install-pulumi

lint: $(TESTS)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/vulture

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

# The HA soak: 3 replicas under a chaos schedule (minutes; not part of `make bench`).
soak: $(TESTS) engine
	scripts/install-system-deps
	$(TOOLS_PATH) $(BIN)/python bench/soak_ha.py
	bench/collect.sh

clean:
	rm -rf $(VENV) .tools .arklow .pytest_cache .mypy_cache .ruff_cache
