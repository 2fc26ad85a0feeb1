# ctest "consumer_find_package": install the build tree into a scratch prefix,
# configure + build tests/consumer against it, run it and check its output.
# Inputs (-D): PLUCKER_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER
#              BUILD_TYPE CXX_FLAGS EXPECTED_VERSION
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${prefix}" "${build}")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${what} failed (${rc}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run_step("install" ${CMAKE_COMMAND} --install "${PLUCKER_BUILD_DIR}" --prefix "${prefix}")
run_step("configure" ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${build}"
  "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
run_step("build" ${CMAKE_COMMAND} --build "${build}")
run_step("run" "${build}/consumer")
if(NOT out MATCHES "plucker ${EXPECTED_VERSION}")
  message(FATAL_ERROR "consumer test: unexpected output '${out}' (want 'plucker ${EXPECTED_VERSION}')")
endif()
message(STATUS "consumer test: ${out}")
