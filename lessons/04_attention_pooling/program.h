// Lesson 04's program: its flags, and the three sections main.cpp runs, one file each
// (section_nadaraya_watson.cpp, section_mil.cpp, section_noisy_linear.cpp).
#pragma once

#include <string>

#include "attend.h"
#include "lesson.h"

namespace attend::lesson04 {

// Every hyper-parameter, each with the flag that changes it.
struct Options : app::Flags {
  std::uint64_t seed =
      flag(seed, "seed", 0, "seed of the data, the initial weights and the bag order");
  std::string out = flag(out, "out", "output/04_attention_pooling",
                         "folder for summary.txt, plots and CSV files");
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
  // (a) Nadaraya-Watson, d2l's setting
  Index train_points = flag(train_points, "train-points", 50, "Nadaraya-Watson: training points",
                            app::at_least<Index>(2));
  double noise =
      flag(noise, "noise", 0.5, "Nadaraya-Watson: standard deviation of the targets' noise",
           app::at_least(0.0));
  double initial_width = flag(initial_width, "initial-width", 1.0,
                              "Nadaraya-Watson: w before learning (1 = the fixed kernel)");
  int width_steps = flag(width_steps, "width-steps", 500,
                         "Nadaraya-Watson: gradient-descent steps on w", app::at_least(0));
  double width_lr =
      flag(width_lr, "width-lr", 5.0, "Nadaraya-Watson: learning rate of w", app::above(0.0));
  std::string kernel = flag(kernel, "kernel", "gaussian", "Nadaraya-Watson: gaussian or laplace",
                            app::one_of({"gaussian", "laplace"}));
  bool leave_one_out = flag(leave_one_out, "leave-one-out", true,
                            "Nadaraya-Watson: learn w by predicting each point from the others");
  // (b) multiple-instance learning
  bool synthetic =
      flag(synthetic, "synthetic", false, "MIL: use generated pictures instead of Fashion-MNIST");
  std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
  std::string pooling =
      flag(pooling, "pooling", "all", "MIL: all, or one of mean, max, logsumexp, attention, gated",
           app::one_of({"all", "mean", "max", "logsumexp", "attention", "gated"}));
  Index target_class =
      flag(target_class, "target-class", 8,
           "MIL: the class that makes a bag positive (8 is \"Bag\")", app::between<Index>(0, 9));
  Index train_bags =
      flag(train_bags, "train-bags", 2000, "MIL: training bags", app::at_least<Index>(2));
  Index test_bags = flag(test_bags, "test-bags", 1000, "MIL: test bags", app::at_least<Index>(2));
  double bag_size =
      flag(bag_size, "bag-size", 10.0, "MIL: mean number of instances per bag", app::at_least(1.0));
  Index max_positives =
      flag(max_positives, "max-positives", 3, "MIL: most target instances in a positive bag",
           app::at_least<Index>(1));
  int epochs = flag(epochs, "epochs", 5, "MIL: passes over the training bags", app::at_least(1));
  Index batch_bags =
      flag(batch_bags, "batch-bags", 8, "MIL: bags per Adam step", app::at_least<Index>(1));
  double mil_lr = flag(mil_lr, "mil-lr", 1e-3, "MIL: Adam's learning rate", app::above(0.0));
  Index hidden =
      flag(hidden, "hidden", 128, "MIL: the encoder's hidden units", app::at_least<Index>(1));
  Index embedding = flag(embedding, "embedding", 64, "MIL: size M of an instance embedding",
                         app::at_least<Index>(1));
  Index attention =
      flag(attention, "attention", 32, "MIL: size L of the attention MLP", app::at_least<Index>(1));
  double lse_sharpness =
      flag(lse_sharpness, "lse-r", 1.0, "MIL: sharpness r of log-sum-exp pooling", app::above(0.0));
  Index figure_bags = flag(figure_bags, "figure-bags", 4,
                           "MIL: positive test bags drawn in the figures", app::at_least<Index>(1));
  // (c) the noisy linear model
  Index features = flag(features, "features", 16, "noisy linear model: number of features",
                        app::at_least<Index>(1));
  double lowest_variance = flag(lowest_variance, "lowest-variance", 0.1,
                                "noisy linear model: smallest s_i^2", app::above(0.0));
  double highest_variance = flag(highest_variance, "highest-variance", 10.0,
                                 "noisy linear model: largest s_i^2", app::above(0.0));
  int linear_steps =
      flag(linear_steps, "linear-steps", 3000, "noisy linear model: SGD steps", app::at_least(1));
  Index linear_batch = flag(linear_batch, "linear-batch", 256,
                            "noisy linear model: samples per step", app::at_least<Index>(1));
  double linear_lr =
      flag(linear_lr, "linear-lr", 0.01, "noisy linear model: SGD learning rate", app::above(0.0));
};

// Section 1: Nadaraya-Watson regression, fixed and learned width (nw_fit.png, nw_weights.png).
void section_nadaraya_watson(app::Transcript& t, const Options& o);
// Section 2: every pooling trained on bags of pictures and scored (mil_*.png).
void section_mil(app::Transcript& t, const Options& o);
// Section 3: noisy inputs shrink a linear model's weights (noisy_linear.png).
void section_noisy_linear(app::Transcript& t, const Options& o);

}  // namespace attend::lesson04
