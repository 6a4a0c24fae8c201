# datasource: HttpQuerier against real Prometheus (basic auth over HTTP, and HTTPS with a CA
# made by the test). datasource.sh owns the Prometheus processes; the Catch2 driver queries.
add_executable(integration_datasource ${CMAKE_CURRENT_LIST_DIR}/datasource_test.cpp)
target_link_libraries(integration_datasource PRIVATE datasource net catch_main alertd_warnings)
add_test(NAME "integration: datasource"
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/datasource.sh $<TARGET_FILE:integration_datasource>)
set_tests_properties("integration: datasource" PROPERTIES
  LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 180)
