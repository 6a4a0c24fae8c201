# bench_templates: rendering typical annotations (templates/) for 10,000 alerts, with a
# hand-written baseline producing the same bytes.
add_executable(bench_templates ${CMAKE_CURRENT_LIST_DIR}/templates_bench.cpp)
target_link_libraries(bench_templates PRIVATE templates core benchmark::benchmark bench_alloc
                                             alertd_warnings)
