// The German-English reader: entry parsing on examples written here (no dictionary
// needed). The real dictionary is checked in test_freedict_installed.cpp, a CTest entry of
// its own that reports itself skipped when the dictionary is not installed.
#include "support.h"

using namespace attend;
using namespace attend::data;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("freedict entries: clean sentence pairs are kept, the rest dropped", "[nn]") {
  SentencePair p = parse_freedict_entry(
      "Mir ist eiskalt. /miːɾ ɪst ˈaɪskalt/\nI'm freezing.\n   Synonyms: {Ich friere.}\n", 10);
  CHECK(p.source == "Mir ist eiskalt.");
  CHECK(p.target == "I'm freezing.");
  // A usage tag before the translation is dropped; of two alternatives the first is kept.
  p = parse_freedict_entry("Ich friere sehr. /ɪç/\n [geh.] I'm freezing., I'm cold.\n", 10);
  CHECK(p.target == "I'm freezing.");
  // Not sentences, too short, too long, or with brackets: dropped.
  CHECK(parse_freedict_entry("frieren /fr/ <v>\nto freeze\n", 10).source.empty());
  CHECK(parse_freedict_entry("Ich friere. /ɪç/\nI am freezing.\n", 10)
            .source.empty());  // 2 German words
  CHECK(parse_freedict_entry("Das ist ein sehr langer Satz mit zu vielen Wörtern. /x/\n"
                             "This is a very long sentence with far too many words.\n",
                             8)
            .source.empty());
  CHECK(parse_freedict_entry("Er kam (spät) nach Hause. /x/\nHe came home late.\n", 10)
            .source.empty());
  CHECK(parse_freedict_entry("only one line.", 10).source.empty());
}

TEST_CASE("sentence pairs split reproducibly", "[nn]") {
  std::vector<SentencePair> pairs;
  for (int i = 0; i < 20; ++i) pairs.push_back({fmt::format("s{}", i), fmt::format("t{}", i)});
  TranslationSplits a = split_pairs(pairs, 3, 4, 9), b = split_pairs(pairs, 3, 4, 9);
  CHECK(a.train.size() == 13);
  CHECK(a.validation.size() == 3);
  CHECK(a.test.size() == 4);
  CHECK(a.test[0].source == b.test[0].source);
  CHECK_THAT(error_message([&] { split_pairs(pairs, 10, 10, 0); }),
             Contains("leave nothing to train on"));
  CHECK_THAT(error_message([] { load_freedict_sentences("/nonexistent"); }),
             Contains("sudo apt-get install dict-freedict-deu-eng"));
}
