# Everything a fresh machine needs: python3 and make.
VENV ?= .venv
PYTHON ?= python3
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck bench clean browser

# The report tests open the generated pages in Debian's chromium (headless).
CHROMIUM_INSTALL = command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

$(STAMP): pyproject.toml examples/gpushare/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip setuptools wheel
	$(VENV)/bin/pip install -q -e '.[dev]'
	$(VENV)/bin/pip install -q -e examples/gpushare
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kubesched simulate --output text

browser:
	@$(CHROMIUM_INSTALL)

# Three xdist workers on two cores: the e2e tests wait on the servers and processes they start,
# and a third worker fills those waits (-n 2 left a fifth of the CPU idle).  Tests marked
# xdist_group share one worker.  Bytecode is cached even where
# PYTHONDONTWRITEBYTECODE is set: each worker and each kubesched process a test starts would
# otherwise compile the package (and the rewritten tests) again.
test: $(STAMP) browser
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/pytest -q -p no:randomly -n 3 --dist loadgroup
	$(VENV)/bin/ruff check core plugins transports tests
	$(MAKE) --no-print-directory typecheck

lint: $(STAMP)
	$(VENV)/bin/ruff check core plugins transports tests

# mypy sees the package as Python imports it: kubesched is core/ with plugins/ and transports/
# inside (pyproject's package-dir), linked entry by entry into $(VENV)/mypy.
typecheck: $(STAMP)
	@rm -rf $(VENV)/mypy && mkdir -p $(VENV)/mypy/kubesched
	@for f in core/* plugins transports; do ln -s "$$PWD/$$f" $(VENV)/mypy/kubesched/; done
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(VENV)/bin/kubesched bench basic --nodes 5000 --pods 10000

clean:
	rm -rf $(VENV) build *.egg-info
