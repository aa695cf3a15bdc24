// Fuzzing a file reader with deterministic mutations of a valid file.
//
// A reader meets files that are cut short (a full disk, a killed download), that have a flipped
// bit (a bad disk, a bad copy) or whose size fields say something absurd (another program's
// bug, or a hostile file). fuzz_reader makes thousands of such files from one valid file,
// hands each to the reader and checks the one promise every reader of attend makes: it either
// reads the file or throws an attend::Error whose message names the file. A crash, a hang, a
// sanitizer report or any other exception (std::bad_alloc from a size nobody checked,
// std::length_error, ...) fails the test. The mutations are the same on every run (fixed
// seed), so a failure is reproducible.
//
//   FuzzTarget target("IDX", path, bytes);
//   target.fields = {{4, 4, Endian::kBig}};          // a u32 size at byte 4
//   check_promise(fuzz_reader(target, [](const std::string& p) { data::read_idx(p); }), "IDX");
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "support.h"

namespace attend::testing {

enum class Endian { kLittle, kBig };

// A binary number stored in the file: offset, width in bytes (1, 2, 4 or 8), byte order.
struct NumberField {
  std::size_t offset;
  int bytes;
  Endian endian;
};

// A number written as text (CSV cells, an index file): offset and length of its characters.
struct TextField {
  std::size_t offset;
  std::size_t length;
};

struct FuzzTarget {
  FuzzTarget(std::string name_, std::string path_, std::string valid_ = "")
      : name(std::move(name_)), path(std::move(path_)), valid(std::move(valid_)) {}
  std::string name;   // for messages: "IDX", "PNG", ...
  std::string path;   // where each mutated file is written, then read
  std::string valid;  // the bytes of a valid file
  std::vector<NumberField> fields;
  std::vector<TextField> text_fields;
  // Turns mutated bytes into the file's bytes, for formats with an outer layer that would
  // otherwise stop every mutation at the door: a checksum to recompute, a compression to
  // apply. Identity when not set.
  std::function<std::string(const std::string&)> wrap;
  // The text an error must contain; the path when empty (a reader of a folder may name the
  // folder or the file in it).
  std::string must_name;
  std::size_t truncate_every_length_up_to = 600;  // then every (size / 200)-th length
  int random_mutations = 400;
};

struct FuzzReport {
  int files = 0, accepted = 0, rejected = 0;
  std::vector<std::string> problems;  // the first few mutations that broke the promise
};

// A file's bytes as a string (the mutations below work on strings).
inline std::string file_contents(const std::string& path) {
  const std::vector<unsigned char> bytes = read_bytes(path);
  return {bytes.begin(), bytes.end()};
}

namespace fuzz_detail {

// A new file each time, not the old one truncated: ext4 writes a file that is truncated and
// rewritten to the disk when it is closed (its auto_da_alloc), which made thousands of
// small files take minutes instead of seconds.
inline void write_file(const std::string& path, const std::string& bytes) {
  std::remove(path.c_str());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.good()) FAIL("cannot write " << path);
}

inline void set_number(std::string& bytes, const NumberField& f, std::uint64_t value) {
  for (int i = 0; i < f.bytes; ++i) {
    const int shift = 8 * (f.endian == Endian::kLittle ? i : f.bytes - 1 - i);
    if (f.offset + static_cast<std::size_t>(i) < bytes.size())
      bytes[f.offset + static_cast<std::size_t>(i)] = static_cast<char>(value >> shift);
  }
}

// The mutations, each a name (for the report) and the bytes.
inline std::vector<std::pair<std::string, std::string>> mutations(const FuzzTarget& t) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string& v = t.valid;
  // 1. Cut at every length up to the bound, then at evenly spaced lengths to the end.
  const std::size_t step = std::max<std::size_t>(1, v.size() / 200);
  for (std::size_t n = 0; n < v.size(); n += n < t.truncate_every_length_up_to ? 1 : step)
    out.emplace_back("cut to " + std::to_string(n) + " bytes", v.substr(0, n));
  // 2. One flipped bit: every bit of the first 64 bytes, then one bit of each later byte.
  for (std::size_t i = 0; i < v.size() && i < 2000; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      if (i >= 64 && bit != static_cast<int>(i % 8)) continue;
      std::string m = v;
      m[i] = static_cast<char>(m[i] ^ (1 << bit));
      out.emplace_back("bit " + std::to_string(bit) + " of byte " + std::to_string(i) + " flipped",
                       std::move(m));
    }
  }
  // 3. Size fields set to extremes: 0, 1, the largest signed and unsigned values, the most
  //    negative signed value, and -1 as signed.
  for (const NumberField& f : t.fields) {
    const int bits = 8 * f.bytes;
    const std::uint64_t all = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    for (std::uint64_t value : {std::uint64_t{0}, std::uint64_t{1}, all, all >> 1, (all >> 1) + 1,
                                all - 1, std::uint64_t{0xFFFF}, std::uint64_t{0x10000}}) {
      std::string m = v;
      set_number(m, f, value & all);
      out.emplace_back(
          "field at byte " + std::to_string(f.offset) + " set to " + std::to_string(value & all),
          std::move(m));
    }
  }
  for (const TextField& f : t.text_fields) {
    for (const char* text :
         {"", "0", "-1", "1e9", "2147483648", "-2147483649", "18446744073709551616",
          "99999999999999999999999999", "//////////////", "abc", "nan", "\xff\xfe"}) {
      std::string m = v;
      m.replace(f.offset, f.length, text);
      out.emplace_back("text at byte " + std::to_string(f.offset) + " set to '" + text + "'",
                       std::move(m));
    }
  }
  // 4. A few random bytes replaced by random values, and random cuts of those.
  std::mt19937_64 gen(20240615);
  for (int r = 0; r < t.random_mutations && !v.empty(); ++r) {
    std::string m = v;
    const int changes = 1 + static_cast<int>(gen() % 8);
    for (int c = 0; c < changes; ++c) m[gen() % m.size()] = static_cast<char>(gen());
    if (r % 4 == 3) m.resize(gen() % m.size());
    out.emplace_back("random mutation " + std::to_string(r), std::move(m));
  }
  return out;
}

}  // namespace fuzz_detail

// Runs read(path) on every mutation of target.valid (and once on the valid file, which must
// be read without error). Returns what happened; check_promise() below asserts it.
inline FuzzReport fuzz_reader(const FuzzTarget& target,
                              const std::function<void(const std::string&)>& read) {
  const auto wrap = [&](const std::string& bytes) {
    return target.wrap ? target.wrap(bytes) : bytes;
  };
  fuzz_detail::write_file(target.path, wrap(target.valid));
  INFO(target.name << ": the valid file");
  read(target.path);

  FuzzReport report;
  const std::string& must_name = target.must_name.empty() ? target.path : target.must_name;
  for (const auto& [what, bytes] : fuzz_detail::mutations(target)) {
    fuzz_detail::write_file(target.path, wrap(bytes));
    ++report.files;
    std::string problem;
    try {
      read(target.path);
      ++report.accepted;
    } catch (const Error& e) {
      ++report.rejected;
      if (std::string(e.what()).find(must_name) == std::string::npos)
        problem = std::string("an error that does not name the file: ") + e.what();
    } catch (const std::exception& e) {
      problem = std::string("not an attend::Error: ") + e.what();
    }
    if (!problem.empty() && report.problems.size() < 5)
      report.problems.push_back(target.name + ", " + what + ": " + problem);
  }
  return report;
}

// The promise: no mutation broke it, and some were rejected (a test that cannot fail is no
// test: a reader that accepts everything has not looked at the bytes).
inline void check_promise(const FuzzReport& report, const std::string& name) {
  INFO(name << ": " << report.files << " files, " << report.accepted << " read, " << report.rejected
            << " rejected");
  for (const std::string& p : report.problems) UNSCOPED_INFO(p);
  CHECK(report.problems.empty());
  CHECK(report.rejected > 0);
  CHECK(report.files >= 500);
}

}  // namespace attend::testing
