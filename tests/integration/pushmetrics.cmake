# -pushmetrics.*: /metrics pushed to a recording receiver (push_receiver.py), checked with
# promtool.
add_test(NAME integration.pushmetrics
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/pushmetrics_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.pushmetrics PROPERTIES
  LABELS integration TIMEOUT 120 RUN_SERIAL TRUE)
