# relabel_fuzz: notifier::RelabelRules (validation, $-expansion, case mapping, hashes) on
# arbitrary rules and label sets, compiled directly from notifier/ (the notifier library links
# net and is not built in the fuzz configuration).
add_executable(relabel_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/relabel_fuzz.cpp
  ${ALERTD_ROOT}/notifier/relabel.cpp
  ${ALERTD_ROOT}/notifier/alertmanager_payload.cpp
  ${ALERTD_ROOT}/core/relabel_config.cpp
  ${FUZZ_LABELS_SOURCES}
  ${ALERTD_ROOT}/core/time.cpp)
target_include_directories(relabel_fuzz PRIVATE ${ALERTD_ROOT})
target_compile_options(relabel_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(relabel_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(relabel_fuzz PRIVATE PkgConfig::RE2 alertd_warnings)
