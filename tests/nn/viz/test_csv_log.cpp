#include "nn/viz/csv_log.h"
#include "scratch.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("viz: the CSV log writes the header once and a flushed row per call", "[viz]") {
  ScratchFolder dir("csv");
  const auto path = dir / "logs/metrics.csv";  // the folder is created
  {
    viz::CsvLog log(path, {"epoch", "train_loss", "val_loss"});
    CHECK(read_text(path) == "epoch,train_loss,val_loss\n");
    log.write({{"epoch", 1}, {"train_loss", 0.1}, {"val_loss", 2.5e-7}});
    // Flushed at once: the row is in the file while the log is still open.
    CHECK(read_text(path) == "epoch,train_loss,val_loss\n1,0.1,2.5e-07\n");
    log.write({{"train_loss", 1.0 / 3}, {"epoch", 2}});  // any order; val_loss left empty
    log.write_values({3, -0.5, 1e20});
  }
  CHECK(read_text(path) ==
        "epoch,train_loss,val_loss\n"
        "1,0.1,2.5e-07\n"
        "2,0.3333333333333333,\n"
        "3,-0.5,1e+20\n");

  SECTION("appending (a resumed run) adds rows under the same header") {
    viz::CsvLog more(path, {"epoch", "train_loss", "val_loss"}, viz::CsvLog::Mode::kAppend);
    more.write({{"epoch", 4}});
    CHECK(read_text(path) ==
          "epoch,train_loss,val_loss\n1,0.1,2.5e-07\n2,0.3333333333333333,\n3,-0.5,1e+20\n4,,\n");
    // Appending to a missing file writes its header first.
    viz::CsvLog fresh(dir / "new.csv", {"step"}, viz::CsvLog::Mode::kAppend);
    fresh.write({{"step", 7}});
    CHECK(read_text(dir / "new.csv") == "step\n7\n");
  }
  SECTION("appending with other columns is refused, overwriting starts over") {
    CHECK_THAT(error_message([&] {
                 viz::CsvLog other(path, {"epoch", "accuracy"}, viz::CsvLog::Mode::kAppend);
               }),
               Contains("its columns are 'epoch,train_loss,val_loss', not 'epoch,accuracy'"));
    viz::CsvLog restart(path, {"epoch", "accuracy"});
    CHECK(read_text(path) == "epoch,accuracy\n");
  }
}

TEST_CASE("viz: the CSV log rejects unknown metrics and unopenable files", "[viz]") {
  ScratchFolder dir("csv-errors");
  viz::CsvLog log(dir / "m.csv", {"epoch", "loss"});
  CHECK_THAT(error_message([&] {
               log.write({{"epoch", 1}, {"los", 0.5}});
             }),
             Contains("'los' is not a column of") && Contains("(columns: epoch,loss)"));
  CHECK_THAT(error_message([&] {
               log.write({{"loss", 1}, {"loss", 2}});
             }),
             Contains("'loss' is given twice"));
  CHECK_THAT(error_message([&] { log.write_values({1}); }), Contains("1 values for the 2 columns"));
  CHECK(read_text(dir / "m.csv") == "epoch,loss\n");  // no half-written rows

  CHECK_THAT(error_message([&] { viz::CsvLog(dir / "x.csv", {}); }), Contains("no columns"));
  CHECK_THAT(error_message([&] {
               viz::CsvLog(dir / "x.csv", {"a", "b", "a"});
             }),
             Contains("the column 'a' is listed twice"));
  // A folder in place of the file, and a regular file in place of a folder.
  CHECK_THAT(error_message([&] { viz::CsvLog(dir.path(), {"a"}); }),
             Contains("cannot open") && Contains("Is a directory"));
  write_bytes(dir / "plain", "x");
  CHECK_THAT(error_message([&] { viz::CsvLog(dir / "plain/m.csv", {"a"}); }),
             Contains("cannot create the folder"));
}

TEST_CASE("viz: CSV cells with commas or quotes are quoted", "[viz]") {
  CHECK(viz::csv_cell("loss") == "loss");
  CHECK(viz::csv_cell("a,b") == "\"a,b\"");
  CHECK(viz::csv_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
  ScratchFolder dir("csv-quote");
  viz::CsvLog log(dir / "q.csv", {"bleu,4", "x"});
  CHECK(read_text(dir / "q.csv") == "\"bleu,4\",x\n");
}
