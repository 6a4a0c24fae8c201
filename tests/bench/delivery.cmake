# bench_delivery: the cost of notifier::DeliveryQueue (queue + flush) over a direct
# AlertmanagerClient POST of the same batch (vmalert's shape), both on an answering fake transport.
add_executable(bench_delivery ${CMAKE_CURRENT_LIST_DIR}/delivery_bench.cpp)
target_link_libraries(bench_delivery PRIVATE notifier core test_fakes benchmark::benchmark
                                             bench_alloc alertd_warnings)
