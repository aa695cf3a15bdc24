// Lesson 14's functions: the cue data set, the pairs and losses of guided training (a float64
// gradcheck of the whole GAIN_ext loss through a small classifier: tolerances gradcheck's
// defaults, eps 1e-6, atol 1e-5, rtol 1e-3), the maps against vision::grad_cam, balanced
// accuracy by hand, erasing and the scores. (GAIN's pieces by hand: tests/interpret/.)
#include <filesystem>

#include "lessons/14_attention_shortcuts/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson14;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// A tiny encoder (2, 3, 4 channels) for fast tests; 64x64 canvases give an 8x8 grid.
constexpr EncoderShape kTiny{.in_channels = 3, .channels1 = 2, .channels2 = 3, .channels3 = 4};

ShortcutData tiny_data(double box_share = 0.5) {
  DataOptions o{.train = 24, .validation = 8, .test = 30, .seed = 2, .synthetic = true};
  o.cue.label = 1;
  o.box_share = box_share;
  return make_shortcut_data(o);
}

}  // namespace

TEST_CASE("make_shortcut_data: the band follows each set's rule, the test sets share canvases",
          "[lesson14]") {
  const ShortcutData d = tiny_data();
  CHECK(d.cue_class == 1);
  CHECK(d.train.set.images.shape() == Shape{24, 3, 64, 64});
  CHECK(d.train.set.labels.shape() == Shape{24, 10});
  REQUIRE(d.aligned.set.size() == 30);
  for (Index i = 0; i < 30; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool present = d.aligned.set.labels.at({i, 1}) > 0;
    CHECK(d.aligned.has_cue[k] == present);
    CHECK(d.conflicting.has_cue[k] == !present);
    CHECK(d.conflicting.set.labels.at({i, 1}) == d.aligned.set.labels.at({i, 1}));
    CHECK(d.independent.set.objects[k].size() == d.aligned.set.objects[k].size());
    CHECK((d.aligned.cue_box[k].x1 > d.aligned.cue_box[k].x0) == present);
    for (const data::CanvasObject& o : d.aligned.set.objects[k])
      CHECK(std::find(kShortcutClasses.begin(), kShortcutClasses.end(), o.label) !=
            kShortcutClasses.end());
  }
  CHECK(d.boxed.size() == 24);
  CHECK(std::count(d.boxed.begin(), d.boxed.end(), true) > 0);
  const std::vector<bool> none = tiny_data(0).boxed;
  CHECK(std::count(none.begin(), none.end(), true) == 0);
  CHECK_THAT(error_message([] { make_shortcut_data({.train = 0, .synthetic = true}); }),
             Contains("every split needs at least one canvas"));
}

TEST_CASE("class_pairs and balanced accuracy by hand", "[lesson14]") {
  const ClassPairs pairs = class_pairs(f64({1, 0, 1, 0, 0, 0, 0, 1, 0}, {3, 3}));
  CHECK(pairs.canvas == std::vector<std::int64_t>{0, 0, 2});
  CHECK(pairs.label == std::vector<Index>{0, 2, 1});
  // One class per canvas, drawn uniformly among those on it: canvas 0 has classes 0 and 2.
  Generator gen(1);
  int zeros = 0;
  for (int draw = 0; draw < 400; ++draw) {
    const ClassPairs one = class_pairs(f64({1, 0, 1, 0, 0, 0, 0, 1, 0}, {3, 3}), &gen);
    REQUIRE(one.canvas == std::vector<std::int64_t>{0, 2});  // canvas 1 has no class
    CHECK((one.label[0] == 0 || one.label[0] == 2));
    CHECK(one.label[1] == 1);
    zeros += one.label[0] == 0;
  }
  CHECK((zeros > 160 && zeros < 240));  // 200 expected, standard deviation 10
  // Class 0: present on canvases 0 and 1, absent on 2 and 3. Found 1 of 2, rejected 2 of 2.
  const NDArray labels = f64({1, 0, 1, 0, 0, 0, 0, 0}, {4, 2});  // class 1 on none
  const NDArray logits = f64({2, 0, -1, 0, -3, 0, -0.5, 0}, {4, 2});
  CHECK_THAT(balanced_accuracy(logits, labels, 0), WithinAbs(0.5 * (0.5 + 1.0), 1e-12));
  CHECK_THAT(error_message([&] { balanced_accuracy(logits, labels, 1); }),
             Contains("needs canvases with and without class 1"));
  CHECK_THAT(error_message([&] { balanced_accuracy(logits, labels, 2); }),
             Contains("balanced_accuracy: needs logits and labels of one shape"));
}

TEST_CASE("class_maps: the scaled, upsampled Grad-CAM of vision::grad_cam", "[lesson14]") {
  Generator gen(4);
  CamClassifier model(kTiny, 10, gen);
  const NDArray images = NDArray::uniform({3, 3, 64, 64}, gen, 0, 1);
  int positive = 0;  // maps with a positive cell: the comparison is not only of zeros
  const std::vector<Index> classes = {1, 5, 8};
  const NDArray maps = class_maps(model, images, classes, /*batch=*/2);
  REQUIRE(maps.shape() == Shape{3, 64, 64});
  const vision::GradCam g = vision::grad_cam(model, images, classes, 3);
  for (Index i = 0; i < 3; ++i) {
    NDArray grid = slice(g.maps, 0, i, i + 1).reshape({8, 8});
    const double peak = max(grid).item();  // 0 when no cell of the CAM is positive
    check_close(slice(maps, 0, i, i + 1).reshape({64, 64}),
                interpret::upsample_map(peak > 0 ? grid / peak : grid, 64), 1e-5);
    positive += peak > 0;
  }
  CHECK(positive >= 1);
}

TEST_CASE("guided_losses: each loss appears with its weight, L_e only with boxes", "[lesson14]") {
  const ShortcutData d = tiny_data();
  Generator gen(5);
  CamClassifier model(kTiny, 10, gen);
  prepare_classifier(model, d.train.set);
  const std::vector<Index> rows = {0, 1, 2, 3};
  GuidedOptions o;
  GuidedLosses plain = guided_losses(model, d.train, d.boxed, rows, o, gen);
  CHECK_FALSE(plain.mining.defined());
  CHECK_FALSE(plain.extra.defined());
  o.mining_weight = 1;
  o.extra_weight = 10;
  GuidedLosses all = guided_losses(model, d.train, d.boxed, rows, o, gen);
  CHECK_THAT(all.classification.item(), WithinAbs(plain.classification.item(), 1e-6));
  REQUIRE(all.mining.defined());
  CHECK((all.mining.item() > 0 && all.mining.item() < 1));  // a mean of probabilities
  CHECK_THAT(all.total(o).item(), WithinAbs(all.classification.item() + all.mining.item() +
                                                (all.extra.defined() ? 10 * all.extra.item() : 0),
                                            1e-5));
  const std::vector<bool> none(d.boxed.size(), false), every(d.boxed.size(), true);
  CHECK_FALSE(guided_losses(model, d.train, none, rows, o, gen).extra.defined());
  const GuidedLosses boxed = guided_losses(model, d.train, every, rows, o, gen);
  REQUIRE(boxed.extra.defined());
  CHECK((boxed.extra.item() > 0 && boxed.extra.item() < 1));  // maps and masks lie in [0, 1]
  CHECK_THAT(error_message([&] { guided_losses(model, d.train, {true}, rows, o, gen); }),
             Contains("1 boxed flags for 24 training canvases"));
}

TEST_CASE("gradcheck of the GAIN_ext loss through the classifier, float64",
          "[lesson14][gradcheck]") {
  ShortcutData d = tiny_data(1.0);  // every canvas boxed: L_e is in the loss
  d.train.set.images = d.train.set.images.to(kFloat64);
  Generator gen(7);
  CamClassifier model(kTiny, 10, gen);
  prepare_classifier(model, d.train.set);
  model.to(kFloat64);
  // Every class of every canvas: the same pairs at every call (drawn ones would change the
  // function between the gradcheck's evaluations).
  const GuidedOptions o{.mining_weight = 1, .extra_weight = 10, .all_classes = true};
  const std::vector<Index> rows = {0, 5};
  const GuidedLosses check = guided_losses(model, d.train, d.boxed, rows, o, gen);
  REQUIRE(check.mining.defined());
  REQUIRE(check.extra.defined());
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>&) {
        return guided_losses(model, d.train, d.boxed, rows, o, gen).total(o);
      },
      model.parameters(), {.max_elements_per_input = 20, .seed = 3});
  INFO(r.report);
  CHECK(r.ok);
}

TEST_CASE("train_guided: GAIN_ext trains, records every epoch and its losses", "[lesson14]") {
  const ShortcutData d = tiny_data();
  Generator gen(6);
  CamClassifier model(kTiny, 10, gen);
  prepare_classifier(model, d.train.set);
  int calls = 0;
  const std::vector<GuidedRecord> records = train_guided(
      model, d.train, d.boxed, d.validation,
      {.epochs = 2, .batch = 8, .progress = false, .mining_weight = 1, .extra_weight = 10},
      [&](const GuidedRecord&) { ++calls; });
  REQUIRE(records.size() == 2);
  CHECK(calls == 2);
  for (const GuidedRecord& r : records) {
    CHECK(std::isfinite(r.classification));
    CHECK((r.mining > 0 && r.mining < 1));
    CHECK(r.extra > 0);
    CHECK((r.validation_map >= 0 && r.validation_map <= 1));
  }
  CHECK_THAT(
      error_message([&] { train_guided(model, d.train, d.boxed, d.validation, {.epochs = 0}); }),
      Contains("needs epochs >= 1"));
}

TEST_CASE("erase_attended: the attended pixels take the fill, nothing else changes", "[lesson14]") {
  ShortcutData d = tiny_data();
  const std::vector<double> fill = mean_pixel(d.train.set.images);
  REQUIRE(fill.size() == 3);
  CHECK_THAT(fill[1], WithinAbs(mean(slice(d.train.set.images, 1, 1, 2)).item(), 1e-9));
  Generator gen(8);
  CamClassifier model(kTiny, 10, gen);
  const NDArray before = d.train.set.images.clone();
  CueSet erased = d.train;
  erased.set.images = d.train.set.images.clone();  // erase_attended writes over its pixels
  const double share = erase_attended(model, erased, 0.5, fill);
  CHECK((share > 0 && share < 1));
  const std::vector<double> a = before.to_vector(), b = erased.set.images.to_vector();
  double changed = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) {
      changed += 1;
      const std::size_t channel = (i / (64 * 64)) % 3;
      CHECK_THAT(b[i], WithinAbs(fill[channel], 1e-6));
    }
  CHECK(changed > 0);
  CHECK(changed <= share * static_cast<double>(a.size()) + 0.5);
  check_close(d.train.set.images, before, 0);  // the original set is not touched
}

TEST_CASE("score_models: two copies of one model score as the model, figures are written",
          "[lesson14]") {
  const ShortcutData d = tiny_data();
  Generator gen(9);
  CamClassifier model(kTiny, 10, gen);
  prepare_classifier(model, d.train.set);
  const ShortcutScores one = score_models({&model}, d);
  const ShortcutScores two = score_models({&model, &model}, d);
  CHECK_THAT(two.aligned, WithinAbs(one.aligned, 1e-12));
  CHECK_THAT(two.conflicting, WithinAbs(one.conflicting, 1e-12));
  CHECK_THAT(two.mass_on_cue, WithinAbs(one.mass_on_cue, 1e-12));
  CHECK_THAT(two.mass_in_box, WithinAbs(one.mass_in_box, 1e-12));
  CHECK((one.mass_on_cue >= 0 && one.mass_on_cue + one.mass_in_box <= 1 + 1e-9));
  CHECK_THAT(one.gap(), WithinAbs(one.aligned - one.conflicting, 1e-15));
  CHECK_THAT(error_message([&] { score_models({}, d); }), Contains("no model"));

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "attend_lesson14_overlays.png";
  const std::vector<viz::AttentionExample> examples = write_overlays(
      path.string(), d.conflicting, {0, 1}, 1, "Trouser", {{"a", {&model}}, {"b", {&model}}}, 2);
  const NDArray read = viz::read_image(path);
  CHECK(read.size(1) > 2 * 128);  // two rows of 128-pixel panels
  CHECK(read.size(2) > 3 * 128);  // the canvas and two maps
  std::filesystem::remove(path);
  // The same canvases for the viewer: one example each, one map per column, with its scores.
  REQUIRE(examples.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    const viz::AttentionExample& e = examples[k];
    const std::size_t i = k;  // canvases 0 and 1
    const bool item = !boxes_of_class(d.conflicting.set.objects[i], 1).empty();
    CHECK(e.boxes.size() == boxes_of_class(d.conflicting.set.objects[i], 1).size() +
                                (d.conflicting.has_cue[i] ? 1 : 0));
    REQUIRE(e.maps.size() == 2);
    CHECK(e.maps[0].method == "a");
    CHECK(e.maps[1].method == "b");
    CHECK(e.maps[0].values.size() == 64);
    CHECK(e.maps[0].scores.size() == 1u + (item ? 1u : 0u) + (d.conflicting.has_cue[i] ? 1u : 0u));
    CHECK(e.maps[0].scores[0].first == "probability of the class");
    CHECK(e.maps[0].values == e.maps[1].values);  // one model in both columns
  }
  CHECK_THAT(viz::attention_json({.kind = "image", .examples = examples}),
             Contains("\"mass on the band\""));
}
