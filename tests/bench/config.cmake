# bench_config: loading the 10,002-rule promtool fixture (rules_large.yml).
add_executable(bench_config ${CMAKE_CURRENT_LIST_DIR}/config_bench.cpp)
target_link_libraries(bench_config PRIVATE config benchmark::benchmark bench_alloc
                                           alertd_warnings)
target_compile_definitions(bench_config PRIVATE
  ALERTD_RULES_CORPUS="${ALERTD_SHARED_DIR}/corpus/rules")
