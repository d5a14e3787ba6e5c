# SPDX-License-Identifier: BSD-2-Clause
# ksync's optional dependencies, all in one place and all looked for quietly.
# ksync itself needs only a C11 compiler, Threads and Concurrency Kit (ck.pc);
# everything below serves ksync's own tests, benchmarks and fuzzers, and is
# looked for only when the option that needs it is on. When one is missing,
# the part that needs it is left out and one status line says so:
#
#   dependency                      needed by                    sets
#   C++ compiler (check_language)   benchmarks, C++ test builds  KSYNC_HAVE_CXX
#   Google Benchmark (CMake config) benchmarks                   KSYNC_HAVE_BENCHMARK
#   liburcu-memb (pkg-config)       bench_srcu                   KSYNC_HAVE_URCU, PkgConfig::URCU
#   spin (program)                  the srcu_model test          KSYNC_SPIN
#   clang's libFuzzer               fuzzers                      KSYNC_HAVE_LIBFUZZER
#
# (tests/hygiene/header_hygiene.sh looks for g++/clang++ and liburcu itself, at test
# time, and says which of its checks it skips.)
# Included from the top-level CMakeLists.txt, at its directory scope:
# enable_language(CXX) and the imported targets must live there.
include_guard(GLOBAL)

# ksync_skip(<what> <why>): the one status line for a part left out.
function(ksync_skip what why)
  message(STATUS "ksync: skipping ${what} (${why})")
endfunction()

set(KSYNC_HAVE_CXX OFF)
set(KSYNC_HAVE_BENCHMARK OFF)
set(KSYNC_HAVE_URCU OFF)
set(KSYNC_HAVE_LIBFUZZER OFF)

# A C++ compiler, for the benchmarks and for the C++ builds of the tests
# (headers and kernel spellings used from C++). ksync is C: C++ is enabled
# only here, so a C-only machine or parent project needs no C++ compiler.
if(KSYNC_BUILD_BENCH OR KSYNC_BUILD_TESTS)
  include(CheckLanguage)
  # check_language() narrates its probe; the outcome is reported below.
  if(DEFINED CMAKE_MESSAGE_LOG_LEVEL)
    set(_ksync_log_level "${CMAKE_MESSAGE_LOG_LEVEL}")
  else()
    unset(_ksync_log_level)
  endif()
  set(CMAKE_MESSAGE_LOG_LEVEL NOTICE)
  check_language(CXX)
  if(DEFINED _ksync_log_level)
    set(CMAKE_MESSAGE_LOG_LEVEL "${_ksync_log_level}")
  else()
    unset(CMAKE_MESSAGE_LOG_LEVEL)
  endif()
  # check_language() trusts a CMAKE_CXX_COMPILER given on the command line
  # (or left in the cache): make sure it names a program that exists.
  set(_ksync_cxx "${CMAKE_CXX_COMPILER}")
  if(_ksync_cxx AND NOT IS_ABSOLUTE "${_ksync_cxx}")
    find_program(_KSYNC_CXX_PATH "${_ksync_cxx}")
    set(_ksync_cxx "${_KSYNC_CXX_PATH}")
    unset(_KSYNC_CXX_PATH CACHE)
  endif()
  if(_ksync_cxx AND EXISTS "${_ksync_cxx}" AND NOT IS_DIRECTORY "${_ksync_cxx}")
    enable_language(CXX)
    set(KSYNC_HAVE_CXX ON)
  else()
    if(KSYNC_BUILD_BENCH)
      ksync_skip("benchmarks" "no C++ compiler found")
    endif()
    if(KSYNC_BUILD_TESTS)
      ksync_skip("the C++ builds of the conformance tests" "no C++ compiler found")
    endif()
  endif()
endif()

# Benchmarks: the C++ compiler, then Google Benchmark, then (bench_srcu
# only) liburcu.
if(KSYNC_BUILD_BENCH)
  if(KSYNC_HAVE_CXX)
    find_package(benchmark QUIET)
    if(benchmark_FOUND AND TARGET benchmark::benchmark)
      set(KSYNC_HAVE_BENCHMARK ON)
    else()
      ksync_skip("benchmarks" "Google Benchmark not found")
    endif()
  endif()

  if(KSYNC_HAVE_BENCHMARK)
    if(NOT TARGET PkgConfig::URCU)
      pkg_check_modules(URCU QUIET IMPORTED_TARGET liburcu-memb)
    endif()
    if(TARGET PkgConfig::URCU)
      set(KSYNC_HAVE_URCU ON)
    else()
      ksync_skip("bench_srcu" "liburcu-memb not found by pkg-config")
    endif()
  endif()
endif()

# The Promela model of SRCU (tests/model/) is checked by spin.
if(KSYNC_BUILD_TESTS)
  find_program(KSYNC_SPIN spin)
  mark_as_advanced(KSYNC_SPIN)
  if(NOT KSYNC_SPIN)
    ksync_skip("the srcu_model test" "spin not found")
  endif()
endif()

# libFuzzer comes with clang: the C compiler must be clang and link
# -fsanitize=fuzzer.
if(KSYNC_BUILD_FUZZERS)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    ksync_skip("fuzzers" "libFuzzer needs clang as the C compiler, not ${CMAKE_C_COMPILER_ID}")
  else()
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_QUIET ON)
    set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
    set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
    check_c_source_compiles([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { (void)data; (void)size; return 0; }
]] KSYNC_LIBFUZZER_LINKS)
    unset(CMAKE_REQUIRED_QUIET)
    unset(CMAKE_REQUIRED_FLAGS)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
    if(KSYNC_LIBFUZZER_LINKS)
      set(KSYNC_HAVE_LIBFUZZER ON)
    else()
      ksync_skip("fuzzers" "clang cannot link -fsanitize=fuzzer: libFuzzer runtime missing")
    endif()
  endif()
endif()
