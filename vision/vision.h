// vision/: classifying images, what the canvas classifiers of lessons 08, 13 and 14 share.
//
//   canvas_set.h   canvases of 1-3 Fashion-MNIST items as a multi-label data set (which
//                  classes are on each canvas, and where), its three splits, pixel statistics
//   canvas_encoder.h   the CNN of lesson 08: a canvas -> an 8x8 grid of region features
//   cam_classifier.h   the CAM network (Zhou et al. 2016): encoder, average pooling, linear
//   grad_cam.h         Grad-CAM of CamClassifier at one of its encoder blocks
//   multilabel_training.h  training any images -> logits model on multi-hot labels
//   multilabel_metrics.h   average precision, F1 and exact match of a set's logits
#pragma once

#include "vision/cam_classifier.h"
#include "vision/canvas_encoder.h"
#include "vision/canvas_set.h"
#include "vision/grad_cam.h"
#include "vision/multilabel_metrics.h"
#include "vision/multilabel_training.h"
