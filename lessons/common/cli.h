// Command-line flags for the lesson programs. Every hyper-parameter of a lesson is a named
// constant with a flag that changes it:
//
//   struct Options { int epochs = 5; double learning_rate = 0.1; std::string out = "output/03"; };
//   Options options;
//   CommandLine cli("03_training", "Trains an MLP and a CNN on Fashion-MNIST.");
//   cli.add("epochs", options.epochs, "passes over the training set");
//   cli.add("lr", options.learning_rate, "learning rate");
//   cli.add("out", options.out, "folder for plots, logs and checkpoints");
//   cli.parse(argc, argv);   // --help prints the flags and exits 0; a bad flag exits 2
//
// Flags are written --name value or --name=value; a bool flag alone (--plot) means true and
// --no-plot false.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attend::lessons {

class CommandLine {
 public:
  CommandLine(std::string program, std::string description);

  void add(const std::string& name, int& value, const std::string& help);
  void add(const std::string& name, std::int64_t& value, const std::string& help);
  void add(const std::string& name, std::uint64_t& value, const std::string& help);
  void add(const std::string& name, double& value, const std::string& help);
  void add(const std::string& name, bool& value, const std::string& help);
  void add(const std::string& name, std::string& value, const std::string& help);

  // Parses argv into the registered variables. On --help prints the usage and exits 0; on
  // an unknown flag or a bad value prints one line saying what is wrong and exits 2.
  void parse(int argc, char** argv);
  // The same, but throws attend::Error instead of exiting (for tests).
  void parse_or_throw(const std::vector<std::string>& args);
  // Returns true when the arguments asked for --help (parse_or_throw does not print it).
  bool help_requested() const { return help_requested_; }

  std::string usage() const;

 private:
  struct Flag {
    std::string name, help, default_text;
    bool is_bool = false;
    std::function<void(const std::string&)> set;  // throws attend::Error on a bad value
  };
  void add_flag(Flag flag);
  const Flag* find(const std::string& name) const;
  std::string closest_flag(const std::string& name) const;

  std::string program_, description_;
  std::vector<Flag> flags_;
  bool help_requested_ = false;
};

// Creates the folder (and its parents) if needed; throws attend::Error if it cannot.
void make_output_folder(const std::string& path);

// Runs a lesson's body, turning an attend::Error (or any exception) into one readable line
// on stderr and exit code 1, instead of an abort with a core dump.
int run_lesson(const std::function<int()>& body);

}  // namespace attend::lessons
