# bench_relabel: notifier::RelabelRules applied per alert (typical alert_relabel_configs).
add_executable(bench_relabel ${CMAKE_CURRENT_LIST_DIR}/relabel_bench.cpp)
target_link_libraries(bench_relabel PRIVATE notifier core benchmark::benchmark bench_alloc
                                            alertd_warnings)
