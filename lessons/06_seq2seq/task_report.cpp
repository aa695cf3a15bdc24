// Section 1 of the program: the date task, and one batch of it as the model sees it.
#include <fmt/ranges.h>

#include <algorithm>

#include "lesson.h"

namespace attend::lesson06 {
namespace {

std::string ids_text(const Tensor& ids, Index row) {
  std::vector<std::int64_t> values;
  for (Index j = 0; j < ids.size(1); ++j)
    values.push_back(static_cast<std::int64_t>(ids.data().at({row, j})));
  return fmt::format("{}", fmt::join(values, " "));
}

}  // namespace

void describe_date_task(app::Transcript& t, const seq::DateTask& task) {
  t.heading("1. The date task");
  t.say(
      "{} training, {} validation and {} held-out test dates, no (date, format) pair in two\n"
      "of them. The {} formats, each writing 3 March 2015:\n",
      task.train.size(), task.validation.size(), task.test.size(), data::kDateFormats);
  for (int f = 0; f < data::kDateFormats; ++f) {
    const data::DateExample e = data::make_date(2015, 3, 3, f);
    t.say("  {:2}  {:<46} {:>30} -> {}\n", f, data::date_format_description(f), '"' + e.input + '"',
          e.output);
  }
  std::size_t shortest = 1000, longest = 0;
  for (const data::DateExample& e : task.test) {
    shortest = std::min(shortest, e.input.size());
    longest = std::max(longest, e.input.size());
  }
  t.say("Test inputs are {} to {} characters long; every output is 10 characters and <eos>.\n",
        shortest, longest);
  t.say(
      "Vocabularies: {} source tokens (4 special + letters, digits, \" ,./-\"), {} target\n"
      "tokens (4 special + digits and '-').\n",
      task.source_vocabulary.size(), task.target_vocabulary.size());

  const seq::Batch batch = seq::date_batch(task, task.test, {0, 1});
  t.say("\nA batch of two test dates, \"{}\" and \"{}\" ({} and {} characters):\n",
        task.test[0].input, task.test[1].input, task.test[0].input.size(),
        task.test[1].input.size());
  const std::string source_label = fmt::format("source [{}]", fmt::join(batch.source.shape(), ","));
  const std::string decoder_label =
      fmt::format("decoder_input [{}]", fmt::join(batch.decoder_input.shape(), ","));
  t.say("  {:<20} {}\n", source_label, ids_text(batch.source, 0));
  t.say("  {:<20} {}\n", "", ids_text(batch.source, 1));
  t.say("  {:<20} {}   (0: <pad>)\n", "source_mask", ids_text(batch.source_mask, 0));
  t.say("  {:<20} {}\n", "", ids_text(batch.source_mask, 1));
  t.say("  {:<20} {}   (<bos>=1, then \"{}\" but its last character)\n", decoder_label,
        ids_text(batch.decoder_input, 0), task.test[0].output);
  t.say("  {:<20} {}   (\"{}\", then <eos>=2)\n", "target", ids_text(batch.target, 0),
        task.test[0].output);
}

}  // namespace attend::lesson06
