#!/usr/bin/env bash
# How cost grows with the work (issue 14): times attend and PyTorch on REF-BAHDANAU and
# REF-TRANSFORMER at sequence lengths 16-256 (batch at its default) and batch sizes 8-128
# (length at its default), alternating the two engines at every point so that both see the
# same machine load, and plots step time against size on log-log axes.
#
#   bench/scaling.sh [build dir] [rounds] [threads] [plot ...]
#
# Defaults: build, 3 rounds, 1 thread, every plot: bahdanau_length bahdanau_batch
# transformer_length transformer_batch. For each plot it writes, beside this script,
# scaling_<plot>.dat (columns: x, attend ms, PyTorch ms, attend / PyTorch, then attend and
# PyTorch wall-clock ms; each time the median over the rounds of the engine's median step) and,
# with gnuplot, scaling_<plot>.png. OUT=folder writes them elsewhere.
#
# The time plotted: with one thread, the CPU time of a step (the whole process's, in both
# engines), which the time other programs hold the core does not inflate: on a busy machine a
# step's wall-clock time can be several times its CPU time. With more threads, the wall-clock
# time (CPU time would add up the threads). TIME=wall or TIME=cpu chooses.
#
# PyTorch runs with glibc told to keep freed memory (bench/torch_env.sh); attend as it is,
# with its own cache of freed blocks (tensor/allocator.cpp, up to 256 MB). SAME_MALLOC=1 runs
# attend with PyTorch's glibc settings too and names the files scaling_<plot>_same_malloc.*.
# About 10 CPU-minutes; 15-25 minutes of wall-clock time on 2 busy cores (AMD EPYC, Zen 5).
#
# The lengths: REF-TRANSFORMER's sequence length (--length; 32 by default); REF-BAHDANAU's
# source length, with the target length at half of it (--source-length L --target-length
# L/2), as in its reference shape (25 and 12), so that the attention scores, target steps x
# source positions, grow as the square of L like the Transformer's. Needs the bench programs
# built (cmake --build build --target bench_ref_bahdanau bench_ref_transformer), Debian's
# PyTorch (python3-torch, run as /usr/bin/python3; bench/torch_env.sh sets its environment)
# and gnuplot (without it the .dat files are written and the plots skipped).
set -uo pipefail
build=${1:-build}
rounds=${2:-3}
threads=${3:-1}
shift $(($# < 3 ? $# : 3))
plots=("$@")
[ ${#plots[@]} -gt 0 ] || plots=(bahdanau_length bahdanau_batch transformer_length transformer_batch)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here}

fail() { echo "scaling.sh: $*" >&2; exit 1; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || fail "rounds must be a positive integer, not '$rounds'"
[[ $threads =~ ^[1-9][0-9]*$ ]] || fail "threads must be a positive integer, not '$threads'"
for plot in "${plots[@]}"; do
  case "$plot" in
    bahdanau_length | bahdanau_batch | transformer_length | transformer_batch) ;;
    *) fail "unknown plot '$plot' (bahdanau_length bahdanau_batch transformer_length transformer_batch)" ;;
  esac
  [ -x "$build/bin/bench_ref_${plot%_*}" ] || fail "no $build/bin/bench_ref_${plot%_*}: build it first"
done
mkdir -p "$out" || fail "cannot create $out"
suffix="" attend_env=(env)
if [ "${SAME_MALLOC:-0}" = 1 ]; then suffix=_same_malloc; fi
measure=${TIME:-$([ "$threads" = 1 ] && echo cpu || echo wall)}
case "$measure" in
  cpu) key=step_cpu_ms_median ;;
  wall) key=step_ms_median ;;
  *) fail "TIME must be cpu or wall, not '$measure'" ;;
esac

# shellcheck source=bench/torch_env.sh
. "$here/torch_env.sh"  # torch_env, core, malloc_env
[ -z "$suffix" ] || attend_env+=("${malloc_env[@]}")
attend_note="as it is"
[ -z "$suffix" ] || attend_note="${attend_env[*]:1} (PyTorch's glibc settings)"

machine=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
family=$(lscpu | sed -n 's/^CPU family: *//p' | head -n 1)
load() { uptime | sed 's/.*load average: //'; }
echo "machine: $machine (CPU family $family), $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load average at the start: $(load)"
echo "threads: $threads for both engines; time: $measure; PyTorch's OpenBLAS core: ${core:-unknown}"
echo "attend's environment: $attend_note"

value_of() {  # key: its number in a JSON line
  grep '^JSON' | sed -E "s/.*\"$1\": ([0-9.]+).*/\1/"
}
middle() {  # the median of numbers, one per argument
  printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

# Timed and warm-up steps at size x: fewer where a step is long, so that a full run stays
# near 15 minutes (a point's median is then over 2-20 steps, times the rounds).
steps_for() {  # axis x -> "steps warmup"
  case "$1:$2" in
    length:16 | length:32 | batch:8 | batch:16) echo "20 3" ;;
    length:64 | batch:32 | batch:64) echo "10 2" ;;
    length:128 | batch:128) echo "5 1" ;;
    *) echo "2 1" ;;
  esac
}

# The shape flags of a workload at size x on an axis (the same for both engines).
shape_flags() {  # workload axis x
  case "$1:$2" in
    bahdanau:length) echo "--source-length $3 --target-length $(($3 / 2))" ;;
    transformer:length) echo "--length $3" ;;
    *:batch) echo "--batch $3" ;;
  esac
}

for plot in "${plots[@]}"; do
  workload=${plot%_*} axis=${plot#*_}
  dat="$out/scaling_$plot$suffix.dat"
  name=$(echo "REF-$workload" | tr '[:lower:]' '[:upper:]')
  {
    echo "# $name, step time against $axis: attend and PyTorch alternating, $rounds rounds, $threads thread(s)"
    echo "# columns 2-4: $measure time of a step (the ${key}s); 5-6: wall-clock (step_ms_median)"
    echo "# machine: $machine (CPU family $family); PyTorch's OpenBLAS core: ${core:-unknown}"
    echo "# attend's environment: $attend_note"
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average at the start: $(load)"
    echo "# shape flags, e.g. at x = 64: $(shape_flags "$workload" "$axis" 64) (the others at their defaults)"
    echo "# x  attend_ms  pytorch_ms  attend/pytorch  attend_wall_ms  pytorch_wall_ms  (medians over rounds)"
  } > "$dat"
  for x in 8 16 32 64 128 256; do
    { [ "$axis" = length ] && [ "$x" -lt 16 ]; } && continue
    { [ "$axis" = batch ] && [ "$x" -gt 128 ]; } && continue
    read -r steps warmup <<< "$(steps_for "$axis" "$x")"
    read -r -a flags <<< "$(shape_flags "$workload" "$axis" "$x")"
    flags+=(--threads "$threads" --steps "$steps" --warmup "$warmup")
    attend_times=() torch_times=() attend_walls=() torch_walls=()
    for ((r = 0; r < rounds; r++)); do
      a=$("${attend_env[@]}" "$build/bin/bench_ref_$workload" "${flags[@]}" | grep '^JSON')
      t=$("${torch_env[@]}" /usr/bin/python3 "$here/pytorch/ref_$workload.py" "${flags[@]}" | grep '^JSON')
      { [ -n "$a" ] && [ -n "$t" ]; } || fail "$name ${flags[*]}: a run printed no time"
      attend_times+=("$(value_of "$key" <<< "$a")") torch_times+=("$(value_of "$key" <<< "$t")")
      attend_walls+=("$(value_of step_ms_median <<< "$a")")
      torch_walls+=("$(value_of step_ms_median <<< "$t")")
    done
    a=$(middle "${attend_times[@]}") t=$(middle "${torch_times[@]}")
    aw=$(middle "${attend_walls[@]}") tw=$(middle "${torch_walls[@]}")
    row=$(awk -v x="$x" -v a="$a" -v t="$t" -v aw="$aw" -v tw="$tw" \
      'BEGIN {printf "%4d %10.3f %10.3f %7.3f %10.3f %10.3f", x, a, t, a / t, aw, tw}')
    echo "$row" >> "$dat"
    echo "$name $axis $row   (attend ${attend_times[*]}; pytorch ${torch_times[*]}; $steps steps; load $(load))"
  done
  echo "# load average at the end: $(load)" >> "$dat"
  if command -v gnuplot > /dev/null; then
    "$here/scaling_plot.sh" "$dat" "$out/scaling_$plot$suffix.png" "$name" "$axis" "$threads" "$measure" \
      "${suffix:+attend run with the glibc settings of PyTorch}" ||
      fail "gnuplot failed on $dat"
  else
    echo "(no gnuplot: $dat written, no plot)"
  fi
done
echo "load average at the end: $(load)"
