# asrpt — build, test and benchmark targets. `make check` is the full test
# suite that CI runs (.ci/run): static checks, unit tests with the race
# detector, and the integration suite against real Slurm labs. `make fuzz`
# (not part of check) runs every fuzz target of the repository for
# $(FUZZTIME) each (default 60s), one after the other.

GO      ?= go
LAB     ?= 22.05
PKGS    := ./...
# A directory holding the public trace excerpts (quality/README.md); none
# by default, and then only the cases that need no trace file run.
TRACES  ?=
FUZZTIME ?= 60s
# The version asrpt --version and asrpt_build_info report for bin/asrpt.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/asrpt/asrpt/internal/buildinfo.version=$(VERSION)

.PHONY: all build binary alerts deb deb-test check static test race fuzz integration testbed testbed-preempt bench bench-quick bench-readme quality lab-up lab-down

all: build

build:
	$(GO) build ./...
	CGO_ENABLED=0 $(GO) build ./...

# The static binary to install (contrib/README.md), with its version.
binary:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/asrpt ./cmd/asrpt

static:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	CGO_ENABLED=0 $(GO) vet ./...
	$(GO) mod tidy -diff
	cd tools && $(GO) mod tidy -diff

test:
	$(GO) test $(PKGS)

race:
	$(GO) test -race $(PKGS)

check: static build alerts race deb-test integration testbed

# The Debian package, into out/ (binary, units, example configuration,
# docs; the postinst creates the asrpt user).
deb:
	bash packaging/deb/build.sh out $(VERSION)

# make deb, installed, checked, removed and purged on this machine (root).
deb-test:
	bash test/deb.sh

# The example Prometheus alert rules, checked by promtool.
alerts:
	bash test/promtool.sh

# Every fuzz target (func FuzzX in a _test.go file), found by grep, for
# $(FUZZTIME) each; a failing input is saved under the package's
# testdata/fuzz/FuzzX as a seed that plain go test then runs.
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$t $$(dirname $$f)"; \
			$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f)/; \
		done; \
	done

integration:
	bash test/slurmlab/integration.sh

# The sidecar on a real Slurm lab (24.11 unless TESTBED_LAB says otherwise):
# one workload with Slurm alone and with asrpt sidecar, JCTs from
# accounting (test/testbed/README.md).
testbed:
	bash test/testbed/run.sh

# The testbed's preemption workload (checkpointing jobs that opted in):
# the sidecar with asrpt, then with asrpt-preempt; not part of check
# (about 25 minutes; test/testbed/README.md).
testbed-preempt:
	TESTBED_WORKLOAD=test/testbed/workload-preempt.tsv TESTBED_RUNS="asrpt asrpt-preempt" \
	TESTBED_PREEMPT_EXEMPT=30 TESTBED_RUN_TIMEOUT=900 TESTBED_REPLAY_POLICIES=asrpt,asrpt-preempt \
	bash test/testbed/run.sh

lab-up:
	bash test/slurmlab/lab.sh up $(LAB)

lab-down:
	bash test/slurmlab/lab.sh down $(LAB)

# The performance figures (test/bench; not part of check: about 12 minutes
# on a quiet machine): Go benchmarks of the placement, the virtual machine
# and the forest, every policy on a 100k-job trace against fifo, asrpt on
# generated traces of 10k to 10M jobs and las on 1M. Every figure is
# checked against its range in test/bench/ranges.toml and the target fails
# when one leaves it; the tables go to test/bench/results.{json,md} and
# README.md's bench block. BENCH_SIZES, BENCH_LAS_SIZES ("none" skips),
# BENCH_POLICY_JOBS and BENCH_DIR (keeps the traces) change the run, which
# the results then say is partial. bench-quick tries the runner on small
# sizes and writes nothing; bench-readme renders the tables again from
# test/bench/results.json into results.md and README.md.
bench:
	CGO_ENABLED=0 $(GO) run ./test/bench -readme README.md

bench-quick:
	CGO_ENABLED=0 $(GO) run ./test/bench -quick

bench-readme:
	CGO_ENABLED=0 $(GO) run ./test/bench -render -readme README.md

# The quality suite (quality/README.md): every policy on the fixed set of
# traces, and the geometric means scheduling changes are decided by. The
# trace excerpts are read from $(TRACES); every case is replayed with each
# forest seed of $(QUALITY_SEEDS), since one seed is not a result, and the
# family median it is judged against $(QUALITY_NOISE) more times perturbed
# by ±1%, which gives each case's noise band.
QUALITY_SEEDS ?= 1,2,3
QUALITY_NOISE ?= 8
quality:
	$(GO) run ./cmd/asrpt quality $(if $(TRACES),--traces $(TRACES)) --seeds $(QUALITY_SEEDS) --noise $(QUALITY_NOISE)
