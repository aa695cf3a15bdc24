// ArrayDataset and DataLoader: batches of the right sizes, every sample once per epoch,
// seeded shuffling that repeats exactly, and clear errors.
#include <algorithm>
#include <numeric>
#include <set>

#include "nn/data/data_loader.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

namespace {

// n samples: input i is the row [i, 100 + i] (float64), target i is i (int64), so that a
// batch shows which samples it holds and whether inputs and targets stay paired.
data::ArrayDataset numbered(Index n) {
  NDArray inputs = NDArray::empty({n, 2}, kFloat64), targets = NDArray::empty({n}, kInt64);
  for (Index i = 0; i < n; ++i) {
    inputs.set({i, 0}, static_cast<double>(i));
    inputs.set({i, 1}, static_cast<double>(100 + i));
    targets.set({i}, static_cast<double>(i));
  }
  return data::ArrayDataset(inputs, targets);
}

// The sample ids of one epoch, batch by batch, checking that inputs and targets agree.
std::vector<std::vector<Index>> one_epoch(data::DataLoader& loader) {
  std::vector<std::vector<Index>> batches;
  for (const data::Batch& batch : loader) {
    std::vector<Index> ids;
    for (Index j = 0; j < batch.size(); ++j) {
      const auto id = static_cast<Index>(batch.targets.data().at({j}));
      CHECK(batch.inputs.data().at({j, 0}) == static_cast<double>(id));
      CHECK(batch.inputs.data().at({j, 1}) == static_cast<double>(100 + id));
      ids.push_back(id);
    }
    batches.push_back(ids);
  }
  return batches;
}

std::vector<Index> flattened(const std::vector<std::vector<Index>>& batches) {
  std::vector<Index> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

TEST_CASE("without shuffling, batches go through the samples in order", "[data]") {
  data::DataLoader loader(numbered(10), {.batch_size = 4});
  CHECK(loader.size() == 3);
  const auto batches = one_epoch(loader);
  CHECK(batches == std::vector<std::vector<Index>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(one_epoch(loader) == batches);  // and again in the next epoch
  CHECK(loader.epochs_started() == 2);
}

TEST_CASE("drop_last leaves out the last, smaller batch", "[data]") {
  data::DataLoader loader(numbered(10), {.batch_size = 4, .drop_last = true});
  CHECK(loader.size() == 2);
  CHECK(one_epoch(loader) == std::vector<std::vector<Index>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  data::DataLoader exact(numbered(8), {.batch_size = 4, .drop_last = true});
  CHECK(exact.size() == 2);
  data::DataLoader too_big(numbered(3), {.batch_size = 4, .drop_last = true});
  CHECK(too_big.size() == 0);
  CHECK(one_epoch(too_big).empty());
  data::DataLoader one_batch(numbered(3), {.batch_size = 4});
  CHECK(one_epoch(one_batch) == std::vector<std::vector<Index>>{{0, 1, 2}});
}

TEST_CASE("shuffling visits every sample exactly once per epoch, in a new order", "[data]") {
  data::DataLoader loader(numbered(23), {.batch_size = 5, .shuffle = true, .seed = 7});
  CHECK(loader.size() == 5);
  std::vector<Index> all(23);
  std::iota(all.begin(), all.end(), Index{0});
  std::set<std::vector<Index>> orders;
  for (int epoch = 0; epoch < 4; ++epoch) {
    const auto batches = one_epoch(loader);
    REQUIRE(batches.size() == 5);
    CHECK(batches.back().size() == 3);  // 23 = 4 * 5 + 3
    std::vector<Index> order = flattened(batches);
    orders.insert(order);
    std::sort(order.begin(), order.end());
    CHECK(order == all);
  }
  CHECK(orders.size() == 4);  // four different orders
  CHECK(orders.count(all) == 0);
}

TEST_CASE("the same seed gives the same orders, another seed other orders", "[data]") {
  data::DataLoader a(numbered(16), {.batch_size = 4, .shuffle = true, .seed = 3});
  data::DataLoader b(numbered(16), {.batch_size = 4, .shuffle = true, .seed = 3});
  data::DataLoader c(numbered(16), {.batch_size = 4, .shuffle = true, .seed = 4});
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto from_a = one_epoch(a);
    CHECK(from_a == one_epoch(b));
    CHECK(from_a != one_epoch(c));
  }
  // Restoring the generator's state replays the next epochs.
  const Generator::State saved = a.generator().state();
  const auto next = one_epoch(a);
  a.generator().set_state(saved);
  CHECK(one_epoch(a) == next);
}

TEST_CASE("targets with several values per sample and batches by position", "[data]") {
  NDArray inputs = NDArray::arange(12, kFloat32).reshape({3, 2, 2});
  NDArray targets = NDArray::arange(6, kInt64).reshape({3, 2});
  data::ArrayDataset dataset(inputs, targets);
  CHECK(dataset.size() == 3);
  const std::vector<Index> positions = {2, 0};
  data::Batch batch = dataset.batch(positions);
  CHECK(batch.size() == 2);
  CHECK(batch.inputs.shape() == Shape{2, 2, 2});
  check_close(batch.inputs.data(),
              NDArray::from_list({8, 9, 10, 11, 0, 1, 2, 3}, {2, 2, 2}, kFloat32), 0);
  check_close(batch.targets.data(), NDArray::from_list({4, 5, 0, 1}, {2, 2}, kInt64), 0);
  CHECK_FALSE(batch.inputs.requires_grad());
  CHECK_FALSE(batch.targets.requires_grad());
  // A batch is a copy: changing it leaves the dataset alone.
  fill_(batch.inputs.data(), -1);
  CHECK(dataset.inputs().at({2, 0, 0}) == 8);
  check_close(dataset.range(1, 3).targets.data(), NDArray::from_list({2, 3, 4, 5}, {2, 2}, kInt64),
              0);
}

TEST_CASE("datasets and loaders report misuse clearly", "[data]") {
  CHECK(error_message([] {
          data::ArrayDataset(NDArray::zeros({4, 3}), NDArray::zeros({5}, kInt64));
        }) ==
        "ArrayDataset: inputs [4,3] and targets [5] have different numbers of samples (4 "
        "and 5)");
  CHECK_THAT(
      error_message([] { data::ArrayDataset(NDArray::scalar(1), NDArray::zeros({1}, kInt64)); }),
      Contains("need a first axis that counts the samples"));
  CHECK_THAT(error_message([] { data::ArrayDataset(NDArray(), NDArray::zeros({1})); }),
             Contains("inputs is undefined"));
  CHECK(error_message([] { data::DataLoader(numbered(4), {.batch_size = 0}); }) ==
        "DataLoader: batch_size must be at least 1, got 0");
  data::DataLoader loader(numbered(4), {.batch_size = 3});
  CHECK(error_message([&] { loader.batch(2); }) ==
        "DataLoader: batch 2 is out of range (this loader has 2 batches)");
  const std::vector<Index> outside = {1, 4};
  CHECK_THAT(error_message([&] { numbered(4).batch(outside); }),
             Contains("index 4 is out of range"));
  CHECK_THAT(error_message([&] { numbered(4).range(3, 5); }),
             Contains("[3, 5) is not a range of samples of a dataset of 4"));
}
