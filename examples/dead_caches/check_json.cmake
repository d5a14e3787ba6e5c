# SPDX-License-Identifier: BSD-2-Clause
# Smoke check of dead_caches (cmake -P; run by the dead_caches_example test,
# examples/dead_caches.cmake): a run with small sizes, then the JSON must
# hold every key docs/objcache.md documents, with sane values. The
# deterministic figures are checked exactly (they do not depend on the
# sizes): design A pins every round's group, reparenting and charge handles
# pin none, self-destruction leaves no dead cache and no dying group once
# the long-lived objects are freed. Timings are only checked to be positive:
# the issue's timing targets need the full sizes on a quiet machine.
# Variables: DEAD_CACHES (the binary), OUT (the JSON file to write).
set(rounds 200)
execute_process(
  COMMAND ${DEAD_CACHES} --rounds ${rounds} --short-lived 20 --util-groups 100 --teardown 2000
          --pairs 20000 --reps 2 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dead_caches exited with ${rc}: ${err}")
endif()
file(READ ${OUT} json)

function(get var)
  string(JSON v ERROR_VARIABLE e GET "${json}" ${ARGN})
  if(e)
    message(FATAL_ERROR "${ARGN}: missing (${e})")
  endif()
  set(${var} ${v} PARENT_SCOPE)
endfunction()
# expect(MESSAGE CONDITION...): fail with MESSAGE unless if(CONDITION) holds.
function(expect msg)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${msg}")
  endif()
endfunction()

foreach(top designs unaccounted run)
  get(v ${top})
endforeach()
string(JSON ndesigns LENGTH "${json}" designs)
expect("designs: ${ndesigns} entries, expected A, A-reparent, B" ${ndesigns} EQUAL 3)

set(keys dying_groups dead_caches dead_caches_after_free dying_groups_after_free utilisation
    utilisation_objects utilisation_slabs teardown_s teardown_caches teardown_free_s offline_s alloc_free_ns
    alloc_free_vs_unaccounted alloc_free_cpu_ns alloc_free_cpu_vs_unaccounted)
foreach(d A A-reparent B)
  foreach(k IN LISTS keys)
    get(v designs ${d} ${k})
    expect("${d}.${k} = ${v} is negative" NOT v LESS 0)
    set(${d}_${k} ${v})
  endforeach()
  foreach(k alloc_free_ns alloc_free_cpu_ns teardown_s utilisation utilisation_objects utilisation_slabs)
    expect("${d}.${k} = ${${d}_${k}}, expected > 0" ${${d}_${k}} GREATER 0)
  endforeach()
  expect("${d}.utilisation = ${${d}_utilisation} > 1" NOT ${d}_utilisation GREATER 1)
  expect("${d}: ${${d}_dying_groups_after_free} groups still dying once every object is freed" ${d}_dying_groups_after_free EQUAL 0)
endforeach()
foreach(k alloc_free_ns alloc_free_cpu_ns utilisation utilisation_objects utilisation_slabs)
  get(v unaccounted ${k})
  expect("unaccounted.${k} = ${v}, expected > 0" ${v} GREATER 0)
endforeach()
foreach(n 8_groups 4_groups 8_groups_cpu 4_groups_cpu)
  foreach(s slots1 slots5)
    get(v designs B stock_loss_${n} ${s})
    expect("B.stock_loss_${n}.${s} = ${v} is not a loss (above 1)" NOT v GREATER 1)
  endforeach()
endforeach()
foreach(k slots1_1_group slots1_8_groups slots1_4_groups slots5_1_group slots5_8_groups slots5_4_groups)
  get(v designs B stock_ns ${k})
  expect("B.stock_ns.${k} = ${v}, expected > 0" ${v} GREATER 0)
endforeach()
foreach(k rounds short_lived util_groups teardown_groups teardown_reps pairs reps object_bytes nproc kernel)
  get(v run ${k})
endforeach()

# The deterministic figures.
expect("A: ${A_dying_groups} dying groups, expected ${rounds} (one pinned per round)" A_dying_groups EQUAL rounds)
expect("A: ${A_dead_caches} dead caches, expected ${rounds}" A_dead_caches EQUAL rounds)
expect("A-reparent: ${A-reparent_dead_caches} dead caches, expected ${rounds}" A-reparent_dead_caches EQUAL rounds)
expect("A-reparent: ${A-reparent_dying_groups} dying groups, expected 0" A-reparent_dying_groups EQUAL 0)
expect("B: ${B_dying_groups} dying groups, expected 0" B_dying_groups EQUAL 0)
expect("B: ${B_dead_caches} dead caches, expected 0" B_dead_caches EQUAL 0)
foreach(d A A-reparent)
  expect("${d}: ${${d}_dead_caches_after_free} dead caches after free" ${d}_dead_caches_after_free EQUAL 0)
endforeach()
expect("A: ${A_teardown_caches} caches before the teardown, expected 2000" A_teardown_caches EQUAL 2000)
message("dead_caches JSON ok")
