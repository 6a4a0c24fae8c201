# bench_parser: query-response parsing (alertd's streaming parser vs RapidJSON baselines), and
# parser_driver, the fixed-iteration driver scripts/callgrind-parser.sh runs under callgrind.
add_library(bench_parser_support STATIC
  ${CMAKE_CURRENT_LIST_DIR}/gen_response.cpp
  ${CMAKE_CURRENT_LIST_DIR}/parser_variants.cpp)
target_include_directories(bench_parser_support PUBLIC ${CMAKE_CURRENT_LIST_DIR}
                                                PRIVATE ${RAPIDJSON_INCLUDE_DIR})
target_link_libraries(bench_parser_support PUBLIC core PRIVATE alertd_warnings)

add_executable(bench_parser ${CMAKE_CURRENT_LIST_DIR}/parser_bench.cpp)
target_link_libraries(bench_parser PRIVATE datasource bench_parser_support benchmark::benchmark
                                           bench_alloc alertd_warnings)
target_compile_definitions(bench_parser PRIVATE
  ALERTD_INSTANT_RESPONSE_JSON="${ALERTD_SHARED_DIR}/testdata/instant_response.json")

add_executable(parser_driver ${CMAKE_CURRENT_LIST_DIR}/parser_driver.cpp)
target_link_libraries(parser_driver PRIVATE datasource bench_parser_support alertd_warnings)
target_compile_definitions(parser_driver PRIVATE
  ALERTD_INSTANT_RESPONSE_JSON="${ALERTD_SHARED_DIR}/testdata/instant_response.json")
