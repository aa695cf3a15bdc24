#include "lessons/common/cli.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tensor/error.h"

namespace attend::lessons {
namespace {

template <class T>
T parse_number(const std::string& flag, const std::string& text, const char* kind) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty())
    fail("--{}: '{}' is not {}", flag, text, kind);
  return value;
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

CommandLine::CommandLine(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

void CommandLine::add_flag(Flag flag) {
  if (find(flag.name) != nullptr) fail("CommandLine: flag --{} is registered twice", flag.name);
  flags_.push_back(std::move(flag));
}

void CommandLine::add(const std::string& name, int& value, const std::string& help) {
  add_flag({name, help, std::to_string(value), false, [&value, name](const std::string& text) {
              value = parse_number<int>(name, text, "an integer");
            }});
}

void CommandLine::add(const std::string& name, std::int64_t& value, const std::string& help) {
  add_flag({name, help, std::to_string(value), false, [&value, name](const std::string& text) {
              value = parse_number<std::int64_t>(name, text, "an integer");
            }});
}

void CommandLine::add(const std::string& name, std::uint64_t& value, const std::string& help) {
  add_flag({name, help, std::to_string(value), false, [&value, name](const std::string& text) {
              value = parse_number<std::uint64_t>(name, text, "a non-negative integer");
            }});
}

void CommandLine::add(const std::string& name, double& value, const std::string& help) {
  add_flag({name, help, fmt::format("{}", value), false, [&value, name](const std::string& text) {
              value = parse_number<double>(name, text, "a number");
            }});
}

void CommandLine::add(const std::string& name, bool& value, const std::string& help) {
  add_flag({name, help, value ? "true" : "false", true, [&value, name](const std::string& text) {
              if (text == "true" || text == "1" || text == "yes")
                value = true;
              else if (text == "false" || text == "0" || text == "no")
                value = false;
              else
                fail("--{}: '{}' is not true or false", name, text);
            }});
}

void CommandLine::add(const std::string& name, std::string& value, const std::string& help) {
  add_flag({name, help, value.empty() ? "\"\"" : value, false,
            [&value](const std::string& text) { value = text; }});
}

const CommandLine::Flag* CommandLine::find(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

std::string CommandLine::closest_flag(const std::string& name) const {
  std::string best;
  std::size_t best_distance = 3;  // suggest only near misses
  for (const Flag& f : flags_) {
    std::size_t d = edit_distance(name, f.name);
    if (d < best_distance) {
      best_distance = d;
      best = f.name;
    }
  }
  return best;
}

std::string CommandLine::usage() const {
  std::string text = fmt::format("usage: {} [flags]\n\n{}\n\nflags:\n", program_, description_);
  for (const Flag& f : flags_) {
    std::string left = f.is_bool ? fmt::format("  --{} / --no-{}", f.name, f.name)
                                 : fmt::format("  --{} <value>", f.name);
    text += fmt::format("{:<30} {} (default: {})\n", left, f.help, f.default_text);
  }
  text += fmt::format("{:<30} {}\n", "  --help", "show this message");
  return text;
}

void CommandLine::parse_or_throw(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      help_requested_ = true;
      return;
    }
    if (arg.rfind("--", 0) != 0)
      fail("{}: unexpected argument '{}' (flags start with --; run with --help to see them)",
           program_, arg);
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* flag = find(name);
    if (flag == nullptr && name.rfind("no-", 0) == 0) {
      const Flag* negated = find(name.substr(3));
      if (negated != nullptr && negated->is_bool && !has_value) {
        negated->set("false");
        continue;
      }
    }
    if (flag == nullptr) {
      std::string hint = closest_flag(name);
      fail("{}: unknown flag '--{}'{}; run with --help to see the flags", program_, name,
           hint.empty() ? "" : fmt::format(" (did you mean --{}?)", hint));
    }
    if (!has_value) {
      if (flag->is_bool) {
        flag->set("true");
        continue;
      }
      if (i + 1 >= args.size()) fail("{}: flag --{} needs a value", program_, name);
      value = args[++i];
    }
    flag->set(value);
  }
}

void CommandLine::parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    parse_or_throw(args);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(2);
  }
  if (help_requested_) {
    std::fputs(usage().c_str(), stdout);
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

int run_lesson(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}

}  // namespace attend::lessons
