// seq/bleu.h: BLEU on hand-computed cases (Papineni et al. 2002; Chen & Cherry 2014 smoothing).
#include <cmath>

#include "attend.h"
#include "seq/test_models.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::seq;
using attend::data::DateExample;
using attend::data::Vocabulary;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

Words words(std::initializer_list<const char*> list) {
  return Words(list.begin(), list.end());
}

}  // namespace

TEST_CASE("BLEU: a perfect candidate scores 1, clipping and brevity by hand", "[seq]") {
  const Words ref = words({"the", "cat", "is", "on", "the", "mat"});
  const Bleu same = corpus_bleu({ref}, {ref});
  CHECK_THAT(same.score, WithinAbs(1.0, 1e-15));
  CHECK(same.brevity_penalty == 1.0);
  CHECK(same.matches == std::vector<Index>{6, 5, 4, 3});

  // Papineni et al.'s example: "the" 7 times. Clipped to the reference's 2: p1 = 2/7.
  const Words the7 = words({"the", "the", "the", "the", "the", "the", "the"});
  const Bleu clipped = corpus_bleu({the7}, {ref}, {.max_order = 1});
  CHECK_THAT(clipped.precisions[0], WithinAbs(2.0 / 7.0, 1e-15));
  CHECK_THAT(clipped.score, WithinAbs(2.0 / 7.0, 1e-15));  // c = 7 > r = 6: BP = 1

  // "the cat is on": every n-gram matches (p_n = 1), but c = 4 < r = 6:
  // BLEU = BP = exp(1 - 6/4) = exp(-0.5).
  const Bleu brief = corpus_bleu({words({"the", "cat", "is", "on"})}, {ref});
  CHECK(brief.precisions == std::vector<double>{1, 1, 1, 1});
  CHECK_THAT(brief.brevity_penalty, WithinAbs(std::exp(-0.5), 1e-15));
  CHECK_THAT(brief.score, WithinAbs(std::exp(-0.5), 1e-15));
}

TEST_CASE("BLEU: orders without matches, smoothing, and corpus sums", "[seq]") {
  // Candidate "the cat sat on a mat" against "the cat is on the mat":
  // 1-grams: the cat on mat match (4/6); 2-grams: "the cat" (1/5); 3- and 4-grams: 0/4, 0/3.
  const Words ref = words({"the", "cat", "is", "on", "the", "mat"});
  const Words cand = words({"the", "cat", "sat", "on", "a", "mat"});
  const Bleu plain = corpus_bleu({cand}, {ref});
  CHECK(plain.matches == std::vector<Index>{4, 1, 0, 0});
  CHECK(plain.totals == std::vector<Index>{6, 5, 4, 3});
  CHECK(plain.score == 0.0);  // one empty order zeroes BLEU
  // Chen & Cherry 1: p3 = 0.1/4, p4 = 0.1/3; BLEU = (4/6 * 1/5 * 0.025 * 0.1/3)^(1/4).
  const double expected = std::pow(4.0 / 6 * 1.0 / 5 * 0.1 / 4 * 0.1 / 3, 0.25);
  CHECK_THAT(corpus_bleu({cand}, {ref}, {.smooth = true}).score, WithinRel(expected, 1e-12));
  CHECK_THAT(sentence_bleu(cand, ref), WithinRel(expected, 1e-12));

  // Corpus BLEU sums the counts before dividing. Sentence 1 perfect (4 words), sentence 2
  // "a b" against "a c": p1 = (4 + 1) / (4 + 2), p2 = (3 + 0) / (3 + 1), c = r = 6.
  const Bleu corpus =
      corpus_bleu({words({"w", "x", "y", "z"}), words({"a", "b"})},
                  {words({"w", "x", "y", "z"}), words({"a", "c"})}, {.max_order = 2});
  CHECK_THAT(corpus.score, WithinRel(std::sqrt(5.0 / 6 * 3.0 / 4), 1e-12));
  // ... which is not the mean of the two sentences' BLEU (1 and 0).
  CHECK(corpus.score != 0.5);
  CHECK(corpus_bleu({Words{}}, {ref}).score == 0.0);  // an empty output
  CHECK_THAT(error_message([&] { corpus_bleu({cand}, {}); }), Contains("1 candidates and 0"));
}
