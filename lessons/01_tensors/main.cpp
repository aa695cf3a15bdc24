// Lesson 01: tensors. Run it and read docs/01_tensors.md next to its output:
//
//   ./build/bin/01_tensors                 # everything, seed 0, into output/01_tensors
//   ./build/bin/01_tensors --help          # the flags
//
// Each section below prints what it does, then the result. The functions it calls are in
// lesson.cpp; the arrays and kernels are in tensor/.
#include <fmt/ranges.h>

#include <fstream>

#include "attend.h"
#include "lesson.h"

using namespace attend;
using namespace attend::lesson01;
using attend::app::Transcript;

namespace {

// Every size the program uses, each with the flag that changes it.
struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0, "seed of the random matrices");
  std::string out =
      flag(out, "out", "output/01_tensors", "folder for summary.txt and the CSV files");
  Index batch =
      flag(batch, "batch", 2, "batch size of the batched matmul example", app::at_least<Index>(1));
  Index matmul_size = flag(matmul_size, "matmul-size", 256,
                           "n of the n x n matrices timed in section 6", app::at_least<Index>(1));
  int repeats = flag(repeats, "repeats", 3, "timing runs of each product (the fastest counts)",
                     app::at_least(1));
};

// The example matrix of sections 3 and 4 is [kRows, kCols]: the shapes the chapter quotes.
constexpr Index kRows = 4, kCols = 3;

// A list of strides printed like a shape: [12,4,1].
std::string bracketed(const std::vector<Index>& values) {
  return fmt::format("[{}]", fmt::join(values, ","));
}

void section_shape(Transcript& t) {
  t.heading("1. Shape");
  NDArray x = NDArray::arange(12).reshape({3, 4});
  t.say("An array is a block of numbers plus a shape. arange(12) reshaped to [3,4]:\n{}\n", x);
  t.say("shape {}: ndim {}, numel {} (= 3*4), dtype {} ({} bytes each), nbytes {}\n", x.shape(),
        x.ndim(), x.numel(), dtype_name(x.dtype()), dtype_size(x.dtype()), x.nbytes());
  NDArray s = NDArray::scalar(3.5);
  t.say("A 0-d array (a scalar) has shape {} and numel {}: {}\n", s.shape(), s.numel(), s);
}

void section_layout(Transcript& t) {
  t.heading("2. Memory layout");
  // int64 values equal to their own offsets, so printing the memory shows the layout.
  NDArray x = NDArray::arange(12, kInt64).reshape({3, 4});
  t.say("Each element below holds its own offset in memory (int64 arange(12) as [3,4]):\n{}\n", x);
  t.say("memory, in order: {}\n", fmt::join(x.to_vector(), " "));
  t.say("Row-major: the last index moves fastest. strides of {} = {}, so x[1,2] sits at\n",
        x.shape(), bracketed(strides_of(x.shape())));
  t.say("  1*4 + 2*1 = {}, and x.at({{1,2}}) = {}\n", row_major_offset(x.shape(), {1, 2}),
        x.at({1, 2}));
  Shape big{2, 3, 4, 5};
  t.say("For {} the strides are {}: element [1,2,3,4] sits at offset {}\n", big,
        bracketed(strides_of(big)), row_major_offset(big, {1, 2, 3, 4}));
}

// Still section 2: which operations share an array's memory and which copy it.
void section_views_and_copies(Transcript& t) {
  NDArray x = NDArray::arange(12, kInt64).reshape({3, 4});
  NDArray y = x.reshape({4, 3});
  y.set({0, 0}, 100);
  t.say("\nreshape shares memory: y = x.reshape({{4,3}}), shares_memory_with(x) = {}.\n",
        y.shares_memory_with(x));
  t.say("After y.set({{0,0}}, 100), x[0,0] = {}: one block, two shapes.\n", x.at({0, 0}));
  NDArray z = x.clone();
  z.set({0, 0}, -1);
  t.say("clone copies: z = x.clone(); after z.set({{0,0}}, -1), x[0,0] is still {}.\n",
        x.at({0, 0}));

  NDArray fresh = NDArray::arange(12, kInt64).reshape({3, 4});
  NDArray xt = transpose(fresh);
  t.say(
      "\ntranspose copies: for a fresh x, transpose(x) has shape {}, shares_memory_with(x) = "
      "{}:\n{}\n",
      xt.shape(), xt.shares_memory_with(fresh), xt);
  t.say("its memory is row-major again, in its own order: {}\n", fmt::join(xt.to_vector(), " "));
  std::vector<Index> view = transposed_view_strides(fresh.shape());
  t.say("A transpose *view* (NumPy, PyTorch) would keep x's memory and use strides {}:\n",
        bracketed(view));
  t.say("  x^T[2,1] = {} sits at 2*{} + 1*{} = {} in x's memory, which holds {}.\n", xt.at({2, 1}),
        view[0], view[1], 2 * view[0] + 1 * view[1], fresh.to_vector()[2 * view[0] + 1 * view[1]]);
  t.say(
      "attend copies instead, so every kernel may assume row-major memory; matmul reads\n"
      "transposed operands in place without a copy (its transpose_a / transpose_b flags).\n");
}

void section_broadcasting(Transcript& t, const Options& o) {
  t.heading("3. Broadcasting");
  t.say(
      "Rules: align the shapes at the right; a missing axis counts as size 1; two sizes\n"
      "match when they are equal or one of them is 1, and the result takes the larger.\n\n");
  NDArray m = NDArray::zeros({kRows, kCols});
  NDArray row = NDArray::from_list({10, 20, 30});
  t.say("[4,3] + [3]: the row {} is added to every row of a [4,3] array of zeros:\n{}\n",
        row.to_vector(), m + row);
  NDArray column = NDArray::from_list({1, 2, 3, 4});
  NDArray outer = outer_product(column, NDArray::from_list({1, 10, 100}));
  t.say(
      "[4,1] * [1,3]: a column times a row is the [4,3] outer product, out[i,j] = c[i]*r[j]:\n"
      "{}\n",
      outer);
  try {
    NDArray bad = m + NDArray::from_list({1, 2, 3, 4});
    t.say("[4,3] + [4] unexpectedly worked: {}\n", bad.shape());
  } catch (const Error& e) {
    t.say("[4,3] + [4] cannot broadcast (3 vs 4 in the last axis). The error says:\n  {}\n",
          e.what());
  }

  t.say("\nMore pairs (exercise 1: predict them before you read them):\n");
  std::ofstream csv(o.out + "/broadcast_shapes.csv");
  csv << "a,b,result\n";
  for (const BroadcastResult& r : broadcast_table()) {
    std::string result = r.ok ? to_string(r.shape) : "error";
    t.say("  {:>10} with {:<8} -> {}\n", to_string(r.a), to_string(r.b), result);
    csv << fmt::format("\"{}\",\"{}\",\"{}\"\n", r.a, r.b, result);
  }
  if (!csv) fail("cannot write {}/broadcast_shapes.csv", o.out);
}

void section_reductions(Transcript& t) {
  t.heading("4. Reductions and keepdim");
  NDArray m = NDArray::arange(12).reshape({kRows, kCols});
  t.say("m =\n{}\n", m);
  t.say("sum(m, 0) adds the 4 rows:     shape {}, {}\n", sum(m, 0).shape(), sum(m, 0).to_vector());
  t.say("sum(m, 1) adds the 3 columns:  shape {}, {}\n", sum(m, 1).shape(), sum(m, 1).to_vector());
  t.say("sum(m, 1, keepdim=true):       shape {}, the reduced axis stays with size 1\n",
        sum(m, 1, true).shape());
  t.say("max(m, 1) = {}, argmax(m, 1) = {}, sum(m) = {} (a 0-d array)\n", max(m, 1).to_vector(),
        argmax(m, 1).to_vector(), sum(m).item());
  try {
    NDArray bad = m / sum(m, 1);
    t.say("m / sum(m, 1) unexpectedly worked: {}\n", bad.shape());
  } catch (const Error& e) {
    t.say("\nDividing each row by its sum without keepdim fails: [4,3] / [4] is\n  {}\n", e.what());
  }
  NDArray p = normalize_rows(m);
  t.say("with keepdim, [4,3] / [4,1] divides row i by sum i; the rows now sum to {}:\n{}\n",
        sum(p, 1).to_vector(), p);
  t.say(
      "Over axis 0 no keepdim is needed: mean(m, 0) is [3], a row. Column means after\n"
      "m - mean(m, 0): {}\n",
      mean(center_columns(m), 0).to_vector());
}

void section_matmul(Transcript& t, Generator& gen, const Options& o) {
  t.heading("5. Matrix products");
  NDArray a = NDArray::arange(6).reshape({2, 3});
  NDArray b = NDArray::arange(6).reshape({3, 2});
  NDArray c = matmul(a, b);
  t.say("C[i,j] = sum_k A[i,k] B[k,j]. [2,3] @ [3,2] -> {}:\n{}\n", c.shape(), c);
  t.say("by hand, C[0,0] = 0*0 + 1*2 + 2*4 = {}\n", c.at({0, 0}));

  NDArray batch = NDArray::normal({o.batch, 2, 3}, gen);
  NDArray w = NDArray::normal({3, 2}, gen);
  NDArray out = matmul(batch, w);
  t.say(
      "\nBatched: [{},2,3] @ [3,2] -> {}. w has no batch axis, so it broadcasts: every\n"
      "batch entry is multiplied by the same w.\n",
      o.batch, out.shape());
  const Index last = o.batch - 1;
  NDArray one = matmul(slice(batch, 0, last, last + 1).reshape({2, 3}), w);
  NDArray from_batch = slice(out, 0, last, last + 1).reshape({2, 2});
  t.say("entry {} of the batched product equals its own 2-D product: largest difference {}\n", last,
        max(abs(one - from_batch)).item());
  NDArray grouped =
      matmul(NDArray::normal({o.batch, 1, 2, 3}, gen), NDArray::normal({4, 3, 2}, gen));
  t.say("Batch axes broadcast like elementwise shapes: [{},1,2,3] @ [4,3,2] -> {}\n", o.batch,
        grouped.shape());

  try {
    NDArray bad = matmul(a, a);
    t.say("[2,3] @ [2,3] unexpectedly worked: {}\n", bad.shape());
  } catch (const Error& e) {
    t.say("\nThe inner sizes must agree. [2,3] @ [2,3] says:\n  {}\n", e.what());
  }
  t.say("with the second operand transposed it works: matmul(a, a, false, true) is {}\n",
        matmul(a, a, false, true).shape());
}

void section_speed(Transcript& t, Generator& gen, const Options& o) {
  t.heading("6. Why matmul is not three loops (an illustration)");
  MatmulTiming timing = time_matmul(o.matmul_size, o.repeats, gen);
  t.say(
      "n = {}, float32, fastest of {} runs on this machine. bench/ measures properly;\n"
      "this only shows the order of magnitude.\n",
      timing.n, o.repeats);
  t.say("  naive triple loop:   {:.6f} s  {:8.2f} GFLOP/s\n", timing.naive_seconds,
        timing.naive_gflops);
  t.say("  matmul (GEMM):       {:.6f} s  {:8.2f} GFLOP/s\n", timing.library_seconds,
        timing.library_gflops);
  t.say("matmul is {:.0f} times faster here.\n", timing.naive_seconds / timing.library_seconds);
  if (timing.max_difference == 0)
    t.say("The two results are identical: both add the products in the same order.\n");
  else
    t.say(
        "The results differ by at most {:.2e}: float32 rounding, because the two add the\n"
        "products in different orders.\n",
        timing.max_difference);

  std::ofstream csv(o.out + "/matmul_timing.csv");
  csv << "method,n,seconds,gflops\n";
  csv << fmt::format("naive,{},{},{}\n", timing.n, timing.naive_seconds, timing.naive_gflops);
  csv << fmt::format("matmul,{},{},{}\n", timing.n, timing.library_seconds, timing.library_gflops);
  if (!csv) fail("cannot write {}/matmul_timing.csv", o.out);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.parse(argc, argv, "01_tensors",
          "Lesson 01: shapes, memory layout, broadcasting, reductions and matrix products, run "
          "step by step (docs/01_tensors.md).");
  return app::run_program([&] {
    app::make_output_folder(o.out);
    Generator gen(o.seed);
    Transcript t;
    t.say("Lesson 01: tensors (seed {}, outputs in {})\n", o.seed, o.out);
    section_shape(t);
    section_layout(t);
    section_views_and_copies(t);
    section_broadcasting(t, o);
    section_reductions(t);
    section_matmul(t, gen, o);
    section_speed(t, gen, o);
    t.say("\nWrote {0}/summary.txt, {0}/broadcast_shapes.csv and {0}/matmul_timing.csv\n", o.out);
    t.save(o.out + "/summary.txt");
    return 0;
  });
}
