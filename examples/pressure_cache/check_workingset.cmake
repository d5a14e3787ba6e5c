# SPDX-License-Identifier: BSD-2-Clause
# Quick check of pressure_cache --workingset (cmake -P; run by the
# pressure_cache_example_workingset test): a short study at a small capacity
# (no root needed: a fixed capacity), then the JSON's "workingset" object must
# have, per LRU flavour (classic, mglru), the hot hit rates with and without
# shadow entries and the shadow shrinker's figures, sane. The study is
# single-threaded on a seeded stream, so its figures are the same on every
# run: shadows must raise the hot hit rate for both flavours, and the
# shadow nodes must end within the shrinker's budget.
# Variables: DEMO (the binary), OUT (the JSON file to write).
cmake_policy(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/flavour_keys.cmake)
execute_process(
  COMMAND ${DEMO} --workingset --ws-requests 300000 --limit-mib 16 --value-kib 16 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pressure_cache --workingset exited with ${rc}: ${err}")
endif()
file(READ ${OUT} json)

string(JSON mode GET "${json}" mode)
if(NOT mode STREQUAL "workingset")
  message(FATAL_ERROR "mode = ${mode}, expected workingset")
endif()
string(JSON wl GET "${json}" workload name)
if(NOT wl STREQUAL "scan")
  message(FATAL_ERROR "workload = ${wl}, expected scan")
endif()
string(JSON cap GET "${json}" workingset capacity_values)
if(NOT cap EQUAL 1024)
  message(FATAL_ERROR "capacity_values = ${cap}, expected 1024 (16 MiB of 16 KiB)")
endif()

set(keys hot_hit_rate_shadow hot_hit_rate_no_shadow hit_rate_shadow hit_rate_no_shadow refaults
    activations pressure_rounds shadow_nodes_peak shadow_nodes_end shadow_budget shadow_bytes_peak
    shadow_budget_bytes over_budget_rounds)
foreach(fl classic mglru)
  pc_flavour_keys("${json}" workingset.${fl} "${keys}" workingset ${fl})
  if(NOT hot_hit_rate_shadow GREATER hot_hit_rate_no_shadow)
    message(FATAL_ERROR "${fl}: shadows do not raise the hot hit rate "
                        "(${hot_hit_rate_shadow} with, ${hot_hit_rate_no_shadow} without)")
  endif()
  if(NOT activations GREATER 0 OR NOT pressure_rounds GREATER 0)
    message(FATAL_ERROR "${fl}: ${activations} activations, ${pressure_rounds} reclaim rounds")
  endif()
  if(NOT shadow_budget GREATER 0)
    message(FATAL_ERROR "${fl}: the shadow budget is ${shadow_budget} (collapsed: the patch's bug)")
  endif()
  if(shadow_nodes_end GREATER shadow_budget)
    message(FATAL_ERROR "${fl}: ${shadow_nodes_end} shadow nodes at the end, over the budget ${shadow_budget}")
  endif()
  message("${fl}: hot hit rate ${hot_hit_rate_shadow} with shadows, ${hot_hit_rate_no_shadow} without; "
          "shadow nodes peak ${shadow_nodes_peak}, budget ${shadow_budget}")
endforeach()
message("pressure_cache --workingset JSON ok")
