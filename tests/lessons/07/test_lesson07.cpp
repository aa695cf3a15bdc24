// Lesson 07's own functions: the word-level German-English task (vocabularies from the
// training part only, rare words <unk>, batches). RNNsearch, BLEU and the alignment accuracy
// are tested with the library (tests/seq/, tests/interpret/).
#include "lessons/07_bahdanau/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson07;
using Catch::Matchers::WithinAbs;

namespace {

Words words(std::initializer_list<const char*> list) {
  return Words(list.begin(), list.end());
}

}  // namespace

TEST_CASE("word vocabularies: frequent words, ties alphabetical, rare ones <unk>", "[lesson07]") {
  const std::vector<Words> sentences = {words({"b", "a", "c", "b"}), words({"a", "d", "b"})};
  const Vocabulary v = word_vocabulary(sentences, 2);
  CHECK(v.size() == 4 + 2);
  CHECK(v.token(4) == "b");  // 3 times
  CHECK(v.token(5) == "a");  // 2 times
  CHECK(v.id("c") == Vocabulary::kUnk);
  CHECK(word_vocabulary(sentences, 1).token(6) == "c");  // c and d once each: alphabetical
  CHECK_THAT(unknown_share(v, {words({"a", "c", "d", "b"})}), WithinAbs(0.5, 1e-15));
}

TEST_CASE("the German-English task: vocabularies from training only, batches", "[lesson07]") {
  std::vector<data::SentencePair> pairs;
  for (int i = 0; i < 30; ++i)
    pairs.push_back({fmt::format("Ich sehe {}.", i % 3 == 0 ? "Hunde" : "Katzen"),
                     fmt::format("I see {}.", i % 3 == 0 ? "dogs" : "cats")});
  pairs.push_back({"Ganz neue Wörter hier.", "Entirely new words here."});
  const TranslationTask task = make_translation_task(pairs, 5, 6, 1, 2);
  CHECK(task.train_source.size() == 20);
  CHECK(task.test_target.size() == 6);
  CHECK(task.source_vocabulary.contains("sehe"));
  CHECK_FALSE(task.source_vocabulary.contains("wörter"));  // seen once at most
  const Batch b = translation_batch(task, task.train_source, task.train_target, {0, 1});
  CHECK(b.source.shape() == Shape{2, 4});  // "ich sehe katzen ."
  CHECK(words_of(task.target_vocabulary, {4, 5}).size() == 2);

  // A translation as the viewer's example: the German words, the output, one map, its BLEU.
  const Words source = words({"ich", "sehe", "wörter", "."});
  const Decoded decoded{
      .tokens = {task.target_vocabulary.id("i"), task.target_vocabulary.id("see")},
      .weights = {{0.7, 0.1, 0.1, 0.1}, {0, 1, 0, 0}, {0, 0, 0.5, 0.5}},
      .finished = true};
  const viz::AttentionExample e = sentence_example(task, source, decoded, 0.25);
  CHECK(e.name == "ich sehe wörter .");
  CHECK(e.source == words({"ich", "sehe", "wörter (unk)", "."}));
  CHECK(e.target == words({"i", "see", "<eos>"}));
  REQUIRE(e.maps.size() == 1);
  CHECK(e.maps[0].values ==
        std::vector<std::vector<double>>{{0.7, 0.1, 0.1, 0.1}, {0, 1, 0, 0}, {0, 0, 0.5, 0.5}});
  CHECK(e.maps[0].scores == std::vector<std::pair<std::string, double>>{{"sentence BLEU", 0.25}});
  CHECK_THAT(viz::attention_json({.kind = "sequence", .examples = {e}}),
             Catch::Matchers::Contains("\"wörter (unk)\""));
}
