# bench_notifier: Alertmanager payload encoding (vs a RapidJSON Writer baseline) and one
# AlertingRule::apply round of a steady firing rule.
add_executable(bench_notifier ${CMAKE_CURRENT_LIST_DIR}/notifier_bench.cpp)
target_link_libraries(bench_notifier PRIVATE notifier rules core benchmark::benchmark bench_alloc
                                             alertd_warnings)
target_include_directories(bench_notifier PRIVATE ${RAPIDJSON_INCLUDE_DIR})
