#!/usr/bin/env bash
# The house's borders (docs/architecture.md), checked on the sources: which folder may include
# which library or which other folder's headers. Prints every offending include and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
# check DESCRIPTION INCLUDE_REGEX ALLOWED_PATH_REGEX
check() {
  local what=$1 pattern=$2 allowed=$3 hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pattern)" \
    --include='*.hpp' --include='*.cpp' --include='*.h' \
    core config templates rules datasource notifier net app 2>/dev/null |
    grep -vE "^($allowed)" || true)
  if [ -n "$hits" ]; then
    echo "border: $what" >&2
    echo "$hits" | sed 's/^/  /' >&2
    status=1
  fi
}
check "Beast/Asio only in net/ (and app/ through net/asio.hpp)" \
  'boost/(beast|asio)' 'net/'
check "net/asio.hpp only in net/ and app/" 'net/asio\.hpp' '(net|app)/'
check "net's implementations (HttpClient, HttpServer) only in app/" \
  'net/http_(client|server)\.hpp' '(net|app)/'
check "yaml-cpp only in config/" 'yaml-cpp/' 'config/'
check "RapidJSON only in datasource/, notifier/ and app/" 'rapidjson/' '(datasource|notifier|app)/'
check "nothing includes app/" 'app/' 'app/'
check "core/ sees std only" '(config|templates|rules|datasource|notifier|net|app)/' \
  '(config|templates|rules|datasource|notifier|net|app)/'
check "templates/ sees core/ only" '(config|rules|datasource|notifier|net|app)/' \
  '(core|config|rules|datasource|notifier|net|app)/'
check "rules/ sees the datasource and notifier interfaces only" \
  '(datasource/(http_querier|response_parser|remote_write)|notifier/(alertmanager|relabel)|net/)' \
  '(core|config|templates|datasource|notifier|net|app)/'
check "datasource/ and notifier/ never see each other" 'notifier/' \
  '(core|config|templates|rules|notifier|net|app)/'
check "notifier/ never sees datasource/" 'datasource/' \
  '(core|config|templates|rules|datasource|net|app)/'
check "config/ sees core/ only" '(templates|rules|datasource|notifier|net|app)/' \
  '(core|templates|rules|datasource|notifier|net|app)/'
# Not a border, but as cheap to check before a build: a Catch test whose name starts with '-'
# is read by Catch as an option when CTest runs it by name, and always fails under CTest.
if grep -rn 'TEST_CASE("-' tests/; then
  echo "check-borders: test names must not start with '-' (Catch reads them as options)" >&2
  status=1
fi
if [ "$status" = 0 ]; then echo "borders: ok" >&2; fi
exit "$status"
