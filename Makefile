# `make test` and `make run` install what they need into .venv first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
LINT_PATHS := $(wildcard src tests bench examples scripts)

.PHONY: install test lint typecheck pytest run bench clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "taskloom needs Python 3.11 or newer, and $(PYTHON) is not (or is missing): run make PYTHON=python3.11 …"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[all,test]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

PORT ?= 8765
# The demo's database is this folder's, whatever $$TASKLOOM_URL or a .taskloom/ above names.
DEMO_DB := sqlite:///$(CURDIR)/.taskloom/taskloom.db

run: $(STAMP)
	$(BIN)/taskloom demo --db '$(DEMO_DB)' > /dev/null
	@echo "demo thread seeded in ./.taskloom/taskloom.db"
	$(BIN)/taskloom serve --port $(PORT) --db '$(DEMO_DB)'

bench: $(STAMP)
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[all,test,bench]'
	$(BIN)/python bench/board_ops.py
	$(BIN)/python bench/sse.py
	$(BIN)/python bench/queue.py
	$(BIN)/python bench/queue_cost.py
	$(BIN)/python bench/corpus.py install
	$(BIN)/python bench/context_economy.py
	$(BIN)/python bench/shapes.py
	$(BIN)/python bench/guard_memory.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
