# A vmalert v1.93 command line starts alertd unchanged; /metrics passes `promtool check metrics`.
add_test(NAME integration.vmalert_command_line
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/vmalert_cli_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.vmalert_command_line PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
