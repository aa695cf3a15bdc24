// app::Flags: one declaration per flag gives its field, default, help and range.
#include <catch2/catch.hpp>

#include "attend.h"

using namespace attend;

namespace {

struct Options : app::Flags {
  int epochs = flag(epochs, "epochs", 5, "passes", app::at_least(1));
  double lr = flag(lr, "lr", 0.1, "learning rate", app::above(0.0));
  double dropout = flag(dropout, "dropout", 0.0, "drop rate", app::between(0.0, 1.0));
  std::uint64_t seed = flag(seed, "seed", 0, "seed");
  bool plot = flag(plot, "plot", true, "draw the curves");
  std::string out = flag(out, "out", "output/x", "folder");
  std::string score =
      flag(score, "score", "additive", "score", app::one_of({"additive", "general"}));
};

std::string error_of(const std::vector<std::string>& args) {
  Options options;
  try {
    options.parse_or_throw(args, "prog");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a flag's declaration gives the field its default", "[flags]") {
  Options options;
  CHECK(options.epochs == 5);
  CHECK(options.lr == 0.1);
  CHECK(options.seed == 0);
  CHECK(options.plot);
  CHECK(options.out == "output/x");
  CHECK(options.names() ==
        std::vector<std::string>{"epochs", "lr", "dropout", "seed", "plot", "out", "score"});
}

TEST_CASE("flags are parsed in both spellings, bools alone or negated", "[flags]") {
  Options options;
  REQUIRE(options.parse_or_throw(
      {"--epochs", "3", "--lr=0.5", "--no-plot", "--score", "general", "--out", "/tmp/o"}));
  CHECK(options.epochs == 3);
  CHECK(options.lr == 0.5);
  CHECK_FALSE(options.plot);
  CHECK(options.score == "general");
  CHECK(options.out == "/tmp/o");
  CHECK_FALSE(options.parse_or_throw({"--help"}));
}

TEST_CASE("a copy of the options holds the values and parses into itself", "[flags]") {
  Options original;
  REQUIRE(original.parse_or_throw({"--epochs", "7"}));
  Options copy = original;
  CHECK(copy.epochs == 7);
  REQUIRE(original.parse_or_throw({"--epochs", "9"}));
  CHECK(copy.epochs == 7);  // the copy's fields are its own
  CHECK(copy.names().empty());
}

TEST_CASE("values out of range, malformed or unknown are errors naming the flag", "[flags]") {
  CHECK_THAT(error_of({"--epochs", "0"}),
             Catch::Contains("--epochs: 0 is out of range") && Catch::Contains("at least 1"));
  CHECK_THAT(error_of({"--lr", "0"}), Catch::Contains("--lr: 0 is out of range"));
  CHECK_THAT(error_of({"--dropout", "1.5"}), Catch::Contains("0 to 1"));
  CHECK_THAT(error_of({"--epochs", "three"}),
             Catch::Contains("--epochs: 'three' is not an integer"));
  CHECK_THAT(error_of({"--seed", "-1"}), Catch::Contains("--seed"));
  CHECK_THAT(error_of({"--seed", "99999999999999999999999"}),
             Catch::Contains("--seed: 99999999999999999999999 is out of range"));
  CHECK_THAT(error_of({"--score", "dot"}), Catch::Contains("not one of additive, general"));
  CHECK_THAT(error_of({"--epoch", "3"}), Catch::Contains("did you mean --epochs?"));
  CHECK_THAT(error_of({"--epochs"}), Catch::Contains("needs a value"));
  CHECK_THAT(error_of({"stray"}), Catch::Contains("unexpected argument 'stray'"));
  CHECK(error_of({"--epochs", "1", "--dropout", "1"}).empty());  // the bounds are allowed
}

TEST_CASE("numbers beyond their type say the type's limit; NaN and infinity are refused",
          "[flags]") {
  // 2^64: one more than the largest seed.
  CHECK(error_of({"--seed", "18446744073709551616"}) ==
        "--seed: 18446744073709551616 is out of range (max 18446744073709551615)");
  CHECK(error_of({"--seed", "18446744073709551615"}).empty());
  CHECK_THAT(error_of({"--epochs", "99999999999"}),
             Catch::Contains("--epochs: 99999999999 is out of range (-2147483648 to 2147483647)"));
  CHECK_THAT(error_of({"--lr", "1e999"}), Catch::Contains("--lr: 1e999 is out of range"));
  for (const char* text : {"nan", "NaN", "inf", "-inf", "infinity"}) {
    INFO(text);
    CHECK_THAT(error_of({"--dropout", text}), Catch::Contains("is not a finite number"));
    CHECK_THAT(error_of({"--lr", text}),
               Catch::Contains("--lr: '") && Catch::Contains("is not a finite number"));
  }
}

TEST_CASE("usage lists every flag with its default and range", "[flags]") {
  Options options;
  std::string text = options.usage("prog", "does things");
  CHECK_THAT(text,
             Catch::Contains("--epochs <value>") && Catch::Contains("(default: 5; at least 1)"));
  CHECK_THAT(text, Catch::Contains("--plot / --no-plot"));
  CHECK_THAT(text, Catch::Contains("one of additive, general"));
}
