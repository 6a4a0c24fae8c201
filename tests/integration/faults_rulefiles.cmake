# Fault matrix: broken rule files at -dryRun, start and reload (docs/faults.md).
add_test(NAME integration.faults_rule_files
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults_rulefiles_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.faults_rule_files PROPERTIES LABELS integration TIMEOUT 120)
