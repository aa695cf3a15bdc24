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

  // Which files a plot wrote, as name.png and name.txt: the PNG needs gnuplot, the .txt data
  // file is always there. `drawn` is what viz::plot_curves / plot_heatmap returned.
  void say_plot_files(bool drawn, const std::string& name) {
    if (drawn)
      say("Wrote {0}.png and its data, {0}.txt.\n", name);
    else
      say("Wrote {}.txt (no gnuplot: no PNG; apt-get install gnuplot-nox).\n", name);
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
