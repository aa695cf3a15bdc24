// Lesson 09: the soft-attention captioner's gradients (float64 finite differences, tiny
// sizes), its invariants, BLEU and decoding. (The captioner is the library's, seq/captioning/;
// the doubly stochastic penalty is tested in tests/nn/loss, localisation in tests/interpret.)
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "attend.h"
#include "support.h"

using namespace attend;
using namespace attend::captioning;
using attend::testing::check_close;

namespace {

// Gradcheck tolerances, stated once: |analytic - numeric| <= 1e-6 + 1e-4 |numeric| with
// central differences of step 1e-6 in float64.
GradcheckOptions tolerances() {
  GradcheckOptions options;
  options.eps = 1e-6;
  options.atol = 1e-6;
  options.rtol = 1e-4;
  return options;
}

// A caption with its word -> object links (no image, no boxes: the decoder needs neither).
CanvasExample caption(std::vector<std::string> words, std::vector<int> objects) {
  CanvasExample example;
  example.words = std::move(words);
  example.word_object = std::move(objects);
  return example;
}

Vocabulary tiny_vocabulary() {
  Vocabulary vocab;
  for (const char* w : {"a", "red", "bag", "left", "of", "blue", "boot"}) vocab.add(w);
  return vocab;
}

// Two captions of different lengths, so that padding and the mask are exercised.
std::vector<CanvasExample> tiny_captions() {
  return {caption({"a", "red", "bag"}, {-1, 0, 0}),
          caption({"a", "blue", "boot", "left", "of", "a", "red", "bag"},
                  {-1, 0, 0, -1, -1, -1, 1, 1})};
}

std::vector<const CanvasExample*> pointers(const std::vector<CanvasExample>& examples) {
  std::vector<const CanvasExample*> out;
  for (const CanvasExample& e : examples) out.push_back(&e);
  return out;
}

CaptionDecoderSizes tiny_sizes(Index vocab, Index features) {
  return {.vocab = vocab, .features = features, .embedding = 2, .hidden = 3, .attention = 3};
}

}  // namespace

TEST_CASE("the whole soft-attention captioner (encoder + decoder + loss) passes gradcheck",
          "[gradcheck]") {
  // 16x16 images -> a 2x2 grid: L = 4 regions of D = 3 features + 2 coordinates; every
  // parameter is checked.
  Generator gen(9);
  Vocabulary vocab = tiny_vocabulary();
  RegionEncoder encoder(2, 3, encoder_labels(), gen);
  CaptionDecoder decoder(tiny_sizes(vocab.size(), 3 + kPositionFeatures), gen);
  encoder.to(kFloat64);
  decoder.to(kFloat64);
  std::vector<CanvasExample> captions = tiny_captions();
  CaptionBatch batch = make_caption_batch(pointers(captions), vocab, kFloat64);
  Tensor images = rand({2, 3, 16, 16}, gen, kFloat64);
  std::vector<Tensor> parameters = encoder.parameters();
  for (const Tensor& p : decoder.parameters()) parameters.push_back(p);
  GradcheckResult result = gradcheck(
      [&](const std::vector<Tensor>&) {
        return soft_attention_loss(decoder, encoder.regions(images), batch, 0.7).total;
      },
      parameters, tolerances());
  INFO(result.report);
  CHECK(result.ok);
  CHECK(result.elements_checked > 300);
}

TEST_CASE("the gate beta = sigmoid(f_beta(h)) passes gradcheck and scales the context",
          "[gradcheck]") {
  Generator gen(3);
  CaptionDecoder decoder(tiny_sizes(9, 3), gen);
  decoder.to(kFloat64);
  Tensor h = randn({2, 3}, gen, kFloat64).requires_grad_();
  GradcheckResult gate =
      gradcheck([&](const std::vector<Tensor>& in) { return decoder.gate(in[0]); },
                {h, decoder.f_beta.weight, decoder.f_beta.bias}, tolerances());
  INFO(gate.report);
  CHECK(gate.ok);

  // Through a whole step: z_t = beta sum_i alpha_i a_i reaches the logits.
  Tensor regions = randn({2, 4, 3}, gen, kFloat64);
  Tensor words(NDArray::from_vector(std::vector<std::int64_t>{1, 4}, {2}));
  nn::LSTMState state = decoder.initial_state(regions);
  GradcheckResult step = gradcheck(
      [&](const std::vector<Tensor>&) {
        return decoder.step(regions, decoder.project_regions(regions), words, state).logits;
      },
      {decoder.f_beta.weight, decoder.f_beta.bias}, tolerances());
  INFO(step.report);
  CHECK(step.ok);

  // With the gate off, beta is exactly 1 (and f_beta gets no gradient).
  decoder.use_gate = false;
  check_close(decoder.gate(h).data(), NDArray::ones({2, 1}, kFloat64), 0);
  decoder.use_gate = true;
  const double beta = decoder.gate(h).data().at({0, 0});
  CHECK(beta > 0);
  CHECK(beta < 1);
}

TEST_CASE("alpha rows sum to 1, and the initial state comes from the mean region") {
  Generator gen(11);
  Vocabulary vocab = tiny_vocabulary();
  CaptionDecoder decoder(tiny_sizes(vocab.size(), 3), gen);
  decoder.to(kFloat64);
  std::vector<CanvasExample> captions = tiny_captions();
  CaptionBatch batch = make_caption_batch(pointers(captions), vocab, kFloat64);
  Tensor regions = randn({2, 4, 3}, gen, kFloat64);
  UnrolledCaptions out = unroll(decoder, regions, batch.inputs);
  REQUIRE(out.alphas.shape() == Shape{2, 9, 4});
  check_close(sum(out.alphas, -1).data(), NDArray::ones({2, 9}, kFloat64), 1e-12);
  // f_init reads only the mean: permuting the regions leaves (h_0, c_0) unchanged.
  Tensor permuted = index_select(
      regions, 1, Tensor(NDArray::from_vector(std::vector<std::int64_t>{3, 1, 0, 2}, {4})));
  check_close(decoder.initial_state(permuted).h.data(), decoder.initial_state(regions).h.data(),
              1e-12);
  // The batch: inputs start with <bos>, targets end with <eos>, padding is masked.
  CHECK(batch.inputs.data().at({0, 0}) == Vocabulary::kBos);
  CHECK(batch.targets.data().at({0, 3}) == Vocabulary::kEos);
  CHECK(batch.targets.data().at({0, 4}) == Vocabulary::kPad);
  CHECK(batch.mask.data().at({0, 3}) == 1.0);
  CHECK(batch.mask.data().at({0, 4}) == 0.0);
}

TEST_CASE("corpus BLEU-4 of captions against hand-computed values") {
  using Words = std::vector<std::string>;
  auto corpus_bleu4 = [](const std::vector<Words>& candidates,
                         const std::vector<Words>& references) {
    return seq::corpus_bleu(candidates, references).score;  // the library's, as evaluate() uses
  };
  const Words ref = {"a", "red", "bag", "left", "of", "a", "blue", "boot"};
  CHECK(corpus_bleu4({ref}, {ref}) == Approx(1.0));
  // One word wrong in the middle: 7/8, 5/7, 3/6, 1/5 n-grams match; same length, BP = 1.
  Words one_wrong = ref;
  one_wrong[3] = "above";
  const double expected =
      std::exp((std::log(7.0 / 8) + std::log(5.0 / 7) + std::log(3.0 / 6) + std::log(1.0 / 5)) / 4);
  CHECK(corpus_bleu4({one_wrong}, {ref}) == Approx(expected));
  // Too short: the first four words only. Precisions are 1; BP = exp(1 - 8/4).
  Words half(ref.begin(), ref.begin() + 4);
  CHECK(corpus_bleu4({half}, {ref}) == Approx(std::exp(1.0 - 2.0)));
  // No 4-gram in common: 0 (no smoothing at corpus level).
  CHECK(corpus_bleu4({{"a", "red", "bag", "x", "y"}}, {{"a", "red", "z", "x", "y"}}) == 0.0);
  // Counts are summed over the corpus before dividing: not the mean of sentence scores.
  CHECK(corpus_bleu4({ref, one_wrong}, {ref, ref}) != Approx((1.0 + expected) / 2));
}

TEST_CASE("beam search of width 1 is greedy decoding, and beam scores are the model's") {
  Generator gen(21);
  Vocabulary vocab = tiny_vocabulary();
  CaptionDecoder decoder(tiny_sizes(vocab.size(), 3), gen);
  decoder.to(kFloat64);
  Tensor regions = randn({3, 4, 3}, gen, kFloat64);
  std::vector<Caption> greedy = greedy_decode(decoder, regions, 6);
  for (Index b = 0; b < 3; ++b) {
    Tensor one = slice(regions, 0, b, b + 1);
    Caption beam1 = beam_decode(decoder, one, 1, 6);
    CHECK(beam1.ids == greedy[static_cast<std::size_t>(b)].ids);
    CHECK(beam1.log_probability ==
          Approx(greedy[static_cast<std::size_t>(b)].log_probability).margin(1e-9));
    // The beam's log-probability is that of its caption under teacher forcing.
    Caption beam3 = beam_decode(decoder, one, 3, 6);
    REQUIRE(beam3.alphas.size() == beam3.ids.size());
    std::vector<std::int64_t> in = {Vocabulary::kBos}, target = beam3.ids;
    in.insert(in.end(), beam3.ids.begin(), beam3.ids.end());
    const bool ended = static_cast<Index>(beam3.ids.size()) < 6;
    if (ended)
      target.push_back(Vocabulary::kEos);
    else
      in.pop_back();
    const Index steps = static_cast<Index>(target.size());
    Tensor inputs(NDArray::from_vector(in, {1, steps}));
    Tensor logp = log_softmax(unroll(decoder, one, inputs).logits, -1);
    double total = 0;
    for (Index t = 0; t < steps; ++t)
      total += logp.data().at({0, t, target[static_cast<std::size_t>(t)]});
    CHECK(beam3.log_probability == Approx(total).margin(1e-9));
  }
}

TEST_CASE("each region vector ends with its grid position, x then y, in [-1, 1]") {
  const NDArray where = grid_coordinates(2, 4, kFloat64);  // 2 rows of 4 cells
  REQUIRE(where.shape() == Shape{8, 2});
  // Cell 6 = row 1, column 2: x = (2*2 + 1)/4 - 1 = 0.25, y = (2*1 + 1)/2 - 1 = 0.5.
  CHECK(where.at({6, 0}) == 0.25);
  CHECK(where.at({6, 1}) == 0.5);
  CHECK(where.at({0, 0}) == -0.75);
  CHECK(where.at({0, 1}) == -0.5);
  Generator gen(1);
  RegionEncoder encoder(2, 3, encoder_labels(), gen);
  Tensor regions = encoder.regions(rand({2, 3, 16, 16}, gen));  // a 2x2 grid
  REQUIRE(regions.shape() == Shape{2, 4, 3 + kPositionFeatures});
  const NDArray r = regions.data();
  for (Index b = 0; b < 2; ++b) {
    CHECK(r.at({b, 1, 3}) == 0.5f);   // region 1: right column, x = +0.5
    CHECK(r.at({b, 1, 4}) == -0.5f);  // top row, y = -0.5
    CHECK(r.at({b, 2, 3}) == -0.5f);  // region 2: left column, bottom row
    CHECK(r.at({b, 2, 4}) == 0.5f);
  }
}

TEST_CASE("pre-training targets: a cell is the class and colour of the box holding its centre") {
  // A 32x32 canvas has a 4x4 grid of 8-pixel cells, centres at 4, 12, 20, 28.
  CanvasExample canvas;
  canvas.objects.push_back(
      {.label = 8, .noun = 0, .color = 2, .box = {.x0 = 10, .y0 = 2, .x1 = 22, .y1 = 14}});
  CellTargets targets = cell_targets({&canvas}, 32);
  REQUIRE(targets.what.shape() == Shape{1, 16});
  const NDArray what = targets.what.data(), colour = targets.colour.data();
  const std::int64_t none = static_cast<std::int64_t>(data::canvas_colors().size());
  for (Index cell = 0; cell < 16; ++cell) {
    const Index row = cell / 4, column = cell % 4;
    // Centres x in {12, 20} and y in {4, 12} lie in the box: cells (0,1), (0,2), (1,1), (1,2).
    const bool inside = row <= 1 && (column == 1 || column == 2);
    CHECK(what.data<std::int64_t>()[cell] == (inside ? 8 : kClasses));
    CHECK(colour.data<std::int64_t>()[cell] == (inside ? 2 : none));
  }
}

TEST_CASE("item_scores: each item's mean cell scores over the cells inside its box",
          "[gradcheck]") {
  // Two 32x32 canvases: a 4x4 grid of 8-pixel cells, centres at 4, 12, 20, 28.
  std::vector<CanvasExample> canvases(2);
  auto item = [](Index label, data::Box box) {
    data::CanvasObject o;
    o.label = label;
    o.box = box;
    return o;
  };
  canvases[0].objects = {item(3, {0, 0, 16, 8}),     // cells 0, 1
                         item(1, {16, 16, 32, 32}),  // cells 10, 11, 14, 15
                         item(2, {1, 1, 3, 3})};     // no cell centre: left out
  canvases[1].objects = {item(4, {8, 8, 16, 16})};   // cell 5
  Generator gen(21);
  Tensor scores = randn({2, 16, 5}, gen, kFloat64).requires_grad_();
  ItemScores items = item_scores(scores, pointers(canvases));
  REQUIRE(items.logits.shape() == Shape{3, 5});
  CHECK(items.labels.data().to_vector() == std::vector<double>{3, 1, 4});
  const NDArray s = scores.data();
  for (Index c = 0; c < 5; ++c) {
    CHECK(items.logits.data().at({0, c}) ==
          Approx((s.at({0, 0, c}) + s.at({0, 1, c})) / 2).margin(1e-12));
    CHECK(items.logits.data().at({1, c}) ==
          Approx((s.at({0, 10, c}) + s.at({0, 11, c}) + s.at({0, 14, c}) + s.at({0, 15, c})) / 4)
              .margin(1e-12));
    CHECK(items.logits.data().at({2, c}) == Approx(s.at({1, 5, c})).margin(1e-12));
  }
  // The item term of the pre-training loss, through the means, in float64.
  GradcheckResult result = gradcheck(
      [&](const std::vector<Tensor>& in) {
        ItemScores it = item_scores(in[0], pointers(canvases));
        return nn::cross_entropy(it.logits, it.labels);
      },
      {scores}, tolerances());
  INFO(result.report);
  CHECK(result.ok);
  // A shape that is not [B, n^2, C] is an error that names the function.
  CHECK_THROWS_WITH(item_scores(randn({2, 15, 5}, gen), pointers(canvases)),
                    Catch::Matchers::Contains("item_scores"));
}

TEST_CASE("RegionFile: the rows read back are the bytes written, in any order") {
  // Lesson 09's training regions live in a temporary file (region_file.h): a batch read from
  // it must be exactly what rows() takes from the same array in memory.
  Generator gen(5);
  const NDArray all = NDArray::normal({7, 4, 3}, gen, 0, 1, kFloat32);
  RegionFile file(7, 4, 3);
  CHECK(file.shape() == Shape{7, 4, 3});
  file.write(0, slice(all, 0, 0, 5));  // two chunks, as prepare_canvases writes them
  file.write(5, slice(all, 0, 5, 7));
  const std::vector<Index> batch = {6, 0, 3, 3, 5};
  check_close(file.rows(batch).data(), rows(all, batch).data(), 0);
  CHECK_THROWS_WITH(file.rows({7}), Catch::Contains("RegionFile::rows: canvas 7 is outside 0..6"));
  CHECK_THROWS_WITH(file.write(6, slice(all, 0, 0, 2)),
                    Catch::Contains("RegionFile::write: canvases 6..7 are outside 0..6"));
  CHECK_THROWS_WITH(
      file.write(0, NDArray::zeros({1, 4, 2})),
      Catch::Contains("RegionFile::write: expected float32 [n,4,3], got float32 [1,4,2]"));
  CHECK_THROWS_WITH(RegionFile(0, 4, 3), Catch::Contains("RegionFile: needs at least one canvas"));
}

TEST_CASE("captioning's error texts name the function and the values it refuses", "[lesson09]") {
  CHECK_THROWS_WITH(stack_images({}), "stack_images: no canvases to stack");
  // A pixel index outside the 8x8 canvas (a negative one used to index before the weights).
  const std::vector<Proposal> outside = {{.pixels = {3, -1}, .box = {}}};
  CHECK_THROWS_WITH(pooling_weights(outside, 2, 8),
                    "pooling_weights: pixel -1 of proposal 0 is outside the 8x8 canvas");
  const std::vector<Proposal> past = {{.pixels = {64}, .box = {}}};
  CHECK_THROWS_WITH(pooling_weights(past, 2, 8),
                    "pooling_weights: pixel 64 of proposal 0 is outside the 8x8 canvas");
}

// run_both's two halves wait here for each other, so that they surely run at the same time (a
// half that waited 2 s in vain says so: then run_both ran them one after the other).
class StartTogether {
 public:
  bool arrive() {
    arrived_ += 1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (arrived_ < 2)
      if (std::chrono::steady_clock::now() > deadline) return false;
    return true;
  }

 private:
  std::atomic<int> arrived_ = 0;
};

TEST_CASE("RegionFile: two threads reading at the same time each get their own rows") {
  // Lessons 09 and 10 train two decoders side by side, both reading batches from one file.
  // With one file position shared by a seek and a read, a thread could read at the other's.
  testing::ThreadCount two(2);
  Generator gen(6);
  const Index canvases = 64;
  const NDArray all = NDArray::normal({canvases, 8, 16}, gen, 0, 1, kFloat32);
  RegionFile file(canvases, 8, 16);
  file.write(0, all);
  StartTogether start;
  std::atomic<int> wrong = 0, together = 0;
  auto read_batches = [&](Index offset) {
    together += start.arrive();
    for (Index round = 0; round < 3000; ++round) {
      std::vector<Index> batch;
      for (Index i = 0; i < 4; ++i) batch.push_back((offset + 7 * round + 13 * i) % canvases);
      if (!testing::same_bits(file.rows(batch).data(), rows(all, batch).data())) wrong += 1;
    }
  };
  run_both([&] { read_batches(0); }, [&] { read_batches(31); });
  CHECK(together == 2);
  CHECK(wrong == 0);
}

TEST_CASE("two decoders trained side by side learn exactly what each learns alone") {
  // Lesson 09 trains its lambda-table decoder beside the first, lesson 10 its seeds in pairs
  // (run_both). Each op then runs on its training's thread, and its numbers must not depend
  // on that: every weight and every epoch's record of either decoder the same, bit for bit,
  // as when trained alone (on two threads, as the lessons did before). Dropout on, so that
  // each training draws from its own generator all along.
  const Vocabulary vocab = tiny_vocabulary();
  std::vector<CanvasExample> captions;
  for (int copy = 0; copy < 16; ++copy)
    for (const CanvasExample& c : tiny_captions()) captions.push_back(c);
  const Index count = static_cast<Index>(captions.size()), regions = 4, features = 5;
  Generator data_gen(7);
  const NDArray all = NDArray::normal({count, regions, features}, data_gen, 0, 1, kFloat32);
  RegionFile file(count, regions, features);
  file.write(0, all);
  CaptionDecoderSizes sizes = tiny_sizes(vocab.size(), features);
  sizes.dropout = 0.3;
  struct Trained {
    std::unique_ptr<Generator> gen;
    std::unique_ptr<CaptionDecoder> decoder;
    std::vector<CaptionEpoch> epochs;
  };
  auto train_one = [&](std::uint64_t seed, double lambda) {
    Trained t;
    t.gen = std::make_unique<Generator>(seed);
    t.decoder = std::make_unique<CaptionDecoder>(sizes, *t.gen);
    CaptionTrainOptions options;
    options.epochs = 3;
    options.batch = 3;
    options.lambda = lambda;
    options.progress = false;
    t.epochs = train_decoder(*t.decoder, file, captions, all, captions, vocab, options, *t.gen);
    return t;
  };
  testing::ThreadCount two(2);
  Trained alone_first = train_one(1, 0.0), alone_second = train_one(2, 1.0);
  Trained first, second;
  StartTogether start;
  std::thread::id first_thread, second_thread;
  std::atomic<int> together = 0;
  run_both(
      [&] {
        first_thread = std::this_thread::get_id();
        together += start.arrive();
        first = train_one(1, 0.0);
      },
      [&] {
        second_thread = std::this_thread::get_id();
        together += start.arrive();
        second = train_one(2, 1.0);
      });
  CHECK(first_thread != second_thread);
  CHECK(together == 2);
  for (const auto& [alone, side_by_side] :
       {std::pair{&alone_first, &first}, std::pair{&alone_second, &second}}) {
    const auto a = alone->decoder->named_parameters(),
               b = side_by_side->decoder->named_parameters();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO(a[i].first);
      CHECK(testing::same_bits(a[i].second.data(), b[i].second.data()));
    }
    REQUIRE(alone->epochs.size() == side_by_side->epochs.size());
    for (std::size_t e = 0; e < alone->epochs.size(); ++e) {
      CHECK(alone->epochs[e].loss == side_by_side->epochs[e].loss);
      CHECK(alone->epochs[e].nll == side_by_side->epochs[e].nll);
      CHECK(alone->epochs[e].validation_word_accuracy ==
            side_by_side->epochs[e].validation_word_accuracy);
    }
  }
  // The two decoders did learn something different (the checks above could not pass by
  // comparing a decoder with itself).
  CHECK_FALSE(testing::same_bits(alone_first.decoder->parameters()[0].data(),
                                 alone_second.decoder->parameters()[0].data()));
}
