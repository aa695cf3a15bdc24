#!/bin/sh
# Runs check_json.js (beside this script) with Node; exits 77, which CTest reports as
# skipped, when node is not installed.
command -v node > /dev/null || { echo "SKIPPED: node is not installed"; exit 77; }
exec node "$(dirname "$0")/check_json.js" "$@"
