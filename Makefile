# sanlab developer tasks; `make test` is what CI runs (.ci/run).
# Needs bash, python3 (3.11+) and cargo; installs Debian's python3-venv when python3 lacks it.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PYTHON := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.installed
SCENARIO ?= scenarios/studies/metro_cluster_psp.toml
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
CHROMIUM := /usr/bin/chromium
FIO := /usr/bin/fio_jsonplus_clat2csv

# Build requirements, dependencies and the `test` extra, read from pyproject.toml (one source of truth).
REQUIREMENTS := import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
	print(*p["build-system"]["requires"], *p["project"]["dependencies"], \
	*p["project"]["optional-dependencies"]["test"], sep="\n")

.PHONY: help venv build demo test bench fuzz

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-6s %s\n", $$1, $$2}'

venv: $(VENV_STAMP) ## create ./.venv with maturin and the test dependencies

$(VENV_STAMP): pyproject.toml
	@if ! python3 -c 'import ensurepip' 2>/dev/null; then \
		echo "python3 cannot create a venv: installing Debian's python3-venv"; \
		$(SUDO) apt-get update -qq; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; \
	fi
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -c '$(REQUIREMENTS)' > $(VENV)/requirements.txt
	$(PYTHON) -m pip install --quiet --requirement $(VENV)/requirements.txt
	touch $@

build: venv ## build the engine in release mode into the venv (maturin develop)
	VIRTUAL_ENV="$(abspath $(VENV))" $(VENV)/bin/maturin develop --release

demo: build ## run the metro cluster PSP study and write its run folder under runs/
	$(VENV)/bin/sanlab run $(SCENARIO)

# Headless Chromium loads the HTML report in the tests (tests/python/test_report_browser.py).
$(CHROMIUM):
	@echo "installing Debian's chromium (the report tests load report.html in it)"
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# Debian's fio: its json+ output and tools/fio_jsonplus_clat2csv check sanlab's fio JSON (tests/python/test_fio.py).
$(FIO):
	@echo "installing Debian's fio (the fio JSON tests run fio and its tools)"
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio

# The whole workspace, sanlab-py too (it has no tests): its dependencies then resolve with the same
# features as maturin's build, so the libraries `make build` compiled serve the tests as they are.
# The Python tests run on every core, a test file to a worker (its module fixtures run once).
test: build $(CHROMIUM) $(FIO) ## Rust tests (release) and Python tests (installs Debian's chromium and fio when missing)
	cargo test --release --workspace
	$(VENV)/bin/pytest -q --numprocesses auto --dist loadfile

FUZZ_SECONDS ?= 600
FUZZ_EXAMPLES ?= 2000

fuzz: build ## fuzz the parsers for FUZZ_SECONDS (Rust) and FUZZ_EXAMPLES inputs (CLI); failures land in tests/data/fuzz/
	FUZZ_SECONDS=$(FUZZ_SECONDS) cargo test --release -p sanlab-scenario --test all fuzz::fuzz_corpora -- --nocapture
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(VENV)/bin/pytest -q tests/python/test_fuzz.py

bench: build ## speed and memory: the metro study against SimPy, the topology ladder of 40 to 10,000 VMs, variants on every core (docs/performance.md)
	$(PYTHON) benches/metro_bench.py
	$(PYTHON) benches/scale_bench.py
	$(PYTHON) benches/variants_bench.py
