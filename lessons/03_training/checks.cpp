// (2) Two checks before a long training run, each a few seconds:
//
//   gradcheck          are the gradients of the whole model right? (lesson 02, now on every
//                      layer at once: convolution, pooling, linear, dropout, cross-entropy)
//   overfit one batch  can the model and the loop drive the loss to zero on a handful of
//                      pictures? If not, something is broken (a detached layer, a wrong
//                      sign, a learning rate far off), and a full run would only waste time.
#include "lesson.h"

namespace attend::lesson03 {

ModelConfigs gradcheck_configs() {
  ModelConfigs configs;
  configs.mlp = {.hidden1 = 12, .hidden2 = 8, .dropout = 0.2};
  configs.cnn = {.channels1 = 3, .channels2 = 4, .hidden = 8, .dropout = 0.25};
  return configs;
}

GradcheckResult gradcheck_model(ModelKind kind, std::uint64_t seed, Index elements_per_parameter) {
  constexpr Index kPictures = 2;
  Generator gen(seed);
  std::unique_ptr<Classifier> model = make_model(kind, gradcheck_configs(), gen);
  model->to(kFloat64);  // finite differences need float64 (lesson 02, section 4)
  model->train();       // dropout on: its masking is part of what is checked
  Tensor images(NDArray::normal({kPictures, 1, kImageSize, kImageSize}, gen, 0, 1, kFloat64));
  Tensor labels(NDArray::from_list({3, 7}, {kPictures}, kInt64));
  const std::uint64_t mask_seed = gen.next_u64();
  auto loss = [&](const std::vector<Tensor>&) {
    // The same dropout mask for every evaluation: otherwise the function itself would
    // change between the nudged evaluations.
    model->dropout_generator().manual_seed(mask_seed);
    return nn::cross_entropy((*model)(images), labels);
  };
  return gradcheck(loss, model->parameters(),
                   {.max_elements_per_input = elements_per_parameter, .seed = seed});
}

OverfitResult overfit_one_batch(ModelKind kind, const ModelConfigs& configs,
                                const data::LabelledImages& images, Index batch, int steps,
                                double learning_rate, std::uint64_t seed) {
  if (batch < 1 || batch > images.size())
    fail("overfit_one_batch: batch must be in 1..{}, got {}", images.size(), batch);
  if (steps < 1) fail("overfit_one_batch: steps must be at least 1, got {}", steps);
  Generator init(stream_seed(seed, kInitStream));
  std::unique_ptr<Classifier> model = make_model(kind, configs, init);
  model->dropout_generator().manual_seed(stream_seed(seed, kDropoutStream));
  optim::Adam optimizer(model->parameters(), {.lr = learning_rate});
  const data::Batch pictures = images.dataset().range(0, batch);
  OverfitResult out;
  model->train();
  for (int step = 0; step < steps; ++step)
    out.losses.push_back(train_step(*model, optimizer, pictures, "overfit_one_batch", step + 1));
  data::LabelledImages same;
  same.images = pictures.inputs.data();
  same.labels = pictures.targets.data();
  const Evaluation after = evaluate(*model, same, batch);
  out.final_loss = after.loss;
  out.final_accuracy = after.accuracy;
  return out;
}

}  // namespace attend::lesson03
