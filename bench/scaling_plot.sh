#!/usr/bin/env bash
# Plots one data file of bench/scaling.sh with gnuplot (also usable alone, to redraw a plot
# from its committed data):
#
#   bench/scaling_plot.sh scaling_<plot>.dat scaling_<plot>.png NAME length|batch [threads [cpu|wall [subtitle]]]
#
# Log-log axes: step time of attend and of PyTorch against x, with grey reference lines of
# slope 1 (cost proportional to x) and, for lengths, slope 2 (to x squared) through attend's
# last point; the ratio attend / PyTorch on the right-hand axis (linear).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 data.dat plot.png NAME length|batch [threads [cpu|wall [subtitle]]]" >&2; exit 1; }
dat=$1 png=$2 name=$3 axis=$4 threads=${5:-1} measure=${6:-cpu} subtitle=${7:-}
[ -r "$dat" ] || { echo "scaling_plot.sh: cannot read $dat" >&2; exit 1; }

case "$name:$axis" in
  REF-BAHDANAU:length) xlabel="source length L (target length L/2; batch 64)" ;;
  REF-BAHDANAU:batch) xlabel="batch size (source length 25, target length 12)" ;;
  REF-TRANSFORMER:length) xlabel="sequence length (batch 32)" ;;
  REF-TRANSFORMER:batch) xlabel="batch size (sequence length 32)" ;;
  *) xlabel=$axis ;;
esac
# The last data row: x and attend's time anchor the reference lines.
read -r x1 a1 _ < <(grep -v '^#' "$dat" | tail -n 1)
read -r xmin xmax ymin ymax < <(grep -v '^#' "$dat" | awk 'NR == 1 {x0 = $1; lo = $2} {x1 = $1;
  for (i = 2; i <= 3; ++i) { if ($i < lo) lo = $i; if ($i > hi) hi = $i } }
  END {print x0 / 1.12, x1 * 1.12, lo / 1.6, hi * 1.6}')
ratio_max=$(grep -v '^#' "$dat" | awk '$4 > m {m = $4} END {print (m > 1.2 ? m * 1.1 : 1.3)}')
square=""
[ "$axis" = length ] && square=", $a1 * (x / $x1)**2 with lines dt 3 lw 1.5 lc rgb '#888888' title 'slope 2 (x²)'"

gnuplot <<EOF
set terminal pngcairo size 900,600 font "DejaVu Sans,11"
set output "$png"
set title "$name: one training step against $axis ($threads thread$([ "$threads" = 1 ] || echo s), attend and PyTorch alternating)${subtitle:+\\n$subtitle}"
set logscale x 2
set logscale y 10
set xlabel "$xlabel"
set ylabel "$([ "$measure" = cpu ] && echo "CPU time" || echo "wall-clock time") of a step, ms (log)"
set y2label "attend / PyTorch (linear)"
set xtics ($(grep -v '^#' "$dat" | awk '{printf "%s%s", (NR > 1 ? ", " : ""), $1}'))
set y2range [0:$ratio_max]
set y2tics 0.2 nomirror
set ytics nomirror ($(awk -v lo="$ymin" -v hi="$ymax" 'BEGIN {
  for (p = 0.001; p < hi; p *= 10) for (i = 1; i <= 3; ++i) {
    v = p * (i == 1 ? 1 : i == 2 ? 2 : 5); if (v >= lo && v <= hi) { printf "%s%g", sep, v; sep = ", " } } }'))
set mytics 10
set grid xtics ytics
set key below maxrows 2
set xrange [$xmin:$xmax]
set yrange [$ymin:$ymax]
plot "$dat" using 1:2 with linespoints pt 7 ps 1.2 lw 2 lc rgb '#1f77b4' title 'attend', \
     "$dat" using 1:3 with linespoints pt 5 ps 1.2 lw 2 lc rgb '#d62728' title 'PyTorch', \
     "$dat" using 1:4 axes x1y2 with linespoints pt 6 dt 2 lw 1 lc rgb '#2ca02c' title 'attend / PyTorch (right axis)', \
     1 axes x1y2 with lines lw 0.5 lc rgb '#2ca02c' notitle, \
     $a1 * (x / $x1) with lines dt 2 lw 1.5 lc rgb '#aaaaaa' title 'slope 1 (x)'$square
EOF
