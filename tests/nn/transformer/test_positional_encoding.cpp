// Positional encodings: the sinusoid table against the paper's formula, both modules' shapes,
// errors and float64 gradchecks (gradcheck's defaults: eps 1e-6, atol 1e-5, rtol 1e-3).
#include <cmath>

#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// PE(pos, j) written straight from Vaswani et al. 2017, section 3.5 (2i = j rounded down
// to even).
double formula(Index pos, Index j, Index d) {
  const double angle = pos / std::pow(10000.0, double(j - j % 2) / double(d));
  return j % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

double at(const Tensor& t, Index row, Index col) {
  return t.data().to_vector()[static_cast<std::size_t>(row * t.size(1) + col)];
}

}  // namespace

TEST_CASE("sinusoidal_positions follows PE(pos, 2i) = sin(pos / 10000^(2i/d)), cos", "[nn]") {
  Tensor pe = nn::sinusoidal_positions(60, 8);
  REQUIRE(pe.shape() == Shape{60, 8});
  CHECK(pe.dtype() == kFloat32);
  check_close(slice(pe, 0, 0, 1).data().to(kFloat64), f64({0, 1, 0, 1, 0, 1, 0, 1}, {1, 8}));
  // By hand, d = 8: column 0 has frequency 1, columns 2-3 frequency 10000^(-2/8) = 0.1.
  CHECK_THAT(at(pe, 1, 0), WithinAbs(0.8414709848, 1e-7));   // sin(1)
  CHECK_THAT(at(pe, 1, 1), WithinAbs(0.5403023059, 1e-7));   // cos(1)
  CHECK_THAT(at(pe, 10, 2), WithinAbs(0.8414709848, 1e-7));  // sin(10 * 0.1)
  CHECK_THAT(at(pe, 10, 3), WithinAbs(0.5403023059, 1e-7));  // cos(10 * 0.1)
  for (Index pos : {0, 1, 7, 33, 59})
    for (Index j = 0; j < 8; ++j) {
      INFO("pos " << pos << ", column " << j);
      CHECK_THAT(at(pe, pos, j), WithinAbs(formula(pos, j, 8), 1e-7));
    }
}

TEST_CASE("sinusoidal_positions with an odd d_model ends with a lone sine", "[nn]") {
  Tensor pe = nn::sinusoidal_positions(20, 5);
  REQUIRE(pe.shape() == Shape{20, 5});
  for (Index pos : {0, 3, 19})
    for (Index j = 0; j < 5; ++j) CHECK_THAT(at(pe, pos, j), WithinAbs(formula(pos, j, 5), 1e-7));
  CHECK_THAT(at(pe, 3, 4), WithinAbs(std::sin(3 / std::pow(10000.0, 0.8)), 1e-7));
  CHECK_THAT(error_message([] { nn::sinusoidal_positions(4, 0); }),
             Contains("sinusoidal_positions: max_len and d_model must be >= 1, got 4 and 0"));
}

TEST_CASE("SinusoidalPositionalEncoding adds PE[:T] to every sequence of the batch", "[nn]") {
  nn::SinusoidalPositionalEncoding encoding(6, 10);
  CHECK(encoding.parameter_count() == 0);  // the table is a buffer
  CHECK(encoding.describe() == "SinusoidalPositionalEncoding(d_model=6, max_len=10)");
  Tensor x = ones({2, 3, 6});
  Tensor y = encoding(x);
  REQUIRE(y.shape() == Shape{2, 3, 6});
  NDArray expected = (nn::sinusoidal_positions(3, 6).data() + 1.0).to(kFloat64);
  check_close(slice(y, 0, 0, 1).data().to(kFloat64), unsqueeze(expected, 0), 1e-6);
  check_close(slice(y, 0, 1, 2).data().to(kFloat64), unsqueeze(expected, 0), 1e-6);
  CHECK(encoding(ones({1, 2, 6}, kFloat64)).dtype() == kFloat64);  // the table follows x
}

TEST_CASE("LearnedPositionalEmbedding: a [max_len, D] parameter, N(0, 0.02^2)", "[nn]") {
  Generator gen(3);
  nn::LearnedPositionalEmbedding embedding(64, 32, gen);
  REQUIRE(embedding.named_parameters().size() == 1);
  CHECK(embedding.named_parameters()[0].first == "weight");
  CHECK(embedding.parameter_count() == 64 * 32);
  CHECK(embedding.describe() == "LearnedPositionalEmbedding(64 x 32)");
  // 2048 draws: the sample std is within 0.02 * 5 / sqrt(2 * 2048) = 0.0016 of 0.02.
  std::vector<double> w = embedding.weight.data().to_vector();
  double total = 0, squares = 0;
  for (double v : w) total += v, squares += v * v;
  const double mean = total / double(w.size());
  CHECK(std::abs(mean) < 0.0025);  // 5 standard errors, 0.02 / sqrt(2048) each
  CHECK_THAT(std::sqrt(squares / double(w.size()) - mean * mean), WithinAbs(0.02, 0.0016));

  // y = x + weight[:T]; each used row's gradient is the sum over the batch (here B = 2).
  Tensor x = zeros({2, 5, 32});
  Tensor y = embedding(x);
  check_close(slice(y, 0, 1, 2).data().to(kFloat64),
              unsqueeze(embedding.positions(5).data(), 0).to(kFloat64));
  sum(y).backward();
  std::vector<double> g = embedding.weight.grad().data().to_vector();
  CHECK(g[0] == 2);
  CHECK(g[5 * 32 - 1] == 2);
  CHECK(g[5 * 32] == 0);  // position 5 was not used
}

TEST_CASE("positional encodings reject a too-long sequence or a wrong D", "[nn]") {
  nn::SinusoidalPositionalEncoding sinusoid(4, 3);
  Generator gen(4);
  nn::LearnedPositionalEmbedding learned(3, 4, gen);
  CHECK_THAT(error_message([&] {
               sinusoid(zeros({2, 5, 4}));
             }),
             Contains("SinusoidalPositionalEncoding: sequence length T = 5 (input [2,5,4]) "
                      "exceeds max_len = 3"));
  CHECK_THAT(error_message([&] {
               learned(zeros({1, 4, 4}));
             }),
             Contains("LearnedPositionalEmbedding: sequence length T = 4 (input [1,4,4]) "
                      "exceeds max_len = 3"));
  CHECK_THAT(error_message([&] {
               sinusoid(zeros({2, 3, 5}));
             }),
             Contains("input [2,3,5] has D = 5, but the table is [3, 4] (d_model = 4)"));
  CHECK_THAT(error_message([&] {
               learned(zeros({3, 4}));
             }),
             Contains("LearnedPositionalEmbedding: input must be [B, T, D] (batch first), got "
                      "[3,4]"));
  CHECK_THAT(error_message([&] { learned.positions(4); }),
             Contains("length 4 is not in [0, max_len = 3]"));
}

TEST_CASE("gradcheck: SinusoidalPositionalEncoding, LearnedPositionalEmbedding",
          "[nn][gradcheck]") {
  Generator gen(5);
  {
    nn::SinusoidalPositionalEncoding encoding(5, 8);
    Tensor x = randn({2, 3, 5}, gen, kFloat64).requires_grad_();
    // A nonlinearity after the sum, so the check sees more than a constant gradient.
    auto r = gradcheck([&](const std::vector<Tensor>& in) { return tanh(encoding(in[0])); }, {x});
    INFO(r.report);
    CHECK(r.ok);
  }
  {
    nn::LearnedPositionalEmbedding embedding(6, 4, gen);
    embedding.to(kFloat64);
    Tensor x = randn({2, 5, 4}, gen, kFloat64).requires_grad_();
    auto r = gradcheck([&](const std::vector<Tensor>& in) { return tanh(embedding(in[0])); },
                       {x, embedding.weight});
    INFO(r.report);
    CHECK(r.ok);
  }
}
