# OAuth2 client credentials for -datasource/-notifier/-remoteWrite.oauth2.* and the notifier
# config's oauth2, against a fake token endpoint and peers that record the Authorization header.
add_test(NAME integration.oauth2
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/oauth2_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.oauth2 PROPERTIES LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
