#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;

TEST_CASE("permute and transpose reorder axes", "[tensor]") {
  NDArray x = NDArray::arange(24, kFloat64).reshape({2, 3, 4});
  NDArray p = permute(x, {2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  for (Index i = 0; i < 2; ++i)
    for (Index j = 0; j < 3; ++j)
      for (Index k = 0; k < 4; ++k) CHECK(p.at({k, i, j}) == x.at({i, j, k}));
  NDArray t = transpose(NDArray::arange(6, kFloat64).reshape({2, 3}));
  check_close(t, f64({0, 3, 1, 4, 2, 5}, {3, 2}));
  CHECK_THAT(error_message([&] {
               permute(x, {0, 0, 1});
             }),
             Contains("permute: axis 0 appears twice"));
  CHECK_THAT(error_message([&] { transpose(NDArray::zeros({3})); }),
             Contains("transpose: needs at least 2 dimensions, got shape [3]"));
}

TEST_CASE("squeeze, unsqueeze and flatten", "[tensor]") {
  NDArray x = NDArray::zeros({2, 1, 3});
  CHECK(squeeze(x, 1).shape() == Shape{2, 3});
  CHECK(unsqueeze(x, 0).shape() == Shape{1, 2, 1, 3});
  CHECK(unsqueeze(x, 3).shape() == Shape{2, 1, 3, 1});
  CHECK(flatten(x).shape() == Shape{6});
  CHECK(flatten(NDArray::zeros({2, 3, 4}), 1).shape() == Shape{2, 12});
  CHECK_THAT(error_message([&] { squeeze(x, 0); }),
             Contains("squeeze: axis 0 of shape [2,1,3] has size 2"));
}

TEST_CASE("slice, slice_assign, concat, stack, split", "[tensor]") {
  NDArray x = NDArray::arange(12, kFloat64).reshape({3, 4});
  check_close(slice(x, 1, 1, 3), f64({1, 2, 5, 6, 9, 10}, {3, 2}));
  check_close(slice(x, 0, -1, 3), f64({8, 9, 10, 11}, {1, 4}));
  check_close(slice(x, 1, 0, 4, 2), f64({0, 2, 4, 6, 8, 10}, {3, 2}));
  CHECK(slice(x, 1, 3, 1).shape() == Shape{3, 0});
  NDArray dst = NDArray::zeros({3, 4}, kFloat64);
  slice_assign(dst, f64({1, 1, 1}, {3, 1}), 1, 2);
  check_close(sum(dst, 0), f64({0, 0, 3, 0}, {4}));
  CHECK_THAT(error_message([&] {
               slice_assign(dst, f64({1, 1, 1}, {3, 1}), 1, 4);
             }),
             Contains("overrun"));

  NDArray a = f64({1, 2}, {1, 2}), b = f64({3, 4, 5, 6}, {2, 2});
  NDArray ab[] = {a, b};
  check_close(concat(ab, 0), f64({1, 2, 3, 4, 5, 6}, {3, 2}));
  CHECK_THAT(error_message([&] {
               NDArray bad[] = {a, NDArray::zeros({1, 3}, kFloat64)};
               concat(bad, 0);
             }),
             Contains("concat: shapes [1,2] and [1,3] differ outside axis 0"));
  NDArray pair[] = {f64({1, 2}, {2}), f64({3, 4}, {2})};
  check_close(stack(pair, 0), f64({1, 2, 3, 4}, {2, 2}));
  check_close(stack(pair, 1), f64({1, 3, 2, 4}, {2, 2}));
  std::vector<Index> sizes{1, 3};
  auto pieces = split(x, sizes, 1);
  REQUIRE(pieces.size() == 2);
  check_close(pieces[0], f64({0, 4, 8}, {3, 1}));
  CHECK(pieces[1].shape() == Shape{3, 3});
  std::vector<Index> wrong{1, 1};
  CHECK_THAT(error_message([&] { split(x, wrong, 1); }), Contains("split: sizes add up to 2"));
}

TEST_CASE("index_select looks rows up, index_add_ is its gradient", "[tensor]") {
  NDArray table = NDArray::arange(8, kFloat64).reshape({4, 2});  // 4 tokens, dimension 2
  NDArray tokens = ids({3, 0, 3}, {1, 3});
  NDArray e = index_select(table, 0, tokens);
  REQUIRE(e.shape() == Shape{1, 3, 2});
  check_close(e.reshape({3, 2}), f64({6, 7, 0, 1, 6, 7}, {3, 2}));
  NDArray grad = NDArray::zeros({4, 2}, kFloat64);
  index_add_(grad, 0, tokens, NDArray::ones({1, 3, 2}, kFloat64));
  check_close(grad, f64({1, 1, 0, 0, 0, 0, 2, 2}, {4, 2}));  // token 3 used twice
  CHECK_THAT(error_message([&] { index_select(table, 0, ids({4}, {1})); }),
             Contains("index_select: index 4 is out of range for axis 0 of size 4"));
  CHECK_THAT(error_message([&] { index_select(table, 0, f64({1}, {1})); }),
             Contains("indices must be int64"));
}

TEST_CASE("gather picks one element per row, scatter_add_ is its gradient", "[tensor]") {
  NDArray logits = f64({0.1, 0.2, 0.7, 0.5, 0.4, 0.1}, {2, 3});
  NDArray target = ids({2, 0}, {2, 1});
  check_close(gather(logits, 1, target), f64({0.7, 0.5}, {2, 1}));
  NDArray g = NDArray::zeros({2, 3}, kFloat64);
  scatter_add_(g, 1, target, f64({1, 2}, {2, 1}));
  check_close(g, f64({0, 0, 1, 2, 0, 0}, {2, 3}));
  CHECK_THAT(error_message([&] {
               gather(logits, 1, ids({3, 0}, {2, 1}));
             }),
             Contains("gather: index 3 is out of range for axis 1 of size 3"));
  check_close(one_hot(ids({1, 0}, {2}), 3, kFloat64), f64({0, 1, 0, 1, 0, 0}, {2, 3}));
}
