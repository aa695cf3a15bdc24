#include "tensor/random.h"

#include <cmath>
#include <numbers>

#include "tensor/error.h"

namespace attend {
namespace {

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// splitmix64 spreads one seed over the four state words (the seeding its authors advise).
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <class T>
Index categorical_impl(Generator& gen, std::span<const T> probabilities) {
  double total = 0;
  for (T p : probabilities) {
    if (!(p >= 0)) fail("categorical: probabilities must be >= 0, got {}", p);
    total += p;
  }
  if (probabilities.empty() || !(total > 0))
    fail("categorical: needs at least one positive probability");
  double u = gen.uniform() * total;
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    u -= probabilities[i];
    if (u < 0) return static_cast<Index>(i);
  }
  // Rounding left u >= 0: return the last index with a positive probability.
  for (std::size_t i = probabilities.size(); i-- > 0;)
    if (probabilities[i] > 0) return static_cast<Index>(i);
  return 0;
}

}  // namespace

void Generator::manual_seed(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& word : state_) word = splitmix64(x);
}

std::uint64_t Generator::next_u64() {
  // xoshiro256**
  std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Generator::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;  // 53 random bits
}

double Generator::uniform(double low, double high) {
  return low + (high - low) * uniform();
}

double Generator::normal(double mean, double stddev) {
  // Box-Muller: two uniforms give a standard normal. 1 - u keeps the log argument > 0.
  double u1 = 1.0 - uniform(), u2 = uniform();
  double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  return mean + stddev * z;
}

Index Generator::randint(Index n) {
  if (n <= 0) fail("randint: n must be positive, got {}", n);
  // Rejection sampling removes the modulo bias.
  std::uint64_t range = static_cast<std::uint64_t>(n);
  std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  std::uint64_t x;
  do x = next_u64();
  while (x >= limit);
  return static_cast<Index>(x % range);
}

bool Generator::bernoulli(double p) {
  return uniform() < p;
}

Index Generator::categorical(std::span<const double> probabilities) {
  return categorical_impl(*this, probabilities);
}

Index Generator::categorical(std::span<const float> probabilities) {
  return categorical_impl(*this, probabilities);
}

std::vector<Index> Generator::permutation(Index n) {
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[i] = i;
  // Fisher-Yates shuffle.
  for (Index i = n - 1; i > 0; --i) std::swap(order[i], order[randint(i + 1)]);
  return order;
}

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(std::uint64_t seed) {
  default_generator().manual_seed(seed);
}

}  // namespace attend
