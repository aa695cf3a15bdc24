// Generator: the one source of randomness in attend (initial weights, data shuffling,
// dropout masks, sampled attention locations). It is xoshiro256** (Blackman and Vigna,
// 2018) seeded through splitmix64, with Box-Muller for normal numbers: every step is
// written out here, so the same seed gives the same numbers on every machine and every
// run. Its whole state is four 64-bit words, which checkpoints save and restore.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "tensor/shape.h"

namespace attend {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) { manual_seed(seed); }
  void manual_seed(std::uint64_t seed);

  std::uint64_t next_u64();
  double uniform();                         // in [0, 1)
  double uniform(double low, double high);  // in [low, high)
  double normal(double mean = 0, double stddev = 1);
  Index randint(Index n);                                    // in [0, n), unbiased
  bool bernoulli(double p);                                  // true with probability p
  Index categorical(std::span<const double> probabilities);  // i with probability p_i / sum
  Index categorical(std::span<const float> probabilities);
  std::vector<Index> permutation(Index n);  // a random order of 0..n-1

  using State = std::array<std::uint64_t, 4>;
  State state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

 private:
  State state_{};
};

// The generator used when none is passed (module initialisation, for example). It starts
// from seed 0 in every program, so runs are reproducible unless a seed is changed.
Generator& default_generator();
void manual_seed(std::uint64_t seed);

}  // namespace attend
