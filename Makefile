# Two commands do all the set-up on a fresh Debian 12 machine with Rust:
#   make demo   installs what is missing, builds, and runs the main job on an embedded sandbox
#   make test   installs what is missing, builds, and runs the whole test suite
SHELL := /bin/bash
CARGO ?= cargo
QPSLAB := target/release/qpslab
# What the demo needs (a server to sandbox, jemalloc for --malloc), and what the tests add:
# sysbench and percona-toolkit (pt-query-digest) to compare against, openssl for TLS certificates, perf, Chromium and a font for reports,
# fio (the engine of `qpslab io`), xfsprogs (xfs on loop devices in storage studies), prometheus
# (a real Prometheus and promtool scrape and check `--metrics-addr`), slurm-wlm, munge and openmpi-bin
# (the shard tests start a private Slurm and run mpirun), and bash-completion, man-db
# and groff-base (the completion and man page tests), zsh and fish (completion in those shells).
DEMO_PACKAGES := mariadb-server mariadb-client libjemalloc2
TEST_PACKAGES := $(DEMO_PACKAGES) sysbench openssl linux-perf chromium fonts-dejavu-core percona-toolkit fio xfsprogs prometheus slurm-wlm munge openmpi-bin bash-completion zsh fish man-db groff-base python3-pip

.PHONY: demo test deps deps-test install-packages build lint bench

deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEMO_PACKAGES)"

deps-test:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(TEST_PACKAGES)"
	@# Apache Otava, the change point peer of `qpslab history` (crates/stats/tests/otava_peer.rs).
	@python3 -c 'import otava' 2>/dev/null || python3 -m pip install --quiet --break-system-packages apache-otava 2>/dev/null || python3 -m pip install --quiet apache-otava

install-packages:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build:
	$(CARGO) build --release --locked -p qpslab

demo: deps build
	$(QPSLAB) run oltp_point_select --tables 4 --table-size 20000 --threads 1,4,16 --time 5 --warmup 1
	$(QPSLAB) run oltp_read_write --tables 4 --table-size 20000 --threads 1,4,16 --time 5 --warmup 1
	$(QPSLAB) show

test: deps-test
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) test --locked --workspace

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

# qpslab against sysbench, interleaved on one sandbox (bench/README.md); ~25 min on 2 cores.
bench: deps-test build
	python3 bench/bench.py --qpslab $(QPSLAB)
