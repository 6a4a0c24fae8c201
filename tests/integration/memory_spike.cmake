# Issue 12 item 2: after a one-off spike (answers refused at -datasource.maxResponseSize),
# resident memory comes back within 10% of where it was.
add_test(NAME integration.memory_spike
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/memory_spike_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.memory_spike PROPERTIES LABELS integration TIMEOUT 120)
