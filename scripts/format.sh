#!/usr/bin/env bash
# Applies the project's one style (.clang-format) to every C++ file.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.h' '*.cpp' | xargs clang-format -i
