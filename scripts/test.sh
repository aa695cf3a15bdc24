#!/usr/bin/env bash
# The second command of the course (and what CI runs): builds attend and runs the whole
# test suite under CTest, first in the normal Release build, then again built with
# AddressSanitizer + UndefinedBehaviorSanitizer (leak checking on).
#   scripts/test.sh              both runs
#   scripts/test.sh --fast       the Release run only
set -uo pipefail
cd "$(dirname "$0")/.."

# chromium: the attention viewer's browser tests (label viewer, docs/viewer.md) load the page in
# it; the first command (scripts/setup.sh) does not install it.
scripts/install_deps.sh chromium || exit 1
jobs=$(nproc)
status=0

ctest_extra=()  # extra ctest arguments of the next run_suite
run_suite() {  # run_suite <build dir> <cmake options...>
  local dir=$1
  shift
  echo "=== $dir: configure and build =================================================="
  cmake -S . -B "$dir" "$@" >/dev/null || return 1
  cmake --build "$dir" -j "$jobs" || return 1
  echo "=== $dir: ctest ================================================================="
  ctest --test-dir "$dir" --no-tests=error --output-on-failure -j "$jobs" "${ctest_extra[@]}"
}

# Both builds are unity builds (ATTEND_UNITY_BUILD: the libraries, lessons and tests compile
# a few files at a time); the lessons and tests also start from a precompiled attend.h
# (ATTEND_PCH, on by default).
run_suite build -DCMAKE_BUILD_TYPE=Release -DATTEND_UNITY_BUILD=ON || status=1
if [ "${1:-}" != "--fast" ]; then
  # malloc_context_size: the allocation and free stacks a report prints are 8 frames deep
  # instead of 30; recording them on every malloc took a quarter of the time of the
  # allocation-heavy tests (a whole-model gradcheck: 35 -> 26 CPU-seconds, measured).
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=8
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The benchmarks are timings, not tests: the sanitizer build leaves them out. The browser
  # tests test the page in chromium, not C++ (the viewer's writer has its unit tests in both
  # runs): the Release run is enough.
  ctest_extra=(-LE viewer)
  run_suite build-sanitize -DCMAKE_BUILD_TYPE=Debug -DATTEND_SANITIZE=ON -DATTEND_BUILD_BENCH=OFF \
    -DATTEND_UNITY_BUILD=ON || status=1
fi
exit $status
