# Runs a program and compares what it prints with a file: `cmake -DPROGRAM=... [-DARGS=a;b]
# [-DWORKDIR=dir] -DEXPECTED=file [-DDATASET=x.bp -DPYTHON=python3 -DBP4VERIFY=bp4verify.py]
# -P run_and_compare.cmake`. Fails on a non-zero exit, on any difference (the whole output is
# shown), and, with DATASET, when the project's checker (tests/support/bp4verify.py) finds the
# dataset inconsistent or cannot be run.
cmake_minimum_required(VERSION 3.20)
if(NOT WORKDIR)
  set(WORKDIR ".")
endif()
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND "${PROGRAM}" ${ARGS} WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ "${EXPECTED}" want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR
          "${PROGRAM}: output differs from ${EXPECTED}\n--- got:\n${out}--- expected:\n${want}")
endif()
message(STATUS "output matches ${EXPECTED}")
if(DATASET)
  if(NOT PYTHON OR NOT EXISTS "${BP4VERIFY}")
    message(FATAL_ERROR "DATASET ${DATASET} given but no checker to run (PYTHON=${PYTHON}, "
                        "BP4VERIFY=${BP4VERIFY})")
  endif()
  execute_process(COMMAND "${PYTHON}" "${BP4VERIFY}" "${DATASET}" WORKING_DIRECTORY "${WORKDIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bp4verify.py ${DATASET} failed (${rc}):\n${out}${err}")
  endif()
  message(STATUS "bp4verify.py ${DATASET}: consistent")
endif()
