# A datasource outage with and without -rule.keepFiringOnError (real Prometheus and Alertmanager).
add_test(NAME integration.outage_keeps_firing
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/outage_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.outage_keeps_firing PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
