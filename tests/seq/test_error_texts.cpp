// The error texts of seq/'s public API: each names the function that refused and the
// values it was given (never an internal text such as vector::_M_range_check).
#include <fstream>

#include "attend.h"
#include "scratch_dir.h"
#include "seq/test_models.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("error texts: corpus_bleu names the max_order it refuses", "[seq]") {
  const std::vector<seq::Words> sentences = {{"a", "b"}};
  CHECK_THROWS_WITH(seq::corpus_bleu(sentences, sentences, {.max_order = 0}),
                    "corpus_bleu: max_order must be at least 1, got 0");
}

TEST_CASE("error texts: date_batch names the row outside the examples", "[seq]") {
  const seq::DateTask& task = small_task();
  CHECK_NOTHROW(seq::date_batch(task, task.test, {0, 1}));
  CHECK_THROWS_WITH(seq::date_batch(task, task.test, {0, 40}),
                    "date_batch: row 40 is outside the 40 examples");
}

TEST_CASE("error texts: accuracy_by_format names the example and its format", "[seq]") {
  std::vector<data::DateExample> examples = {small_task().test[0], small_task().test[1]};
  examples[1].format = data::kDateFormats;
  CHECK_THROWS_WITH(seq::accuracy_by_format(examples, {"", ""}),
                    "accuracy_by_format: example 1 has format 14, not one of 0..13");
}

TEST_CASE("error texts: gradcheck_model names the parameter's dtype", "[seq]") {
  seq::AttentionSeq2Seq model = tiny_model(1);  // float32
  CHECK_THROWS_WITH(seq::gradcheck_model(model, seq::tiny_batch(8)),
                    Contains("gradcheck_model: a parameter") && Contains("is float32") &&
                        Contains("model.to(kFloat64)"));
}

TEST_CASE("error texts: read_length_curve names the function, the file and the reason", "[seq]") {
  ScratchDir dir("length_curve_errors");
  CHECK_THROWS_WITH(
      seq::read_length_curve(dir.file("none.csv")),
      "read_length_curve: cannot open '" + dir.file("none.csv") + "': No such file or directory");
  // A binary file: its first line is quoted with escapes, never printed raw to the terminal.
  std::ofstream(dir.file("junk.csv"), std::ios::binary) << std::string("\x01\xff\x1b[31m", 7);
  CHECK_THROWS_WITH(seq::read_length_curve(dir.file("junk.csv")),
                    "read_length_curve: '" + dir.file("junk.csv") +
                        "' is not an accuracy curve: its header is \"\\x01\\xff\\x1b[31m\"");
}
