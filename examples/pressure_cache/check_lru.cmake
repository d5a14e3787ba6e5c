# SPDX-License-Identifier: BSD-2-Clause
# Check of the variants' own cache on a ksync_lru with shadow entries
# (cmake -P; run by the pressure_cache_example_lru* tests). Two modes:
#
# REAL=OFF (no root needed, deterministic): the fixed-low variant, capped at
#   12 MiB of 16 KiB values, without a memory cgroup and without the batch
#   job, serves exactly 30000 requests of the scan workload per run: one
#   thread, a seeded stream, so the figures are the same on every run. For
#   both flavours (classic, mglru), with and without shadows, it requires:
#   shadows raise the hot-key hit rate by more than 20 points (without them
#   it is 0 by construction: workload.c), every refault judged in the
#   workingset, and the shadow store within its budget (the cap evictions
#   trim it: no sample above it), the budget above 0 (it collapses to 0 if
#   it reads a counter MGLRU does not keep: the patch's bug).
# REAL=ON (root with a memory cgroup controller; else it skips, saying why):
#   the ksync variant under its cgroup limit, both flavours with and without
#   shadows, 2 s each: the JSON's workingset_real and runs keys, sane values,
#   direct reclaim on the ksync variant, shadow entries found and refaulted.
#   Not the hit rates: those depend on the machine's load.
# Variables: DEMO (the binary), OUT (the JSON file to write), REAL.
cmake_policy(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/flavour_keys.cmake)
if(REAL)
  execute_process(
    COMMAND ${DEMO} --workload scan --lru both --variants ksync --seconds 2 --limit-mib 48 --want-mib 96
            --value-kib 16 --batch-mib 16 --batch-first 0.5 --batch-period 1 --batch-grow 0.2
            --batch-hold 0.3 --overhead-mib 8 --timeline 0.5 --json ${OUT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(variant ksync)
else()
  execute_process(
    COMMAND ${DEMO} --workload scan --lru both --variants fixed-low --no-cgroup --requests 30000
            --batch-mib 0 --limit-mib 16 --low-mib 12 --value-kib 16 --fetch-us 0 --request-us 0
            --json ${OUT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(variant fixed-low)
endif()
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pressure_cache exited with ${rc}: ${err}")
endif()
file(READ ${OUT} json)

string(JSON mode GET "${json}" mode)
if(REAL AND NOT mode STREQUAL "cgroup")
  string(JSON why GET "${json}" why)
  message("SKIPPED: no memory cgroup for the real run (${why})")
  return()
endif()
if(NOT REAL AND NOT mode STREQUAL "no-cgroup")
  message(FATAL_ERROR "mode = ${mode}, expected no-cgroup")
endif()
string(JSON nruns LENGTH "${json}" runs)
if(NOT nruns EQUAL 4)
  message(FATAL_ERROR "${nruns} runs, expected 4 (two flavours, with and without shadows)")
endif()
foreach(i RANGE 3)
  string(JSON lru GET "${json}" runs ${i} lru)
  string(JSON ops GET "${json}" runs ${i} ops)
  string(JSON direct GET "${json}" runs ${i} direct_reclaim)
  if(NOT lru MATCHES "^(classic|mglru)$")
    message(FATAL_ERROR "runs[${i}].lru = ${lru}")
  endif()
  if(NOT REAL AND NOT ops EQUAL 30000)
    message(FATAL_ERROR "runs[${i}].ops = ${ops}, expected 30000 (--requests)")
  endif()
  if(REAL AND NOT direct)
    message(FATAL_ERROR "runs[${i}]: the ksync variant without direct reclaim")
  endif()
  if(NOT REAL AND direct)
    message(FATAL_ERROR "runs[${i}]: direct reclaim on a fixed variant")
  endif()
endforeach()

set(keys hot_hit_rate_shadow hot_hit_rate_no_shadow hit_rate_shadow hit_rate_no_shadow refaults activations
    shadow_nodes_peak shadow_budget_at_peak shadow_budget_max shadow_excess_max shadow_over_budget_samples
    shadow_samples shadow_bytes_peak shadow_budget_bytes_at_peak)
foreach(fl classic mglru)
  pc_flavour_keys("${json}" workingset_real.${variant}.${fl} "${keys}" workingset_real ${variant} ${fl})
  if(NOT refaults GREATER 0 OR activations GREATER refaults OR NOT shadow_nodes_peak GREATER 0)
    message(FATAL_ERROR "${fl}: ${refaults} refaults, ${activations} activations, "
                        "${shadow_nodes_peak} shadow nodes at the peak")
  endif()
  if(NOT REAL)
    if(NOT activations EQUAL refaults)
      message(FATAL_ERROR "${fl}: ${activations} of ${refaults} refaults activated, expected all")
    endif()
    if(NOT shadow_budget_at_peak GREATER 0)
      message(FATAL_ERROR "${fl}: the shadow budget is ${shadow_budget_at_peak} (collapsed: the patch's bug)")
    endif()
    if(shadow_over_budget_samples GREATER 0 OR shadow_excess_max GREATER 0)
      message(FATAL_ERROR "${fl}: the shadow nodes went ${shadow_excess_max} past the budget in "
                          "${shadow_over_budget_samples} samples, expected none (the cap evictions trim)")
    endif()
    # shadows must add more than 20 points of hot hits (CMake reads them back as 0.57909999..., 0.0 or 1.0)
    foreach(k on off)
      set(rate ${hot_hit_rate_no_shadow})
      if(k STREQUAL "on")
        set(rate ${hot_hit_rate_shadow})
      endif()
      if(rate MATCHES "^1")
        set(${k}_pc 100)
      else()
        string(REGEX REPLACE "^0\\." "" frac "${rate}")
        string(SUBSTRING "${frac}00" 0 2 ${k}_pc)
      endif()
    endforeach()
    if(NOT on_pc MATCHES "^[0-9]+$" OR NOT off_pc MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${fl}: hot hit rates ${hot_hit_rate_shadow}, ${hot_hit_rate_no_shadow} unreadable")
    endif()
    math(EXPR gain "${on_pc} - ${off_pc}")
    if(NOT gain GREATER 20)
      message(FATAL_ERROR "${fl}: shadows add ${gain} points of hot hits "
                          "(${hot_hit_rate_shadow} with, ${hot_hit_rate_no_shadow} without), expected > 20")
    endif()
  endif()
  message("${fl}: hot hit rate ${hot_hit_rate_shadow} with shadows, ${hot_hit_rate_no_shadow} without; "
          "shadow nodes peak ${shadow_nodes_peak}, budget then ${shadow_budget_at_peak}")
endforeach()
message("pressure_cache --lru both JSON ok")
