// Lesson 01's functions: every value, shape and error message that the program prints
// and the chapter quotes.
#include "lessons/01_tensors/lesson.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using namespace attend::lesson01;
using Catch::Matchers::Contains;

TEST_CASE("row-major offsets are the dot product of the index with the strides", "[lesson01]") {
  CHECK(strides_of({3, 4}) == std::vector<Index>{4, 1});
  CHECK(strides_of({2, 3, 4}) == std::vector<Index>{12, 4, 1});
  CHECK(strides_of({2, 3, 4, 5}) == std::vector<Index>{60, 20, 5, 1});
  CHECK(row_major_offset({3, 4}, {1, 2}) == 6);
  CHECK(row_major_offset({2, 3, 4}, {1, 2, 3}) == 23);
  CHECK(row_major_offset({2, 3, 4, 5}, {1, 2, 3, 4}) == 119);  // the number section 2 prints
  CHECK(row_major_offset({}, {}) == 0);                        // a scalar: its one element

  // An arange holds its own offsets: every element agrees with the formula.
  NDArray x = NDArray::arange(24, kInt64).reshape({2, 3, 4});
  for (Index i = 0; i < 2; ++i)
    for (Index j = 0; j < 3; ++j)
      for (Index k = 0; k < 4; ++k)
        CHECK(x.at({i, j, k}) == row_major_offset(x.shape(), {i, j, k}));

  CHECK_THAT(error_message([] {
               row_major_offset({3, 4}, {1});
             }),
             Contains("row_major_offset: 1 indices given for shape [3,4]"));
  CHECK_THAT(error_message([] {
               row_major_offset({3, 4}, {3, 0});
             }),
             Contains("index 3 is out of range for axis 0 of shape [3,4]"));
}

TEST_CASE("reshape shares memory, clone and transpose copy", "[lesson01]") {
  NDArray x = NDArray::arange(12, kInt64).reshape({3, 4});
  NDArray y = x.reshape({4, 3});
  CHECK(y.shares_memory_with(x));
  y.set({0, 0}, 100);
  CHECK(x.at({0, 0}) == 100);
  NDArray z = x.clone();
  CHECK_FALSE(z.shares_memory_with(x));
  z.set({0, 0}, -1);
  CHECK(x.at({0, 0}) == 100);
  NDArray t = transpose(x);
  CHECK_FALSE(t.shares_memory_with(x));
  CHECK(t.shape() == Shape{4, 3});
}

TEST_CASE("a transpose view's strides read the transpose out of the original memory",
          "[lesson01]") {
  NDArray x = NDArray::arange(12, kInt64).reshape({3, 4});
  std::vector<Index> view = transposed_view_strides(x.shape());
  CHECK(view == std::vector<Index>{1, 4});
  NDArray t = transpose(x);
  std::vector<double> memory = x.to_vector();
  for (Index i = 0; i < 4; ++i)
    for (Index j = 0; j < 3; ++j) CHECK(t.at({i, j}) == memory[i * view[0] + j * view[1]]);
  CHECK_THAT(error_message([] { transposed_view_strides({5}); }), Contains("needs 2 dimensions"));
}

TEST_CASE("the broadcast table of section 3", "[lesson01]") {
  std::vector<BroadcastResult> table = broadcast_table();
  REQUIRE(table.size() == 8);
  const std::vector<Shape> expected = {{4, 3}, {4, 3}, {2, 3}, {2, 4, 3}, {5, 5}, {8, 7, 6, 5}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("row " << i);
    CHECK(table[i].ok);
    CHECK(table[i].shape == expected[i]);
    CHECK(table[i].error.empty());
  }
  CHECK_FALSE(table[6].ok);
  CHECK(
      table[6].error ==
      "add: shapes [4,3] and [4] cannot be broadcast (size 3 vs 4 in dimension 1 from the right)");
  CHECK_FALSE(table[7].ok);
  CHECK_THAT(table[7].error, Contains("size 3 vs 2 in dimension 2 from the right"));
}

TEST_CASE("broadcasting: a row added to every row, and an outer product", "[lesson01]") {
  NDArray m = NDArray::zeros({4, 3}, kFloat64);
  NDArray row = f64({10, 20, 30}, {3});
  check_close(m + row, broadcast_to(row, {4, 3}));
  NDArray outer = outer_product(f64({1, 2, 3, 4}, {4}), f64({1, 10, 100}, {3}));
  REQUIRE(outer.shape() == Shape{4, 3});
  for (Index i = 0; i < 4; ++i)
    for (Index j = 0; j < 3; ++j) CHECK(outer.at({i, j}) == (i + 1) * std::pow(10.0, j));
  CHECK_THAT(error_message([&] { outer_product(m, row); }),
             Contains("outer_product: needs two 1-D arrays, got [4,3] and [3]"));
}

TEST_CASE("reductions: keepdim makes a row sum broadcast back", "[lesson01]") {
  NDArray m = NDArray::arange(12, kFloat64).reshape({4, 3});
  CHECK(sum(m, 1).shape() == Shape{4});
  CHECK(sum(m, 1, true).shape() == Shape{4, 1});
  check_close(sum(m, 0), f64({18, 22, 26}, {3}));
  check_close(sum(m, 1), f64({3, 12, 21, 30}, {4}));
  CHECK_THAT(error_message([&] { m / sum(m, 1); }),
             Contains("div: shapes [4,3] and [4] cannot be broadcast"));
  NDArray p = normalize_rows(m);
  check_close(sum(p, 1), f64({1, 1, 1, 1}, {4}), 1e-15);
  CHECK(p.at({1, 2}) == 5.0 / 12.0);
  check_close(mean(center_columns(m), 0), f64({0, 0, 0}, {3}), 1e-15);
}

TEST_CASE("matrix products: 2-D, batched with a broadcast batch axis, shape errors", "[lesson01]") {
  NDArray a = NDArray::arange(6, kFloat64).reshape({2, 3});
  NDArray b = NDArray::arange(6, kFloat64).reshape({3, 2});
  check_close(matmul(a, b), f64({10, 13, 28, 40}, {2, 2}));
  Generator gen(0);
  NDArray batch = NDArray::normal({3, 2, 3}, gen, 0, 1, kFloat64);
  NDArray out = matmul(batch, b);
  REQUIRE(out.shape() == Shape{3, 2, 2});
  check_close(slice(out, 0, 2, 3).reshape({2, 2}),
              matmul(slice(batch, 0, 2, 3).reshape({2, 3}), b));
  CHECK(matmul(NDArray::zeros({2, 1, 2, 3}), NDArray::zeros({4, 3, 2})).shape() ==
        Shape{2, 4, 2, 2});
  CHECK(error_message([&] { matmul(a, a); }) ==
        "matmul: [2,3] @ [2,3]: inner dimensions 3 and 2 differ");
  CHECK(matmul(a, a, false, true).shape() == Shape{2, 2});
}

TEST_CASE("the naive triple loop computes the same product as matmul", "[lesson01]") {
  Generator gen(1);
  // Not square, so a mixed-up index (i*n instead of i*k, ...) cannot go unnoticed.
  NDArray a = NDArray::normal({5, 7}, gen, 0, 1, kFloat64);
  NDArray b = NDArray::normal({7, 3}, gen, 0, 1, kFloat64);
  check_close(naive_matmul(a, b), matmul(a, b), 1e-12);
  NDArray a32 = a.to(kFloat32), b32 = b.to(kFloat32);
  check_close(naive_matmul(a32, b32).to(kFloat64), matmul(a, b), 1e-5);
  CHECK_THAT(error_message([&] { naive_matmul(a, a); }),
             Contains("naive_matmul: needs [M,K] and [K,N] matrices, got [5,7] and [5,7]"));
}

TEST_CASE("GFLOP/s counts 2 n^3 operations", "[lesson01]") {
  CHECK(gflops(1000, 2.0) == 1.0);
  CHECK(gflops(100, 1.0) == Approx(0.002));
  CHECK(gflops(10, 0.0) == 0.0);
  Generator gen(2);
  MatmulTiming t = time_matmul(24, 1, gen);
  CHECK(t.n == 24);
  CHECK(t.naive_seconds > 0);
  CHECK(t.library_seconds > 0);
  CHECK(t.naive_gflops == gflops(24, t.naive_seconds));
  CHECK(t.max_difference < 1e-4);
  CHECK_THAT(error_message([&] { time_matmul(0, 1, gen); }), Contains("must be positive"));
}
