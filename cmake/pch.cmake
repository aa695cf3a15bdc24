# Precompiled headers for the course's own targets (ATTEND_PCH, on by default): every lesson
# and test file includes attend.h, which pulls in the whole library's headers, fmt and much of
# the standard library; reading it costs about 3 CPU-seconds per file. attend.h, with Catch2
# for the tests, is compiled once per build and every lesson and test file starts from that:
# at -O2 a lesson file then takes 3.2 CPU-seconds instead of 5.2, a test file 4.3 instead of
# 5.9 (measured, averages over 30 and 42 files).
#
# The precompiled header is force-included (-include) in every file of those targets. The
# sources still include attend.h themselves, and tests/layout checks what they include; build
# with -DATTEND_PCH=OFF to check that every file compiles with only its own #includes. The
# library folders (tensor/, nn/, ...) are not precompiled: they include only what they use.
#
# ccache caches these compiles only with CCACHE_SLOPPINESS=pch_defines,time_macros (otherwise it
# runs the compiler every time; the results are the same either way).
option(ATTEND_PCH "Precompile attend.h (and Catch2) for the lessons and tests" ON)

# attend_precompile(<target> lesson|test): <target> reuses the precompiled header of its kind.
# The header is compiled once, by a small object library (pch_lesson or pch_test) made here the
# first time; it links what the kind's targets link, so that the compile flags match (GCC
# ignores a precompiled header built with other flags or macros, and -Winvalid-pch says so: a
# macro may be defined where the header is used, like the tests' ATTEND_SOURCE_DIR, but not
# only where it is built).
function(attend_precompile target kind)
  if(NOT ATTEND_PCH)
    return()
  endif()
  set(donor pch_${kind})
  if(NOT TARGET ${donor})
    set(source ${PROJECT_BINARY_DIR}/${donor}.cpp)
    file(CONFIGURE OUTPUT ${source} CONTENT "// Compiles the precompiled header of ${donor}.\n")
    add_library(${donor} OBJECT ${source})
    if(kind STREQUAL "test")
      target_link_libraries(${donor} PRIVATE attend Catch2::Catch2WithMain)
      target_include_directories(${donor} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
      target_precompile_headers(${donor} PRIVATE <catch2/catch.hpp> [["attend.h"]])
    else()
      target_link_libraries(${donor} PRIVATE attend)
      target_precompile_headers(${donor} PRIVATE [["attend.h"]])
    endif()
  endif()
  target_precompile_headers(${target} REUSE_FROM ${donor})
endfunction()
