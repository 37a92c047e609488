# Two entry points (see README): `make example` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup example test test-fast clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

example: $(STAMP)
	$(VPY) -m tools.example examples/vecadd.ptx

test: $(STAMP)
	$(VPY) -m pytest -n 2 -q

clean:
	rm -rf $(VENV) .cache .pytest_cache
