# The first alert end to end through real Prometheus, alertd and real Alertmanager.
add_test(NAME integration.e2e_alert_fires_and_resolves
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.e2e_alert_fires_and_resolves PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
