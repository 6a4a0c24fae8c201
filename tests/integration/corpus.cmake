# -dryRun and the daemon agree on every file of the shared real-world rule corpus.
add_test(NAME integration.corpus_dry_run_matches_daemon
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/corpus_test.sh $<TARGET_FILE:alertd>
          ${ALERTD_SHARED_DIR}/corpus/rules)
set_tests_properties(integration.corpus_dry_run_matches_daemon PROPERTIES
  LABELS "integration;shared" TIMEOUT 600 SKIP_REGULAR_EXPRESSION "ALERTD_SKIP:")
