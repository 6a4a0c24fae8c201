# Delivery queue: two real Alertmanagers, one hanging then restarting (-rule.resendDelay=60s).
add_test(NAME integration.delivery_two_alertmanagers
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/delivery_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.delivery_two_alertmanagers PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
