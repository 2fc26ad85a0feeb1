# Convenience front end for the CMake build. Every target installs missing
# Debian packages first (scripts/install-deps.sh), configures its build
# directory once (delete it or `make clean` to reconfigure), then builds.
#
#   make build       Release build in build/
#   make test        build + ctest (C++ tests, pytest incl. the docs build, find_package consumer)
#   make demo        build + run build/examples/demo, then the simulator example
#                    examples/python/drop_quadruped.py (solo12 dropped on the ground), then
#                    writes the browser viewer's page for that motion (or the arm's) into
#                    build/demo/viewer/ (installs nodejs/npm if missing; skipped without them)
#   make bench       -march=native build in build-bench/, run plucker_bench $(BENCH_ARGS)
#                    (table; build/bench/results.json), plucker_bench --batch (batched
#                    throughput; build/bench/batch.json), plucker_bench --derivatives
#                    (analytical derivatives vs MuJoCo's mjd_transitionFD;
#                    build/bench/derivatives_peer.json), then bench/make_report.py
#                    (docs/benchmarks.md)
#   make bench-clang the same built by clang++ in build-bench-clang/ (docs/benchmarks-clang.md)
#   make bench-scaling  same build, plucker_bench --scaling, bench/plot_scaling.py
#                    (build/bench/scaling.json, docs/scaling.png)
#   make bench-large same build, plucker_bench --large=$(LARGE_LINKS): load time, memory and
#                    first RNEA/ABA of a LARGE_LINKS-link chain URDF (build/bench/large_model.json)
#   make test-asan   ASan+UBSan build in build-asan/ + ctest
#   make test-native -march=native build of the library and C++ tests in build-native/ +
#                    ctest: the AVX2/AVX-512 code that `make bench` times (build/ has none)
#   make test-clang  the same with clang++ (Debian's clang 14) in build-clang/: both
#                    compilers are supported, and their SIMD code paths both tested
#   make fuzz        clang libFuzzer build in build-fuzz/, each fuzzer for $(FUZZ_SECONDS) s
#   make flops       scalar-SSE2 build in build-flops/ (no -march, no vectorisation), then
#                    bench/count_flops.py runs plucker_flops under callgrind and counts
#                    the floating-point instructions of one call of each algorithm
#                    (build-flops/flops.json, docs/flops.md)
#   make studies     build + the reproducible studies of studies/ (issue #22): each script
#                    writes its page and plots in docs/studies/ (jsim_conditioning.py:
#                    docs/studies/jsim_conditioning.md; balance.py: docs/studies/balance.md; the
#                    shared robots when ../shared/models exists)
#   make docs        build + the documentation site in build/docs/html/ (Sphinx -W over docs/ and
#                    the module's docstrings, Doxygen over include/plucker/; scripts/build_docs.py)
#   make clean       remove all build directories

CMAKE ?= cmake
CTEST ?= ctest
JOBS ?= 2
BENCH_ARGS ?=
PYTHON ?= /usr/bin/python3
FUZZ_SECONDS ?= 60
SHARED_DIR ?= ../shared
LARGE_LINKS ?= 100000
FLOPS_ARGS ?=
# Every FP operation a scalar SSE2 instruction: no Eigen SIMD, no auto-vectoriser, and
# the default x86-64 target (no -march=native, so no FMA).
FLOPS_CXX_FLAGS = -DEIGEN_DONT_VECTORIZE -fno-tree-vectorize -fno-tree-slp-vectorize

# $(call configure,<dir>,<cmake args>): configure <dir> unless already configured.
define configure
	@if [ ! -f $(1)/CMakeCache.txt ] || [ ! -f $(1)/cmake_install.cmake ]; then \
	  echo "== configuring $(1)"; \
	  $(CMAKE) -S . -B $(1) $(2); \
	fi
endef

.PHONY: all build test docs demo studies bench bench-clang bench-scaling bench-large test-asan test-native test-clang fuzz flops clean

all: build

build:
	@scripts/install-deps.sh --node
	$(call configure,build,-DCMAKE_BUILD_TYPE=Release)
	$(CMAKE) --build build -j$(JOBS)

test: build
	@scripts/install-deps.sh --docs --viewer
	$(CTEST) --test-dir build --output-on-failure -j$(JOBS)

docs: build
	@scripts/install-deps.sh --docs
	PYTHONPATH=build/python:python $(PYTHON) scripts/build_docs.py --out build/docs

demo: build
	build/examples/demo examples/models/plucker_arm.urdf build/demo
	/usr/bin/python3 examples/plot_demo.py build/demo/trajectory.csv build/demo/demo.png
	PYTHONPATH=build/python /usr/bin/python3 examples/python/drop_quadruped.py --out build/demo
	@scripts/install-deps.sh --node || echo "make demo: nodejs/npm could not be installed; the viewer will be skipped"
	@$(CMAKE) --build build --target plucker_viewer > /dev/null
	@rm -rf build/demo/viewer
	@if [ ! -f build/viewer/dist/viewer.js ]; then \
	  echo "make demo: viewer skipped (node/npm not installed: scripts/install-deps.sh --node, then make demo)"; \
	elif [ -f $(SHARED_DIR)/models/solo12.urdf ] && [ -f build/demo/drop_quadruped_trajectory.csv ]; then \
	  PYTHONPATH=build/python:python $(PYTHON) -m plucker_cli view $(SHARED_DIR)/models/solo12.urdf --floating-base \
	    build/demo/drop_quadruped_trajectory.csv --out build/demo/viewer; \
	else \
	  PYTHONPATH=build/python:python $(PYTHON) -m plucker_cli view examples/models/plucker_arm.urdf \
	    build/demo/trajectory.csv --out build/demo/viewer; \
	fi
	@echo "make demo: plots in build/demo/ (demo.png: the arm's passive motion; drop_quadruped.png: solo12 landing on compliant ground, when ../shared/models is present)"
	@if [ -f build/demo/viewer/index.html ]; then \
	  echo "make demo: the motion in the browser: open file://$(CURDIR)/build/demo/viewer/index.html" \
	       "(or serve it: python3 -m http.server -d build/demo/viewer, then http://localhost:8000/)"; \
	fi

studies: build
	PYTHONPATH=build/python:python $(PYTHON) studies/jsim_conditioning.py
	PYTHONPATH=build/python:python $(PYTHON) studies/balance.py

bench:
	@scripts/install-deps.sh --bench
	$(call configure,build-bench,-DCMAKE_BUILD_TYPE=Release -DPLUCKER_NATIVE=ON \
	  -DPLUCKER_BUILD_TESTS=OFF -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	@if ls bench/*.cpp 2>/dev/null | grep -qv '/peer_'; then \
	  $(CMAKE) --build build-bench --target plucker_bench -j$(JOBS) && \
	  build-bench/plucker_bench $(BENCH_ARGS) && \
	  build-bench/plucker_bench --batch && \
	  build-bench/plucker_bench --derivatives && \
	  $(PYTHON) bench/make_report.py; \
	else \
	  echo "make bench: no bench/*.cpp yet"; \
	fi

# The same benchmark built by clang++ (issue #23: both compilers first-class); its report is
# docs/benchmarks-clang.md, beside the g++ one.
bench-clang:
	@scripts/install-deps.sh --bench --clang
	$(call configure,build-bench-clang,-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
	  -DPLUCKER_NATIVE=ON -DPLUCKER_BUILD_TESTS=OFF -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-bench-clang --target plucker_bench -j$(JOBS)
	build-bench-clang/plucker_bench --out=build/bench-clang $(BENCH_ARGS)
	build-bench-clang/plucker_bench --batch --out=build/bench-clang
	$(PYTHON) bench/make_report.py --dir build/bench-clang --out docs/benchmarks-clang.md --target bench-clang

bench-scaling:
	@scripts/install-deps.sh --bench
	$(call configure,build-bench,-DCMAKE_BUILD_TYPE=Release -DPLUCKER_NATIVE=ON \
	  -DPLUCKER_BUILD_TESTS=OFF -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-bench --target plucker_bench -j$(JOBS)
	build-bench/plucker_bench --scaling $(BENCH_ARGS)
	$(PYTHON) bench/plot_scaling.py

bench-large:
	@scripts/install-deps.sh --bench
	$(call configure,build-bench,-DCMAKE_BUILD_TYPE=Release -DPLUCKER_NATIVE=ON \
	  -DPLUCKER_BUILD_TESTS=OFF -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-bench --target plucker_bench -j$(JOBS)
	build-bench/plucker_bench --large=$(LARGE_LINKS)

test-asan:
	@scripts/install-deps.sh
	$(call configure,build-asan,-DCMAKE_BUILD_TYPE=Debug -DPLUCKER_SANITIZE=ON \
	  -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_BENCH=OFF)
	$(CMAKE) --build build-asan -j$(JOBS)
	$(CTEST) --test-dir build-asan --output-on-failure -j$(JOBS)

test-native:
	@scripts/install-deps.sh
	$(call configure,build-native,-DCMAKE_BUILD_TYPE=Release -DPLUCKER_NATIVE=ON \
	  -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_BENCH=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-native -j$(JOBS)
	$(CTEST) --test-dir build-native --output-on-failure -j$(JOBS)

test-clang:
	@scripts/install-deps.sh --clang
	$(call configure,build-clang,-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
	  -DPLUCKER_NATIVE=ON -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_BENCH=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-clang -j$(JOBS)
	$(CTEST) --test-dir build-clang --output-on-failure -j$(JOBS)

fuzz:
	@scripts/install-deps.sh --fuzz
	$(call configure,build-fuzz,-DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DPLUCKER_BUILD_FUZZ=ON \
	  -DPLUCKER_BUILD_TESTS=OFF -DPLUCKER_BUILD_PYTHON=OFF \
	  -DPLUCKER_BUILD_BENCH=OFF -DPLUCKER_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-fuzz -j$(JOBS)
	@scripts/run-fuzz.sh build-fuzz/fuzz $(FUZZ_SECONDS)

flops:
	@scripts/install-deps.sh --flops
	$(call configure,build-flops,-DCMAKE_BUILD_TYPE=Release -DPLUCKER_NATIVE=OFF \
	  "-DCMAKE_CXX_FLAGS=$(FLOPS_CXX_FLAGS)" -DPLUCKER_BUILD_FLOPS=ON \
	  -DPLUCKER_BUILD_TESTS=OFF -DPLUCKER_BUILD_PYTHON=OFF -DPLUCKER_BUILD_EXAMPLES=OFF \
	  -DPLUCKER_BUILD_BENCH=OFF)
	$(CMAKE) --build build-flops --target plucker_flops -j$(JOBS)
	$(PYTHON) bench/count_flops.py --driver build-flops/plucker_flops --out build-flops \
	  --doc docs/flops.md $(FLOPS_ARGS)

clean:
	rm -rf build build-bench build-bench-clang build-asan build-native build-clang build-fuzz build-flops build-pip
