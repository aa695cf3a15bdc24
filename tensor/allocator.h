// The memory behind every array. A training step allocates the same activation sizes
// again and again; asking the operating system each time costs a page fault per 4 KiB
// (about 11 us each on the course's machines). So freed blocks go into a cache, sorted
// by size class, and the next request of that class reuses one: after the first step,
// training touches no fresh memory.
//
// Under AddressSanitizer the cache is bypassed, so that a use after free is still caught.
#pragma once

#include <cstddef>

namespace attend::memory {

constexpr std::size_t kAlignment = 64;  // one cache line; also the width of an AVX-512 register

void* allocate(std::size_t bytes);
void release(void* pointer, std::size_t bytes);  // never throws: it runs in destructors

struct Stats {
  std::size_t bytes_in_use = 0;  // handed out and not yet released
  std::size_t bytes_cached = 0;  // released, kept for reuse
  std::size_t allocations = 0;   // calls to allocate()
  std::size_t cache_hits = 0;    // of which were served from the cache
};
Stats stats();

// Returns every cached block to the operating system. A program calls it after a phase whose
// array sizes will not come again (loading and arranging a data set), so that the cache does
// not hold that memory for the rest of the run.
void empty_cache();

}  // namespace attend::memory
