// Lesson 04: attention pooling. Run it and read docs/04_attention_pooling.md next to it:
//
//   ./build/bin/04_attention_pooling               # seed 0, into output/04_attention_pooling
//   ./build/bin/04_attention_pooling --help        # the flags
//
// Three sections, as in the chapter: Nadaraya-Watson kernel regression as attention,
// attention-based multiple-instance pooling on bags of Fashion-MNIST pictures, and a linear
// model whose noisy inputs shrink its weights.
#include <chrono>

#include "attend.h"
#include "program.h"

using namespace attend;
using namespace attend::lesson04;
using attend::app::Transcript;

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "04_attention_pooling",
          "Lesson 04: Nadaraya-Watson kernel regression as attention, attention-based "
          "multiple-instance pooling on bags of Fashion-MNIST pictures, and noisy inputs that "
          "shrink a linear model's weights (docs/04_attention_pooling.md).");
  return app::run_program([&] {
    app::make_output_folder(o.out);
    const auto start = std::chrono::steady_clock::now();
    Transcript t;
    t.say("Lesson 04: attention pooling (seed {}, outputs in {})\n", o.seed, o.out);
    section_nadaraya_watson(t, o);
    section_mil(t, o);
    section_noisy_linear(t, o);
    t.say("\nDone in {:.0f} s. Wrote {}/summary.txt.\n", app::seconds_since(start), o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
