// Lesson 10: the soft and hard models trained over seeds, the measurements of section 3 and
// the soft-versus-hard table of section 4 (main.cpp runs them in order).
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "lesson.h"

namespace attend::lesson10 {

namespace {

constexpr double kAccuracyGapTarget = 0.05;  // hard within 5 points of soft

// One seed's training: the decoder (with the generator its dropout keeps drawing from), the
// epochs' records and, for the hard model, its final reward baseline.
struct SeedRun {
  std::unique_ptr<Generator> gen;
  std::unique_ptr<CaptionDecoder> decoder;
  std::vector<CaptionEpoch> records;
  double baseline = 0;
};

SeedRun train_seed(const Options& o, const PreparedCanvases& d, bool soft, int s, bool progress) {
  SeedRun run;
  run.gen = std::make_unique<Generator>(o.seed + 100 * static_cast<std::uint64_t>(s + 1));
  // REF-SAT's sizes (the defaults), with the flags' dropout and LSTM input.
  run.decoder = std::make_unique<CaptionDecoder>(
      CaptionDecoderSizes{
          .vocab = d.vocab.size(), .dropout = o.dropout, .lstm_sees_content = o.lstm_sees_content},
      *run.gen);
  run.decoder->init_from_image = o.init;
  HardAttentionLoss hard(*run.decoder,
                         {.semi_sampling = o.semi_sampling,
                          .reinforce_weight = o.reinforce_weight,
                          .entropy_weight = o.entropy_weight,
                          .temperature = o.temperature,
                          .normalise_advantage = o.normalise_advantage},
                         *run.gen);
  StepLoss loss;
  if (!soft) loss = [&hard](const Tensor& r, const CaptionBatch& b) { return hard(r, b); };
  run.records =
      train_decoder(*run.decoder, d.train_regions, d.splits.train, d.validation_regions,
                    d.splits.validation, d.vocab,
                    {.epochs = o.epochs,
                     .batch = o.batch,
                     .lr = o.lr,
                     .lambda = o.lambda,
                     .log_path = fmt::format("{}/{}_seed{}.csv", o.out, soft ? "soft" : "hard", s),
                     .progress = progress},
                    *run.gen, loss);
  run.baseline = hard.baseline();
  return run;
}

}  // namespace

Trained train_model(app::Transcript& t, const Options& o, const PreparedCanvases& d, bool soft) {
  Trained trained;
  const auto start = std::chrono::steady_clock::now();
  // The seeds' trainings write nothing another reads, so two of them train at a time, side by
  // side on two threads (run_both; one after the other when there is one thread). Each runs
  // all its ops on its own thread, and an op's numbers do not depend on the threads it runs
  // on: the same numbers as one training at a time, in about two thirds of the time. The
  // progress line follows the first of the two.
  for (int first = 0; first < o.seeds; first += 2) {
    std::vector<SeedRun> runs(first + 1 < o.seeds ? 2 : 1);
    auto train_first = [&] { runs[0] = train_seed(o, d, soft, first, o.progress); };
    if (runs.size() == 2)
      run_both(train_first, [&] { runs[1] = train_seed(o, d, soft, first + 1, false); });
    else
      train_first();  // a last seed alone: its ops use all the threads
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const int s = first + static_cast<int>(i);
      std::vector<double> curve;
      for (const CaptionEpoch& r : runs[i].records) curve.push_back(r.nll);
      t.say("  {} seed {}: nll per epoch {:.3f}; validation word accuracy {:.1f}%{}\n",
            soft ? "soft" : "hard", s, fmt::join(curve, " "),
            100 * runs[i].records.back().validation_word_accuracy,
            soft ? "" : fmt::format("; baseline b = {:.3f}", runs[i].baseline));
      trained.nll_curves.push_back(curve);
    }
    if (first == 0) {
      trained.decoder = std::move(runs[0].decoder);
      trained.decoder_gen = std::move(runs[0].gen);
    }
  }
  trained.seconds = app::seconds_since(start);
  return trained;
}

std::pair<double, double> seed_spread(const std::vector<std::vector<double>>& curves) {
  if (curves.size() < 2) return {0, 0};
  const std::size_t epochs = curves[0].size();
  double mean_sd = 0, last_sd = 0;
  for (std::size_t e = 0; e < epochs; ++e) {
    double m = 0, v = 0;
    for (const auto& c : curves) m += c[e] / static_cast<double>(curves.size());
    for (const auto& c : curves)
      v += (c[e] - m) * (c[e] - m) / static_cast<double>(curves.size() - 1);
    mean_sd += std::sqrt(v) / static_cast<double>(epochs);
    if (e + 1 == epochs) last_sd = std::sqrt(v);
  }
  return {mean_sd, last_sd};
}

double effective_regions(CaptionDecoder& decoder, const PreparedCanvases& d) {
  std::vector<NDArray> alphas =
      reference_attention(decoder, d.test_regions, d.splits.test, d.vocab);
  double total = 0;
  Index steps = 0;
  for (std::size_t n = 0; n < alphas.size(); ++n) {
    const NDArray a = alphas[n].to(kFloat64);
    const Index words = static_cast<Index>(d.splits.test[n].words.size());
    for (Index t = 0; t < words; ++t) {
      double h = 0;
      for (Index i = 0; i < a.size(1); ++i) {
        const double p = a.at({t, i});
        if (p > 0) h -= p * std::log(p);
      }
      total += std::exp(h);
      ++steps;
    }
  }
  return total / static_cast<double>(steps);
}

Comparison measure(const Options& o, const PreparedCanvases& d, const Trained& soft,
                   const Trained& hard) {
  Comparison c;
  CaptionDecoder& sd = *soft.decoder;
  CaptionDecoder& hd = *hard.decoder;
  hd.context = CaptionDecoder::Context::kMostAttended;  // at test time: the most probable region
  c.soft_scores = evaluate(sd, d.test_regions, d.splits.test, d.vocab, 1);
  c.hard_scores = evaluate(hd, d.test_regions, d.splits.test, d.vocab, 1);
  c.soft_regions = effective_regions(sd, d);

  // Gradients at the trained parameters, on test captions (no update is made).
  std::vector<const CanvasExample*> first;
  std::vector<Index> first_indices;
  for (Index i = 0; i < o.batch && i < o.test; ++i) {
    first.push_back(&d.splits.test[static_cast<std::size_t>(i)]);
    first_indices.push_back(i);
  }
  CaptionBatch batch = make_caption_batch(first, d.vocab);
  Tensor batch_regions = rows(d.test_regions, first_indices);
  Generator measure_gen(o.seed + 7);
  c.soft_backprop = backprop_gradient_norm(sd, batch_regions, batch, true, measure_gen);
  c.hard_backprop = backprop_gradient_norm(hd, batch_regions, batch, false, measure_gen);
  // The variance rows measure the paper's estimator, REINFORCE term included (lambda_r = 1),
  // whatever --reinforce-weight trained the model.
  const HardOptions hard_options{.semi_sampling = o.semi_sampling,
                                 .reinforce_weight = 1,
                                 .entropy_weight = o.entropy_weight,
                                 .temperature = o.temperature};
  auto spread = [&](CaptionDecoder& m, bool is_soft, bool same) {
    return gradient_spread(m, d.test_regions, d.splits.test, d.vocab, is_soft, same, o.draws,
                           std::min<Index>(o.batch, o.test), hard_options, o.lambda, measure_gen);
  };
  c.soft_same = spread(sd, true, true);
  c.hard_same = spread(hd, false, true);
  c.soft_batches = spread(sd, true, false);
  c.hard_batches = spread(hd, false, false);
  c.soft_seed_spread = seed_spread(soft.nll_curves);
  c.hard_seed_spread = seed_spread(hard.nll_curves);
  c.soft_us = microseconds_per_word(sd, d.test_regions, 3);
  c.hard_us = microseconds_per_word(hd, d.test_regions, 3);
  return c;
}

void soft_versus_hard(app::Transcript& t, const Options& o, const Comparison& c) {
  t.heading("4. Soft versus hard attention, measured");
  const std::string rule(94, '-');
  auto row = [&](const std::string& name, double soft, double hard, const char* form) {
    t.say("{:<52} {:>20} {:>20}\n", name, fmt::format(fmt::runtime(form), soft),
          fmt::format(fmt::runtime(form), hard));
  };
  auto percent = [&](const std::string& name, double soft, double hard) {
    t.say("{:<52} {:>19.1f}% {:>19.1f}%\n", name, 100 * soft, 100 * hard);
  };
  t.say("{:<52} {:>20} {:>20}\n{}\n", "", "soft", "hard", rule);
  t.say("{:<52} {:>20} {:>20}\n", "regions read per step (z_t)", "64 (all)", "1");
  t.say("{:<52} {:>20.1f} {:>20}\n", "  effective regions exp(H[alpha]) (test steps)",
        c.soft_regions, "1");
  row("differentiable: |d nll / d f_att| by backprop", c.soft_backprop, c.hard_backprop, "{:.3g}");
  row("gradient variance/|mean|^2 (lambda_r 1), same batch", c.soft_same.relative_variance,
      c.hard_same.relative_variance, "{:.3g}");
  row("  the same, a new batch each time", c.soft_batches.relative_variance,
      c.hard_batches.relative_variance, "{:.3g}");
  row(fmt::format("spread of nll curves over {} seeds (sd, mean)", o.seeds),
      c.soft_seed_spread.first, c.hard_seed_spread.first, "{:.3f}");
  row("  at the last epoch", c.soft_seed_spread.second, c.hard_seed_spread.second, "{:.3f}");
  row("inference: microseconds per word (greedy, batch 64)", c.soft_us, c.hard_us, "{:.1f}");
  t.say("{:<52} {:>20} {:>20}\n", "  multiply-adds of the context z_t per word",
        (kRegionFeatures + kPositionFeatures) * kGridSide * kGridSide,
        kRegionFeatures + kPositionFeatures);
  const CaptionScores &s = c.soft_scores, &h = c.hard_scores;
  percent("caption exact match (test, greedy)", s.exact_match, h.exact_match);
  percent("word accuracy", s.word_accuracy, h.word_accuracy);
  row("BLEU-4", 100 * s.bleu4, 100 * h.bleu4, "{:.1f}");
  percent("localisation at the nouns (argmax region in box)", s.where.noun_hit_rate,
          h.where.noun_hit_rate);
  percent("localisation at all object words", s.where.hit_rate, h.where.hit_rate);
  percent("attention mass in the box", s.where.mass_in_box, h.where.mass_in_box);
  t.say("{}\n", rule);
  const double gap = s.exact_match - h.exact_match;
  t.say(
      "Target: hard attention within {:.0f} points of soft attention's exact match: the gap is\n"
      "{:.1f} points: {}.\n",
      100 * kAccuracyGapTarget, 100 * gap, gap <= kAccuracyGapTarget ? "met" : "NOT met");
}

}  // namespace attend::lesson10
