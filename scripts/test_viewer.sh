#!/usr/bin/env bash
# The attention viewer's browser tests (docs/viewer.md): installs Debian's chromium when it is
# missing (as scripts/test.sh does; scripts/setup.sh does not), builds what they load and runs
# `ctest -L viewer` alone.
#   scripts/test_viewer.sh [build dir]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}

command -v chromium >/dev/null 2>&1 || scripts/install_deps.sh chromium
cmake -S . -B "$dir" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target make_viewer_data 11_transformer
ctest --test-dir "$dir" -L viewer --output-on-failure -j "$(nproc)"
