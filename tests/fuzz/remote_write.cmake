# remote_write_fuzz: the remote-write encoder's bytes read back by an independent decoder.
find_package(PkgConfig REQUIRED)
pkg_check_modules(FUZZ_SNAPPY REQUIRED IMPORTED_TARGET snappy)
add_executable(remote_write_fuzz
  ${CMAKE_CURRENT_LIST_DIR}/remote_write_fuzz.cpp
  ${ALERTD_ROOT}/datasource/remote_write_wire.cpp
  ${FUZZ_LABELS_SOURCES})
target_include_directories(remote_write_fuzz PRIVATE ${ALERTD_ROOT})
target_compile_options(remote_write_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_options(remote_write_fuzz PRIVATE ${FUZZ_FLAGS})
target_link_libraries(remote_write_fuzz PRIVATE alertd_warnings PkgConfig::FUZZ_SNAPPY)
