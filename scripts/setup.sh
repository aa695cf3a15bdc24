#!/usr/bin/env bash
# The first command of the course: installs what is missing, builds attend, and runs
# lesson 01. Safe to run again: it only redoes what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The build dependencies, plus the real data the lessons train on (from Debian's packages):
# Fashion-MNIST (31 MB) and the Ding German-English dictionary's example sentences (21 MB).
# Then Jane Austen's six novels (1.6 MB, fetched with apt-get download into data/).
# The tests never need them: they use generated data.
scripts/install_deps.sh dataset-fashion-mnist dict-freedict-deu-eng
# Jane Austen's novels for lesson 12 (1.6 MB, into data/austen; no root needed).
scripts/install_book.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"

echo
echo "=== Running lesson 01 ==========================================================="
./build/bin/01_tensors
echo
echo "attend is built. Every lesson is a program in build/bin, named like its folder:"
for lesson in build/bin/[0-9][0-9]_*; do echo "  ./$lesson"; done
echo "Add --help to any of them to see its flags, and read the chapter in docs/."
echo "Run the whole test suite with: scripts/test.sh"
