// The public interface of attend: include this one header.
//
//   tensor/    NDArray, the data, and the kernels that compute with it
//   autograd/  Tensor, the graph, backward(), gradcheck
//   nn/        modules, losses, optimizers, checkpoints, data, plots
//   app/       what a program needs: flags declared once, its transcript, a clock
//   interpret/ reading attention maps: where a model looked (CAM, Grad-CAM, attention rollout
//              and flow, gradient-weighted relevance, saliency), scored against the truth
//              (source spans, object boxes, the pointing game) and against the model itself
//              (deletion and insertion curves, the sanity checks' rank correlation)
//   seq/       sequence models and decoding: encoder-decoders, training, beam search, BLEU;
//              seq/captioning/, the canvas captioner of lessons 09 and 10 (Show, Attend and Tell)
//   vision/    classifying images: canvases as a multi-label data set, the CNN of lesson 08 and
//              its Grad-CAM, the training loop and metrics of any images -> logits model
#pragma once

#include "tensor/allocator.h"
#include "tensor/dtype.h"
#include "tensor/elementwise.h"
#include "tensor/error.h"
#include "tensor/index_ops.h"
#include "tensor/matmul.h"
#include "tensor/ndarray.h"
#include "tensor/parallel.h"
#include "tensor/print.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/shape.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

#include "autograd/gradcheck.h"
#include "autograd/graphviz.h"
#include "autograd/ops.h"
#include "autograd/saved_array.h"
#include "autograd/tensor.h"

#include "nn/activation.h"
#include "nn/additive_score.h"
#include "nn/attention.h"
#include "nn/attention_mask.h"
#include "nn/conv.h"
#include "nn/embedding.h"
#include "nn/fused_attention.h"
#include "nn/gru.h"
#include "nn/gru_gates.h"
#include "nn/init.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/lstm.h"
#include "nn/module.h"
#include "nn/multihead_attention.h"
#include "nn/pool.h"
#include "nn/positional_encoding.h"
#include "nn/scaled_dot_product_attention.h"
#include "nn/sequential.h"
#include "nn/transformer_layer.h"
#include "nn/vision_transformer.h"

#include "nn/data/canvas.h"
#include "nn/data/canvas_cue.h"
#include "nn/data/data_loader.h"
#include "nn/data/dataset.h"
#include "nn/data/dates.h"
#include "nn/data/fashion_mnist.h"
#include "nn/data/synthetic_images.h"
#include "nn/data/text_corpus.h"
#include "nn/data/translation.h"
#include "nn/data/vocabulary.h"
#include "nn/io/checkpoint.h"
#include "nn/optim/optim.h"
#include "nn/viz/viz.h"

#include "app/clock.h"
#include "app/flags.h"
#include "app/transcript.h"

#include "interpret/interpret.h"

#include "seq/captioning/captioning.h"
#include "seq/seq.h"

#include "vision/vision.h"
