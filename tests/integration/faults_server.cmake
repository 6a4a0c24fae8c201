# Fault matrix: idle connections, a 100 MB request and a slowloris against alertd's port.
add_test(NAME integration.faults_server_port
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults_server_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.faults_server_port PROPERTIES LABELS integration TIMEOUT 120)
