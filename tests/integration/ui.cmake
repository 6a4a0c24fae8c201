# The web UI rendered by headless Chromium against alertd, real Prometheus and Alertmanager;
# screenshots kept in <build>/Testing/ui/.
add_test(NAME integration.ui_in_chromium
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ui_test.sh $<TARGET_FILE:alertd>
          ${CMAKE_BINARY_DIR}/Testing/ui)
set_tests_properties(integration.ui_in_chromium PROPERTIES
  LABELS integration TIMEOUT 300 RUN_SERIAL TRUE SKIP_REGULAR_EXPRESSION "ALERTD_SKIP:")
