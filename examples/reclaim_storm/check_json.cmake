# SPDX-License-Identifier: BSD-2-Clause
# Smoke check of reclaim_storm (cmake -P; run by the reclaim_storm_example test,
# examples/reclaim_storm.cmake): a tiny run, then the JSON must have exactly
# the keys the demo documents, with sane values.
# Variables: STORM (the binary), OUT (the JSON file to write).
execute_process(
  COMMAND ${STORM} --seconds 1 --idle-seconds 0.3 --groups 50 --shrinkers 60 --threads 2 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "reclaim_storm exited with ${rc}: ${err}")
endif()
file(READ ${OUT} json)
set(keys walks_per_s walks_per_cpu_s charged_per_s reclaimed_share register_p50_us register_p99_us
    unregister_p50_us unregister_p99_us mount_ops_per_s failed_trylocks register_idle_p50_us
    register_idle_p99_us unregister_idle_p50_us unregister_idle_p99_us mount_idle_ops_per_s
    mount_ops_per_cpu_s mount_idle_ops_per_cpu_s)
string(JSON ntop LENGTH "${json}")
if(NOT ntop EQUAL 2)
  message(FATAL_ERROR "expected two top-level objects, got ${ntop}")
endif()
foreach(reg legacy lockless)
  string(JSON n LENGTH "${json}" ${reg})
  list(LENGTH keys nkeys)
  if(NOT n EQUAL nkeys)
    message(FATAL_ERROR "${reg}: ${n} keys, expected ${nkeys}")
  endif()
  foreach(k IN LISTS keys)
    string(JSON v ERROR_VARIABLE e GET "${json}" ${reg} ${k})
    if(e)
      message(FATAL_ERROR "${reg}.${k} missing: ${e}")
    endif()
    if(v LESS 0)
      message(FATAL_ERROR "${reg}.${k} = ${v} is negative")
    endif()
  endforeach()
  foreach(k walks_per_s walks_per_cpu_s charged_per_s mount_ops_per_s mount_idle_ops_per_s mount_ops_per_cpu_s
          mount_idle_ops_per_cpu_s register_p50_us unregister_p50_us)
    string(JSON v GET "${json}" ${reg} ${k})
    if(NOT v GREATER 0)
      message(FATAL_ERROR "${reg}.${k} = ${v}, expected > 0")
    endif()
  endforeach()
  # A share of the charged objects: scans take only what was charged.
  string(JSON share GET "${json}" ${reg} reclaimed_share)
  if(share GREATER 1)
    message(FATAL_ERROR "${reg}.reclaimed_share = ${share}, above 1")
  endif()
  # The mount thread cannot do more per CPU-second than its CPU time allows
  # per wall second: per CPU-second is at least the wall-clock rate.
  foreach(ph mount mount_idle)
    string(JSON wall GET "${json}" ${reg} ${ph}_ops_per_s)
    string(JSON cpu GET "${json}" ${reg} ${ph}_ops_per_cpu_s)
    if(cpu LESS wall)
      message(FATAL_ERROR "${reg}.${ph}_ops_per_cpu_s = ${cpu} below the wall-clock rate ${wall}")
    endif()
  endforeach()
  foreach(p register unregister register_idle unregister_idle)
    string(JSON p50 GET "${json}" ${reg} ${p}_p50_us)
    string(JSON p99 GET "${json}" ${reg} ${p}_p99_us)
    if(p50 GREATER p99)
      message(FATAL_ERROR "${reg}.${p}: p50 ${p50} > p99 ${p99}")
    endif()
  endforeach()
endforeach()
string(JSON f GET "${json}" lockless failed_trylocks)
if(NOT f EQUAL 0)
  message(FATAL_ERROR "the lockless registry cannot fail a trylock, got ${f}")
endif()
message("reclaim_storm JSON ok")
