// Training a language model for a time budget, and its validation loss.
//
// The loop is ref_charlm.py's (the PyTorch anchor in ../shared/bench): AdamW (weight decay
// 0.01), random windows of T + 1 characters, cross-entropy of the next character at every
// position, no schedule, no clipping. Only the training steps count against the budget; the
// validation passes that draw the curve are timed apart.
#include <chrono>
#include <sstream>

#include "lesson.h"

namespace attend::lesson12 {

namespace {

// The inputs (columns 0..T-1) and targets (1..T) of windows [B, T+1].
std::pair<Tensor, Tensor> inputs_and_targets(const NDArray& windows) {
  const Tensor w(windows);
  const Index length = windows.size(1);
  return {slice(w, 1, 0, length - 1), slice(w, 1, 1, length)};
}

}  // namespace

double validation_loss(nn::Module& model, const LanguageModel& forward, const NDArray& windows,
                       Index batch) {
  NoGradGuard no_graph;
  const bool was_training = model.is_training();
  model.eval();
  const Index n = windows.size(0);
  double total = 0;
  const Tensor all(windows);
  for (Index start = 0; start < n; start += batch) {
    const Index stop = std::min(n, start + batch);
    auto [x, y] = inputs_and_targets(slice(all, 0, start, stop).data().clone());
    total += nn::cross_entropy(forward(x), y).item() * static_cast<double>(stop - start);
  }
  model.train(was_training);
  return total / static_cast<double>(n);
}

TrainResult train_language_model(nn::Module& model, const LanguageModel& forward,
                                 const std::vector<std::int64_t>& train, const NDArray& validation,
                                 const Options& o, Generator& gen) {
  optim::AdamW adamw(model.parameters(), {.lr = o.lr, .weight_decay = 0.01});
  viz::ProgressOptions progress_options;
  progress_options.unit = "windows";
  std::ostringstream quiet;  // where the progress line goes when it is switched off
  if (!o.progress) progress_options.out = &quiet;
  viz::Progress progress(0, progress_options);
  progress.start_epoch();
  TrainResult r;
  // Five points on the validation curve besides the start.
  const double eval_every = o.seconds / 5;
  double next_eval = 0;
  while (true) {
    if (r.seconds >= next_eval || r.seconds >= o.seconds) {
      r.validation_loss = validation_loss(model, forward, validation, o.batch);
      r.curve.emplace_back(r.seconds, r.validation_loss);
      next_eval += eval_every;
      if (r.seconds >= o.seconds) break;
    }
    const auto start = std::chrono::steady_clock::now();
    auto [x, y] = inputs_and_targets(data::sample_windows(train, o.batch, o.context + 1, gen));
    Tensor loss = nn::cross_entropy(forward(x), y);
    r.train_loss = loss.item();
    optim::check_loss_is_finite("train", r.steps + 1, r.train_loss);
    adamw.zero_grad();
    loss.backward();
    adamw.step();
    ++r.steps;
    progress.step(r.train_loss, o.batch);
    r.seconds += app::seconds_since(start);
  }
  progress.end_epoch();
  return r;
}

void apply_long_preset(Options& o) {
  // The same model, longer (docs/12_gpt.md, "--long"); "Choosing the default" says why the
  // default is this small: at 150 s, steps matter more than width. A bigger model at 480 s
  // has not been measured.
  o.seconds = 480;
}

}  // namespace attend::lesson12
