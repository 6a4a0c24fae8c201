# Fault matrix: five Alertmanagers, each with its own fault (docs/faults.md).
add_test(NAME integration.faults_alertmanager
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults_alertmanager_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.faults_alertmanager PROPERTIES LABELS integration TIMEOUT 120)
