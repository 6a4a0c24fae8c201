# The HTTP server's options: -tls and -httpListenAddr.useProxyProtocol on two of three
# -httpListenAddr (curl over HTTPS, plain HTTP to
# the HTTPS port, -tlsMinVersion), /debug/pprof behind -pprofAuthKey, start-up errors naming
# the certificate file, -http.maxGracefulShutdownDuration, -version with the git revision.
add_test(NAME integration.server_tls_and_listeners
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/server_tls_test.sh $<TARGET_FILE:alertd>)
set_tests_properties(integration.server_tls_and_listeners PROPERTIES
  LABELS integration TIMEOUT 120)
