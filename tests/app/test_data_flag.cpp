// app::Flags::data_flag: the one --data rule of every program that reads a data set.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "attend.h"

using namespace attend;

namespace {

struct DataOptions : app::Flags {
  std::string data = data_flag(data, "/no/default/folder", "Fashion-MNIST");
};

std::string data_error(const std::string& value) {
  DataOptions options;
  try {
    options.parse_or_throw({"--data", value});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("data flag: a folder named on the command line must exist; the default need not",
          "[flags]") {
  DataOptions defaults;
  REQUIRE(defaults.parse_or_throw({}));
  CHECK(defaults.data == "/no/default/folder");  // checked by the program, which says what to do

  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("attend-data-flag-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  DataOptions named;
  REQUIRE(named.parse_or_throw({"--data", folder.string()}));
  CHECK(named.data == folder.string());

  CHECK(data_error((folder / "typo").string()) ==
        "--data: the folder '" + (folder / "typo").string() + "' does not exist");
  std::ofstream(folder / "file.txt") << "not a folder";
  CHECK(data_error((folder / "file.txt").string()) ==
        "--data: '" + (folder / "file.txt").string() + "' is a file, not a folder");
  std::filesystem::remove_all(folder);

  DataOptions help;
  CHECK_THAT(help.usage("prog", "d"),
             Catch::Matchers::Contains("--data") &&
                 Catch::Matchers::Contains("folder with the Fashion-MNIST files"));
}
