// Dates 1: lesson 11's Transformer, loaded from the checkpoint lesson 11 saves
// (output/11_transformer/transformer.ckpt), or trained here with lesson 11's recipe and a
// smaller budget when that file is missing; then its greedy outputs on the test dates.
#include <cmath>
#include <filesystem>

#include "dates.h"

namespace attend::lesson13 {
namespace {

// Lesson 11's training recipe (its defaults; lessons/11_transformer/lesson.h).
constexpr double kPeakLr = 5e-3, kClip = 1.0, kDropout = 0.1;
constexpr Index kWarmupSteps = 200, kTrainingBatch = 64;
constexpr Index kMaxLength = 64;  // positions the model covers (the longest date has 40)
// Where a model trained here is saved: --dates-model reads it on the next run.
constexpr const char* kTrainedHere = "dates_transformer.ckpt";

// Eq. 3 of Vaswani et al. with its peak at kPeakLr after kWarmupSteps (lesson 11's noam).
optim::Schedule noam(Index d_model) {
  const double factor = kPeakLr * std::sqrt(static_cast<double>(d_model * kWarmupSteps));
  return optim::NoamSchedule(d_model, kWarmupSteps, factor);
}

void train_here(app::Transcript& t, const Options& o, DatesModel& m, Generator& gen) {
  t.say(
      "{}:\n"
      "training the same model here with lesson 11's recipe (Adam, noam schedule peaking at {}\n"
      "after {} steps, clipping at {}, batches of {}) and a smaller budget: at most {} epochs or\n"
      "{} s, stopping at {:.1f}% validation exact match. (Run ./build/bin/11_transformer first\n"
      "for lesson 11's model.)\n",
      o.dates_model == "none" ? "--dates-model none" : "No lesson 11 model at " + o.dates_model,
      kPeakLr, kWarmupSteps, kClip, kTrainingBatch, o.dates_epochs, o.dates_seconds,
      100 * o.dates_stop_at);
  const seq::TrainingResult r = seq::train_on_dates(*m.model, m.task, kTrainingBatch, gen,
                                                    {.max_epochs = o.dates_epochs,
                                                     .seconds = o.dates_seconds,
                                                     .learning_rate = kPeakLr,
                                                     .schedule = noam(o.dates_d_model),
                                                     .clip_norm = kClip,
                                                     .stop_at = o.dates_stop_at,
                                                     .log_path = "",
                                                     .label = "dates",
                                                     .progress = o.progress});
  t.say("Trained {} epochs, {} steps{}; validation exact match {:.1f}%.\n", r.epochs, r.steps,
        r.reached_target ? " (reached the target)" : " (did not reach the target)",
        r.validation_score.empty() ? 0.0 : 100 * r.validation_score.back());
  const std::string saved = o.out + "/" + kTrainedHere;
  nn::save_checkpoint(saved, *m.model);
  t.say("Saved it to {} (--dates-model reads it).\n", saved);
}

void load(app::Transcript& t, const std::string& path, seq::TransformerSeq2Seq& model) {
  try {
    nn::load_checkpoint(path, model);
  } catch (const Error& e) {  // the message names the file
    fail("--dates-model: {} (is it lesson 11's model, with the --dates-* sizes given here?)",
         e.what());
  }
  t.say("Loaded lesson 11's trained model from {}.\n", path);
}

}  // namespace

seq::TransformerSizes dates_sizes(const seq::DateTask& task, const Options& o) {
  return {.source_vocabulary = task.source_vocabulary.size(),
          .target_vocabulary = task.target_vocabulary.size(),
          .d_model = o.dates_d_model,
          .heads = o.dates_heads,
          .layers = o.dates_layers,
          .feedforward = o.dates_ff,
          .max_length = kMaxLength,
          .dropout = kDropout,
          .norm_first = o.dates_norm_first,
          .positions = seq::parse_positions(o.dates_positions)};
}

DatesModel section_dates_model(app::Transcript& t, const Options& o) {
  t.heading("Dates 1. Lesson 11's Transformer");
  // An explicit path must exist; lesson 11's default may be missing (the model is trained).
  const bool none = o.dates_model == "none";
  const bool exists = !none && std::filesystem::exists(o.dates_model);
  if (!none && !exists && o.dates_model != kLesson11Model)
    fail("--dates-model: there is no file '{}' (leave the flag out to train the model here)",
         o.dates_model);
  DatesModel m;
  m.task = seq::make_date_task(static_cast<std::size_t>(o.dates_train),
                               static_cast<std::size_t>(o.dates_validation),
                               static_cast<std::size_t>(o.dates_test), o.seed);
  // Lesson 11's order: the generator makes the model, then drives its training.
  Generator gen(o.seed);
  m.model = std::make_unique<seq::TransformerSeq2Seq>(dates_sizes(m.task, o), gen);
  if (exists) {
    load(t, o.dates_model, *m.model);
  } else {
    m.trained_here = true;
    train_here(t, o, m, gen);
  }
  m.model->eval();
  t.say("{}:\n{} parameters.\n", m.model->describe(), m.model->parameter_count());

  m.decoded = decode_test_dates(m);
  m.outputs = seq::date_strings(m.task, m.decoded);
  m.exact_match = seq::exact_match(m.task.test, m.outputs);
  t.say("Greedy decoding of the {} test dates (seed {}): exact match {:.2f}%.\n",
        m.task.test.size(), o.seed, 100 * m.exact_match);
  return m;
}

}  // namespace attend::lesson13
