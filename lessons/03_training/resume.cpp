// (4) Checkpoints. A long run should survive being stopped: save everything it depends on,
// load it into fresh objects later, and continue. "Everything" is four things:
//
//   the model's parameters           what it has learnt
//   the optimizer's state            Adam's running averages m and v, and its step counts
//   the training step                where in the schedule the run is
//   the random generators' states    which batches come next, which units dropout drops
//
// With all four restored, the continued run performs the same floating-point operations in
// the same order as a run that never stopped, so it computes the same losses bit for bit.
// Here the checkpoint is taken at an epoch boundary: the DataLoader's generator goes into
// the file (TrainingState::rng), and dropout's is re-seeded from (seed, epoch) at the start
// of every epoch anyway (train_epoch), so it needs no saving.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "lesson.h"

namespace attend::lesson03 {
namespace {

// Everything one training run of the MLP owns. Built from two seeds: the initial weights'
// and the batch order's.
struct MlpRun {
  MlpRun(const ResumeOptions& options, const data::LabelledImages& train, std::uint64_t init_seed,
         std::uint64_t shuffle_seed)
      : init(init_seed),
        model(options.mlp, init),
        optimizer(model.parameters(), {.lr = options.train.learning_rate}),
        loader(train.dataset(),
               {.batch_size = options.train.batch_size, .shuffle = true, .seed = shuffle_seed}),
        schedule(learning_rate_schedule(
            options.train.learning_rate, options.train.cosine,
            std::int64_t{options.epochs_before + options.epochs_after} * loader.size())) {}

  Generator init;
  Mlp model;
  optim::Adam optimizer;
  data::DataLoader loader;
  optim::Schedule schedule;  // follows optimizer.steps_taken(), which the checkpoint restores
};

// Epochs first..last with train_epoch, appending every step's loss.
void run_epochs(MlpRun& run, int first, int last, std::uint64_t seed, std::vector<double>& losses) {
  for (int epoch = first; epoch <= last; ++epoch)
    train_epoch(run.model, run.optimizer, run.schedule, run.loader, epoch, seed, &losses);
}

bool same_bits(const nn::Module& a, const nn::Module& b) {
  const std::vector<Tensor> pa = a.parameters(), pb = b.parameters();
  if (pa.size() != pb.size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const NDArray &x = pa[i].data(), &y = pb[i].data();
    if (x.shape() != y.shape() || x.dtype() != y.dtype() ||
        std::memcmp(x.raw_data(), y.raw_data(), static_cast<std::size_t>(x.nbytes())) != 0)
      return false;
  }
  return true;
}

// A fresh run from seeds unlike the original's, then the checkpoint loaded into it: every
// value that matters must come from the file. Continues to the end and returns the losses.
std::vector<double> continue_from(const std::string& path, const ResumeOptions& options,
                                  bool with_optimizer, MlpRun& run) {
  nn::TrainingState state =
      nn::load_checkpoint(path, run.model, with_optimizer ? &run.optimizer : nullptr);
  run.loader.generator().set_state(state.rng);
  // The checkpoint was taken at an epoch boundary; its step says which.
  const int next_epoch = static_cast<int>(state.step / run.loader.size()) + 1;
  std::vector<double> losses;
  run_epochs(run, next_epoch, options.epochs_before + options.epochs_after, options.train.seed,
             losses);
  return losses;
}

}  // namespace

ResumeResult resume_demo(const data::LabelledImages& train, const ResumeOptions& options,
                         const std::string& checkpoint_path) {
  if (options.epochs_before < 1 || options.epochs_after < 1)
    fail("resume_demo: needs at least one epoch before and one after the checkpoint, got {} and {}",
         options.epochs_before, options.epochs_after);
  const std::uint64_t seed = options.train.seed;
  const std::uint64_t init_seed = stream_seed(seed, kInitStream);
  const std::uint64_t shuffle_seed = stream_seed(seed, kShuffleStream);
  const int last_epoch = options.epochs_before + options.epochs_after;
  ResumeResult out;

  // 1. The run that never stops.
  MlpRun straight(options, train, init_seed, shuffle_seed);
  run_epochs(straight, 1, last_epoch, seed, out.uninterrupted);

  // 2. The same run, stopped after epochs_before and saved.
  {
    MlpRun first_part(options, train, init_seed, shuffle_seed);
    std::vector<double> losses;
    run_epochs(first_part, 1, options.epochs_before, seed, losses);
    out.steps_before = static_cast<Index>(losses.size());
    nn::save_checkpoint(checkpoint_path, first_part.model, &first_part.optimizer,
                        {.step = out.steps_before, .rng = first_part.loader.generator().state()});
  }  // first_part is gone: nothing of it survives but the file
  out.checkpoint_bytes = std::filesystem::file_size(checkpoint_path);

  // 3. Continued in fresh objects, from other seeds, loaded from the file.
  const std::uint64_t other_seed = seed + 1000;
  MlpRun resumed(options, train, stream_seed(other_seed, kInitStream),
                 stream_seed(other_seed, kShuffleStream));
  out.resumed = continue_from(checkpoint_path, options, true, resumed);
  out.parameters_equal = same_bits(resumed.model, straight.model);

  // 4. The same, but the optimizer's state left out: Adam starts again from m = v = 0.
  MlpRun forgetful(options, train, stream_seed(other_seed, kInitStream),
                   stream_seed(other_seed, kShuffleStream));
  out.without_optimizer = continue_from(checkpoint_path, options, false, forgetful);
  return out;
}

Comparison compare_losses(const std::vector<double>& a, const std::vector<double>& b) {
  Comparison out;
  out.total = static_cast<Index>(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    // Bitwise: the same 64 bits, not merely close.
    if (std::bit_cast<std::uint64_t>(a[i]) == std::bit_cast<std::uint64_t>(b[i])) ++out.equal;
    out.max_difference = std::max(out.max_difference, std::abs(a[i] - b[i]));
  }
  return out;
}

std::string load_corrupted_copy(const std::string& checkpoint_path, const std::string& copy_path,
                                std::int64_t offset, const MlpConfig& config) {
  std::filesystem::copy_file(checkpoint_path, copy_path,
                             std::filesystem::copy_options::overwrite_existing);
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(copy_path));
  const std::int64_t at = offset < 0 ? size + offset : offset;
  if (at < 0 || at >= size)
    fail("load_corrupted_copy: offset {} is outside the {}-byte file", offset, size);
  {
    std::fstream file(copy_path, std::ios::in | std::ios::out | std::ios::binary);
    char byte = 0;
    file.seekg(at);
    file.read(&byte, 1);
    byte = static_cast<char>(~byte);  // every bit flipped
    file.seekp(at);
    file.write(&byte, 1);
    if (!file) fail("load_corrupted_copy: cannot change byte {} of '{}'", at, copy_path);
  }
  Generator init(0);
  Mlp model(config, init);
  try {
    nn::load_checkpoint(copy_path, model);
  } catch (const Error& e) {
    return e.what();
  }
  fail("load_corrupted_copy: '{}' loaded without an error after byte {} was changed", copy_path,
       at);
}

}  // namespace attend::lesson03
