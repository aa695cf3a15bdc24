// (b) Training with attention as a signal. One loop trains every model of the lesson; only the
// weights of the two extra losses differ (GAIN, Li et al. 2018; interpret/guided_attention.h
// has the equations):
//
//   baseline   L = L_cl                        lesson 08's multi-label loss
//   GAIN       L = L_cl + alpha L_am           alpha = 1
//   GAIN_ext   L = L_cl + alpha L_am + w L_e   w = 10, L_e on the few canvases with boxes
//
// The class map A^c is computed inside the graph from the same forward pass as the logits:
// for this model's GAP + linear head, Grad-CAM on the last grid is ReLU(CAM) / Z, and CAM is
// the head's weights applied at every cell. So L_am's gradient reaches the weights through
// the soft mask and the map (the part that teaches where to look) as well as through the
// second forward pass on the masked canvas (the part that teaches what to look for).
#include <chrono>
#include <sstream>

#include "lesson.h"

namespace attend::lesson14 {
namespace {

// The learning rate falls along half a cosine to this share of its peak by the last step.
constexpr double kFinalLrShare = 0.1;

NDArray gather_rows(const NDArray& array, const std::vector<Index>& rows) {
  std::vector<std::int64_t> ids(rows.begin(), rows.end());
  return index_select(array, 0, NDArray::from_vector(ids, {static_cast<Index>(ids.size())}));
}

Tensor select_rows(const Tensor& x, const std::vector<std::int64_t>& rows) {
  return index_select(x, 0, Tensor(NDArray::from_vector(rows, {static_cast<Index>(rows.size())})));
}

// A^c for each pair: CAM from the batch's features (this forward pass's, so that it stays in
// the graph), scaled to a peak of 1 (Grad-CAM of the last grid), upsampled to the pixels.
Tensor pair_maps(CamClassifier& model, const Tensor& features, const ClassPairs& pairs,
                 Index side) {
  return interpret::upsample_maps(
      interpret::scale_maps(interpret::class_activation_maps(select_rows(features, pairs.canvas),
                                                             model.classifier.weight, pairs.label)),
      side);
}

// L_am: each pair's canvas with its class's map softly erased, I* = I - T(A) . I, and the
// sigmoid of that class's logit on it, averaged.
Tensor mining_loss(CamClassifier& model, const Tensor& images, const Tensor& features,
                   const ClassPairs& pairs, const GuidedOptions& options) {
  const Tensor maps = pair_maps(model, features, pairs, images.size(2));
  const Tensor masked = interpret::soft_erase(select_rows(images, pairs.canvas),
                                              interpret::soft_mask(maps, options.gain));
  const Tensor logits = model.forward(masked);
  // s^c(I*^c): each row's logit of its own class.
  const std::vector<std::int64_t> labels(pairs.label.begin(), pairs.label.end());
  const Tensor own(one_hot(NDArray::from_vector(labels, {static_cast<Index>(labels.size())}),
                           model.classes(), logits.dtype()));
  return interpret::attention_mining_loss(sum(logits * own, 1));
}

// L_e: every class of every boxed canvas of the batch, its map against the mask of its boxes
// (1 inside, 0 outside); undefined when the batch has no boxed canvas. (Only maps, no second
// forward pass: all the classes cost little.)
Tensor extra_loss(CamClassifier& model, const Tensor& features, const NDArray& labels,
                  const std::vector<Index>& rows, const CueSet& train,
                  const std::vector<bool>& boxed, Index side) {
  const ClassPairs every = class_pairs(labels);
  ClassPairs chosen;
  std::vector<NDArray> masks;
  for (std::size_t p = 0; p < every.canvas.size(); ++p) {
    const auto canvas = static_cast<std::size_t>(rows[static_cast<std::size_t>(every.canvas[p])]);
    if (!boxed[canvas]) continue;
    chosen.canvas.push_back(every.canvas[p]);
    chosen.label.push_back(every.label[p]);
    masks.push_back(
        interpret::box_mask(boxes_of_class(train.set.objects[canvas], every.label[p]), side));
  }
  if (chosen.canvas.empty()) return {};
  const Tensor maps = pair_maps(model, features, chosen, side);
  return interpret::attention_extra_loss(maps, Tensor(stack(masks, 0).to(maps.dtype())));
}

}  // namespace

Tensor GuidedLosses::total(const GuidedOptions& options) const {
  Tensor loss = classification;
  if (mining.defined()) loss = loss + options.mining_weight * mining;
  if (extra.defined()) loss = loss + options.extra_weight * extra;
  return loss;
}

ClassPairs class_pairs(const NDArray& labels, Generator* gen) {
  if (labels.ndim() != 2) fail("class_pairs: expects labels [B, classes], got {}", labels.shape());
  ClassPairs pairs;
  const NDArray l = labels.to(kFloat32);
  const float* v = l.data<float>();
  for (Index b = 0; b < labels.size(0); ++b) {
    std::vector<Index> present;
    for (Index c = 0; c < labels.size(1); ++c)
      if (v[b * labels.size(1) + c] > 0) present.push_back(c);
    if (gen && !present.empty())
      present = {
          present[static_cast<std::size_t>(gen->randint(static_cast<Index>(present.size())))]};
    for (Index c : present) {
      pairs.canvas.push_back(b);
      pairs.label.push_back(c);
    }
  }
  return pairs;
}

GuidedLosses guided_losses(CamClassifier& model, const CueSet& train,
                           const std::vector<bool>& boxed, const std::vector<Index>& rows,
                           const GuidedOptions& options, Generator& gen) {
  if (boxed.size() != static_cast<std::size_t>(train.set.size()))
    fail("guided_losses: {} boxed flags for {} training canvases", boxed.size(), train.set.size());
  const Tensor images(gather_rows(train.set.images, rows));
  const NDArray labels = gather_rows(train.set.labels, rows);
  const Tensor features = model.encoder(images);
  GuidedLosses losses;
  const Tensor logits = model.classify(features);
  losses.classification =
      nn::binary_cross_entropy_with_logits(logits, Tensor(labels.to(logits.dtype())));
  if (options.mining_weight != 0) {
    const ClassPairs pairs = class_pairs(labels, options.all_classes ? nullptr : &gen);
    if (!pairs.canvas.empty()) losses.mining = mining_loss(model, images, features, pairs, options);
  }
  if (options.extra_weight != 0)
    losses.extra = extra_loss(model, features, labels, rows, train, boxed, images.size(2));
  return losses;
}

void prepare_classifier(CamClassifier& model, const CanvasSet& train) {
  const vision::PixelStatistics s = vision::pixel_statistics(train.images);
  model.encoder.set_input_statistics(s.mean, s.std);
  vision::initialise_class_priors(model.classifier, train);
}

std::vector<GuidedRecord> train_guided(
    CamClassifier& model, const CueSet& train, const std::vector<bool>& boxed,
    const CueSet& validation, const GuidedOptions& options,
    const std::function<void(const GuidedRecord&)>& after_epoch) {
  if (options.epochs < 1 || options.batch < 1 || !(options.lr > 0))
    fail("train_guided: needs epochs >= 1, batch >= 1 and lr > 0, got {}, {} and {}",
         options.epochs, options.batch, options.lr);
  // The loader deals out canvas numbers; guided_losses fetches the canvases and their boxes.
  std::vector<std::int64_t> ids(static_cast<std::size_t>(train.set.size()));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  const NDArray numbers = NDArray::from_vector(ids, {train.set.size()});
  data::DataLoader loader(
      data::ArrayDataset(numbers, numbers),
      {.batch_size = options.batch, .shuffle = true, .seed = options.shuffle_seed});
  optim::Adam adam(model.parameters(), {.lr = options.lr});
  const optim::Schedule schedule = optim::CosineAnnealing(
      options.lr, options.epochs * loader.size(), options.lr * kFinalLrShare);
  std::ostringstream quiet;  // where the progress line goes when it is switched off
  viz::ProgressOptions progress_options;
  progress_options.epochs = options.epochs;
  progress_options.unit = "canvases";
  if (!options.progress) progress_options.out = &quiet;
  viz::Progress progress(loader.size(), progress_options);

  Generator draws(options.class_seed);  // one class per canvas for L_am and L_e
  std::vector<GuidedRecord> records;
  Index step = 0;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    GuidedRecord record{.epoch = epoch};
    model.train();
    progress.start_epoch();
    const auto start = std::chrono::steady_clock::now();
    for (const data::Batch& batch : loader) {
      optim::apply_schedule(adam, schedule);
      adam.zero_grad();
      const std::vector<double> numbers_in_batch = batch.inputs.data().to_vector();
      const std::vector<Index> rows(numbers_in_batch.begin(), numbers_in_batch.end());
      const GuidedLosses losses = guided_losses(model, train, boxed, rows, options, draws);
      Tensor loss = losses.total(options);
      const double value = loss.item();
      optim::check_loss_is_finite("train_guided", ++step, value);  // before the step applies it
      loss.backward();
      adam.step();
      record.classification += losses.classification.item() / static_cast<double>(loader.size());
      if (losses.mining.defined())
        record.mining += losses.mining.item() / static_cast<double>(loader.size());
      if (losses.extra.defined())
        record.extra += losses.extra.item() / static_cast<double>(loader.size());
      progress.step(value, batch.size());
    }
    progress.end_epoch();
    record.seconds = app::seconds_since(start);
    model.eval();
    record.validation_map =
        vision::evaluate_classifier(predict_logits(model, validation.set.images, kEvalBatch),
                                    validation.set.labels)
            .mean_average_precision;
    records.push_back(record);
    if (after_epoch) after_epoch(record);
  }
  return records;
}

}  // namespace attend::lesson14
