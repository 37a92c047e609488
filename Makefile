# Two entry points (see README): `make example` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup example test test-fast clean

setup: $(STAMP)

SOURCES := ptx2sass frontend regalloc sched encoder emu

# The editable install, then what a wheel install does for an installed ptx2sass: the
# grammar tables built and every module's bytecode compiled (start-up must not depend on a
# writable __pycache__, nor pay for compiling).
$(STAMP): pyproject.toml setup.py
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e '.[test]'
	$(VPY) -c "from ptx2sass.frontend import tables; tables.generate('frontend')"
	$(VPY) -m compileall -q $(SOURCES) >/dev/null
	touch $(STAMP)

example: $(STAMP)
	$(VPY) -m tools.example examples/vecadd.ptx

test: $(STAMP)
	$(VPY) -m pytest -n 2 -q

clean:
	rm -rf $(VENV) .cache .pytest_cache
