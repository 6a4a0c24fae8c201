# parser_fuzz: the streaming query-response parser, whole vs chunked at data-derived split points.
add_executable(parser_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/parser_fuzz.cpp
  ${ALERTD_ROOT}/datasource/response_parser.cpp
  ${ALERTD_ROOT}/core/query_result.cpp
  ${FUZZ_LABELS_SOURCES})
target_include_directories(parser_fuzz PRIVATE ${ALERTD_ROOT} ${RAPIDJSON_INCLUDE_DIR})
target_compile_options(parser_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(parser_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(parser_fuzz PRIVATE alertd_warnings)
