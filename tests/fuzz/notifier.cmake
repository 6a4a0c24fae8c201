# notifier_payload_fuzz: the Alertmanager payload encoder always writes valid JSON and UTF-8.
add_executable(notifier_payload_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/notifier_payload_fuzz.cpp
  ${ALERTD_ROOT}/notifier/alertmanager_payload.cpp
  ${FUZZ_LABELS_SOURCES}
  ${ALERTD_ROOT}/core/time.cpp)
target_include_directories(notifier_payload_fuzz PRIVATE ${ALERTD_ROOT} ${RAPIDJSON_INCLUDE_DIR})
target_compile_options(notifier_payload_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(notifier_payload_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(notifier_payload_fuzz PRIVATE alertd_warnings)
