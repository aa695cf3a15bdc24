// Seeing the training and the attention: include this one header for all of nn/viz.
//
//   progress.h     the progress line of a training loop (epoch, step, loss, speed, ETA)
//   csv_log.h      a CSV file of metrics, one row per epoch
//   image.h        reading, writing and resizing image files ([C, H, W] floats in [0, 1])
//   curves.h       loss and accuracy curves as PNG (gnuplot) + data file
//   heatmap.h      attention alignments, confusion matrices and panels of heads
//   overlay.h      attention over an image (Show, Attend and Tell figures)
//   panels.h       figures of maps over images: rows of panels, boxes, the peak marked
//   gnuplot.h      whether gnuplot is there, and how to turn it off
//   attention_json.h  attention maps as data for the interactive viewer (docs/viewer.md)
#pragma once

#include "nn/viz/attention_json.h"
#include "nn/viz/bitmap_text.h"
#include "nn/viz/colormap.h"
#include "nn/viz/csv_log.h"
#include "nn/viz/curves.h"
#include "nn/viz/gnuplot.h"
#include "nn/viz/heatmap.h"
#include "nn/viz/image.h"
#include "nn/viz/output_file.h"
#include "nn/viz/overlay.h"
#include "nn/viz/panels.h"
#include "nn/viz/progress.h"
