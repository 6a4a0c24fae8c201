# Replay (backfill): one hour of recording and alerting rules from a backfilled Prometheus into
# a remote-write receiver, compared point by point with Prometheus' own evaluation.
add_test(NAME integration.replay_backfill
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/replay_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.replay_backfill PROPERTIES
  LABELS integration TIMEOUT 180 RUN_SERIAL TRUE)
