# Every target delegates to scripts/dev.py, which bootstraps uv when it is missing.
# `make` alone lists the targets.

PYTHON ?= python3
DEV := $(PYTHON) scripts/dev.py

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this list
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: install
install: ## Create .venv with every package and the dev tools (bootstraps uv)
	$(DEV) install

.PHONY: demo
demo: ## Run the lazy-steps example (examples/lazy_steps.py)
	$(DEV) demo

.PHONY: format
format: ## Apply ruff format and safe lint fixes
	$(DEV) format

.PHONY: lint
lint: ## Lint and format-check with ruff
	$(DEV) lint

.PHONY: typecheck
typecheck: ## Type-check packages, tests and scripts with basedpyright (strict)
	$(DEV) typecheck

.PHONY: test
test: ## Run the whole test suite
	$(DEV) test

.PHONY: check
check: ## Everything CI runs: lint, types, import contracts, tests, each package alone
	$(DEV) check

.PHONY: bench
bench: ## Run the benchmarks (benchmarks/run.py)
	$(DEV) bench
