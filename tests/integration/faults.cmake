# CLI behaviour and fault tolerance of the daemon (fake datasources only for garbage and 500s).
add_test(NAME integration.cli_and_faults
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults_test.sh $<TARGET_FILE:alertd> ${ALERTD_ROOT})
set_tests_properties(integration.cli_and_faults PROPERTIES LABELS integration TIMEOUT 180)
