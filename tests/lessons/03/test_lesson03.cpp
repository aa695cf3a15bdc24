// Lesson 03's functions, on the generated stand-in only (these tests never need
// Fashion-MNIST): the data helpers, the two models, gradcheck of both (float64, gradcheck's
// default tolerances: eps 1e-6, atol 1e-5, rtol 1e-3), overfitting one batch, the training
// loop and its evaluation, and the exactness of a resumed run.
#include <bit>
#include <cmath>
#include <filesystem>
#include <set>

#include "lessons/03_training/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson03;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// A fresh folder under the build's test directory, removed first if it exists.
std::string scratch_folder(const std::string& name) {
  const std::filesystem::path path = std::filesystem::current_path() / "lesson03_scratch" / name;
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path.string();
}

data::LabelledImages stand_in(data::Split split, Index count) {
  return data::synthetic_fashion_mnist(split, count, /*seed=*/0);
}

Data small_data(Index train, Index test) {
  return load_data({.train_limit = train, .test_limit = test, .synthetic = true, .seed = 0});
}

bool has_op(const GradcheckResult& r, const std::string& op) {
  return std::find(r.ops.begin(), r.ops.end(), op) != r.ops.end();
}

}  // namespace

TEST_CASE("stream_seed gives every (seed, stream, epoch) its own seed", "[lesson03]") {
  std::set<std::uint64_t> seen;
  for (std::uint64_t seed : {0, 1, 2})
    for (std::uint64_t stream : {kInitStream, kShuffleStream, kDropoutStream})
      for (int epoch : {0, 1, 2, 100}) seen.insert(stream_seed(seed, stream, epoch));
  CHECK(seen.size() == 3 * 3 * 4);
  CHECK(stream_seed(0, kInitStream) == 0);
}

TEST_CASE("load_data: the stand-in with limits, and the message when the files are missing",
          "[lesson03]") {
  Data d = small_data(120, 50);
  CHECK(d.train.images.shape() == Shape{120, 1, 28, 28});
  CHECK(d.test.images.shape() == Shape{50, 1, 28, 28});
  CHECK(d.train.labels.dtype() == kInt64);
  CHECK(d.train.class_names == data::synthetic_class_names());
  CHECK_THAT(d.source, Contains("stand-in"));
  // Balanced classes: 120 pictures, 12 of each.
  CHECK(class_counts(d.train) == std::vector<Index>(10, 12));
  // The test pictures are not the training pictures.
  CHECK(max(abs(slice(d.train.images, 0, 0, 50) - d.test.images)).item() > 0);

  const std::string missing = scratch_folder("no_data");
  std::string message = error_message([&] { load_data({.folder = missing}); });
  CHECK_THAT(message, Contains("Fashion-MNIST not found in " + missing));
  CHECK_THAT(message, Contains("apt-get install dataset-fashion-mnist"));
  CHECK_THAT(error_message([] { load_data({.train_limit = -1, .synthetic = true}); }),
             Contains("limits must be >= 0"));
}

TEST_CASE("sample_sheet puts the first pictures of each class in its row", "[lesson03]") {
  data::LabelledImages images = stand_in(data::Split::kTrain, 40);
  NDArray sheet = sample_sheet(images, 3);
  CHECK(sheet.shape() == Shape{1, 10 * 30 - 2, 3 * 30 - 2});
  // Picture 0 is the first of its class: it sits in column 0 of row labels[0].
  const Index label = images.labels.data<std::int64_t>()[0];
  for (Index r : {0, 13, 27})
    for (Index c : {0, 14, 27})
      CHECK(sheet.at({0, label * 30 + r, c}) == images.images.at({0, 0, r, c}));
  CHECK(sheet.at({0, 28, 0}) == 1.0);  // the white gap between rows
  CHECK_THAT(error_message([&] { sample_sheet(images, 0); }), Contains("at least 1"));
}

TEST_CASE("the models: shapes, parameter names and counts", "[lesson03]") {
  ModelConfigs configs;  // the lesson's defaults
  Generator gen(0);
  Tensor images(NDArray::uniform({3, 1, 28, 28}, gen));

  Mlp mlp(configs.mlp, gen);
  CHECK(mlp(images).shape() == Shape{3, 10});
  // 784*256 + 256 + 256*128 + 128 + 128*10 + 10
  CHECK(mlp.parameter_count() == 235146);
  std::vector<std::string> names;
  for (const auto& [name, _] : mlp.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                          "fc3.weight", "fc3.bias"});

  SmallCnn cnn(configs.cnn, gen);
  CHECK(cnn(images).shape() == Shape{3, 10});
  // conv1 16*1*9 + 16, conv2 32*16*9 + 32, fc1 (32*7*7)*128 + 128, fc2 128*10 + 10
  CHECK(cnn.parameter_count() == 160 + 4640 + 200832 + 1290);
  CHECK(cnn.conv1.weight.shape() == Shape{16, 1, 3, 3});
  CHECK(cnn.fc1.weight.shape() == Shape{128, 32 * 7 * 7});

  CHECK(model_name(ModelKind::kMlp) == "MLP");
  CHECK(model_name(ModelKind::kCnn) == "CNN");
  CHECK(make_model(ModelKind::kCnn, configs, gen)->parameter_count() == cnn.parameter_count());
}

TEST_CASE("dropout is on in training mode only, and follows the model's generator", "[lesson03]") {
  Generator gen(4);
  Mlp mlp({.hidden1 = 32, .hidden2 = 16, .dropout = 0.5}, gen);
  Tensor images(NDArray::uniform({4, 1, 28, 28}, gen));
  NoGradGuard no_graph;
  mlp.train();
  mlp.dropout_generator().manual_seed(1);
  NDArray first = mlp(images).data();
  mlp.dropout_generator().manual_seed(1);
  NDArray same_seed = mlp(images).data();
  NDArray next_mask = mlp(images).data();
  CHECK(max(abs(first - same_seed)).item() == 0);
  CHECK(max(abs(first - next_mask)).item() > 0);
  mlp.eval();
  NDArray eval1 = mlp(images).data();
  NDArray eval2 = mlp(images).data();
  CHECK(max(abs(eval1 - eval2)).item() == 0);
  CHECK(max(abs(eval1 - first)).item() > 0);
}

TEST_CASE("gradcheck of the whole MLP, float64, dropout on", "[lesson03][gradcheck]") {
  // Every element of every parameter of the small MLP (784 -> 12 -> 8 -> 10).
  for (std::uint64_t seed : {0, 1}) {
    INFO("seed " << seed);
    GradcheckResult r = gradcheck_model(ModelKind::kMlp, seed, 0);
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == 784 * 12 + 12 + 12 * 8 + 8 + 8 * 10 + 10);
    CHECK(has_op(r, "linear"));
    CHECK(has_op(r, "relu"));
    CHECK(has_op(r, "mul"));  // dropout's mask
    CHECK(has_op(r, "cross_entropy"));
  }
}

TEST_CASE("gradcheck of the whole CNN, float64, dropout on", "[lesson03][gradcheck]") {
  // Every element of every parameter of the small CNN (3 and 4 feature maps, 8 hidden).
  for (std::uint64_t seed : {0, 1}) {
    INFO("seed " << seed);
    GradcheckResult r = gradcheck_model(ModelKind::kCnn, seed, 0);
    INFO(r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked == (3 * 9 + 3) + (4 * 3 * 9 + 4) + (4 * 49 * 8 + 8) + (8 * 10 + 10));
    CHECK(has_op(r, "conv2d"));
    CHECK(has_op(r, "max_pool2d"));
    CHECK(has_op(r, "linear"));
    CHECK(has_op(r, "mul"));
  }
  // What the program prints: 12 elements per parameter.
  GradcheckResult sampled = gradcheck_model(ModelKind::kCnn, 0, 12);
  CHECK(sampled.ok);
  // 12 of each, or all of the smaller ones: conv1.bias 3, conv2.bias 4, fc1.bias 8, fc2.bias 10.
  CHECK(sampled.elements_checked == 12 + 3 + 12 + 4 + 12 + 8 + 12 + 10);
}

TEST_CASE("gradcheck of the models has teeth: a wrong gradient is caught",
          "[lesson03][gradcheck]") {
  // The same check as gradcheck_model, on a function whose backward is wrong: the loss
  // uses relu(x) forward but lets the gradient through where x < 0 (a wrong derivative).
  Generator gen(2);
  Mlp mlp(gradcheck_configs().mlp, gen);
  mlp.to(kFloat64);
  mlp.eval();
  Tensor images(NDArray::normal({2, 1, 28, 28}, gen, 0, 1, kFloat64));
  Tensor labels(NDArray::from_list({3, 7}, {2}, kInt64));
  auto leaky_backward_relu = [](const Tensor& x) {
    NDArray y = relu(x.data());
    return make_op("relu_wrong", y, {x}, [](const NDArray& g) -> Grads { return {g}; });
  };
  auto loss = [&](const std::vector<Tensor>&) {
    Tensor h = leaky_backward_relu(mlp.fc1(flatten(images, 1)));
    return nn::cross_entropy(mlp.fc3(relu(mlp.fc2(h))), labels);
  };
  GradcheckResult r = gradcheck(loss, mlp.parameters(), {.max_elements_per_input = 12});
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.report, Contains("gradcheck FAILED"));
}

TEST_CASE("overfitting one batch drives the loss to almost zero", "[lesson03]") {
  data::LabelledImages images = stand_in(data::Split::kTrain, 16);
  for (ModelKind kind : {ModelKind::kMlp, ModelKind::kCnn}) {
    INFO(model_name(kind));
    OverfitResult r = overfit_one_batch(kind, ModelConfigs{}, images, 16, 60, 1e-3, 0);
    REQUIRE(r.losses.size() == 60);
    CHECK_THAT(r.losses.front(), WithinAbs(std::log(10.0), 0.3));  // guessing among 10
    CHECK(r.final_loss < 0.05);
    CHECK(r.final_accuracy == 1.0);
  }
  CHECK_THAT(error_message([&] { overfit_one_batch(ModelKind::kMlp, {}, images, 17, 5, 1e-3, 0); }),
             Contains("batch must be in 1..16"));
}

TEST_CASE("evaluate: accuracy, mean loss and the confusion matrix", "[lesson03]") {
  data::LabelledImages images = stand_in(data::Split::kTest, 53);
  Generator gen(1);
  Mlp mlp({.hidden1 = 20, .hidden2 = 10, .dropout = 0.3}, gen);
  mlp.train();
  Evaluation whole = evaluate(mlp, images, 1000);
  CHECK_FALSE(mlp.is_training());                   // evaluation mode: dropout off
  Evaluation in_pieces = evaluate(mlp, images, 7);  // the last batch has 4 pictures
  CHECK(whole.confusion.shape() == Shape{10, 10});
  CHECK(whole.confusion.dtype() == kInt64);
  CHECK(sum(whole.confusion.to(kFloat64)).item() == 53);
  check_close(in_pieces.confusion, whole.confusion, 0);
  CHECK(in_pieces.accuracy == whole.accuracy);
  CHECK_THAT(in_pieces.loss, WithinAbs(whole.loss, 1e-6));

  // Against a direct computation.
  NoGradGuard no_graph;
  Tensor logits = mlp(Tensor(images.images));
  CHECK_THAT(whole.loss, WithinAbs(nn::cross_entropy(logits, Tensor(images.labels)).item(), 1e-6));
  NDArray predicted = argmax(logits.data(), 1);
  double diagonal = 0, correct = 0;
  for (Index c = 0; c < 10; ++c) diagonal += whole.confusion.at({c, c});
  for (Index i = 0; i < 53; ++i) correct += predicted.at({i}) == images.labels.at({i});
  CHECK(whole.accuracy == correct / 53);
  CHECK(diagonal == correct);
  for (Index i = 0; i < 53; ++i)  // every picture counted in its (truth, prediction) cell
    CHECK(whole.confusion.at({static_cast<Index>(images.labels.at({i})),
                              static_cast<Index>(predicted.at({i}))}) >= 1);
}

TEST_CASE("most_confused and per_class_accuracy read the confusion matrix", "[lesson03]") {
  NDArray m = ids({50, 3, 7,  //
                   9, 40, 0,  //
                   7, 1, 0},
                  {3, 3});
  std::vector<Confusion> top = most_confused(m, 3);
  REQUIRE(top.size() == 3);
  CHECK((top[0].truth == 1 && top[0].predicted == 0 && top[0].count == 9));
  CHECK((top[1].truth == 0 && top[1].predicted == 2 && top[1].count == 7));  // a tie: row 0 first
  CHECK((top[2].truth == 2 && top[2].predicted == 0 && top[2].count == 7));
  CHECK(most_confused(m, 100).size() == 6);
  std::vector<double> accuracy = per_class_accuracy(m);
  CHECK_THAT(accuracy[0], WithinAbs(50.0 / 60, 1e-15));
  CHECK_THAT(accuracy[1], WithinAbs(40.0 / 49, 1e-15));
  CHECK(accuracy[2] == 0.0);
  CHECK(per_class_accuracy(ids({0, 0, 0, 0}, {2, 2})) == std::vector<double>{0.0, 0.0});
  CHECK_THAT(error_message([] { most_confused(ids({1, 2}, {1, 2}), 1); }), Contains("square"));
}

TEST_CASE("the learning-rate schedule: cosine from lr to 0, or constant", "[lesson03]") {
  optim::Schedule cosine = learning_rate_schedule(1e-3, true, 100);
  CHECK_THAT(cosine(0), WithinAbs(1e-3, 1e-18));
  CHECK_THAT(cosine(50), WithinAbs(5e-4, 1e-15));
  CHECK_THAT(cosine(100), WithinAbs(0, 1e-18));
  CHECK(cosine(25) > cosine(26));
  optim::Schedule constant = learning_rate_schedule(1e-3, false, 100);
  CHECK(constant(0) == 1e-3);
  CHECK(constant(99) == 1e-3);
}

TEST_CASE("train_model learns the stand-in and reports every epoch", "[lesson03]") {
  Data d = small_data(600, 200);
  Generator init(stream_seed(0, kInitStream));
  Mlp mlp({.hidden1 = 64, .hidden2 = 32, .dropout = 0.1}, init);
  const Evaluation before = evaluate(mlp, d.test, 1000);
  int calls = 0;
  std::vector<EpochResult> epochs =
      train_model(mlp, d, {.epochs = 3, .batch_size = 32, .learning_rate = 2e-3, .seed = 0},
                  [&](const EpochResult& r) { CHECK(r.epoch == ++calls); });
  REQUIRE(epochs.size() == 3);
  CHECK(calls == 3);
  CHECK(before.accuracy < 0.3);
  CHECK(epochs.back().test.accuracy > 0.8);
  CHECK(epochs.back().train_loss < epochs.front().train_loss);
  for (const EpochResult& r : epochs) CHECK(r.seconds > 0);
}

TEST_CASE("train_epoch: one loss per batch, the same run gives the same losses", "[lesson03]") {
  data::LabelledImages images = stand_in(data::Split::kTrain, 100);
  auto one_epoch = [&](std::vector<double>& losses) {
    Generator init(3);
    Mlp mlp({.hidden1 = 16, .hidden2 = 8, .dropout = 0.2}, init);
    optim::Adam adam(mlp.parameters());
    data::DataLoader loader(images.dataset(), {.batch_size = 32, .shuffle = true, .seed = 9});
    optim::Schedule schedule = learning_rate_schedule(1e-3, true, loader.size());
    const double mean = train_epoch(mlp, adam, schedule, loader, 1, 0, &losses);
    CHECK(mlp.is_training());
    CHECK(adam.steps_taken() == 4);
    CHECK(adam.learning_rate() < 1e-3);  // the schedule was applied
    return mean;
  };
  std::vector<double> first, second;
  const double mean = one_epoch(first);
  one_epoch(second);
  REQUIRE(first.size() == 4);  // 100 pictures in batches of 32: 32, 32, 32, 4
  CHECK_THAT(mean, WithinAbs((first[0] + first[1] + first[2] + first[3]) / 4, 1e-12));
  CHECK(compare_losses(first, second).equal == 4);
}

TEST_CASE("a resumed run computes bit for bit the losses of an uninterrupted run", "[lesson03]") {
  const std::string folder = scratch_folder("resume");
  data::LabelledImages images = stand_in(data::Split::kTrain, 150);
  ResumeOptions options{.epochs_before = 2,
                        .epochs_after = 1,
                        .train = {.batch_size = 32, .learning_rate = 2e-3, .seed = 5},
                        .mlp = {.hidden1 = 24, .hidden2 = 12, .dropout = 0.25}};
  const std::string path = folder + "/resume.ckpt";
  ResumeResult r = resume_demo(images, options, path);
  CHECK(r.steps_before == 2 * 5);  // 150 pictures in batches of 32: 5 steps per epoch
  REQUIRE(r.uninterrupted.size() == 3 * 5);
  REQUIRE(r.resumed.size() == 5);
  const std::vector<double> after(r.uninterrupted.begin() + r.steps_before, r.uninterrupted.end());
  Comparison same = compare_losses(after, r.resumed);
  CHECK(same.equal == 5);
  CHECK(same.total == 5);
  CHECK(same.max_difference == 0);
  CHECK(r.parameters_equal);
  CHECK(r.checkpoint_bytes == std::filesystem::file_size(path));
  // The check has teeth: without Adam's state the continuation differs from the first
  // step that uses it (the step after the checkpoint has the same loss: it is computed
  // before any update).
  Comparison fresh = compare_losses(after, r.without_optimizer);
  CHECK(fresh.total == 5);
  CHECK(fresh.equal < 5);
  CHECK(fresh.max_difference > 1e-4);

  // And every byte is checked: a flipped byte anywhere is a one-line error.
  const std::string copy = folder + "/corrupt.ckpt";
  CHECK_THAT(load_corrupted_copy(path, copy, 1000, options.mlp), Contains("checksum mismatch"));
  CHECK_THAT(load_corrupted_copy(path, copy, 0, options.mlp),
             Contains("is not an attend checkpoint"));
  CHECK_THAT(load_corrupted_copy(path, copy, -1, options.mlp), Contains("checksum mismatch"));
  CHECK_THAT(error_message([&] { load_corrupted_copy(path, copy, 1 << 30, options.mlp); }),
             Contains("is outside the"));
  // A checkpoint loads only into the model it was saved from.
  CHECK_THAT(error_message([&] {
               Generator gen(0);
               Mlp other({.hidden1 = 25, .hidden2 = 12, .dropout = 0.25}, gen);
               nn::load_checkpoint(path, other);
             }),
             Contains("parameter 'fc1.weight' has shape [24,784] in the checkpoint but [25,784]"));
}

TEST_CASE("compare_losses compares bits", "[lesson03]") {
  Comparison c = compare_losses({1.0, 2.0, 3.0}, {1.0, std::nextafter(2.0, 3.0), 3.5});
  CHECK(c.equal == 1);
  CHECK(c.total == 3);
  CHECK(c.max_difference == 0.5);
  CHECK(compare_losses({1.0}, {1.0, 2.0}).total == 2);
  CHECK(compare_losses({0.0}, {-0.0}).equal == 0);  // equal numbers, different bits
}
