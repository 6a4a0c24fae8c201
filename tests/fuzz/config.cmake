# promql_fuzz: the PromQL/MetricsQL syntax check (config/promql.cpp) must never crash or hang.
add_executable(promql_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/promql_fuzz.cpp
  ${ALERTD_ROOT}/config/promql.cpp)
target_include_directories(promql_fuzz PRIVATE ${ALERTD_ROOT})
target_compile_options(promql_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(promql_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(promql_fuzz PRIVATE alertd_warnings)

# rules_file_fuzz: the whole rule-file parser (env expansion, YAML, merge keys, validation).
find_package(yaml-cpp REQUIRED)
add_executable(rules_file_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/rules_file_fuzz.cpp
  ${ALERTD_ROOT}/config/loader.cpp
  ${ALERTD_ROOT}/config/glob.cpp
  ${ALERTD_ROOT}/config/promql.cpp
  ${ALERTD_ROOT}/core/duration.cpp
  ${FUZZ_LABELS_SOURCES}
  ${ALERTD_ROOT}/core/limit_hits.cpp)
target_include_directories(rules_file_fuzz PRIVATE ${ALERTD_ROOT})
target_compile_options(rules_file_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(rules_file_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(rules_file_fuzz PRIVATE yaml-cpp alertd_warnings)
