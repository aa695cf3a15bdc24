// (d) The numbers. A shortcut shows in two ways, and each is measured on the same held-out
// canvases for every model:
//   - in what the classifier answers: balanced accuracy of "is there a trouser?" on the test
//     canvases where the band agrees with the answer (aligned) and where it contradicts it
//     (conflicting). A model that reads only the band scores 1 and 0; one that reads only
//     the item scores the same on both.
//   - in where its class map lies: on aligned canvases with a trouser, the share of the map's
//     mass on the band and inside the trouser's box (interpret::mass_inside_boxes).
#include <algorithm>

#include "lesson.h"

namespace attend::lesson14 {

NDArray class_maps(CamClassifier& model, const NDArray& images, const std::vector<Index>& classes,
                   Index batch) {
  if (static_cast<Index>(classes.size()) != images.size(0))
    fail("class_maps: {} images but {} classes (one per image)", images.size(0), classes.size());
  NoGradGuard no_graph;
  std::vector<NDArray> parts;
  for (Index start = 0; start < images.size(0); start += batch) {
    const Index stop = std::min(images.size(0), start + batch);
    const Tensor features = model.encoder(Tensor(slice(images, 0, start, stop)));
    const std::vector<Index> chosen(classes.begin() + start, classes.begin() + stop);
    const Tensor cam = interpret::class_activation_maps(features, model.classifier.weight, chosen);
    parts.push_back(
        interpret::upsample_maps(interpret::scale_maps(cam), images.size(2)).data().to(kFloat64));
  }
  return concat(parts, 0);
}

NDArray class_maps(CamClassifier& model, const NDArray& images,
                   const std::vector<std::int64_t>& canvases, const std::vector<Index>& classes) {
  if (canvases.size() != classes.size())
    fail("class_maps: {} canvases but {} classes (one per map)", canvases.size(), classes.size());
  for (std::int64_t c : canvases)
    if (c < 0 || c >= images.size(0))
      fail("class_maps: canvas {} of a batch of {} images", c, images.size(0));
  NoGradGuard no_graph;
  const Tensor features = model.encoder(Tensor(images));
  const Tensor rows(NDArray::from_vector(canvases, {static_cast<Index>(canvases.size())}));
  const Tensor cam = interpret::class_activation_maps(index_select(features, 0, rows),
                                                      model.classifier.weight, classes);
  return interpret::upsample_maps(interpret::scale_maps(cam), images.size(2)).data().to(kFloat64);
}

double balanced_accuracy(const NDArray& logits, const NDArray& labels, Index label) {
  if (logits.shape() != labels.shape() || logits.ndim() != 2 || label < 0 ||
      label >= labels.size(1))
    fail(
        "balanced_accuracy: needs logits and labels of one shape [N, classes] and a class in "
        "range, got {}, {} and class {}",
        logits.shape(), labels.shape(), label);
  double found = 0, present = 0, rejected = 0, absent = 0;
  for (Index i = 0; i < labels.size(0); ++i) {
    const bool yes = logits.at({i, label}) > 0;
    if (labels.at({i, label}) > 0) {
      present += 1;
      found += yes;
    } else {
      absent += 1;
      rejected += !yes;
    }
  }
  if (present == 0 || absent == 0)
    fail("balanced_accuracy: the set needs canvases with and without class {}", label);
  return 0.5 * (found / present + rejected / absent);
}

TestOutputs test_outputs(CamClassifier& model, const ShortcutData& d) {
  model.eval();
  TestOutputs out;
  out.aligned = predict_logits(model, d.aligned.set.images, kEvalBatch);
  out.conflicting = predict_logits(model, d.conflicting.set.images, kEvalBatch);
  out.independent = predict_logits(model, d.independent.set.images, kEvalBatch);
  // The aligned canvases with the class: the band and the item are both there.
  std::vector<std::int64_t> ids;
  for (Index i = 0; i < d.aligned.set.size(); ++i)
    if (d.aligned.set.labels.at({i, d.cue_class}) > 0) ids.push_back(i);
  const NDArray images = index_select(d.aligned.set.images, 0,
                                      NDArray::from_vector(ids, {static_cast<Index>(ids.size())}));
  out.maps = class_maps(model, images, std::vector<Index>(ids.size(), d.cue_class));
  return out;
}

namespace {

// The mean of the models' logits on one test set.
NDArray mean_logits(const std::vector<const TestOutputs*>& outputs, NDArray TestOutputs::*set) {
  NDArray total;
  for (const TestOutputs* o : outputs) total = total.defined() ? total + o->*set : o->*set;
  return total / static_cast<double>(outputs.size());
}

}  // namespace

ShortcutScores score_outputs(const std::vector<const TestOutputs*>& outputs,
                             const ShortcutData& d) {
  if (outputs.empty()) fail("score_models: no model");
  const Index label = d.cue_class;
  ShortcutScores s;
  s.aligned =
      balanced_accuracy(mean_logits(outputs, &TestOutputs::aligned), d.aligned.set.labels, label);
  s.conflicting = balanced_accuracy(mean_logits(outputs, &TestOutputs::conflicting),
                                    d.conflicting.set.labels, label);
  s.independent = balanced_accuracy(mean_logits(outputs, &TestOutputs::independent),
                                    d.independent.set.labels, label);
  std::vector<Index> rows;  // the aligned canvases with the class, as test_outputs took them
  for (Index i = 0; i < d.aligned.set.size(); ++i)
    if (d.aligned.set.labels.at({i, label}) > 0) rows.push_back(i);
  NDArray maps;  // the union: the largest scaled map at every pixel
  for (const TestOutputs* o : outputs) {
    if (o->maps.size(0) != static_cast<Index>(rows.size()))
      fail("score_outputs: {} maps for {} aligned canvases with class {}", o->maps.size(0),
           rows.size(), label);
    maps = maps.defined() ? maximum(maps, o->maps) : o->maps;
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto i = static_cast<std::size_t>(rows[r]);
    const NDArray map = slice(maps, 0, static_cast<Index>(r), static_cast<Index>(r) + 1)
                            .reshape({maps.size(1), maps.size(2)});
    s.mass_on_cue += interpret::mass_inside_boxes(map, {d.aligned.cue_box[i]});
    s.mass_in_box +=
        interpret::mass_inside_boxes(map, boxes_of_class(d.aligned.set.objects[i], label));
  }
  s.mass_on_cue /= static_cast<double>(rows.size());
  s.mass_in_box /= static_cast<double>(rows.size());
  return s;
}

ShortcutScores score_models(const std::vector<CamClassifier*>& models, const ShortcutData& d) {
  if (models.empty()) fail("score_models: no model");
  std::vector<TestOutputs> outputs;
  for (CamClassifier* m : models) outputs.push_back(test_outputs(*m, d));
  std::vector<const TestOutputs*> pointers;
  for (const TestOutputs& o : outputs) pointers.push_back(&o);
  return score_outputs(pointers, d);
}

}  // namespace attend::lesson14
