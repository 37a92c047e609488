# Two entry points (see README): `make example` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
GRAMMAR_STAMP := $(VENV)/.grammar

.PHONY: setup example test test-fast clean

setup: $(STAMP) $(GRAMMAR_STAMP)

SOURCES := ptx2sass frontend regalloc sched encoder emu

# The editable install, then what a wheel install does for an installed ptx2sass: the
# grammar tables built and every module's bytecode compiled (start-up must not depend on a
# writable __pycache__, nor pay for compiling).
$(STAMP): pyproject.toml setup.py
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e '.[test]'
	$(VPY) -m compileall -q $(SOURCES) >/dev/null
	touch $(STAMP)

# The generated tables are named by a checksum of the grammar: rebuilt when it changes.
$(GRAMMAR_STAMP): $(STAMP) frontend/parser.py frontend/lexer.py
	$(VPY) -c "from ptx2sass.frontend import tables; tables.generate('frontend')"
	touch $(GRAMMAR_STAMP)

example: setup
	$(VPY) -m tools.example examples/vecadd.ptx

test: setup
	$(VPY) -m pytest -n 2 -q

clean:
	rm -rf $(VENV) .cache .pytest_cache
