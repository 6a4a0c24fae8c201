# request_floor: the CPU a bare client spends per instant query against the daemon benchmark's
# fake datasource, bare or through alertd's HTTP client (no Google Benchmark; see the top of
# request_floor.cpp).
add_executable(request_floor ${CMAKE_CURRENT_LIST_DIR}/request_floor.cpp)
target_link_libraries(request_floor PRIVATE net alertd_warnings)
