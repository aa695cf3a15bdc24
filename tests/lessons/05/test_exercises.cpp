// Exercise checks for docs/05_scoring.md. Each test passes with the reference solution in
// lessons/05_scoring/exercises.cpp (or the lesson's own code) and checks what any correct
// solution must do: put your own code in its place and run `ctest --test-dir build -L lesson05`.
// The gradcheck uses gradcheck's default tolerances (eps 1e-6, atol 1e-5, rtol 1e-3).
#include <cmath>

#include "lessons/05_scoring/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson05;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

TEST_CASE("exercise check: the cosine score, values", "[lesson05]") {
  // q = (3, 4) has length 5; k0 = (1, 0), k1 = (0, -2), k2 = (6, 8).
  Tensor q = tensor({3, 4}, {1, 1, 2}, kFloat64);
  Tensor k = tensor({1, 0, 0, -2, 6, 8}, {1, 3, 2}, kFloat64);
  check_close(cosine_score(q, k, 1.0).data(), f64({0.6, -0.8, 1.0}, {1, 1, 3}), 1e-12);
  check_close(cosine_score(q, k, 10.0).data(), f64({6, -8, 10}, {1, 1, 3}), 1e-11);
  // Lengths do not matter, only directions.
  check_close(cosine_score(q * 7.0, k * 0.1, 2.0).data(), cosine_score(q, k, 2.0).data(), 1e-9);
  // A zero vector scores 0, not NaN.
  Tensor zero_key = tensor({0, 0}, {1, 1, 2}, kFloat64);
  CHECK(cosine_score(q, zero_key, 1.0).item() == 0.0);
  // Like the dot product it needs equal sizes.
  CHECK_THAT(error_message([&] {
               cosine_score(q, tensor({1, 2, 3}, {1, 1, 3}, kFloat64), 1.0);
             }),
             Contains("query size 2 and key size 3 differ"));
}

TEST_CASE("exercise check: the cosine score, gradcheck with a mask", "[lesson05][gradcheck]") {
  Generator gen(31);
  Tensor q = randn({2, 3, 4}, gen, kFloat64).requires_grad_();
  Tensor k = randn({2, 5, 4}, gen, kFloat64).requires_grad_();
  Tensor v = randn({2, 5, 2}, gen, kFloat64).requires_grad_();
  Tensor mask(f64({1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, {2, 5}));
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        return nn::attend(cosine_score(in[0], in[1], 3.0), in[2], mask).context;
      },
      {q, k, v});
  INFO(r.report);
  CHECK(r.ok);
}

TEST_CASE("exercise check: the cosine score does not saturate, it goes flat", "[lesson05]") {
  // Random unit vectors in d dimensions have cosines of size about 1/sqrt(d): at d = 1024
  // the softmax over 64 keys is almost uniform, entropy within 0.01 of log 64.
  Generator gen(32);
  NoGradGuard no_graph;
  Tensor q = randn({200, 1, 1024}, gen, kFloat64), k = randn({200, 64, 1024}, gen, kFloat64);
  const double entropy = mean_entropy(softmax(cosine_score(q, k, 1.0).data(), -1));
  CHECK(entropy > std::log(64.0) - 0.01);
  CHECK(entropy < std::log(64.0));
}

TEST_CASE("exercise check: scaled entropy with 1024 keys is about log 1024 - 1/2", "[lesson05]") {
  // For scores of variance 1 over n keys, H ~ log n - 1/2 (the chapter derives it).
  Generator gen(33);
  EntropyPoint p = entropy_at(64, 1024, 100, gen);
  CHECK_THAT(p.scaled, WithinAbs(std::log(1024.0) - 0.5, 0.03));
}
