// Lesson 06: sequence to sequence without attention. Run it and read docs/06_seq2seq.md
// next to it:
//
//   ./build/bin/06_seq2seq                # seed 0, into output/06_seq2seq
//   ./build/bin/06_seq2seq --help         # the flags
//
// A GRU encoder reads a date written by a human ("the 3rd of march, 2015"), its final state
// c is all the decoder gets, and the decoder writes "2015-03-03" one character at a time.
// The program trains it with teacher forcing, decodes the held-out dates greedily and with
// beam search, and writes the accuracy against input length that lesson 07 compares with.
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::seq;
using attend::app::seconds_since;
using attend::app::Transcript;
using attend::data::DateExample;
using attend::lesson06::EncoderDecoder;

namespace {

// The date task's and its training's flags (seq::DateTrainingFlags), then the model's and
// this lesson's own: each with its flag, default, help and range.
struct Options : seq::DateTrainingFlags {
  Index embedding = flag(embedding, "embedding", 16, "embedding size m", app::at_least<Index>(1));
  Index hidden =
      flag(hidden, "hidden", 64, "GRU state size n (the size of c)", app::at_least<Index>(1));
  Index beam = flag(beam, "beam", 5, "beam width", app::at_least<Index>(1));
  double length_penalty = flag(length_penalty, "length-penalty", 1.0,
                               "beam ranking: log p / length^this", app::at_least(0.0));
  Index beam_dates = flag(beam_dates, "beam-dates", 200, "test dates decoded by beam search too",
                          app::at_least<Index>(0));
  std::string out =
      flag(out, "out", "output/06_seq2seq", "folder for summary.txt, the CSV files and the plots");
};

// How many test dates are compared token for token under beam width 1 and greedy.
constexpr std::size_t kBeamOneChecks = 50;
// How many wrong outputs section 5 shows.
constexpr int kErrorsShown = 8;

void section_model(Transcript& t, EncoderDecoder& model, const Options& o) {
  t.heading("2. The RNN encoder-decoder");
  t.say("encoder  h_t = GRU(E x_t, h_(t-1)),  c = h_(T_x)      the whole input in {} numbers\n",
        o.hidden);
  t.say("decoder  s_0 = tanh(W_s c),  s_i = GRU([E y_(i-1); c], s_(i-1))\n");
  t.say("output   p(y_i | y_<i, x) = softmax(W_o [s_i; c; E y_(i-1)] + b_o)\n");
  t.say("{}", model.summary());

  // The gradient of the whole model, in float64, against finite differences.
  Generator gen(o.seed);
  EncoderDecoder tiny({.source_vocabulary = 8, .target_vocabulary = 8, .embedding = 3, .hidden = 4},
                      gen);
  tiny.to(kFloat64);
  const Batch batch = tiny_batch(8);
  t.say(
      "\ngradcheck of the whole model at vocab 8, m = 3, n = 4, on 2 padded sentences\n"
      "(source lengths 5 and 3, target lengths 5 and 3):\n  {}\n",
      gradcheck_model(tiny, batch).report);
}

TrainingResult section_training(Transcript& t, EncoderDecoder& model, const DateTask& task,
                                const Options& o, Generator& gen) {
  t.heading("3. Training with teacher forcing");
  t.say(
      "Adam (lr {}), gradient norm clipped at {}, batches of {} dates of similar length;\n"
      "at most {} epochs or {} s, stopping once validation exact match reaches {:.1f}%.\n",
      o.lr, o.clip, o.batch_size, o.epochs, o.seconds, 100 * o.stop_at);
  const TrainingResult r = train_on_dates(model, task, o.batch_size, gen,
                                          {.max_epochs = o.epochs,
                                           .seconds = o.seconds,
                                           .learning_rate = o.lr,
                                           .clip_norm = o.clip,
                                           .stop_at = o.stop_at,
                                           .log_path = o.out + "/training.csv",
                                           .label = "dates",
                                           .progress = o.progress});
  report_training(t, r, o.out + "/training.png", "Lesson 06: encoder-decoder without attention");
  return r;
}

std::vector<std::string> section_test(Transcript& t, EncoderDecoder& model, const DateTask& task,
                                      const Options& o) {
  t.heading("4. Held-out dates: greedy decoding and beam search");
  model.eval();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Decoded> decoded = decode_dates(model, task, task.test);
  std::vector<std::string> greedy = date_strings(task, decoded);
  t.say("greedy: exact match {:.1f}% on the {} test dates ({:.1f} s)\n",
        100 * exact_match(task.test, greedy), task.test.size(), seconds_since(start));

  // Beam search, one date at a time, on the first beam_dates test dates.
  const auto beam_start = std::chrono::steady_clock::now();
  const BeamComparison beam = compare_beam_with_greedy(
      model, task, task.test, decoded, static_cast<std::size_t>(o.beam_dates),
      {.width = o.beam, .max_length = kMaxDateLength, .length_penalty = o.length_penalty},
      kBeamOneChecks);
  t.say("beam width 1 gives the greedy output on {} of {} dates (it must: it is greedy)\n",
        beam.width_one_same, beam.width_one_checked);
  if (beam.dates > 0)
    t.say("on the first {} dates: greedy {:.1f}%, beam width {} {:.1f}% ({:.1f} s)\n", beam.dates,
          100 * beam.greedy_exact_match, o.beam, 100 * beam.beam_exact_match,
          seconds_since(beam_start));
  return greedy;
}

void section_length(Transcript& t, const DateTask& task, const std::vector<std::string>& greedy,
                    const Options& o) {
  t.heading("5. Accuracy against input length, and by format");
  const std::vector<LengthBucket> buckets = accuracy_by_length(task.test, greedy);
  viz::Series curve{"without attention (lesson 06)"};
  t.say("  {:>12} {:>6} {:>12}\n", "input length", "dates", "exact match");
  for (const LengthBucket& b : buckets) {
    t.say("  {:>5} to {:>2} {:>6} {:>11.1f}%\n", b.low, b.high, b.count, 100 * b.accuracy());
    curve.add(bucket_middle(b), b.accuracy());
  }
  write_length_curve(o.out + "/accuracy_by_length.csv", buckets);
  viz::plot_curves(o.out + "/accuracy_by_length.png", {curve},
                   {.title = "Exact match against input length (held-out dates)",
                    .x_label = "input length (characters, middle of the bucket)",
                    .y_label = "exact match",
                    .y2_label = "",
                    .y_min = 0,
                    .y_max = 1.05});
  t.say("Wrote {0}/accuracy_by_length.csv (lesson 07 reads it) and .png.\n", o.out);

  t.say("\n  {:>2} {:<46} {:>6} {:>12}\n", "", "format", "dates", "exact match");
  const std::vector<FormatScore> formats = accuracy_by_format(task.test, greedy);
  for (int f = 0; f < data::kDateFormats; ++f) {
    const FormatScore& s = formats[static_cast<std::size_t>(f)];
    t.say("  {:>2} {:<46} {:>6} {:>11.1f}%\n", f, data::date_format_description(f), s.count,
          100 * s.accuracy());
  }

  t.say("\nSome wrong outputs:\n");
  int shown = 0;
  for (std::size_t i = 0; i < task.test.size() && shown < kErrorsShown; ++i)
    if (greedy[i] != task.test[i].output) {
      t.say("  {:>30} -> {:<12} (true {})\n", '"' + task.test[i].input + '"', greedy[i],
            task.test[i].output);
      ++shown;
    }
  if (shown == 0) t.say("  none\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "06_seq2seq",
          "Lesson 06: a GRU encoder-decoder without attention translates human-written dates to "
          "yyyy-mm-dd (docs/06_seq2seq.md).");
  return app::run_program([&] {
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 06: sequence to sequence without attention (seed {}, outputs in {})\n", o.seed,
          o.out);
    const DateTask task = make_date_task(static_cast<std::size_t>(o.train_dates),
                                         static_cast<std::size_t>(o.validation_dates),
                                         static_cast<std::size_t>(o.test_dates), o.seed);
    lesson06::describe_date_task(t, task);
    Generator gen(o.seed);
    EncoderDecoder model({.source_vocabulary = task.source_vocabulary.size(),
                          .target_vocabulary = task.target_vocabulary.size(),
                          .embedding = o.embedding,
                          .hidden = o.hidden},
                         gen);
    section_model(t, model, o);
    section_training(t, model, task, o, gen);
    const std::vector<std::string> greedy = section_test(t, model, task, o);
    section_length(t, task, greedy, o);
    t.say("\nTotal time {:.1f} s. Wrote {}/summary.txt.\n", seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
