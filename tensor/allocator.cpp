#include "tensor/allocator.h"

#include <array>
#include <bit>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <mutex>
#include <new>
#include <vector>

namespace attend::memory {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUseCache = false;
#else
constexpr bool kUseCache = true;
#endif

// Size classes: four per power of two (1, 1.25, 1.5, 1.75 x 2^k), so at most 25% of a
// block is wasted. Blocks under 256 bytes are rounded to the next multiple of 64.
constexpr std::size_t kClasses = 4 * 64 + 8;
// At most this much is kept. A training step's arrays fit (lesson 08's CNN at a batch of 50
// uses about 110 MB); batches of varying shapes (sentences of different lengths) would
// otherwise fill the cache with blocks of every size they ever had, and a lesson's resident
// memory with it (lesson 11 grew to 610 MB with 1 GB allowed).
constexpr std::size_t kMaxCachedBytes = std::size_t{256} << 20;

std::size_t size_class(std::size_t bytes, std::size_t* rounded) {
  if (bytes <= 256) {
    std::size_t blocks = (bytes + 63) / 64;
    *rounded = blocks * 64;
    return blocks;  // classes 0..4
  }
  int octave = std::bit_width(bytes - 1) - 1;  // 2^octave < bytes <= 2^(octave+1)
  std::size_t quarter = std::size_t{1} << (octave - 2);
  std::size_t steps = (bytes - (std::size_t{1} << octave) + quarter - 1) / quarter;  // 1..4
  *rounded = (std::size_t{1} << octave) + steps * quarter;
  return 4 * static_cast<std::size_t>(octave) + steps;
}

struct Cache {
  std::mutex mutex;
  std::array<std::vector<void*>, kClasses> free_blocks;
  Stats stats;
};

Cache& cache() {
  static Cache* instance = new Cache;  // never destroyed: arrays may outlive static objects
  return *instance;
}

void* system_allocate(std::size_t bytes) {
  void* p = std::aligned_alloc(kAlignment, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  std::size_t rounded = 0;
  std::size_t cls = size_class(bytes, &rounded);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  void* p = nullptr;
  if (kUseCache && !c.free_blocks[cls].empty()) {
    p = c.free_blocks[cls].back();
    c.free_blocks[cls].pop_back();
    c.stats.cache_hits++;
    c.stats.bytes_cached -= rounded;
  } else {
    p = system_allocate(rounded);  // may throw std::bad_alloc: count only what succeeded
  }
  c.stats.allocations++;
  c.stats.bytes_in_use += rounded;
  return p;
}

void release(void* pointer, std::size_t bytes) {
  if (pointer == nullptr) return;
  if (bytes == 0) bytes = 1;
  std::size_t rounded = 0;
  std::size_t cls = size_class(bytes, &rounded);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.stats.bytes_in_use -= rounded;
  if (kUseCache && c.stats.bytes_cached + rounded <= kMaxCachedBytes) {
    // The list may need memory to grow; when there is none (the very moment an out-of-memory
    // error unwinds and frees arrays), the block goes back to the system instead: release
    // runs in destructors and must not throw.
    try {
      c.free_blocks[cls].push_back(pointer);
      c.stats.bytes_cached += rounded;
      return;
    } catch (const std::bad_alloc&) {
    }
  }
  std::free(pointer);
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.stats;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto& blocks : c.free_blocks) {
    for (void* p : blocks) std::free(p);
    blocks.clear();
  }
  c.stats.bytes_cached = 0;
#if defined(__GLIBC__)
  // free() keeps the pages of small blocks in the C library's heap, where a few live blocks
  // can pin many free pages; malloc_trim hands every free page back to the system.
  malloc_trim(0);
#endif
}

}  // namespace attend::memory
