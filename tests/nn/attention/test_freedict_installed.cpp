// The installed German-English dictionary (sudo apt-get install dict-freedict-deu-eng).
// This file is its own CTest entry: when the dictionary is absent the case prints
// "SKIPPED:", which attend_add_installed_data_test (tests/CMakeLists.txt) turns into CTest's
// "Skipped" (Catch2 v2 has no skip of its own), so a missing dictionary is never counted as a pass.
// ATTEND_FREEDICT_DIR points the check at another folder (the "(skip path)" CTest entry sets it to
// a folder that does not exist).
#include <cstdio>
#include <cstdlib>

#include "support.h"

using namespace attend;
using namespace attend::data;

TEST_CASE("the installed German-English dictionary yields thousands of pairs", "[nn]") {
  const char* override_folder = std::getenv("ATTEND_FREEDICT_DIR");
  const std::string folder = override_folder ? override_folder : kFreedictFolder;
  if (!freedict_available(folder)) {
    std::printf(
        "SKIPPED: dict-freedict-deu-eng is not installed in %s "
        "(sudo apt-get install dict-freedict-deu-eng)\n",
        folder.c_str());
    return;
  }
  std::vector<SentencePair> pairs = load_freedict_sentences(folder);
  CHECK(pairs.size() > 5000);
  bool found = false;
  for (const auto& p : pairs)
    found = found || (p.source == "Mir ist eiskalt." && p.target == "I'm freezing.");
  CHECK(found);
}
