// Section 5 of the program: the MLP stopped, saved, loaded and continued, three ways, and a
// checkpoint with one byte changed.
#include <algorithm>

#include "program.h"

namespace attend::lesson03 {
namespace {

constexpr std::int64_t kCorruptOffset = 1000;  // the byte flipped in the corrupt copy

}  // namespace

void section_checkpoints(app::Transcript& t, const Data& d, const Options& o) {
  t.heading("5. Checkpoints: stop, save, load, continue");
  const Index images =
      o.resume_images > 0 ? std::min(o.resume_images, d.train.size()) : d.train.size();
  data::LabelledImages subset;
  subset.images = slice(d.train.images, 0, 0, images);
  subset.labels = slice(d.train.labels, 0, 0, images);
  subset.class_names = d.train.class_names;
  ResumeOptions resume{
      .epochs_before = 1,
      .epochs_after = 1,
      .train = {.batch_size = o.batch, .learning_rate = o.lr, .cosine = o.cosine, .seed = o.seed},
      .mlp = o.mlp};
  const std::string path = o.out + "/resume.ckpt";
  t.say(
      "The MLP on the first {} training pictures, 2 epochs, three ways: straight through;\n"
      "stopped after epoch 1 and saved to {}; and a fresh model, Adam and DataLoader\n"
      "(built from other seeds) loaded from that file and continued.\n",
      images, path);
  const ResumeResult r = resume_demo(subset, resume, path);
  t.say("The checkpoint: {} bytes, saved after step {}.\n", r.checkpoint_bytes, r.steps_before);

  const std::vector<double> after(r.uninterrupted.begin() + r.steps_before, r.uninterrupted.end());
  t.say("\n{:>6}  {:>22}  {:>22}  {:>22}\n", "step", "uninterrupted", "resumed from the file",
        "resumed, fresh Adam");
  const std::size_t n = after.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= 3 && i + 2 < n) {
      if (i == 3) t.say("{:>6}\n", "...");
      continue;
    }
    t.say("{:>6}  {:>22.17g}  {:>22.17g}  {:>22.17g}\n", r.steps_before + Index(i), after[i],
          r.resumed[i], r.without_optimizer[i]);
  }
  const Comparison same = compare_losses(after, r.resumed);
  const Comparison fresh = compare_losses(after, r.without_optimizer);
  t.say(
      "Resumed from the file: {} of {} losses bitwise equal (largest difference {:.3g}); final\n"
      "parameters bitwise equal: {}.\n",
      same.equal, same.total, same.max_difference, r.parameters_equal ? "yes" : "no");
  t.say("Resumed without Adam's state: {} of {} equal, largest difference {:.3g}.\n", fresh.equal,
        fresh.total, fresh.max_difference);

  const std::string copy = o.out + "/resume_corrupt.ckpt";
  t.say("\nOne byte changed (byte {} of a copy, every bit flipped), then loaded:\n  {}\n",
        kCorruptOffset, load_corrupted_copy(path, copy, kCorruptOffset, o.mlp));
}

}  // namespace attend::lesson03
