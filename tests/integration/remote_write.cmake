# Remote write against real Prometheus (--web.enable-remote-write-receiver) and a fake receiver
# for faults (rw_receiver.py).
add_test(NAME integration.remote_write
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_write_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.remote_write PROPERTIES
  LABELS integration TIMEOUT 240 RUN_SERIAL TRUE)
