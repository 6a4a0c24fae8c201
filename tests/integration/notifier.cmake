# notifier: AlertmanagerClient against a real Alertmanager (plain and behind basic auth).
# notifier.sh owns the Alertmanager processes; the Catch2 driver sends and reads back.
add_executable(integration_notifier ${CMAKE_CURRENT_LIST_DIR}/notifier_test.cpp)
target_link_libraries(integration_notifier PRIVATE notifier net core catch_main alertd_warnings)
target_include_directories(integration_notifier PRIVATE ${RAPIDJSON_INCLUDE_DIR})
add_test(NAME "integration: notifier"
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/notifier.sh $<TARGET_FILE:integration_notifier>)
set_tests_properties("integration: notifier" PROPERTIES
  LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 120)
