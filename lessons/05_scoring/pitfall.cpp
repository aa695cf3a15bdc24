// (c) The dimension pitfall. A dot product pairs the i-th entry of q with the i-th entry of
// k, so it is defined only when both have the same size. An encoder and a decoder often
// differ (Bahdanau et al.'s annotations are 2n = 2000 wide, the decoder state n = 1000), and
// then the dot score has no meaning at all: nn::dot_score refuses, with a message that says
// so, instead of reading past the end of the shorter vector. The general score puts a
// learned W [Dq, Dk] between them, q^T W k, and the additive score projects both into a
// common hidden size A, v^T tanh(W q + U k), so both accept any pair of sizes.
#include "lesson.h"

namespace attend::lesson05 {

PitfallDemo dimension_pitfall(Index query_size, Index key_size, Index hidden, Generator& gen) {
  NoGradGuard no_graph;
  Tensor queries = randn({1, 2, query_size}, gen), keys = randn({1, 5, key_size}, gen);
  PitfallDemo demo;
  try {
    nn::dot_score(queries, keys);
    demo.dot_error = "(no error: the sizes are equal)";
  } catch (const Error& e) {
    demo.dot_error = e.what();
  }
  nn::GeneralScore general(query_size, key_size, gen);
  nn::AdditiveScore additive(query_size, key_size, hidden, gen);
  demo.general_scores = general.forward(queries, keys).shape();
  demo.additive_scores = additive.forward(queries, keys).shape();
  demo.general_parameters = general.parameter_count();
  demo.additive_parameters = additive.parameter_count();
  return demo;
}

}  // namespace attend::lesson05
