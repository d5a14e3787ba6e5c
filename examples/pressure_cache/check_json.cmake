# SPDX-License-Identifier: BSD-2-Clause
# Smoke check of pressure_cache (cmake -P; run by the pressure_cache_example
# test, examples/pressure_cache.cmake): a short run with small sizes, then the
# JSON must have every key the demo documents, with sane values. Not the
# performance targets (a loaded 2-core machine, 2 s per variant). As root with
# a memory cgroup controller the four variants run; without one (not root, or
# a sanitizer build, whose shadow memory makes a cgroup limit meaningless) only
# ksync runs, against the budget source.
# Variables: DEMO (the binary), OUT (the JSON file to write).
cmake_policy(VERSION 3.20)
execute_process(
  COMMAND ${DEMO} --seconds 2 --limit-mib 48 --want-mib 96 --value-kib 16 --batch-mib 16
          --batch-first 0.5 --batch-period 1 --batch-grow 0.2 --batch-hold 0.3 --overhead-mib 8
          --timeline 0.5 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pressure_cache exited with ${rc}: ${err}")
endif()
file(READ ${OUT} json)

string(JSON limit GET "${json}" limit_bytes)
if(NOT limit EQUAL 50331648)
  message(FATAL_ERROR "limit_bytes = ${limit}, expected 48 MiB")
endif()
string(JSON mode GET "${json}" mode)
string(JSON cgv GET "${json}" cgroup)
if(mode STREQUAL "cgroup")
  set(variants fixed-high fixed-low trim ksync)
  if(NOT cgv MATCHES "^v[12]$")
    message(FATAL_ERROR "mode cgroup with cgroup = ${cgv}")
  endif()
elseif(mode STREQUAL "budget")
  set(variants ksync)
  string(JSON why GET "${json}" why)
  message("budget path: ${why}")
else()
  message(FATAL_ERROR "mode = ${mode}")
endif()
string(JSON nvar LENGTH "${json}" variants)
list(LENGTH variants nexp)
if(NOT nvar EQUAL nexp)
  message(FATAL_ERROR "${nvar} variants, expected ${nexp} (${variants})")
endif()

set(keys oom_killed ops ops_per_s hit_rate peak_usage_bytes limit_hits psi_some_us
    pressure_events scans objects_freed event_to_scan_p99_ms timeline)
set(tl_keys t_s cache_bytes batch_bytes usage_bytes psi_some_avg10)
foreach(v IN LISTS variants)
  foreach(k IN LISTS keys)
    string(JSON val ERROR_VARIABLE e GET "${json}" variants ${v} ${k})
    if(e)
      message(FATAL_ERROR "${v}.${k} missing: ${e}")
    endif()
    if(k STREQUAL "oom_killed")
      if(NOT val MATCHES "^(ON|OFF|true|false)$")
        message(FATAL_ERROR "${v}.oom_killed = ${val}, not a bool")
      endif()
    elseif(NOT k STREQUAL "timeline" AND val LESS 0)
      message(FATAL_ERROR "${v}.${k} = ${val} is negative")
    endif()
  endforeach()
  string(JSON hr GET "${json}" variants ${v} hit_rate)
  if(hr GREATER 1)
    message(FATAL_ERROR "${v}.hit_rate = ${hr} > 1")
  endif()
  string(JSON ops GET "${json}" variants ${v} ops)
  string(JSON ops_s GET "${json}" variants ${v} ops_per_s)
  if(ops GREATER 0 AND NOT ops_s GREATER 0)
    message(FATAL_ERROR "${v}: ${ops} ops but ops_per_s = ${ops_s}")
  endif()
  string(JSON ttype TYPE "${json}" variants ${v} timeline)
  if(NOT ttype STREQUAL "ARRAY")
    message(FATAL_ERROR "${v}.timeline is ${ttype}, not an array")
  endif()
  string(JSON ntl LENGTH "${json}" variants ${v} timeline)
  if(ntl GREATER 0)
    math(EXPR last "${ntl} - 1")
    foreach(i RANGE ${last})
      foreach(k IN LISTS tl_keys)
        string(JSON val ERROR_VARIABLE e GET "${json}" variants ${v} timeline ${i} ${k})
        if(e)
          message(FATAL_ERROR "${v}.timeline[${i}].${k} missing: ${e}")
        endif()
        if(val LESS 0)
          message(FATAL_ERROR "${v}.timeline[${i}].${k} = ${val} is negative")
        endif()
      endforeach()
    endforeach()
  endif()
endforeach()

# ksync served and was measured (whether it met its targets, OOM kill
# included, is for the full run: a 48 MiB limit on a loaded 2-core machine
# is not the place to judge it).
string(JSON ops GET "${json}" variants ksync ops)
string(JSON peak GET "${json}" variants ksync peak_usage_bytes)
if(NOT ops GREATER 0 OR NOT peak GREATER 0)
  message(FATAL_ERROR "ksync: ops ${ops}, peak ${peak}")
endif()
message("pressure_cache JSON ok (${mode})")
