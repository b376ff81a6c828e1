# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test docs bench clean

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
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

docs: install
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

bench: install
	$(PY) benchmarks/bench_fit.py

clean:
	rm -rf $(VENV) build site
