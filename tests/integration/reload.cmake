# Reload (SIGHUP, /-/reload) against real Prometheus and Alertmanager.
add_test(NAME integration.reload_keeps_state
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/reload_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.reload_keeps_state PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
