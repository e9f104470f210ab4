# The front door. `make help` lists the targets; the work is done by cargo and
# `cargo xtask` (see xtask/src/main.rs).

SHELL := bash
CARGO ?= cargo

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
XDG_CONFIG_HOME ?= $(HOME)/.config
FISH_CONFIG_DIR ?= $(XDG_CONFIG_HOME)/fish
FISH_COMPLETIONS_DIR ?= $(FISH_CONFIG_DIR)/completions

BINARIES := ultragit git-agent code-commit

.DEFAULT_GOAL := help
.PHONY: help build test install lint bench golden conformance clean

help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build ultragit, git-agent and code-commit (release) into bin/.
	$(CARGO) build --release --locked $(addprefix --package ,$(BINARIES))
	@mkdir -p bin
	@for b in $(BINARIES); do cp target/release/$$b bin/$$b; done
	@echo "built: $(addprefix bin/,$(BINARIES))"

test: ## Run every test of the workspace, snapshot (golden) checks and doc tests included.
	$(CARGO) xtask golden
	$(CARGO) test --workspace --doc --locked

install: build ## Install the binaries into $(DESTDIR)$(BINDIR), plus fish completions if fish is set up.
	install -d "$(DESTDIR)$(BINDIR)"
	@for b in $(BINARIES); do install -m 0755 "bin/$$b" "$(DESTDIR)$(BINDIR)/$$b"; done
	@echo "installed: $(BINARIES) -> $(DESTDIR)$(BINDIR)"
	@if [ -d "$(FISH_CONFIG_DIR)" ]; then \
	  install -d "$(DESTDIR)$(FISH_COMPLETIONS_DIR)" && \
	  for b in $(BINARIES); do \
	    "bin/$$b" --generate complete-fish > "$(DESTDIR)$(FISH_COMPLETIONS_DIR)/$$b.fish" || exit 1; \
	  done && \
	  echo "installed fish completions -> $(DESTDIR)$(FISH_COMPLETIONS_DIR)"; \
	fi

lint: ## Check formatting and run clippy with warnings denied.
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

bench: ## Run the benchmarks (release build) and print medians and ratios.
	$(CARGO) xtask bench

conformance: ## Run the llm crate and every binary against llama.cpp's server with a tiny model (installs both, ~250 MB, reused).
	$(CARGO) xtask conformance

golden: ## Check snapshots for drift; `make golden ACCEPT=1` rewrites them (review the diff!).
	$(CARGO) xtask golden $(if $(ACCEPT),--accept)

clean: ## Remove build outputs and bin/.
	$(CARGO) clean
	rm -rf bin
