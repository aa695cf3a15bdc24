// seq/training.h: the training loop lowers the loss, logs every epoch, stops at its target or
// its time budget, and names bad options; and seq/teacher_forcing.h's model gradcheck
// refuses a float32 model.
#include <filesystem>
#include <fstream>

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

TEST_CASE("training lowers the loss, logs every epoch and keeps its budget", "[seq]") {
  const DateTask& task = small_task();
  Generator gen(6);
  AttentionSeq2Seq model(tiny_date_sizes(task), Scoring::kAdditive, Readout::kMaxout, gen);
  std::vector<Index> lengths;
  for (const DateExample& e : task.train) lengths.push_back(static_cast<Index>(e.input.size()));
  auto batches = [&] {
    std::vector<Batch> out;
    for (const auto& rows : length_sorted_batches(lengths, 50, gen))
      out.push_back(date_batch(task, task.train, rows));
    return out;
  };
  int validations = 0;
  auto validate = [&] { return ++validations * 0.1; };
  const std::string log =
      (std::filesystem::temp_directory_path() / "attend_seq_training.csv").string();
  TrainingResult r = train(
      model, batches, validate,
      {.max_epochs = 4, .seconds = 600, .learning_rate = 1e-2, .stop_at = 0.3, .log_path = log});
  CHECK(r.epochs == 3);  // validation reached 0.3 after the third epoch
  CHECK(r.reached_target);
  CHECK(r.steps == 18);  // 6 batches of 50 per epoch
  CHECK(r.train_loss.back() < r.train_loss.front());
  std::ifstream csv(log);
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 4);  // header + 3 epochs

  TrainingResult quick = train(model, batches, validate, {.max_epochs = 4, .seconds = 1e-9});
  CHECK(quick.out_of_time);
  CHECK(quick.steps == 1);
  CHECK(quick.epochs == 1);
  CHECK_THAT(error_message([&] { train(model, batches, validate, {.max_epochs = 0}); }),
             Contains("at least 1"));
  CHECK_THAT(error_message([&] { train(model, batches, validate, {.learning_rate = -1}); }),
             Contains("learning rate"));
}

TEST_CASE("a whole model's gradcheck asks for float64 and a batch of real ids", "[seq]") {
  AttentionSeq2Seq float32 = tiny_model(1);
  CHECK_THAT(error_message([&] { gradcheck_model(float32, tiny_batch(8)); }),
             Contains("to(kFloat64)"));
  CHECK_THAT(error_message([] { tiny_batch(5); }), Contains("at least 6"));
}

TEST_CASE("training on dates: length-sorted batches, validated by exact match", "[seq]") {
  const DateTask& task = small_task();
  Generator gen(9);
  AttentionSeq2Seq model(tiny_date_sizes(task), Scoring::kAdditive, Readout::kMaxout, gen);
  const TrainingResult r = train_on_dates(model, task, 50, gen, {.max_epochs = 2, .seconds = 600});
  CHECK(r.epochs == 2);
  CHECK(r.steps == 12);  // 300 dates in batches of 50, twice
  REQUIRE(r.validation_score.size() == 2);
  // The score after the last epoch is the model's exact match on the validation dates.
  model.eval();
  CHECK(r.validation_score.back() ==
        exact_match(task.validation, predict_dates(model, task, task.validation)));
}
