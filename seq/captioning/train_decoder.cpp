// Training the decoder on the frozen encoder's regions: Adam, minibatches of shuffled
// canvases, the gradient norm clipped, one CSV row per epoch.
#include "seq/captioning/train_decoder.h"

#include <algorithm>
#include <memory>
#include <sstream>

#include "autograd/ops.h"
#include "nn/optim/optim.h"
#include "nn/viz/csv_log.h"
#include "nn/viz/progress.h"

namespace attend::captioning {

namespace {

// Word accuracy under teacher forcing: cheap enough to print after every epoch.
double teacher_forced_accuracy(CaptionDecoder& decoder, const NDArray& regions,
                               const std::vector<CanvasExample>& canvases,
                               const Vocabulary& vocab) {
  NoGradGuard no_graph;
  Index right = 0, total = 0;
  for (std::size_t start = 0; start < canvases.size(); start += 128) {
    std::vector<Index> indices;
    std::vector<const CanvasExample*> batch;
    for (std::size_t i = start; i < std::min(canvases.size(), start + 128); ++i) {
      indices.push_back(static_cast<Index>(i));
      batch.push_back(&canvases[i]);
    }
    CaptionBatch captions = make_caption_batch(batch, vocab);
    const NDArray best =
        argmax(unroll(decoder, rows(regions, indices), captions.inputs).logits, -1).data();
    const NDArray targets = captions.targets.data();
    for (Index i = 0; i < targets.numel(); ++i) {
      const std::int64_t target = targets.data<std::int64_t>()[i];
      if (target == Vocabulary::kPad) continue;
      right += best.data<std::int64_t>()[i] == target;
      ++total;
    }
  }
  return total > 0 ? static_cast<double>(right) / static_cast<double>(total) : 0.0;
}

}  // namespace

std::vector<CaptionEpoch> train_decoder(CaptionDecoder& decoder, const RegionFile& train_regions,
                                        const std::vector<CanvasExample>& train,
                                        const NDArray& validation_regions,
                                        const std::vector<CanvasExample>& validation,
                                        const Vocabulary& vocab, const CaptionTrainOptions& options,
                                        Generator& gen, const StepLoss& step_loss) {
  if (options.epochs < 1) fail("train_decoder: epochs must be at least 1, got {}", options.epochs);
  if (options.batch < 1) fail("train_decoder: batch must be at least 1, got {}", options.batch);
  StepLoss loss_of = step_loss ? step_loss : [&](const Tensor& regions, const CaptionBatch& batch) {
    return soft_attention_loss(decoder, regions, batch, options.lambda);
  };
  optim::Adam adam(decoder.parameters(), {.lr = options.lr});
  const Index count = static_cast<Index>(train.size());
  const Index steps = (count + options.batch - 1) / options.batch;
  // The learning rate falls along half a cosine to a tenth of itself over the whole run.
  const optim::Schedule schedule =
      optim::CosineAnnealing(options.lr, steps * options.epochs, options.lr / 10);
  std::unique_ptr<viz::CsvLog> log;
  if (!options.log_path.empty())
    log = std::make_unique<viz::CsvLog>(
        options.log_path,
        std::vector<std::string>{"epoch", "loss", "nll", "penalty", "validation_word_accuracy"});
  std::ostringstream quiet;
  viz::ProgressOptions shown;
  shown.epochs = options.epochs;
  shown.unit = "captions";
  if (!options.progress) shown.out = &quiet;
  viz::Progress progress(steps, shown);
  std::vector<CaptionEpoch> records;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    std::vector<Index> order = gen.permutation(count);
    decoder.train();  // dropout on
    progress.start_epoch();
    CaptionEpoch record;
    record.epoch = epoch;
    for (Index s = 0; s < steps; ++s) {
      std::vector<Index> indices(order.begin() + s * options.batch,
                                 order.begin() + std::min(count, (s + 1) * options.batch));
      std::vector<const CanvasExample*> batch;
      for (Index i : indices) batch.push_back(&train[static_cast<std::size_t>(i)]);
      optim::apply_schedule(adam, schedule);
      adam.zero_grad();
      CaptionLoss loss = loss_of(train_regions.rows(indices), make_caption_batch(batch, vocab));
      optim::check_loss_is_finite("train_decoder", (epoch - 1) * steps + s + 1, loss.total.item());
      loss.total.backward();
      optim::clip_grad_norm(decoder.parameters(), options.clip);
      adam.step();
      progress.step(loss.total.item(), static_cast<Index>(indices.size()));
      record.nll += loss.nll / static_cast<double>(steps);
      record.penalty += loss.penalty / static_cast<double>(steps);
    }
    record.loss = progress.end_epoch();
    decoder.eval();  // dropout off: validation, and whatever follows training
    record.validation_word_accuracy =
        teacher_forced_accuracy(decoder, validation_regions, validation, vocab);
    if (log)
      log->write({{"epoch", epoch},
                  {"loss", record.loss},
                  {"nll", record.nll},
                  {"penalty", record.penalty},
                  {"validation_word_accuracy", record.validation_word_accuracy}});
    records.push_back(record);
  }
  return records;
}

}  // namespace attend::captioning
