# -notifier.config consul_sd_configs: two real Alertmanagers found through a fake of Consul's
# catalog and health API (Consul is not packaged), refreshed, relabeled, kept on failure.
add_test(NAME integration.notifier_config_consul_sd
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/notifier_consul_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.notifier_config_consul_sd PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
