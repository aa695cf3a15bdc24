// Lesson 04: attention pooling. The functions that main.cpp runs, in the order of the
// chapter (docs/04_attention_pooling.md), one file each:
//
//   nadaraya_watson.cpp  (a) Nadaraya-Watson kernel regression as attention: average pooling,
//                            a fixed Gaussian kernel, and a kernel width learned by backward()
//   bags.cpp             (b) bags of Fashion-MNIST pictures for multiple-instance learning:
//                            a bag is positive if it holds a picture of the chosen class
//   mil.cpp              (b) the bag classifier of Ilse et al. (2018) with five poolings
//                            (mean, max, log-sum-exp, attention, gated attention)
//   mil_training.cpp     (b) its training, bag accuracy and instance localisation
//   bag_figure.cpp       (b) a picture of test bags with each instance's weight under it
//   noisy_linear.cpp     (c) a linear model whose inputs are observed with noise: the noise
//                            acts as a ridge penalty that shrinks the weights
//   exercises.cpp            the reference solution of exercise 1 (the Laplace kernel)
//
// The program itself: program.h (its flags) and section_nadaraya_watson.cpp, section_mil.cpp,
// section_noisy_linear.cpp (the sections main.cpp runs, as they print and draw), on top of the
// functions here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson04 {

// ---- (a) Nadaraya-Watson kernel regression: nadaraya_watson.cpp ------------------------------

// The function to recover (d2l, older edition): f(x) = 2 sin(x) + x^0.8.
double regression_target(double x);

// Test queries 0, 0.1, ..., 4.9, as in d2l.
constexpr Index kTestPoints = 50;
constexpr double kTestStep = 0.1;
// The training inputs are drawn from U(0, kInputRange).
constexpr double kInputRange = 5.0;

struct RegressionData {
  Tensor x_train;  // [n] sorted, from U(0, 5)
  Tensor y_train;  // [n] f(x_train) + N(0, noise_std^2)
  Tensor x_test;   // [kTestPoints] 0, 0.1, ..., 4.9
  Tensor y_truth;  // [kTestPoints] f(x_test), without noise
};
RegressionData make_regression_data(Index train_points, double noise_std, Generator& gen,
                                    DType dtype = kFloat32);

// Average pooling, the baseline that ignores the query: f(x) = (1/n) sum_i y_i for every x.
Tensor average_pooling(const Tensor& queries, const Tensor& values);

// The kernel K(u) of the regression, u = (x - x_i) w; its log is the attention score:
//   Gaussian  K(u) = exp(-u^2 / 2)   score -((x - x_i) w)^2 / 2   (d2l's choice)
//   Laplace   K(u) = exp(-|u|)       score -|(x - x_i) w|         (exercise 1, exercises.cpp)
enum class Kernel { kGaussian, kLaplace };
std::string kernel_name(Kernel kernel);
Kernel parse_kernel(const std::string& name);  // "gaussian" or "laplace"

// distance [Q, n] = x - x_i, width w 0-d -> scores [Q, n].
Tensor kernel_scores(const Tensor& distance, const Tensor& width, Kernel kernel);
// Exercise 1's reference solution: -|distance * w|.
Tensor laplace_scores(const Tensor& distance, const Tensor& width);

struct KernelRegression {
  Tensor predictions;  // [Q]
  Tensor weights;      // [Q, n] attention weights, each row sums to 1
};

// Nadaraya-Watson with a kernel of learnable inverse width w (a 0-d tensor):
//   f(x) = sum_i softmax_i(score(x - x_i, w)) y_i
// queries [Q], keys [n], values [n]. `mask` [Q, n] (1 keep, 0 drop) may be undefined.
KernelRegression nadaraya_watson(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                 const Tensor& width, const Tensor& mask = {},
                                 Kernel kernel = Kernel::kGaussian);

// [n, n]: 1 everywhere except 0 on the diagonal, so that training query i cannot look at
// its own key (it would learn w -> infinity: every point predicts itself perfectly).
Tensor leave_one_out_mask(Index n, DType dtype);

// The loss that trains w: (1/2) mean_i (f_{-i}(x_i) - y_i)^2, each training point predicted
// from the others. With leave_one_out false, from all points, itself included (exercise 2).
Tensor width_loss(const RegressionData& data, const Tensor& width,
                  Kernel kernel = Kernel::kGaussian, bool leave_one_out = true);

struct WidthTraining {
  double width = 0;            // the learned w (the kernel's standard deviation is 1/|w|)
  std::vector<double> losses;  // the loss before each step
  double final_loss = 0;       // ... and after the last step
  double final_gradient = 0;   // dL/dw there: near 0 once w has converged
};
// Full-batch gradient descent on width_loss, starting from w = initial_width.
WidthTraining learn_width(const RegressionData& data, double initial_width, int steps, double lr,
                          Kernel kernel = Kernel::kGaussian, bool leave_one_out = true);

// mean((a - b)^2) of two same-shaped tensors, as a double.
double mean_squared_error(const Tensor& a, const Tensor& b);

// ---- (b) multiple-instance learning: bags.cpp ------------------------------------------------

struct BagOptions {
  Index count = 0;                  // number of bags (half of them positive)
  double mean_size = 10;            // bag sizes ~ round(N(mean_size, size_std^2)), clipped below
  double size_std = 1.41421356237;  // Ilse et al.'s code: variance 2
  Index min_size = 2;
  Index target_class = 8;   // a bag is positive iff it holds an instance of this class
  Index max_positives = 3;  // a positive bag holds 1..max_positives such instances
};

// Bags padded to the longest one. Instances are drawn at random (with replacement) from the
// pictures given; negatives from every other class.
struct Bags {
  NDArray images;           // float32 [B, T, 1, 28, 28], zeros at padding
  NDArray mask;             // float32 [B, T]: 1 for a real instance, 0 for padding
  NDArray labels;           // float32 [B]: 1 for a positive bag
  NDArray instance_labels;  // float32 [B, T]: 1 where the instance is of the target class
  NDArray classes;          // int64 [B, T]: each instance's class, -1 at padding
  Index size() const { return labels.size(0); }
  Index length() const { return mask.size(1); }  // T
};
Bags make_bags(const data::LabelledImages& pictures, const BagOptions& options, Generator& gen);

// The bags at `positions` (a batch), cut to the longest of them.
Bags select_bags(const Bags& bags, const std::vector<Index>& positions);

// ---- (b) the bag classifier: mil.cpp, mil_training.cpp ---------------------------------------

enum class Pooling { kMean, kMax, kLogSumExp, kAttention, kGatedAttention };
std::string pooling_name(Pooling pooling);
// "mean", "max", "logsumexp", "attention", "gated": the names --pooling accepts.
Pooling parse_pooling(const std::string& name);

struct MilSizes {
  Index input = 28 * 28;     // pixels per instance
  Index hidden = 128;        // the encoder's hidden layer
  Index embedding = 64;      // M: the size of an instance embedding h_k
  Index attention = 32;      // L: the hidden size of the attention MLP
  double lse_sharpness = 1;  // r of log-sum-exp pooling
};

// Ilse et al. 2018: an instance encoder h_k = f(x_k), a permutation-invariant pooling of the
// h_k into one bag vector z, and a classifier g(z) that gives the bag's logit.
class MilModel : public nn::Module {
 public:
  MilModel(Pooling pooling, const MilSizes& sizes, Generator& gen);

  struct Output {
    Tensor logits;            // [B]: > 0 means "positive bag"
    Tensor instance_weights;  // [B, T]: how much each instance counts (see below)
  };
  // instances [B, T, input] (or [B, T, 1, 28, 28]), mask [B, T] (1 real, 0 padding).
  Output forward(const Tensor& instances, const Tensor& mask);
  std::string describe() const override;

  Pooling pooling;
  MilSizes sizes;
  nn::Linear encoder_hidden, encoder_out;  // f: input -> hidden -> embedding, ReLU after each
  nn::Linear attention_v;                  // V: embedding -> attention (tanh branch)
  nn::Linear attention_u;  // U: embedding -> attention (sigmoid gate, gated attention only)
  nn::Linear attention_w;  // w: attention -> 1
  nn::Linear classifier;   // g: embedding -> 1

 private:
  Tensor encode(const Tensor& instances);  // -> [B, T, embedding]
};

// The pooling functions on embeddings h [B, T, M] with mask [B, T]; each returns z [B, M].
Tensor mean_pool(const Tensor& h, const Tensor& mask);
Tensor max_pool(const Tensor& h, const Tensor& mask);
// z_m = (1/r) log((1/K) sum_k exp(r h_km)): between the mean (r -> 0) and the max (r -> inf).
Tensor logsumexp_pool(const Tensor& h, const Tensor& mask, double sharpness);

// The weight each instance gets for localisation, [B, T], rows summing to 1:
//   mean        1/K for every instance (no instance is preferred: chance level)
//   max         the share of embedding dimensions whose maximum instance k is
//   logsumexp   softmax_k(r h_km) averaged over the dimensions m (dz_m/dh_km, averaged)
//   attention   a_k itself
NDArray max_pool_shares(const NDArray& h, const NDArray& mask);
NDArray logsumexp_pool_shares(const NDArray& h, const NDArray& mask, double sharpness);

struct MilTraining {
  int epochs = 4;
  Index batch_bags = 8;
  double lr = 1e-3;
  double weight_decay = 1e-4;  // Ilse et al.'s code (Adam's L2 form)
  std::uint64_t seed = 0;      // the order of the bags
  bool progress = true;        // the progress line on stderr (false: none)
};
// Adam on the mean binary cross-entropy of the bags; the mean loss of each epoch.
std::vector<double> train_mil(MilModel& model, const Bags& train, const MilTraining& options);

struct MilScores {
  double accuracy = 0;      // share of bags classified right (logit > 0 <=> positive)
  double localisation = 0;  // share of positive bags whose top-weighted instance is positive
  double chance = 0;        // the localisation of a uniformly random pick: mean of n_pos / K
  Index positive_bags = 0;
};
// Ties for the top weight are broken uniformly at random in expectation: a bag counts
// (positives among the tied instances) / (number tied), so equal weights give chance.
MilScores score_mil(MilModel& model, const Bags& bags, Index batch_bags = 32);

// Logits and instance weights of the bags, computed without a graph.
MilModel::Output predict(MilModel& model, const Bags& bags);

// The model's loss on `bags` as a function for gradcheck (mean binary cross-entropy).
Tensor mil_loss(MilModel& model, const Bags& bags);

// ---- (b) the figure: bag_figure.cpp ---------------------------------------------------------

struct BagRow {
  std::string title;               // e.g. "attention pooling, test bag 3: positive"
  std::vector<NDArray> instances;  // [1, 28, 28] each
  std::vector<double> weights;     // one per instance
  std::vector<bool> positive;      // whether each instance is of the target class
};
// An RGB picture: one row per bag, each instance above a bar as high as its weight (the
// largest weight of the row fills the bar), green under positive instances, red under the
// others. Writes the PNG and, beside it, a .txt file with the weights.
void write_bag_figure(const std::string& png, const std::vector<BagRow>& rows);

// ---- (c) the noisy linear model: noisy_linear.cpp -------------------------------------------

// y = w_true . x with x ~ N(0, I); the model sees x_i + eps_i, eps_i ~ N(0, s_i^2).
struct NoisyLinearProblem {
  std::vector<double> true_weights;     // +-1
  std::vector<double> noise_variances;  // s_i^2, log-spaced from low to high
};
NoisyLinearProblem make_noisy_linear_problem(Index features, double lowest_variance,
                                             double highest_variance, Generator& gen);

// The minimiser of E[(w . (x + eps) - y)^2] = (w - w_true)^T (w - w_true) + sum_i w_i^2 s_i^2
// (for x ~ N(0, I)): w*_i = w_true_i / (1 + s_i^2).
std::vector<double> optimal_noisy_weights(const NoisyLinearProblem& problem);

// One batch: x [batch, d] clean, observed x + eps [batch, d], y [batch].
struct NoisyBatch {
  Tensor clean, observed, targets;
};
NoisyBatch draw_noisy_batch(const NoisyLinearProblem& problem, Index batch, Generator& gen,
                            DType dtype = kFloat32);

// mean((observed @ w - y)^2), w [d].
Tensor noisy_linear_loss(const Tensor& weights, const NoisyBatch& batch);

struct NoisyTraining {
  std::vector<double> weights;  // the learned w
  std::vector<double> losses;   // the loss of every step
};
// SGD from w = 0, a fresh batch (fresh x and fresh noise) every step.
NoisyTraining train_noisy_linear(const NoisyLinearProblem& problem, int steps, Index batch,
                                 double lr, Generator& gen);

// E[loss(w)] in closed form: sum_i (w_i - w_true_i)^2 + sum_i w_i^2 s_i^2 (the clean error
// plus the ridge term), and the clean error alone.
struct ExpectedLoss {
  double clean = 0, ridge = 0;
  double total() const { return clean + ridge; }
};
ExpectedLoss expected_noisy_loss(const NoisyLinearProblem& problem,
                                 const std::vector<double>& weights);

// Pearson correlation of two equally long lists; Spearman's is Pearson's of their ranks.
double pearson_correlation(const std::vector<double>& a, const std::vector<double>& b);
double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace attend::lesson04
