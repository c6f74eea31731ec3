# Runs one mgpu-tune command and checks its exit code and output (stdout + stderr).
#   cmake -DEXE=path -DARGS="a|b|c" -DEXPECT_EXIT=N [-DEXPECT_REGEX=re] [-DJSON_KEY=key] [-DFRESH_DB=file] -P ...
# ARGS are separated by '|'. JSON_KEY: stdout must be a JSON object holding that key.
string(REPLACE "|" ";" args "${ARGS}")
if(DEFINED FRESH_DB)  # a database the command must create anew (not resume) on every run
  file(REMOVE "${FRESH_DB}" "${FRESH_DB}-wal" "${FRESH_DB}-shm")
endif()
execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL EXPECT_EXIT)
  message(FATAL_ERROR "expected exit ${EXPECT_EXIT}, got ${rc}\n--- output ---\n${all}")
endif()
if(DEFINED EXPECT_REGEX AND NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'\n--- output ---\n${all}")
endif()
if(DEFINED JSON_KEY)
  string(JSON value ERROR_VARIABLE json_error GET "${out}" "${JSON_KEY}")
  if(json_error)
    message(FATAL_ERROR "stdout is not JSON with key '${JSON_KEY}': ${json_error}\n${out}")
  endif()
endif()
message(STATUS "ok: exit ${rc}")
