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

#include "lessons/06_seq2seq/lesson.h"
#include "lessons/common/cli.h"
#include "lessons/common/transcript.h"

using namespace attend;
using namespace attend::lesson06;
using attend::lessons::Transcript;

namespace {

// Every hyper-parameter, each with the flag that changes it.
struct Options {
  std::uint64_t seed = 0;                 // --seed: data and initial weights
  std::int64_t train_dates = 10000;       // --train-dates
  std::int64_t validation_dates = 1000;   // --validation-dates: early stopping
  std::int64_t test_dates = 1000;         // --test-dates: the held-out dates of every score
  std::int64_t batch_size = 64;           // --batch
  int epochs = 8;                         // --epochs: at most this many passes
  double seconds = 90;                    // --seconds: training time budget (a safety net)
  double lr = 5e-3;                       // --lr: Adam's learning rate
  double clip = 1.0;                      // --clip: global gradient norm
  double stop_at = 0.998;                 // --stop-at: validation exact match that ends training
  std::int64_t embedding = 16;            // --embedding: m
  std::int64_t hidden = 64;               // --hidden: n, the size of c
  std::int64_t beam = 5;                  // --beam: beam width
  double length_penalty = 1.0;            // --length-penalty: beam ranking log p / length^a
  std::int64_t beam_dates = 200;          // --beam-dates: test dates decoded by beam search
  std::string out = "output/06_seq2seq";  // --out
};

// How many test dates are compared token for token under beam width 1 and greedy.
constexpr std::size_t kBeamOneChecks = 50;
// How many wrong outputs section 5 shows.
constexpr int kErrorsShown = 8;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string ids_text(const Tensor& ids, Index row) {
  std::vector<std::int64_t> values;
  for (Index j = 0; j < ids.size(1); ++j)
    values.push_back(static_cast<std::int64_t>(ids.data().at({row, j})));
  return fmt::format("{}", fmt::join(values, " "));
}

void section_data(Transcript& t, const DateTask& task) {
  t.heading("1. The date task");
  t.say(
      "{} training, {} validation and {} held-out test dates, no (date, format) pair in two\n"
      "of them. The {} formats, each writing 3 March 2015:\n",
      task.train.size(), task.validation.size(), task.test.size(), data::kDateFormats);
  for (int f = 0; f < data::kDateFormats; ++f) {
    const DateExample e = data::make_date(2015, 3, 3, f);
    t.say("  {:2}  {:<46} {:>30} -> {}\n", f, data::date_format_description(f), '"' + e.input + '"',
          e.output);
  }
  std::size_t shortest = 1000, longest = 0;
  for (const DateExample& e : task.test) {
    shortest = std::min(shortest, e.input.size());
    longest = std::max(longest, e.input.size());
  }
  t.say("Test inputs are {} to {} characters long; every output is 10 characters and <eos>.\n",
        shortest, longest);
  t.say(
      "Vocabularies: {} source tokens (4 special + letters, digits, \" ,./-\"), {} target\n"
      "tokens (4 special + digits and '-').\n",
      task.source_vocabulary.size(), task.target_vocabulary.size());

  const Batch batch = date_batch(task, task.test, {0, 1});
  t.say("\nA batch of two test dates, \"{}\" and \"{}\" ({} and {} characters):\n",
        task.test[0].input, task.test[1].input, task.test[0].input.size(),
        task.test[1].input.size());
  const std::string source_label = fmt::format("source [{}]", fmt::join(batch.source.shape(), ","));
  const std::string decoder_label =
      fmt::format("decoder_input [{}]", fmt::join(batch.decoder_input.shape(), ","));
  t.say("  {:<20} {}\n", source_label, ids_text(batch.source, 0));
  t.say("  {:<20} {}\n", "", ids_text(batch.source, 1));
  t.say("  {:<20} {}   (0: <pad>)\n", "source_mask", ids_text(batch.source_mask, 0));
  t.say("  {:<20} {}\n", "", ids_text(batch.source_mask, 1));
  t.say("  {:<20} {}   (<bos>=1, then \"{}\" but its last character)\n", decoder_label,
        ids_text(batch.decoder_input, 0), task.test[0].output);
  t.say("  {:<20} {}   (\"{}\", then <eos>=2)\n", "target", ids_text(batch.target, 0),
        task.test[0].output);
}

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
  std::vector<Index> lengths;
  for (const DateExample& e : task.train) lengths.push_back(static_cast<Index>(e.input.size()));
  auto batches = [&] {
    std::vector<Batch> out;
    for (const auto& rows : length_sorted_batches(lengths, o.batch_size, gen))
      out.push_back(date_batch(task, task.train, rows));
    return out;
  };
  auto validate = [&] {
    return exact_match(task.validation, predict_dates(model, task, task.validation));
  };
  const TrainingResult r = train(model, batches, validate,
                                 {.max_epochs = o.epochs,
                                  .seconds = o.seconds,
                                  .learning_rate = o.lr,
                                  .clip_norm = o.clip,
                                  .stop_at = o.stop_at,
                                  .log_path = o.out + "/training.csv",
                                  .label = "dates"});
  report_date_training(t, r, o.out + "/training.png",
                       "Lesson 06: encoder-decoder without attention");
  return r;
}

std::vector<std::string> section_test(Transcript& t, EncoderDecoder& model, const DateTask& task,
                                      const Options& o) {
  t.heading("4. Held-out dates: greedy decoding and beam search");
  model.eval();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> greedy = predict_dates(model, task, task.test);
  t.say("greedy: exact match {:.1f}% on the {} test dates ({:.1f} s)\n",
        100 * exact_match(task.test, greedy), task.test.size(), seconds_since(start));

  // Beam search, one date at a time, on the first beam_dates test dates.
  const std::size_t n = std::min(task.test.size(), static_cast<std::size_t>(o.beam_dates));
  const std::vector<DateExample> subset(task.test.begin(),
                                        task.test.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<std::string> beamed,
      greedy_subset(greedy.begin(), greedy.begin() + static_cast<std::ptrdiff_t>(n));
  std::size_t same_as_greedy = 0, checked = 0;
  const auto beam_start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    const Batch one = date_batch(task, task.test, {i});
    const Decoded d =
        beam_search(model, one.source, one.source_mask,
                    {.width = o.beam, .max_length = 12, .length_penalty = o.length_penalty});
    beamed.push_back(task.target_vocabulary.decode_characters(d.tokens));
    if (i < kBeamOneChecks) {
      const Decoded one_wide = beam_search(model, one.source, one.source_mask,
                                           {.width = 1, .max_length = 12, .length_penalty = 0});
      same_as_greedy += task.target_vocabulary.decode_characters(one_wide.tokens) == greedy[i];
      ++checked;
    }
  }
  t.say("beam width 1 gives the greedy output on {} of {} dates (it must: it is greedy)\n",
        same_as_greedy, checked);
  if (n > 0)
    t.say("on the first {} dates: greedy {:.1f}%, beam width {} {:.1f}% ({:.1f} s)\n", n,
          100 * exact_match(subset, greedy_subset), o.beam, 100 * exact_match(subset, beamed),
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
  lessons::CommandLine cli("06_seq2seq",
                           "Lesson 06: a GRU encoder-decoder without attention translates "
                           "human-written dates to yyyy-mm-dd (docs/06_seq2seq.md).");
  cli.add("seed", o.seed, "seed of the data split, the initial weights and the batch order");
  cli.add("train-dates", o.train_dates, "training dates");
  cli.add("validation-dates", o.validation_dates, "validation dates (early stopping)");
  cli.add("test-dates", o.test_dates, "held-out test dates");
  cli.add("batch", o.batch_size, "dates per batch");
  cli.add("epochs", o.epochs, "at most this many passes over the training dates");
  cli.add("seconds", o.seconds, "training time budget in seconds");
  cli.add("lr", o.lr, "Adam's learning rate");
  cli.add("clip", o.clip, "largest global gradient norm");
  cli.add("stop-at", o.stop_at, "validation exact match (0-1) at which training stops");
  cli.add("embedding", o.embedding, "embedding size m");
  cli.add("hidden", o.hidden, "GRU state size n (the size of c)");
  cli.add("beam", o.beam, "beam width");
  cli.add("length-penalty", o.length_penalty, "beam ranking: log p / length^this");
  cli.add("beam-dates", o.beam_dates, "test dates decoded by beam search too");
  cli.add("out", o.out, "folder for summary.txt, the CSV files and the plots");
  cli.parse(argc, argv);

  return lessons::run_lesson([&] {
    if (o.train_dates < 1 || o.validation_dates < 1 || o.test_dates < 1)
      fail("--train-dates, --validation-dates and --test-dates must be at least 1");
    if (o.batch_size < 1) fail("--batch must be at least 1, got {}", o.batch_size);
    if (o.embedding < 1 || o.hidden < 1) fail("--embedding and --hidden must be at least 1");
    if (o.beam < 1) fail("--beam must be at least 1, got {}", o.beam);
    if (o.beam_dates < 0) fail("--beam-dates must not be negative, got {}", o.beam_dates);
    lessons::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 06: sequence to sequence without attention (seed {}, outputs in {})\n", o.seed,
          o.out);
    const DateTask task = make_date_task(static_cast<std::size_t>(o.train_dates),
                                         static_cast<std::size_t>(o.validation_dates),
                                         static_cast<std::size_t>(o.test_dates), o.seed);
    section_data(t, task);
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
