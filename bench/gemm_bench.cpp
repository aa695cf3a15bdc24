// bench_gemm: the speed of the float32 matrix product C = A·B (row-major; A is M x K, B is
// K x N), in GFLOP/s (2·M·N·K floating-point operations per product), on one thread unless
// ATTEND_NUM_THREADS says otherwise (then attend and OpenBLAS both get that many).
//
// For each shape it times, one right after the other in the same run, so that their ratios
// are not disturbed by the drift of a shared machine:
//   attend_gemm    attend::gemm on raw pointers (tensor/gemm.h): the kernel alone
//   attend_matmul  attend::matmul on NDArrays (tensor/matmul.h): the kernel plus the wrapper
//                  (checks, allocation of the output array)
//   openblas       OpenBLAS's cblas_sgemm, when OpenBLAS was found at configure time
//   loop_ikj       a plain triple loop in i-k-j order: the inner loop runs along rows
//   loop_ijk       the textbook triple loop in i-j-k order: the inner loop runs down B
// The two loops are compiled with the project's flags, like attend itself.
//
// Before anything is timed, every implementation is checked against a float64 reference on
// several shapes (odd sizes included); a wrong result stops the program with a message, so
// a fast but wrong kernel cannot go unnoticed.
//
// Names are gemm/<M>x<K>x<N>/<implementation>; bench/summarize.sh turns the JSON output
// into a table of GFLOP/s and ratios. See bench/README.md.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "attend.h"
#include "tensor/gemm.h"

#if defined(ATTEND_BENCH_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace {

using attend::Index;
using attend::NDArray;

// A product C[m x n] = A[m x k] · B[k x n], every matrix contiguous and row-major.
struct Dims {
  Index m, k, n;
  std::string name() const { return fmt::format("{}x{}x{}", m, k, n); }
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * k; }
};

// The timed shapes: squares, then the shapes of the course's small models (MxKxN).
constexpr Dims kBenchShapes[] = {
    {64, 64, 64},   {128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
    {2048, 64, 64}, {64, 64, 2048},  {32, 128, 128},  {2048, 256, 64}, {2048, 64, 256},
};

// The checked shapes: edge cases of the blocking in tensor/gemm.cpp (sizes that are not
// multiples of its tiles, K larger than one K block, N wider than one column panel) and the
// small-model shapes. The large squares are left out: they only repeat the same blocks.
constexpr Dims kCheckShapes[] = {
    {1, 1, 1},      {37, 53, 29},   {13, 600, 1100}, {64, 64, 64},    {256, 256, 256},
    {2048, 64, 64}, {64, 64, 2048}, {32, 128, 128},  {2048, 256, 64}, {2048, 64, 256},
};

constexpr std::uint64_t kSeed = 2026;
// Inputs are uniform in [-1, 1], so an entry of C is a sum of K products of size <= 1.
// Float32 rounding leaves an error far below 1e-5 per term; a wrong kernel is off by ~1.
constexpr double kTolerancePerK = 1e-5;

// ---- the implementations ----------------------------------------------------------------

using GemmFunction = void (*)(const Dims& d, const float* a, const float* b, float* c);

void attend_gemm(const Dims& d, const float* a, const float* b, float* c) {
  attend::GemmShape shape;
  shape.m = d.m;
  shape.k = d.k;
  shape.n = d.n;
  attend::gemm(shape, a, d.k, b, d.n, c, d.n);
}

// The textbook loop: C[i][j] is the dot product of row i of A and column j of B. The inner
// loop reads B with a stride of N floats, one cache line per multiply-add.
void loop_ijk(const Dims& d, const float* a, const float* b, float* c) {
  for (Index i = 0; i < d.m; ++i)
    for (Index j = 0; j < d.n; ++j) {
      float sum = 0;
      for (Index p = 0; p < d.k; ++p) sum += a[i * d.k + p] * b[p * d.n + j];
      c[i * d.n + j] = sum;
    }
}

// The same sums in i-k-j order: row i of C accumulates A[i][p] times row p of B, so every
// inner-loop access is contiguous.
void loop_ikj(const Dims& d, const float* a, const float* b, float* c) {
  for (Index i = 0; i < d.m; ++i) {
    float* c_row = c + i * d.n;
    for (Index j = 0; j < d.n; ++j) c_row[j] = 0;
    for (Index p = 0; p < d.k; ++p) {
      const float a_ip = a[i * d.k + p];
      const float* b_row = b + p * d.n;
      for (Index j = 0; j < d.n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
}

#if defined(ATTEND_BENCH_HAVE_OPENBLAS)
void openblas_sgemm(const Dims& d, const float* a, const float* b, float* c) {
  const int m = static_cast<int>(d.m), k = static_cast<int>(d.k), n = static_cast<int>(d.n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}
#endif

struct Implementation {
  const char* name;
  GemmFunction function;
};

// In timing order within each shape. attend_matmul is not here: it takes NDArrays.
const std::vector<Implementation>& raw_implementations() {
  static const std::vector<Implementation> list = {
    {"attend_gemm", attend_gemm},
#if defined(ATTEND_BENCH_HAVE_OPENBLAS)
    {"openblas", openblas_sgemm},
#endif
    {"loop_ikj", loop_ikj},
    {"loop_ijk", loop_ijk},
  };
  return list;
}

// ---- operands ---------------------------------------------------------------------------

// Random A and B in [-1, 1] and an output C, in attend's 64-byte-aligned arrays.
struct Operands {
  NDArray a, b, c;
  explicit Operands(const Dims& d) {
    attend::Generator gen(kSeed);
    a = NDArray::uniform({d.m, d.k}, gen, -1, 1);
    b = NDArray::uniform({d.k, d.n}, gen, -1, 1);
    c = NDArray::zeros({d.m, d.n});
  }
};

// ---- the check --------------------------------------------------------------------------

// C = A·B in float64, i-k-j order.
std::vector<double> reference_product(const Dims& d, const float* a, const float* b) {
  std::vector<double> c(static_cast<std::size_t>(d.m * d.n), 0.0);
  for (Index i = 0; i < d.m; ++i)
    for (Index p = 0; p < d.k; ++p) {
      const double a_ip = a[i * d.k + p];
      for (Index j = 0; j < d.n; ++j) c[i * d.n + j] += a_ip * b[p * d.n + j];
    }
  return c;
}

// Stops the program if `result` is not the product within the tolerance.
void expect_close(const char* implementation, const Dims& d, const float* result,
                  const std::vector<double>& expected) {
  const double tolerance = kTolerancePerK * static_cast<double>(d.k);
  for (Index i = 0; i < d.m * d.n; ++i) {
    const double error = std::abs(result[i] - expected[i]);
    if (!(error <= tolerance)) {  // also catches NaN
      fmt::print(stderr,
                 "bench_gemm: WRONG RESULT from {} on {}: C[{}][{}] = {} but the float64 "
                 "reference is {} (tolerance {:g}). Not timing a kernel that is wrong.\n",
                 implementation, d.name(), i / d.n, i % d.n, result[i], expected[i], tolerance);
      std::exit(EXIT_FAILURE);
    }
  }
}

void check_all_implementations() {
  for (const Dims& d : kCheckShapes) {
    Operands x(d);
    const float* a = x.a.data<float>();
    const float* b = x.b.data<float>();
    const std::vector<double> expected = reference_product(d, a, b);
    for (const Implementation& impl : raw_implementations()) {
      float* c = x.c.data<float>();
      for (Index i = 0; i < d.m * d.n; ++i) c[i] = NAN;  // a kernel must overwrite every entry
      impl.function(d, a, b, c);
      expect_close(impl.name, d, c, expected);
    }
    const NDArray c = attend::matmul(x.a, x.b);
    expect_close("attend_matmul", d, c.data<float>(), expected);
  }
  fmt::print(stderr,
             "bench_gemm: all implementations agree with a float64 reference on {} shapes\n",
             std::size(kCheckShapes));
}

// ---- the benchmarks ---------------------------------------------------------------------

// Reported in GFLOP/s: Google Benchmark multiplies the value by the iteration count and
// divides by the measured time, so the counter reads 2·M·N·K / 1e9 per second.
void set_gflops(benchmark::State& state, const Dims& d) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(d.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_raw(benchmark::State& state, Dims d, GemmFunction function) {
  Operands x(d);
  const float* a = x.a.data<float>();
  const float* b = x.b.data<float>();
  float* c = x.c.data<float>();
  for (auto _ : state) {
    function(d, a, b, c);
    benchmark::DoNotOptimize(c);
    benchmark::ClobberMemory();
  }
  set_gflops(state, d);
}

void bench_matmul(benchmark::State& state, Dims d) {
  Operands x(d);
  for (auto _ : state) {
    NDArray c = attend::matmul(x.a, x.b);
    benchmark::DoNotOptimize(c.raw_data());
    benchmark::ClobberMemory();
  }
  set_gflops(state, d);
}

// On one thread the rate uses the thread's CPU time, which other programs on a shared machine
// do not inflate by preempting it; with several threads it must use wall-clock time.
void configure(benchmark::internal::Benchmark* b, int threads) {
  b->Unit(benchmark::kMicrosecond);
  if (threads > 1) b->UseRealTime();
}

void register_benchmarks(int threads) {
  const auto& impls = raw_implementations();
  for (const Dims& d : kBenchShapes) {
    const std::string prefix = "gemm/" + d.name() + "/";
    // attend_gemm, attend_matmul, then the others: the comparisons sit next to each other.
    const std::string attend_gemm_name = prefix + impls[0].name;
    const std::string attend_matmul_name = prefix + "attend_matmul";
    configure(
        benchmark::RegisterBenchmark(attend_gemm_name.c_str(), bench_raw, d, impls[0].function),
        threads);
    configure(benchmark::RegisterBenchmark(attend_matmul_name.c_str(), bench_matmul, d), threads);
    for (std::size_t i = 1; i < impls.size(); ++i) {
      const std::string name = prefix + impls[i].name;
      configure(benchmark::RegisterBenchmark(name.c_str(), bench_raw, d, impls[i].function),
                threads);
    }
  }
}

// The number of threads for both attend and OpenBLAS: ATTEND_NUM_THREADS if set (attend's
// own setting, read by tensor/parallel.cpp), otherwise 1. Must run before any attend call.
int choose_threads() {
  const char* value = std::getenv("ATTEND_NUM_THREADS");
  const int threads = value != nullptr ? std::atoi(value) : 0;
  if (threads >= 1) return threads;
  setenv("ATTEND_NUM_THREADS", "1", /*overwrite=*/1);
  return 1;
}

// Records in the output what the comparison depends on, and warns about the OpenBLAS
// settings that make it unfair (see bench/README.md).
void describe_setup(int threads) {
  benchmark::AddCustomContext("attend_threads", std::to_string(threads));
#if defined(__AVX512F__)
  benchmark::AddCustomContext("attend_simd", "AVX-512");
#elif defined(__AVX__)
  benchmark::AddCustomContext("attend_simd", "AVX");
#else
  benchmark::AddCustomContext("attend_simd", "SSE");
#endif
#if defined(ATTEND_BENCH_HAVE_OPENBLAS)
  openblas_set_num_threads(threads);  // whatever OPENBLAS_NUM_THREADS says
  const std::string core = openblas_get_corename();
  benchmark::AddCustomContext("openblas_core", core);
  benchmark::AddCustomContext("openblas_threads", std::to_string(openblas_get_num_threads()));
#if defined(__AVX512F__)
  // OpenBLAS 0.3.21 knows no Intel CPU newer than Cooper Lake: on a Sapphire or Emerald Rapids
  // Xeon it falls back to its SSE3 kernels ("Prescott"), several times slower than its AVX-512
  // ones.
  const bool avx512_core = core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
  if (!avx512_core)
    fmt::print(stderr,
               "bench_gemm: warning: OpenBLAS chose its {} kernels on this AVX-512 CPU; the "
               "comparison is unfair to it.\n  If it did not recognise the CPU, run with "
               "OPENBLAS_CORETYPE=Cooperlake (bench/README.md).\n",
               core);
#else
  const bool avx512_core = false;
#endif
  for (const char* variable : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}) {
    const char* value = std::getenv(variable);
    benchmark::AddCustomContext(variable, value != nullptr ? value : "(unset)");
    // A core type that names AVX-512 kernels on an AVX-512 CPU is the fix above, not a problem.
    if (value != nullptr && !(avx512_core && std::string_view(variable) == "OPENBLAS_CORETYPE"))
      fmt::print(stderr,
                 "bench_gemm: warning: {}={} is set; it can make OpenBLAS pick slower kernels. "
                 "For the fair comparison run under\n  env -u OPENBLAS_CORETYPE -u "
                 "OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 ...\n",
                 variable, value);
  }
#else
  benchmark::AddCustomContext("openblas_core", "(not built with OpenBLAS)");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Inside run_program: an exception (an attend::Error, or Google Benchmark's own on a flag
  // such as --benchmark_repetitions=-5) is one line and exit 1, not an abort.
  const int threads = choose_threads();  // before run_program, which reads ATTEND_NUM_THREADS
  return attend::app::run_program([threads] {
    describe_setup(threads);
    check_all_implementations();
    register_benchmarks(threads);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
