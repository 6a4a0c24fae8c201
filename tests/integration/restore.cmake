# -remoteRead.url restore against real Prometheus.
add_test(NAME integration.restore_from_prometheus
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/restore_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.restore_from_prometheus PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
