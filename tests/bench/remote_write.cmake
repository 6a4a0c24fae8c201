# bench_remote_write: rows per second per core through RemoteWriter (queue, batch, protobuf,
# snappy) with a transport that answers at once, and the encoder alone.
add_executable(bench_remote_write ${CMAKE_CURRENT_LIST_DIR}/remote_write_bench.cpp)
target_link_libraries(bench_remote_write PRIVATE datasource core test_fakes benchmark::benchmark
                                                 alertd_warnings)
