// Section 2 of the program: attention pooling over bags of pictures, every pooling trained on
// the same bags and scored (bags.cpp, mil.cpp and mil_training.cpp compute them).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "program.h"

namespace attend::lesson04 {
namespace {

// Pictures read for the bags: enough of each class to draw bags from.
constexpr Index kTrainPictures = 20000, kTestPictures = 10000;

struct Pictures {
  data::LabelledImages train, test;
  std::string source;
};

Pictures load_pictures(app::Transcript& t, const Options& o) {
  // The generated stand-in replaces Fashion-MNIST only where it is not installed in the
  // default folder; a folder named with --data must hold it (load_fashion_mnist says what is
  // missing), as in every lesson.
  const bool installed = data::fashion_mnist_available(data::Split::kTrain, o.data) &&
                         data::fashion_mnist_available(data::Split::kTest, o.data);
  const bool real = !o.synthetic && (installed || o.data != data::kFashionMnistFolder);
  if (!o.synthetic && !real)
    t.say(
        "Fashion-MNIST is not in {} (apt-get install dataset-fashion-mnist): using the\n"
        "generated stand-in, as --synthetic would.\n",
        o.data);
  Pictures p;
  if (real) {
    p.train = data::load_fashion_mnist(data::Split::kTrain, o.data, kTrainPictures);
    p.test = data::load_fashion_mnist(data::Split::kTest, o.data, kTestPictures);
    p.source = "Fashion-MNIST";
  } else {
    p.train = data::synthetic_fashion_mnist(data::Split::kTrain, kTrainPictures / 10, o.seed);
    p.test = data::synthetic_fashion_mnist(data::Split::kTest, kTestPictures / 10, o.seed);
    p.source = "the generated stand-in (--synthetic)";
  }
  return p;
}

std::vector<Pooling> poolings_to_train(const Options& o) {
  if (o.pooling == "all")
    return {Pooling::kMean, Pooling::kMax, Pooling::kLogSumExp, Pooling::kAttention,
            Pooling::kGatedAttention};
  return {parse_pooling(o.pooling)};
}

// The first `count` positive test bags, with the model's weights, for the figure.
std::vector<BagRow> figure_rows(MilModel& model, const Bags& test, Index count) {
  std::vector<Index> chosen;
  for (Index b = 0; b < test.size() && static_cast<Index>(chosen.size()) < count; ++b)
    if (test.labels.at({b}) > 0.5) chosen.push_back(b);
  if (chosen.empty()) return {};
  Bags bags = select_bags(test, chosen);
  MilModel::Output out = predict(model, bags);
  std::vector<BagRow> rows;
  for (Index b = 0; b < bags.size(); ++b) {
    BagRow row;
    const double probability = 1 / (1 + std::exp(-out.logits.data().at({b})));
    row.title =
        fmt::format("{} pooling, test bag {}: positive, p(positive) = {:.2f}",
                    pooling_name(model.pooling), chosen[static_cast<std::size_t>(b)], probability);
    for (Index k = 0; k < bags.length(); ++k) {
      if (bags.mask.at({b, k}) == 0) continue;
      row.instances.push_back(slice(slice(bags.images, 0, b, b + 1), 1, k, k + 1));
      row.weights.push_back(out.instance_weights.data().at({b, k}));
      row.positive.push_back(bags.instance_labels.at({b, k}) > 0.5);
    }
    rows.push_back(row);
  }
  return rows;
}

struct BagSplits {
  Bags train, test;
};

// The training bags (from the training pictures) and the test bags (from the test pictures),
// described in the transcript.
BagSplits draw_bags(app::Transcript& t, const Options& o, const Pictures& pictures) {
  const auto& names = pictures.train.class_names;
  Generator gen(o.seed);
  BagOptions bag_options{.count = o.train_bags,
                         .mean_size = o.bag_size,
                         .target_class = o.target_class,
                         .max_positives = o.max_positives};
  BagSplits bags;
  bags.train = make_bags(pictures.train, bag_options, gen);
  bag_options.count = o.test_bags;
  bags.test = make_bags(pictures.test, bag_options, gen);
  double instances = 0;
  for (Index i = 0; i < bags.train.mask.numel(); ++i)
    instances += std::as_const(bags.train.mask).data<float>()[i];
  t.say(
      "Pictures: {}. A bag is positive iff it holds a '{}' (class {}); half of the bags\n"
      "are, each with {} of them. {} training bags (from the training split, {:.1f}\n"
      "instances per bag on average, the longest {}), {} test bags (from the test split).\n",
      pictures.source, names[static_cast<std::size_t>(o.target_class)], o.target_class,
      o.max_positives == 1 ? "exactly 1" : fmt::format("1 to {}", o.max_positives), o.train_bags,
      instances / static_cast<double>(o.train_bags), bags.train.length(), o.test_bags);
  return bags;
}

}  // namespace

void section_mil(app::Transcript& t, const Options& o) {
  t.heading("2. Attention pooling over bags of pictures (multiple-instance learning)");
  Pictures pictures = load_pictures(t, o);
  const auto& names = pictures.train.class_names;
  const BagSplits bags = draw_bags(t, o, pictures);
  const Bags& train = bags.train;
  const Bags& test = bags.test;

  MilSizes sizes{.hidden = o.hidden,
                 .embedding = o.embedding,
                 .attention = o.attention,
                 .lse_sharpness = o.lse_sharpness};
  MilTraining training{.epochs = o.epochs,
                       .batch_bags = o.batch_bags,
                       .lr = o.mil_lr,
                       .seed = o.seed,
                       .progress = o.progress};
  t.say(
      "Each pooling gets the same encoder (784 -> {} -> {}, ReLU), the same initial encoder\n"
      "weights, the same bags in the same order: {} epochs of Adam (lr {}, weight decay {}),\n"
      "{} bags per step.\n\n",
      o.hidden, o.embedding, o.epochs, o.mil_lr, training.weight_decay, o.batch_bags);

  std::vector<viz::Series> curves;
  std::vector<std::string> rows;
  double accuracy_sum = 0;
  for (Pooling pooling : poolings_to_train(o)) {
    Generator init(o.seed + 1);  // the same initial weights for every pooling
    MilModel model(pooling, sizes, init);
    const auto start = std::chrono::steady_clock::now();
    if (o.progress)
      std::fputs(fmt::format("training {} pooling\n", pooling_name(pooling)).c_str(), stderr);
    std::vector<double> losses = train_mil(model, train, training);
    const double seconds = app::seconds_since(start);
    MilScores scores = score_mil(model, test);
    accuracy_sum += scores.accuracy;
    viz::Series curve{pooling_name(pooling)};
    for (std::size_t e = 0; e < losses.size(); ++e)
      curve.add(static_cast<double>(e + 1), losses[e]);
    curves.push_back(curve);
    rows.push_back(fmt::format("{:<10} {:>10} {:>12.4f} {:>12.1f}% {:>14.1f}% {:>9.1f}% {:>7.1f}\n",
                               pooling_name(pooling), model.parameter_count(), losses.back(),
                               100 * scores.accuracy, 100 * scores.localisation,
                               100 * scores.chance, seconds));
    write_bag_figure(o.out + "/mil_bags_" + pooling_name(pooling) + ".png",
                     figure_rows(model, test, o.figure_bags));
  }
  t.say("{:<10} {:>10} {:>12} {:>13} {:>15} {:>10} {:>7}\n", "pooling", "parameters", "train loss",
        "bag accuracy", "localisation", "chance", "seconds");
  for (const std::string& row : rows) t.say("{}", row);
  t.say(
      "(train loss: the mean binary cross-entropy of the last epoch. localisation: the share\n"
      "of positive test bags whose most heavily weighted instance is a '{}'; chance: the\n"
      "same for a pick at random, which is what mean pooling's equal weights give.)\n",
      names[static_cast<std::size_t>(o.target_class)]);
  const double p = accuracy_sum / static_cast<double>(rows.size());
  t.say(
      "On {} test bags an accuracy near {:.1f}% has a standard error of {:.1f}% (sqrt(p(1-p)/n)):\n"
      "smaller gaps between the poolings are noise.\n",
      o.test_bags, 100 * p, 100 * std::sqrt(p * (1 - p) / static_cast<double>(o.test_bags)));
  const bool drawn = viz::plot_curves(o.out + "/mil_loss.png", curves,
                                      {.title = "bag classifiers: training loss",
                                       .x_label = "epoch",
                                       .y_label = "binary cross-entropy",
                                       .y2_label = {}});
  t.say_plot_files(drawn, "mil_loss");
  t.say(
      "Wrote mil_bags_<pooling>.png: {} positive test bags, each instance's weight under it\n"
      "(green: a '{}', red: another class), the weights also in mil_bags_<pooling>.txt.\n",
      o.figure_bags, names[static_cast<std::size_t>(o.target_class)]);
}

}  // namespace attend::lesson04
