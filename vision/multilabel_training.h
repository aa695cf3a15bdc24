// Multi-label training of any classifier of images (lesson 08, section 3). A canvas can hold
// a bag and a coat at once, so this is not a choice of one class out of ten (softmax +
// cross-entropy) but ten independent yes/no questions: one logit per class, each squashed by
// a sigmoid, each with a binary cross-entropy against the multi-hot target, averaged over the
// classes and canvases.
//
// The model is any nn::UnaryModule that maps images [B, 3, S, S] (a CanvasSet's float32
// images) to logits [B, classes] before the sigmoid: CamClassifier (cam_classifier.h), or a
// Vision Transformer with a linear head. train() and eval() are called on it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/linear.h"
#include "nn/module.h"
#include "vision/canvas_set.h"

namespace attend::vision {

struct TrainOptions {
  int epochs = 3;
  Index batch = 16;
  double lr = 5e-3;                // Adam's peak learning rate (cosine decay to lr / 10)
  std::uint64_t shuffle_seed = 0;  // the order of the training canvases
  bool progress = true;            // the progress line on stderr
};

struct EpochRecord {
  int epoch = 0;
  double train_loss = 0;  // mean binary cross-entropy over the epoch's batches
  double validation_loss = 0;
  double validation_map = 0;  // mean average precision over the classes
  double seconds = 0;         // the epoch's training time
};

// Sets the bias b_c of the classifier's last layer, `head` (the nn::Linear whose outputs are
// the logits: CamClassifier's `classifier`), to the log-odds log(p_c / (1 - p_c)) of the share
// p_c of training canvases with class c (add-one smoothed), so that the untrained model
// already predicts each class's frequency and training starts on the features, not the
// priors. Fails when head has no bias or its outputs are not the set's classes.
void initialise_class_priors(nn::Linear& head, const CanvasSet& train);

// Adam on binary_cross_entropy_with_logits(model(images), multi-hot labels), batches of
// options.batch shuffled with options.shuffle_seed, the learning rate falling along half a
// cosine from options.lr to a tenth of it by the last step. After every epoch the model is
// scored on the validation set (in eval mode, without a graph; evaluate_classifier) and
// after_epoch (when given) is called with the epoch's record. The model is left in eval mode.
std::vector<EpochRecord> train_classifier(
    nn::UnaryModule& model, const CanvasSet& train, const CanvasSet& validation,
    const TrainOptions& options, const std::function<void(const EpochRecord&)>& after_epoch = {});

// The name, in `folder`, of the checkpoint of a classifier (`model`: "cnn", say) trained by
// train_classifier on the canvases of `data` with `training`, its input standardised or not.
// Everything its weights depend on is in the name (but the data folder and the thread count,
// which moves float32 sums in the last bits), so a later program that wants the same model
// finds its file, and a model trained otherwise is not taken for it: lesson 08 saves its CNN
// under this name and lesson 13 reads it instead of training the same CNN again.
std::string trained_classifier_file(const std::string& folder, const std::string& model,
                                    const CanvasDataOptions& data, const TrainOptions& training,
                                    bool standardized);

// The logits of every image, float32 [N, classes] (for float32 images), computed `batch`
// images at a time without a graph. Call model.eval() first if the model has dropout. Each
// image's logits are the same for any batch; a larger one only needs more memory (the first
// block of lesson 08's CNN makes 1 MB of activations per canvas).
NDArray predict_logits(nn::UnaryModule& model, const NDArray& images, Index batch = 50);

}  // namespace attend::vision
