# SPDX-License-Identifier: BSD-2-Clause
# The files of lib/pressure, split between the monitor and the sources so
# that each half can be worked on alone.
set(KSYNC_PRESSURE_MONITOR_FILES monitor.c react.c run.c direct.c)
set(KSYNC_PRESSURE_SOURCE_FILES sources.c paths.c parse.c seams.c psi.c systemd.c vmpressure.c limit.c)
list(TRANSFORM KSYNC_PRESSURE_MONITOR_FILES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(TRANSFORM KSYNC_PRESSURE_SOURCE_FILES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
