# -state.path across kill -9, against real Prometheus and Alertmanager.
add_test(NAME integration.state_survives_kill
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/state_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.state_survives_kill PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
