# templates_fuzz: the Go text/template parser and evaluator (templates/),
# compiled directly from templates/ (libraries are not built in the fuzz configuration).
add_executable(templates_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/templates_fuzz.cpp
  ${ALERTD_ROOT}/templates/template.cpp
  ${ALERTD_ROOT}/templates/parse.cpp
  ${ALERTD_ROOT}/templates/exec.cpp
  ${ALERTD_ROOT}/templates/funcs.cpp
  ${ALERTD_ROOT}/templates/go_fmt.cpp
  ${FUZZ_LABELS_SOURCES}
  ${ALERTD_ROOT}/core/duration.cpp
  ${ALERTD_ROOT}/core/limit_hits.cpp
  ${ALERTD_ROOT}/core/time.cpp)
target_include_directories(templates_fuzz PRIVATE ${ALERTD_ROOT})
target_compile_options(templates_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(templates_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(templates_fuzz PRIVATE PkgConfig::RE2 alertd_warnings)
