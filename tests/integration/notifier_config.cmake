# -notifier.config: two real Alertmanagers found through file_sd_configs, relabeling, reload.
add_test(NAME integration.notifier_config_file_sd
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/notifier_config_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.notifier_config_file_sd PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
