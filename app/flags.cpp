#include "app/flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "tensor/error.h"
#include "tensor/parallel.h"

namespace attend::app {
namespace {

// What a number too large for T says: "max 18446744073709551615" for a seed, not that it is
// not an integer.
template <class T>
std::string representable_text() {
  using limits = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>)
    return fmt::format("max magnitude {:g}", limits::max());
  if constexpr (std::is_signed_v<T>) return fmt::format("{} to {}", limits::min(), limits::max());
  return fmt::format("max {}", limits::max());
}

template <class T>
T parse_number(const std::string& flag, const std::string& text, const char* kind) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range && ptr == end)
    fail("--{}: {} is out of range ({})", flag, text, representable_text<T>());
  if (ec != std::errc() || ptr != end || text.empty())
    fail("--{}: '{}' is not {}", flag, text, kind);
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(value)) fail("--{}: '{}' is not a finite number", flag, text);
  return value;
}

template <class T>
std::string range_text(const Range<T>& range) {
  if (range.low && range.high) return fmt::format("{} to {}", *range.low, *range.high);
  if (range.low) return fmt::format("{} {}", range.low_open ? "above" : "at least", *range.low);
  if (range.high) return fmt::format("at most {}", *range.high);
  return "";
}

template <class T>
void check_range(const std::string& flag, T value, const Range<T>& range) {
  bool too_low = range.low && (range.low_open ? !(value > *range.low) : !(value >= *range.low));
  bool too_high = range.high && !(value <= *range.high);
  if (too_low || too_high)
    fail("--{}: {} is out of range (it must be {})", flag, value, range_text(range));
}

// The declaration of a numeric flag: parses, checks the range, then stores.
template <class T>
auto numeric_setter(T& field, const std::string& name, Range<T> range, const char* kind) {
  return [&field, name, range, kind](const std::string& text) {
    T value = parse_number<T>(name, text, kind);
    check_range(name, value, range);
    field = value;
  };
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void Flags::declare(Declaration declaration) {
  if (find(declaration.name) != nullptr)
    fail("Flags: flag --{} is declared twice", declaration.name);
  declarations_.push_back(std::move(declaration));
}

int Flags::flag(int& field, const std::string& name, std::type_identity_t<int> value,
                const std::string& help, Range<int> range) {
  declare({name, help, std::to_string(value), range_text(range), false,
           numeric_setter(field, name, range, "an integer")});
  return value;
}

std::int64_t Flags::flag(std::int64_t& field, const std::string& name,
                         std::type_identity_t<std::int64_t> value, const std::string& help,
                         Range<std::int64_t> range) {
  declare({name, help, std::to_string(value), range_text(range), false,
           numeric_setter(field, name, range, "an integer")});
  return value;
}

std::uint64_t Flags::flag(std::uint64_t& field, const std::string& name,
                          std::type_identity_t<std::uint64_t> value, const std::string& help,
                          Range<std::uint64_t> range) {
  declare({name, help, std::to_string(value), range_text(range), false,
           numeric_setter(field, name, range, "a non-negative integer")});
  return value;
}

double Flags::flag(double& field, const std::string& name, std::type_identity_t<double> value,
                   const std::string& help, Range<double> range) {
  declare({name, help, fmt::format("{}", value), range_text(range), false,
           numeric_setter(field, name, range, "a number")});
  return value;
}

bool Flags::flag(bool& field, const std::string& name, bool value, const std::string& help) {
  declare({name, help, value ? "true" : "false", "", true, [&field, name](const std::string& text) {
             if (text == "true" || text == "1" || text == "yes")
               field = true;
             else if (text == "false" || text == "0" || text == "no")
               field = false;
             else
               fail("--{}: '{}' is not true or false", name, text);
           }});
  return value;
}

std::string Flags::flag(std::string& field, const std::string& name, const std::string& value,
                        const std::string& help, Choices choices) {
  std::string allowed = fmt::format("{}", fmt::join(choices.allowed, ", "));
  declare({name, help, value.empty() ? "\"\"" : value,
           choices.allowed.empty() ? "" : "one of " + allowed, false,
           [&field, name, choices, allowed](const std::string& text) {
             if (!choices.allowed.empty() &&
                 std::find(choices.allowed.begin(), choices.allowed.end(), text) ==
                     choices.allowed.end())
               fail("--{}: '{}' is not one of {}", name, text, allowed);
             field = text;
           }});
  return value;
}

std::string Flags::data_flag(std::string& field, const std::string& default_folder,
                             const std::string& data_set) {
  declare({"data", fmt::format("folder with the {} files (one named here must exist)", data_set),
           default_folder, "", false, [&field](const std::string& text) {
             std::error_code error;
             if (!std::filesystem::exists(text, error))
               fail("--data: the folder '{}' does not exist", text);
             if (!std::filesystem::is_directory(text, error))
               fail("--data: '{}' is a file, not a folder", text);
             field = text;
           }});
  return default_folder;
}

const Flags::Declaration* Flags::find(const std::string& name) const {
  for (const Declaration& d : declarations_)
    if (d.name == name) return &d;
  return nullptr;
}

std::string Flags::closest(const std::string& name) const {
  std::string best;
  std::size_t best_distance = 3;  // suggest only near misses
  for (const Declaration& d : declarations_) {
    std::size_t distance = edit_distance(name, d.name);
    if (distance < best_distance) {
      best_distance = distance;
      best = d.name;
    }
  }
  return best;
}

std::vector<std::string> Flags::names() const {
  std::vector<std::string> result;
  for (const Declaration& d : declarations_) result.push_back(d.name);
  return result;
}

std::string Flags::usage(const std::string& program, const std::string& description) const {
  std::string text = fmt::format("usage: {} [flags]\n\n{}\n\nflags:\n", program, description);
  for (const Declaration& d : declarations_) {
    std::string left = d.is_bool ? fmt::format("  --{} / --no-{}", d.name, d.name)
                                 : fmt::format("  --{} <value>", d.name);
    std::string accepted = d.range_text.empty() ? "" : "; " + d.range_text;
    text += fmt::format("{:<30} {} (default: {}{})\n", left, d.help, d.default_text, accepted);
  }
  text += fmt::format("{:<30} {}\n", "  --help", "show this message");
  return text;
}

bool Flags::parse_or_throw(const std::vector<std::string>& args, const std::string& program) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") return false;
    if (arg.rfind("--", 0) != 0)
      fail("{}: unexpected argument '{}' (flags start with --; run with --help to see them)",
           program, arg);
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Declaration* declaration = find(name);
    if (declaration == nullptr && name.rfind("no-", 0) == 0) {
      const Declaration* negated = find(name.substr(3));
      if (negated != nullptr && negated->is_bool && !has_value) {
        negated->set("false");
        continue;
      }
    }
    if (declaration == nullptr) {
      std::string hint = closest(name);
      fail("{}: unknown flag '--{}'{}; run with --help to see the flags", program, name,
           hint.empty() ? "" : fmt::format(" (did you mean --{}?)", hint));
    }
    if (!has_value) {
      if (declaration->is_bool) {
        declaration->set("true");
        continue;
      }
      if (i + 1 >= args.size()) fail("{}: flag --{} needs a value", program, name);
      value = args[++i];
    }
    declaration->set(value);
  }
  return true;
}

void Flags::parse(int argc, char** argv, const std::string& program,
                  const std::string& description) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool run = false;
  try {
    run = parse_or_throw(args, program);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(2);
  }
  if (!run) {
    std::fputs(usage(program, description).c_str(), stdout);
    std::exit(0);
  }
}

void make_output_folder(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error || !std::filesystem::is_directory(path))
    fail("cannot create the output folder '{}': {}", path,
         error ? error.message() : "a file with that name exists");
}

int run_program(const std::function<int()>& body) {
  try {
    num_threads();  // reads and checks ATTEND_NUM_THREADS now, not in the middle of the run
    return body();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}

}  // namespace attend::app
