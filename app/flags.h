// Command-line flags, each declared once: the field, its default, its help text and the
// range of values it accepts are one line of the program's Options.
//
//   struct Options : app::Flags {
//     int epochs = flag(epochs, "epochs", 5, "passes over the training set", app::at_least(1));
//     double lr = flag(lr, "lr", 0.1, "Adam's learning rate", app::above(0.0));
//     std::string out = flag(out, "out", "output/03_training", "folder for the outputs");
//   };
//   Options options;
//   options.parse(argc, argv, "03_training", "Trains an MLP and a CNN on Fashion-MNIST.");
//
// flag() remembers where the field lives and returns the default, so the field starts with
// it. parse() prints --help and exits 0; on an unknown flag, a malformed value or one out of
// range it prints one line naming the flag and the value and exits 2. Flags are written
// --name value or --name=value; a bool flag alone (--plot) means true and --no-plot false.
//
// A copy of Options holds the values only (it parses nothing): pass it around freely.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace attend::app {

// The values a numeric flag accepts: [low, high], or (low, high] when low_open.
template <class T>
struct Range {
  std::optional<T> low, high;
  bool low_open = false;
};
template <class T>
Range<T> at_least(T low) {
  return {low, std::nullopt, false};
}
template <class T>
Range<T> above(T low) {  // strictly greater, e.g. a learning rate: above(0.0)
  return {low, std::nullopt, true};
}
template <class T>
Range<T> between(T low, T high) {  // low <= value <= high
  return {low, high, false};
}

// The strings a text flag accepts; empty: any.
struct Choices {
  std::vector<std::string> allowed;
};
inline Choices one_of(std::vector<std::string> allowed) {
  return {std::move(allowed)};
}

class Flags {
 public:
  Flags() = default;
  // A copy (or an assignment) takes the values of the fields, not their declarations: the
  // declarations point at the original's fields.
  Flags(const Flags&) {}
  Flags& operator=(const Flags&) { return *this; }

  // Parses argv into the fields. --help: prints usage() and exits 0; a bad flag or value:
  // prints one line saying what is wrong and exits 2.
  void parse(int argc, char** argv, const std::string& program, const std::string& description);
  // The same, throwing attend::Error instead of exiting; returns false if --help was asked.
  bool parse_or_throw(const std::vector<std::string>& args, const std::string& program = "program");
  std::string usage(const std::string& program, const std::string& description) const;
  // The names of the declared flags, in declaration order.
  std::vector<std::string> names() const;

 protected:
  int flag(int& field, const std::string& name, std::type_identity_t<int> value,
           const std::string& help, Range<int> range = {});
  std::int64_t flag(std::int64_t& field, const std::string& name,
                    std::type_identity_t<std::int64_t> value, const std::string& help,
                    Range<std::int64_t> range = {});
  std::uint64_t flag(std::uint64_t& field, const std::string& name,
                     std::type_identity_t<std::uint64_t> value, const std::string& help,
                     Range<std::uint64_t> range = {});
  double flag(double& field, const std::string& name, std::type_identity_t<double> value,
              const std::string& help, Range<double> range = {});
  bool flag(bool& field, const std::string& name, bool value, const std::string& help);
  std::string flag(std::string& field, const std::string& name, const std::string& value,
                   const std::string& help, Choices choices = {});
  // --data, the folder of a data set, declared by this one rule in every program that reads
  // one: a folder named on the command line must exist, so that a typo is an error and never
  // a quiet switch to other data; the default folder need not (the program then says how to
  // install the data set, or uses its generated stand-in).
  //   std::string data = data_flag(data, data::kFashionMnistFolder, "Fashion-MNIST");
  std::string data_flag(std::string& field, const std::string& default_folder,
                        const std::string& data_set);

 private:
  struct Declaration {
    std::string name, help, default_text, range_text;
    bool is_bool = false;
    std::function<void(const std::string&)> set;  // throws attend::Error on a bad value
  };
  void declare(Declaration declaration);
  const Declaration* find(const std::string& name) const;
  std::string closest(const std::string& name) const;

  std::vector<Declaration> declarations_;
};

// Creates the folder (and its parents) if needed; throws attend::Error if it cannot.
void make_output_folder(const std::string& path);

// Runs a program's body, turning an attend::Error (or any exception) into one readable line
// on stderr and exit code 1, instead of an abort with a core dump.
int run_program(const std::function<int()>& body);

}  // namespace attend::app
