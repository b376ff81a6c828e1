# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test docs docs-test docs-serve bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,docs,examples]"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) examples/digits.py

test: install
	$(PY) -m pytest -q -n 2 --dist loadfile tests
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir build/site

# The docs' code blocks run (tests/test_docs.py); `make docs-serve` browses the site.
docs-test: install
	$(PY) -m pytest -q tests/test_docs.py

docs-serve: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

bench: install
	$(PY) benchmarks/bench_fit.py

clean:
	rm -rf $(VENV) build site
