// vision/multilabel_training.h: the class priors, predict_logits, and the training loop on
// CamClassifier and on another images -> logits module.
#include <cmath>
#include <string>

#include "attend.h"
#include "support.h"
#include "vision/test_canvases.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::vision;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// Another images -> logits model, for the loop that takes any: each channel's mean pixel, then
// one linear layer.
class ChannelMeans : public nn::UnaryModule {
 public:
  ChannelMeans(Index classes, Generator& gen) : head(3, classes, /*bias=*/true, gen) {
    register_module("head", head);
  }
  Tensor forward(const Tensor& images) override { return head(nn::global_avg_pool2d(images)); }
  std::string describe() const override { return "ChannelMeans"; }

  nn::Linear head;
};

}  // namespace

TEST_CASE("initialise_class_priors: biases at the classes' smoothed log-odds", "[vision]") {
  // Class 2 on 1 of 2 canvases -> (1 + 1) / (2 + 2) = 1/2, log-odds 0; class 0 on none -> 1/4,
  // log(1/3).
  CanvasSet set = to_canvas_set({canvas_example({canvas_object(2, {0, 0, 2, 2})}),
                                 canvas_example({canvas_object(1, {0, 0, 2, 2})})},
                                3);
  Generator gen(4);
  CamClassifier model(kTinyEncoder, 3, gen);
  initialise_class_priors(model.classifier, set);
  CHECK_THAT(model.classifier.bias.data().at({2}), WithinAbs(0.0, 1e-7));
  CHECK_THAT(model.classifier.bias.data().at({0}), WithinAbs(std::log(1.0 / 3), 1e-7));
  CamClassifier wrong(kTinyEncoder, 4, gen);
  CHECK_THAT(error_message([&] { initialise_class_priors(wrong.classifier, set); }),
             Contains("3 classes in the data, 4 in the model"));
  nn::Linear no_bias(4, 3, /*bias=*/false, gen);
  CHECK_THAT(error_message([&] { initialise_class_priors(no_bias, set); }),
             Contains("the head has no bias"));
}

TEST_CASE("predict_logits: the same logits in batches of any size, without a graph", "[vision]") {
  Generator gen(2);
  CamClassifier model(kTinyEncoder, 5, gen);
  NDArray images = NDArray::uniform({7, 3, 16, 16}, gen);
  NDArray all = predict_logits(model, images, 7);
  CHECK(all.shape() == Shape{7, 5});
  check_close(predict_logits(model, images, 3), all, 1e-6);
  for (const Tensor& p : model.parameters()) CHECK_FALSE(p.grad().defined());
  CHECK_THAT(error_message([&] { predict_logits(model, images, 0); }),
             Contains("at least 1, got 0"));
}

TEST_CASE("training lowers the loss on synthetic canvases", "[vision]") {
  CanvasData d =
      make_canvas_data({.train = 48, .validation = 16, .test = 1, .seed = 1, .synthetic = true});
  Generator gen(1);
  CamClassifier model(kTinyEncoder, 10, gen);
  const double before =
      evaluate_classifier(predict_logits(model, d.validation.images), d.validation.labels).loss;
  int calls = 0;
  std::vector<EpochRecord> records = train_classifier(
      model, d.train, d.validation, {.epochs = 3, .batch = 8, .lr = 1e-2, .progress = false},
      [&](const EpochRecord& r) { CHECK(r.epoch == ++calls); });
  REQUIRE(records.size() == 3);
  CHECK(calls == 3);
  CHECK(records.back().train_loss < records.front().train_loss);
  CHECK(records.back().validation_loss < before);
  CHECK(records[1].epoch == 2);
  CHECK_FALSE(model.is_training());
  // The record's validation scores are evaluate_classifier's on the final model.
  const ClassificationReport after =
      evaluate_classifier(predict_logits(model, d.validation.images), d.validation.labels);
  CHECK_THAT(records.back().validation_loss, WithinAbs(after.loss, 1e-12));
  CHECK_THAT(records.back().validation_map, WithinAbs(after.mean_average_precision, 1e-12));
  CHECK_THAT(error_message([&] { train_classifier(model, d.train, d.validation, {.epochs = 0}); }),
             Contains("at least 1 epoch"));
  CHECK_THAT(error_message([&] { train_classifier(model, d.train, d.validation, {.batch = 0}); }),
             Contains("batch must be at least 1"));
  CHECK_THAT(error_message([&] { train_classifier(model, d.train, d.validation, {.lr = 0}); }),
             Contains("learning rate must be positive"));
}

TEST_CASE("train_classifier takes any images -> logits module", "[vision]") {
  // A linear layer on fixed features (the channel means) under binary cross-entropy is a
  // convex problem: with a small learning rate the loss on the training canvases falls. They
  // are the validation set here, so the records say how the training loss moved.
  CanvasData d =
      make_canvas_data({.train = 64, .validation = 1, .test = 1, .seed = 2, .synthetic = true});
  Generator gen(3);
  ChannelMeans model(10, gen);
  initialise_class_priors(model.head, d.train);
  const NDArray weight_before = model.head.weight.data().clone();
  const double before =
      evaluate_classifier(predict_logits(model, d.train.images), d.train.labels).loss;
  std::vector<EpochRecord> records = train_classifier(
      model, d.train, d.train, {.epochs = 3, .batch = 8, .lr = 1e-2, .progress = false});
  REQUIRE(records.size() == 3);
  CHECK(records[0].validation_loss < before);
  CHECK(records[2].validation_loss < records[0].validation_loss);
  CHECK(max(abs(model.head.weight.data() - weight_before)).item() > 0);
}
