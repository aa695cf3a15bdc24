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
# /usr/bin/python3). PyTorch is run "tuned" as in the course's reference numbers: its GEMM
# library may not use threads of its own (OPENBLAS_NUM_THREADS=1: torch's intra-op threads
# are the only ones), the OpenBLAS core is detected rather than forced, and glibc keeps
# freed memory instead of returning it to the system after every step. One exception to
# "detected": OpenBLAS 0.3.21 does not know Intel's Sapphire/Emerald Rapids and falls back to
# its SSE3 kernels (Core: Prescott, a fifth of its AVX-512 rate); on a CPU with AVX-512 where
# it detects a core without AVX-512, the script names its newest AVX-512 kernels
# (OPENBLAS_CORETYPE=Cooperlake) so that the ratio is against a PyTorch at full speed. The
# core PyTorch ran on is printed at the end.
set -uo pipefail
build=${1:-build}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(bahdanau sat transformer)
here=$(cd "$(dirname "$0")" && pwd)
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1
           MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=17179869184)

openblas_core() {  # the core OpenBLAS picks under PyTorch, with the given environment
  "$@" OPENBLAS_VERBOSE=2 /usr/bin/python3 -c 'import torch; torch.ones(2, 2) @ torch.ones(2, 2)' 2>&1 |
    sed -n 's/^Core: //p' | tail -n 1
}
core=$(openblas_core "${torch_env[@]}")
case "$core" in
  SkylakeX | Cooperlake | SapphireRapids | "") ;;
  *) if grep -qw avx512f /proc/cpuinfo; then
       torch_env+=(OPENBLAS_CORETYPE=Cooperlake)
       core="Cooperlake (set by the script: OpenBLAS detected $core on this AVX-512 CPU)"
     fi ;;
esac

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
