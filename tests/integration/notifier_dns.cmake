# -notifier.config dns_sd_configs: two real Alertmanagers found through SRV and A records served
# by a real dnsmasq on a loopback port (-notifier.dnsServer).
add_test(NAME integration.notifier_config_dns_sd
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/notifier_dns_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.notifier_config_dns_sd PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
