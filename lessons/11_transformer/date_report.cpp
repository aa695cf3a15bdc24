// Sections 2 and 3 of the program: the Transformer trained on dates, and scored on the
// held-out dates: exact match, decoding with and without the key/value cache, beam search.
#include <chrono>

#include "lesson.h"

namespace attend::lesson11 {

seq::TrainingResult train_transformer(app::Transcript& t, seq::TransformerSeq2Seq& model,
                                      const seq::DateTask& task, const Options& o, Generator& gen,
                                      const std::string& csv, bool report) {
  if (report) {
    t.heading("2. Training on dates");
    t.say(
        "{} training dates, Adam (peak lr {}, schedule {}, {} warm-up steps), clipping at {},\n"
        "batches of {} of similar length; at most {} epochs or {} s, stopping once validation\n"
        "exact match reaches {:.1f}%.\n",
        task.train.size(), o.lr, o.schedule, o.schedule == "constant" ? 0 : o.warmup, o.clip,
        o.batch_size, o.epochs, o.seconds, 100 * o.stop_at);
  }
  const seq::TrainingResult r = seq::train_on_dates(model, task, o.batch_size, gen,
                                                    {.max_epochs = o.epochs,
                                                     .seconds = o.seconds,
                                                     .learning_rate = o.lr,
                                                     .schedule = learning_rate_schedule(o),
                                                     .clip_norm = o.clip,
                                                     .stop_at = o.stop_at,
                                                     .log_path = csv,
                                                     .label = "dates",
                                                     .progress = o.progress});
  if (report)
    seq::report_training(t, r, o.out + "/training_dates.png", "Lesson 11: a Transformer on dates");
  return r;
}

ModelScores decode_test_dates(seq::Seq2SeqModel& model, const seq::DateTask& task) {
  model.eval();
  ModelScores s;
  s.parameters = model.parameter_count();
  const auto start = std::chrono::steady_clock::now();
  s.decoded = seq::decode_dates(model, task, task.test);
  s.decode_ms = 1000 * app::seconds_since(start) / static_cast<double>(task.test.size());
  s.exact_match = seq::exact_match(task.test, seq::date_strings(task, s.decoded));
  return s;
}

void score_dates(app::Transcript& t, seq::TransformerSeq2Seq& model, const seq::DateTask& task,
                 ModelScores& s, const Options& o) {
  t.heading("3. Held-out dates");
  const std::vector<std::string> predictions = seq::date_strings(task, s.decoded);
  t.say("greedy: exact match {:.2f}% on the {} test dates (target >= {:.1f}%: {})\n",
        100 * s.exact_match, task.test.size(), 100 * kExactMatchTarget,
        s.exact_match >= kExactMatchTarget ? "met" : "NOT met");

  // The same decoding without the cache: every step runs the decoder over the whole prefix.
  model.use_cache = false;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Decoded> recomputed = seq::decode_dates(model, task, task.test);
  const double recompute_ms =
      1000 * app::seconds_since(start) / static_cast<double>(task.test.size());
  model.use_cache = true;
  std::size_t same = 0;
  double largest = 0;  // the largest difference of an attention weight
  for (std::size_t i = 0; i < recomputed.size(); ++i) {
    same += recomputed[i].tokens == s.decoded[i].tokens;
    for (std::size_t r = 0; r < recomputed[i].weights.size() && r < s.decoded[i].weights.size();
         ++r)
      for (std::size_t j = 0; j < recomputed[i].weights[r].size(); ++j)
        largest =
            std::max(largest, std::abs(recomputed[i].weights[r][j] - s.decoded[i].weights[r][j]));
  }
  t.say(
      "decoding with the key/value cache: {:.3f} ms per date; recomputing the prefix at every\n"
      "step: {:.3f} ms per date (batches of 250). The same outputs for {} of {} dates; largest\n"
      "difference of an attention weight {:.1e}.\n",
      s.decode_ms, recompute_ms, same, recomputed.size(), largest);

  const auto beam_start = std::chrono::steady_clock::now();
  const seq::BeamComparison beam = seq::compare_beam_with_greedy(
      model, task, task.test, s.decoded, static_cast<std::size_t>(o.beam_dates),
      {.width = o.beam, .max_length = seq::kMaxDateLength}, 20);
  t.say("beam width 1 gives the greedy output, token for token, on {} of {} dates\n",
        beam.width_one_same, beam.width_one_checked);
  if (beam.dates > 0)
    t.say("first {} dates: greedy {:.1f}%, beam width {} {:.1f}% ({:.1f} s)\n", beam.dates,
          100 * beam.greedy_exact_match, o.beam, 100 * beam.beam_exact_match,
          app::seconds_since(beam_start));
  for (std::size_t i = 0; i < task.test.size(); ++i)
    if (predictions[i] != task.test[i].output)
      t.say("  wrong: {:>30} -> {} (true {})\n", '"' + task.test[i].input + '"', predictions[i],
            task.test[i].output);
}

}  // namespace attend::lesson11
