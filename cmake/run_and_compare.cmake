# Runs a program and compares what it prints with a file: `cmake -DPROGRAM=... [-DARGS=a;b]
# [-DWORKDIR=dir] -DEXPECTED=file [-DDATASET=x.bp -DPYTHON=python3 -DBP4CHECK=bp4check.py]
# -P run_and_compare.cmake`. Fails on a non-zero exit, on any difference (the whole output is
# shown), and, with DATASET, when shared/tools/bp4check.py finds the dataset inconsistent.
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
  if(PYTHON AND EXISTS "${BP4CHECK}")
    execute_process(COMMAND "${PYTHON}" "${BP4CHECK}" "${DATASET}" WORKING_DIRECTORY "${WORKDIR}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "bp4check.py ${DATASET} failed (${rc}):\n${out}${err}")
    endif()
    message(STATUS "bp4check.py ${DATASET}: consistent")
  else()
    message(STATUS "bp4check.py not found (${BP4CHECK}); dataset not checked")
  endif()
endif()
