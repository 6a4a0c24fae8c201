# The HTTP API's filters and the generatorURL page against a running alertd fed by real
# Prometheus, sending to real Alertmanager.
add_test(NAME integration.api_filters_and_generator_url
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/api_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.api_filters_and_generator_url PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
