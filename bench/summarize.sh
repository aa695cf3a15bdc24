#!/bin/sh
# summarize.sh: turns the JSON output of bench_gemm and/or bench_tiny_ops into two compact
# tables: GFLOP/s per shape with the ratios attend / OpenBLAS and attend / triple loops, and
# microseconds per tiny autograd op. Needs only a POSIX shell and awk.
#
#   ./build/bin/bench_gemm --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
#       --benchmark_out=gemm.json --benchmark_out_format=json
#   bench/summarize.sh gemm.json [tiny_ops.json ...]      (or: ... --benchmark_format=json | bench/summarize.sh)
#
# Each number is the "median" aggregate when the run had repetitions, otherwise the median
# of the runs present (one run: its value).
exec awk '
function strip_value(line) {
  sub(/^[^:]*: */, "", line)
  sub(/,[ \t\r]*$/, "", line)
  gsub(/"/, "", line)
  return line
}
function remember(base, counter, v) {
  if (v == "") return
  if (rec_type == "aggregate") {
    if (rec_aggregate == "median") median_of[base, counter] = v
  } else {
    n = ++runs[base, counter]
    run_value[base, counter, n] = v + 0
  }
}
function flush(   base) {
  if (rec_run == "") return
  base = rec_run
  sub(/\/(real_time|manual_time)$/, "", base)
  if (!(base in seen)) { seen[base] = 1; order[++bases] = base }
  remember(base, "GFLOP/s", rec_gflops)
  remember(base, "us/op", rec_us)
  remember(base, "fwd_us/op", rec_fwd)
  remember(base, "bwd_us/op", rec_bwd)
  remember(base, "free_us/op", rec_free)
  rec_run = rec_type = rec_aggregate = rec_gflops = rec_us = rec_fwd = rec_bwd = rec_free = ""
}
# The median aggregate if there is one, else the median of the runs, else "".
function get(base, counter,   n, i, j, t, v) {
  if ((base, counter) in median_of) return median_of[base, counter]
  n = runs[base, counter] + 0
  if (n == 0) return ""
  for (i = 1; i <= n; i++) v[i] = run_value[base, counter, i]
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function cell(v, format) { return v == "" ? sprintf("%" length(sprintf(format, 0)) "s", "-") : sprintf(format, v) }
function ratio(x, y) { return (x == "" || y == "" || y == 0) ? "" : x / y }

FNR == 1 { flush(); in_benchmarks = 0 }
/"benchmarks": *\[/ { in_benchmarks = 1; next }
/^ *"[^"]*": / {
  key = $0
  sub(/^ *"/, "", key)
  sub(/".*/, "", key)
  v = strip_value($0)
  if (!in_benchmarks) {
    if (key == "date" || key == "openblas_core" || key == "OPENBLAS_CORETYPE" ||
        key == "attend_threads" || key == "chain_length")
      context[key] = v
    next
  }
  if (key == "name") flush()
  else if (key == "run_name") rec_run = v
  else if (key == "run_type") rec_type = v
  else if (key == "aggregate_name") rec_aggregate = v
  else if (key == "GFLOP/s") rec_gflops = v
  else if (key == "us/op") rec_us = v
  else if (key == "fwd_us/op") rec_fwd = v
  else if (key == "bwd_us/op") rec_bwd = v
  else if (key == "free_us/op") rec_free = v
}
END {
  flush()
  line = ""
  if ("date" in context) line = line "date " context["date"] "  "
  if ("attend_threads" in context) line = line "threads " context["attend_threads"] "  "
  if ("openblas_core" in context) line = line "OpenBLAS core " context["openblas_core"] "  "
  if ("OPENBLAS_CORETYPE" in context) line = line "OPENBLAS_CORETYPE " context["OPENBLAS_CORETYPE"]
  if (line != "") print line

  shapes = 0
  for (b = 1; b <= bases; b++) {
    split(order[b], part, "/")
    if (part[1] == "gemm" && !(part[2] in shape_seen)) { shape_seen[part[2]] = 1; shape[++shapes] = part[2] }
  }
  if (shapes > 0) {
    print ""
    print "GEMM float32, GFLOP/s (higher is better); ratios > 1 mean attend_gemm is faster"
    printf "%-16s %8s %8s %8s %8s %8s %9s %9s %9s\n", "MxKxN", "attend", "matmul", "OpenBLAS",
           "ikj", "ijk", "att/BLAS", "att/ikj", "att/ijk"
    for (s = 1; s <= shapes; s++) {
      p = "gemm/" shape[s] "/"
      a = get(p "attend_gemm", "GFLOP/s"); m = get(p "attend_matmul", "GFLOP/s")
      o = get(p "openblas", "GFLOP/s"); k = get(p "loop_ikj", "GFLOP/s"); j = get(p "loop_ijk", "GFLOP/s")
      printf "%-16s %s %s %s %s %s %s %s %s\n", shape[s], cell(a, "%8.1f"), cell(m, "%8.1f"),
             cell(o, "%8.1f"), cell(k, "%8.1f"), cell(j, "%8.1f"), cell(ratio(a, o), "%9.2f"),
             cell(ratio(a, k), "%9.1f"), cell(ratio(a, j), "%9.1f")
    }
  }

  chains = 0
  for (b = 1; b <= bases; b++) if (order[b] ~ /^tiny_ops\//) chain[++chains] = order[b]
  if (chains > 0) {
    print ""
    printf "Tiny autograd ops on 1-element tensors, chains of %s ops, microseconds per op\n",
           ("chain_length" in context) ? context["chain_length"] : "?"
    print "(lower is better; target: us/op <= 2 for fwd_bwd)"
    printf "%-30s %8s %8s %8s %8s\n", "chain", "us/op", "fwd", "bwd", "free"
    for (c = 1; c <= chains; c++) {
      name = chain[c]; sub(/^tiny_ops\//, "", name)
      printf "%-30s %s %s %s %s\n", name, cell(get(chain[c], "us/op"), "%8.3f"),
             cell(get(chain[c], "fwd_us/op"), "%8.3f"), cell(get(chain[c], "bwd_us/op"), "%8.3f"),
             cell(get(chain[c], "free_us/op"), "%8.3f")
    }
  }
}
' "$@"
