// The checkpoint file format: a list of named arrays, written and read byte by byte.
//
// This layer knows nothing about models or optimizers: it stores and validates named
// arrays. nn/io/checkpoint.h decides which arrays a training run saves and what their
// names mean. docs/checkpoint_format.md describes every byte; in short, all numbers are
// little-endian and a file is
//
//   "ATTENDCK"  u32 version  u64 file size  u32 entry count      the 24-byte header
//   entry * count:  u32 name length, name, u8 dtype, u8 rank, u64 size * rank, data
//   u32 CRC-32 of every byte before it
//
// The stored file size tells a truncated file apart from a corrupt one, and the checksum
// catches any changed byte. Reading checks everything before returning a single array.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/ndarray.h"

namespace attend::nn {

struct CheckpointEntry {
  std::string name;
  NDArray value;
};

inline constexpr std::string_view kCheckpointMagic = "ATTENDCK";  // 8 bytes, no terminator
inline constexpr std::uint32_t kCheckpointVersion = 1;
inline constexpr std::size_t kCheckpointHeaderBytes = 24;
inline constexpr std::size_t kCheckpointMaxNameBytes = 4096;

// Names of the entries that nn/io/checkpoint.h writes; the prefix says what an entry is.
inline constexpr std::string_view kModelPrefix = "model/";          // model/fc1.weight
inline constexpr std::string_view kOptimizerPrefix = "optimizer/";  // optimizer/0.momentum
inline constexpr std::string_view kOptimizerStepsEntry = "training/optimizer_steps";
inline constexpr std::string_view kStepEntry = "training/step";
inline constexpr std::string_view kGeneratorEntry = "training/rng";

// What an entry holds, for messages: "model/fc1.weight" -> "parameter 'fc1.weight'".
std::string describe_entry(std::string_view name);

// Writes the entries atomically (nn/io/atomic_file.h): the previous file at `path`, if
// any, stays intact unless the whole new file was written. Names must be unique,
// non-empty and at most kCheckpointMaxNameBytes long.
void write_checkpoint_file(const std::string& path, std::span<const CheckpointEntry> entries);

// Reads and validates a checkpoint file: magic number, version, size, checksum, and every
// entry's header. Throws one attend::Error naming the problem, e.g.
//   checkpoint 'run/model.ckpt' is truncated (expected 1024 bytes of parameter 'fc.weight', found
//   300) checkpoint 'run/model.ckpt': checksum mismatch: the file is corrupt (...)
std::vector<CheckpointEntry> read_checkpoint_file(const std::string& path);

}  // namespace attend::nn
