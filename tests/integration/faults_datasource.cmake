# Fault matrix: a misbehaving datasource, nine faults at once (docs/faults.md).
add_test(NAME integration.faults_datasource
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults_datasource_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.faults_datasource PROPERTIES LABELS integration TIMEOUT 120)
