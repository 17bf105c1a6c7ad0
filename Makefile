# Plaza's everyday commands.
#   make run     build (release), seed the demo world into ./data, serve on http://127.0.0.1:8080
#   make build   the release binary, .build/release/plaza
#   make dist    the archive for Linux servers, dist/plaza-<version>-linux-<arch>.tar.gz (docs/install.md)
#   make test    Swift tests on SQLite and on PostgreSQL, end-to-end and browser tests, schemathesis
#   make clean   build products (./data, your instance's data, stays)
#   make bench   Plaza vs PocketBase benchmark (bench/README.md); flags via BENCH_ARGS="--duration 5 ..."
#   make format  formats the Swift code as `make test` checks it (.swift-format)
#   make fuzz    the fuzzers, long: Swift suites at 1,000,000 cases, 100,000 mutated requests to the binary
#   make chaos   1,000 SIGKILLs under concurrent writers, on SQLite and on PostgreSQL; no answered write lost
#   make scale   nginx in front of 3 servers on PostgreSQL with media in S3: throughput, a SIGKILL and a rolling
#                restart under load, limits across servers (bench/scale.py; flags via SCALE_ARGS)
# Override with e.g. `make run PORT=9000 DATA_DIR=/srv/plaza`.
SWIFT ?= swift
DATA_DIR ?= ./data
PORT ?= 8080
PLAZA := ./.build/release/plaza

.PHONY: run build dist test clean bench fuzz chaos scale format

run: build
	@echo "==> Seeding the demo world into $(DATA_DIR)"
	$(PLAZA) seed --demo --data-dir "$(DATA_DIR)"
	@echo "==> Serving on http://localhost:$(PORT): open it in a browser, sign in as demo / plaza-demo (admin / plaza-demo administers) or sign up (Ctrl-C stops)"
	exec $(PLAZA) serve --data-dir "$(DATA_DIR)" --port $(PORT)

build:
	@scripts/install-deps.sh
	@echo "==> Building plaza (release)"
	$(SWIFT) build -c release --product plaza

dist:
	@scripts/install-deps.sh
	scripts/dist.sh

test:
	@echo "==> Installing test dependencies"
	scripts/install-deps.sh test
	@echo "==> Formatting: swift format lint --strict (make format fixes it; configuration in .swift-format)"
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift sdk
	@echo "==> Function lengths: none in Sources over 60 lines (scripts/function-lengths.py)"
	python3 scripts/function-lengths.py Sources && python3 scripts/function-lengths.py sdk/Sources
	@echo "==> Building (debug) with tests"
	$(SWIFT) build --build-tests
	@echo "==> PlazaKit as an app gets it, in a copy of sdk/ outside the clone: no server dependency, no warning, the docs' snippets compile, the DocC catalogue builds (scripts/sdk-check.sh)"
	SWIFT=$(SWIFT) scripts/sdk-check.sh
	@echo "==> Swift tests on SQLite (and S3 media storage against moto, mail against aiosmtpd)"
	env -u PLAZA_TEST_DATABASE_URL scripts/with-moto.sh scripts/with-smtp.sh $(SWIFT) test --skip-build --skip FuzzTests
	@echo "==> Swift fuzz suites (30,000 cases per parser, the same each run; make fuzz goes deep), alone: they keep both cores busy"
	env -u PLAZA_TEST_DATABASE_URL $(SWIFT) test --skip-build --filter FuzzTests
	@echo "==> Swift tests on PostgreSQL, 8 at a time (PlazaKit's run against their own SQLite server, so only once, above)"
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=8 scripts/with-postgres.sh $(SWIFT) test --skip-build --skip PlazaKitTests --skip ServerSentEventsTests --skip FuzzTests --skip SMTPClientTests
	@echo "==> End-to-end and browser tests (e2e/; two servers on one PostgreSQL for realtime; screenshots in e2e/screenshots)"
	PLAZA_BIN=.build/debug/plaza scripts/with-postgres.sh scripts/e2e.sh
	@echo "==> Schemathesis against the OpenAPI document"
	PLAZA_BIN=.build/debug/plaza scripts/schemathesis.sh

fuzz:
	@echo "==> Building (debug) with tests"
	$(SWIFT) build --build-tests
	@echo "==> Swift fuzz suites, 1,000,000 cases per parser"
	PLAZA_FUZZ_CASES=1000000 PLAZA_FUZZ_SECONDS=7200 $(SWIFT) test --skip-build --filter FuzzTests
	@echo "==> 100,000 mutated requests to the real binary (seed printed; PLAZA_FUZZ_SEED repeats a run)"
	PLAZA_FUZZ_REQUESTS=100000 PLAZA_BIN=.build/debug/plaza scripts/e2e.sh -s -k mutated_requests

chaos:
	@echo "==> Building plaza (debug)"
	$(SWIFT) build --product plaza
	@echo "==> 1,000 SIGKILLs under concurrent writers, on SQLite and on PostgreSQL (seed printed; PLAZA_CHAOS_SEED repeats a run)"
	PLAZA_CHAOS_KILLS=1000 PLAZA_BIN=.build/debug/plaza scripts/with-postgres.sh scripts/e2e.sh -s -k sigkill

bench: build
	@bench/install.sh
	@echo "==> Benchmark: Plaza (on SQLite and on PostgreSQL) vs PocketBase (bench/README.md)"
	PLAZA_PG_DURABLE=1 scripts/with-postgres.sh sh -c 'python3 bench/bench.py --postgres "$$PLAZA_TEST_DATABASE_URL" "$$@"' bench $(BENCH_ARGS)

scale: build
	@scripts/install-deps.sh test
	@bench/install.sh
	@echo "==> Scale-out: nginx, 3 servers, PostgreSQL, S3 (moto); report in bench/results/scale-latest.md"
	PLAZA_PG_DURABLE=1 scripts/with-postgres.sh sh -c 'python3 bench/scale.py --postgres "$$PLAZA_TEST_DATABASE_URL" "$$@"' scale $(SCALE_ARGS)

format:
	$(SWIFT) format format --in-place --recursive --parallel Sources Tests Package.swift sdk

clean:
	$(SWIFT) package clean
	rm -rf .pytest_cache e2e/__pycache__ .hypothesis
