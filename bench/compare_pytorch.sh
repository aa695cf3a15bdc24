#!/usr/bin/env bash
# Times attend and PyTorch on the same reference workloads, alternating them so that both
# see the same machine load, and prints the ratio attend / PyTorch of the median step
# times (below 1: attend is faster).
#
#   bench/compare_pytorch.sh [build dir] [rounds] [workload ...]
#
# Defaults: build, 3 rounds, every workload (bahdanau sat transformer); e.g.
# `bench/compare_pytorch.sh build 3 transformer` times REF-TRANSFORMER alone.
# Needs the bench programs built (cmake --build build --target bench_ref_bahdanau
# bench_ref_sat bench_ref_transformer) and Debian's PyTorch (apt-get install python3-torch; run as
# /usr/bin/python3). PyTorch is run "tuned" as in the course's reference numbers
# (bench/torch_env.sh says how); the core PyTorch ran on is printed at the end.
set -uo pipefail
build=${1:-build}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(bahdanau sat transformer)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/torch_env.sh
. "$here/torch_env.sh"  # torch_env, core

median_of() {  # the step_ms_median of a JSON line
  grep '^JSON' | sed -E 's/.*"step_ms_median": ([0-9.]+).*/\1/'
}

printf "%-16s %7s %12s %12s %7s\n" workload threads "attend ms" "pytorch ms" ratio
for workload in "${workloads[@]}"; do
  [ -x "$build/bin/bench_ref_$workload" ] || { echo "no $build/bin/bench_ref_$workload: build it first" >&2; exit 1; }
  name=$(echo "REF-$workload" | tr a-z A-Z)
  for threads in 1 2; do
    attend_times=() torch_times=()
    for ((r = 0; r < rounds; r++)); do
      attend_times+=("$("$build/bin/bench_ref_$workload" --threads "$threads" | median_of)")
      torch_times+=("$("${torch_env[@]}" /usr/bin/python3 "$here/pytorch/ref_$workload.py" --threads "$threads" | median_of)")
    done
    # The median over rounds of each engine's median step time.
    a=$(printf "%s\n" "${attend_times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    t=$(printf "%s\n" "${torch_times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    printf "%-16s %7s %12.2f %12.2f %7.2f\n" "$name" "$threads" "$a" "$t" "$(awk -v a="$a" -v t="$t" 'BEGIN {print a / t}')"
  done
done
echo "(median over $rounds alternating rounds of each engine's median of 50 steps; $(uptime | sed 's/.*load/load/'))"
echo "(PyTorch's OpenBLAS core: ${core:-unknown})"
