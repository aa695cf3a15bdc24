# Builds examples/own_model against attend one way and runs it (cmake -P, from
# tests/install/CMakeLists.txt):
#   WAY=find_package      installs BUILD_DIR into SCRATCH/prefix and configures the example
#                         with CMAKE_PREFIX_PATH pointing there
#   WAY=add_subdirectory  configures the example with ATTEND_SOURCE_DIR=SOURCE_DIR
# then builds it with the same compiler (GENERATOR, CXX_COMPILER, LAUNCHER, JOBS) and runs it
# for a few steps. Fails with the failing step's output.
cmake_minimum_required(VERSION 3.25)

# step(<what> <command>...): runs the command; stops the test if it fails.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "own_model (${WAY}): ${what} failed (${status}):\n${output}")
  endif()
  set(output "${output}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${SCRATCH})
set(configure -S ${SOURCE_DIR}/examples/own_model -B ${SCRATCH}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

if(WAY STREQUAL "find_package")
  step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${SCRATCH}/prefix)
  foreach(file include/attend/attend.h include/attend/nn/viz/heatmap.h)
    if(NOT EXISTS ${SCRATCH}/prefix/${file})
      message(FATAL_ERROR "own_model (${WAY}): cmake --install did not install ${file}")
    endif()
  endforeach()
  file(GLOB_RECURSE package ${SCRATCH}/prefix/attendConfigVersion.cmake)
  if(NOT package)
    message(FATAL_ERROR "own_model (${WAY}): cmake --install did not install attend's package")
  endif()
  list(APPEND configure -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${SCRATCH}/prefix)
else()
  # The cheapest build of attend's sources: Debug with its -g dropped (no optimisation, no
  # debug information), and attend's unity build (ATTEND_UNITY_BUILD), which compiles each
  # library as a few large files: 85 CPU-seconds instead of 240, measured.
  list(APPEND configure -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0
       -DATTEND_UNITY_BUILD=ON -DATTEND_SOURCE_DIR=${SOURCE_DIR})
endif()

step("configuring" ${CMAKE_COMMAND} ${configure})
step("building" ${CMAKE_COMMAND} --build ${SCRATCH}/build -j ${JOBS})
step("running" ${SCRATCH}/build/own_model --steps 30 --out ${SCRATCH}/out)
message("${output}")
foreach(expected "gradcheck QueryPooling: passed" "where the queries look")
  string(FIND "${output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "own_model (${WAY}): the output lacks \"${expected}\"")
  endif()
endforeach()
if(NOT EXISTS ${SCRATCH}/out/summary.txt OR NOT EXISTS ${SCRATCH}/out/attention.txt)
  message(FATAL_ERROR "own_model (${WAY}): no summary.txt and attention.txt in ${SCRATCH}/out")
endif()
