# kmigrate developer commands. `make demo` and `make test` set everything up first.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
KMIGRATE := $(VENV)/bin/kmigrate
DEMO_DIR := build/demo-samples

.PHONY: setup demo test test-fast mutation lint docs bench clean package

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt -e '.[backends,dev]'
	touch $@

setup: $(VENV)/.installed

# Scan the samples, then show what `apply` would rewrite (on a copy; samples/ stays legacy).
demo: setup
	$(KMIGRATE) scan samples/
	rm -rf $(DEMO_DIR) && mkdir -p build && cp -r samples $(DEMO_DIR)
	$(KMIGRATE) apply $(DEMO_DIR) --diff

# The whole suite, backend tests included (TensorFlow, JAX and PyTorch on CPU).
test: setup
	$(PY) -m pytest -q -n auto

# Only the fast tests (no TensorFlow/JAX/PyTorch).
test-fast: setup
	$(PY) -m pytest -q -n auto -m "not backends"

# Break kmigrate on purpose (catalog defaults, editor, tolerances, exit codes) in a copy and
# check that the tests notice each breakage (~7 min).
mutation: setup
	$(PY) scripts/mutation_check.py

lint: setup
	$(VENV)/bin/ruff format --check migrate rules tests scripts
	$(VENV)/bin/ruff check migrate rules tests scripts

docs: setup
	$(PY) scripts/gen_rules_doc.py
	$(PY) scripts/gen_ops_doc.py

clean:
	rm -rf build .kmigrate_cache .pytest_cache

# Ready to publish: build the sdist and the wheel into build/dist and check their metadata
# as the package index would (build and twine come from the package index).
package: setup
	$(PY) -m pip install -q build twine
	rm -rf build/dist && $(PY) -m build --outdir build/dist .
	$(PY) -m twine check build/dist/*
