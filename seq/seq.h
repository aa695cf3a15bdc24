// seq/: sequence models and decoding, what every encoder-decoder lesson shares.
//
//   batch.h             padded batches with masks, batches of similar lengths
//   model.h             the encoder-decoder interface (encode once, decode step by step)
//   teacher_forcing.h   teacher forcing, the sequence loss, a whole model's gradcheck
//   decoding.h          greedy decoding and beam search
//   training.h          the training loop and held-out scores
//   training_report.h   a training run in a transcript and a plot
//   bleu.h              corpus BLEU
//   date_task.h         the date task as token ids
//   date_training.h     training on dates: length-sorted batches, early stopping on exact match
//   date_evaluation.h   scoring on dates: exact match, by length and format, heatmap labels
//   rnnsearch.h         RNNsearch (Bahdanau et al. 2015)
//   transformer_seq2seq.h  the encoder-decoder Transformer (Vaswani et al. 2017)
#pragma once

#include "seq/batch.h"
#include "seq/bleu.h"
#include "seq/date_evaluation.h"
#include "seq/date_task.h"
#include "seq/date_training.h"
#include "seq/decoding.h"
#include "seq/model.h"
#include "seq/rnnsearch.h"
#include "seq/teacher_forcing.h"
#include "seq/training.h"
#include "seq/training_report.h"
#include "seq/transformer_seq2seq.h"
