// (2) The two models. Both read a picture [1, 28, 28] and give 10 logits, one per class.
//
// The MLP sees the picture as a list of 784 numbers: the first layer has a separate weight
// for every pixel, so a shirt moved by two pixels is, to it, a different input. The CNN
// slides the same small 3x3 filters over the whole picture (weight sharing) and pools, so
// it finds an edge or a collar wherever it is, with far fewer weights per layer.
#include "lesson.h"

namespace attend::lesson03 {
namespace {

// Each convolution keeps the size (3x3 kernel, padding 1) and each pooling halves it:
// 28 -> 14 -> 7.
constexpr Index kKernel = 3, kPadding = 1, kPool = 2;
constexpr Index kPooledSize = kImageSize / kPool / kPool;  // 7

}  // namespace

Mlp::Mlp(const MlpConfig& config, Generator& init)
    : fc1(kImageSize * kImageSize, config.hidden1, true, init),
      fc2(config.hidden1, config.hidden2, true, init),
      fc3(config.hidden2, kClasses, true, init),
      dropout(config.dropout, dropout_generator()) {
  register_module("fc1", fc1);
  register_module("fc2", fc2);
  register_module("fc3", fc3);
  // No parameters, but a mode: registered, it follows the model's train() and eval().
  register_module("dropout", dropout);
}

Tensor Mlp::forward(const Tensor& images) {
  Tensor x = flatten(images);  // [B, 784]
  x = dropout(relu(fc1(x)));   // [B, hidden1]
  x = dropout(relu(fc2(x)));   // [B, hidden2]
  return fc3(x);               // [B, 10]
}

SmallCnn::SmallCnn(const CnnConfig& config, Generator& init)
    : conv1(1, config.channels1, kKernel, 1, kPadding, true, init),
      conv2(config.channels1, config.channels2, kKernel, 1, kPadding, true, init),
      pool(kPool),
      fc1(config.channels2 * kPooledSize * kPooledSize, config.hidden, true, init),
      fc2(config.hidden, kClasses, true, init),
      dropout(config.dropout, dropout_generator()) {
  register_module("conv1", conv1);
  register_module("conv2", conv2);
  register_module("fc1", fc1);
  register_module("fc2", fc2);
  register_module("dropout", dropout);
}

Tensor SmallCnn::forward(const Tensor& images) {
  Tensor x = pool(relu(conv1(images)));  // [B, c1, 14, 14]
  x = pool(relu(conv2(x)));              // [B, c2, 7, 7]
  x = flatten(x);                        // [B, c2 * 49]
  x = dropout(relu(fc1(x)));             // [B, hidden]
  return fc2(x);                         // [B, 10]
}

std::string model_name(ModelKind kind) {
  return kind == ModelKind::kMlp ? "MLP" : "CNN";
}

std::unique_ptr<Classifier> make_model(ModelKind kind, const ModelConfigs& configs,
                                       Generator& init) {
  if (kind == ModelKind::kMlp) return std::make_unique<Mlp>(configs.mlp, init);
  return std::make_unique<SmallCnn>(configs.cnn, init);
}

// ---- exercise reference solutions -------------------------------------------------------

Index mlp_parameter_count(const MlpConfig& c) {
  const Index pixels = kImageSize * kImageSize;
  return (pixels * c.hidden1 + c.hidden1) + (c.hidden1 * c.hidden2 + c.hidden2) +
         (c.hidden2 * kClasses + kClasses);
}

Index cnn_parameter_count(const CnnConfig& c) {
  const Index conv1 = c.channels1 * 1 * kKernel * kKernel + c.channels1;
  const Index conv2 = c.channels2 * c.channels1 * kKernel * kKernel + c.channels2;
  const Index flat = c.channels2 * kPooledSize * kPooledSize;  // two poolings: 28 -> 7
  return conv1 + conv2 + (flat * c.hidden + c.hidden) + (c.hidden * kClasses + kClasses);
}

}  // namespace attend::lesson03
