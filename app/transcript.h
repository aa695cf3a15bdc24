// Transcript: what a program prints, kept so that it can also be saved.
//
// Every line the program says goes to the terminal and into the transcript; at the end the
// program writes the transcript to <out>/summary.txt, so the run can be read again (and a
// test can check that the lesson wrote its outputs). Every lesson uses it.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "tensor/error.h"

namespace attend::app {

class Transcript {
 public:
  // say("x has shape {}\n", x.shape()): prints and remembers the text.
  template <class... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) {
    std::string text = fmt::format(format, std::forward<Args>(args)...);
    std::fputs(text.c_str(), stdout);
    text_ += text;
  }

  // A numbered section title, underlined, with a blank line before it.
  void heading(const std::string& title) {
    say("\n{}\n{}\n", title, std::string(title.size(), '-'));
  }

  const std::string& text() const { return text_; }

  void save(const std::string& path) const {
    std::ofstream file(path);
    file << text_;
    if (!file) fail("cannot write the transcript to '{}'", path);
  }

 private:
  std::string text_;
};

}  // namespace attend::app
