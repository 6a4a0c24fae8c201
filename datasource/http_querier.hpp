// datasource::HttpQuerier: the Prometheus-compatible instant-query client (vmalert's
// datasource/client_prom.go), on top of a net::Transport (net::HttpClient in the daemon) and the
// streaming InstantParser.
//
// Request, as vmalert sends it: POST <url>[/prometheus]/api/v1/query?<params> with an empty body
// and `Content-Type: application/json`. Params are sorted by name like Go's url.Values.Encode:
// the -datasource.url's own query args, `time` (RFC 3339, seconds), `step` (-datasource.queryStep,
// or the group interval when that is 0; dropped with -datasource.disableStepParam),
// `round_digits` (when > 0), the group `params` (which replace same-named args), and `query`.
// Headers: Content-Type, then Authorization (basic or bearer), then -datasource.headers with the
// group `headers` replacing same-named ones (case-insensitive).
//
// The response body is fed to the parser as it arrives. Errors read as vmalert's:
//   unexpected response code 500 for <url>. Response body <body>
//   error parsing prometheus metrics for <url>: <detail>
//   response error, query: <url>, errorType: <type>, error: <message>
// <url> never carries userinfo; unless show_url is set, the value of every query arg whose name
// looks secret (auth, pass, key, secret, token) is replaced by "secret". Header values never
// appear anywhere.
// Every error has a kind (core::ErrorKind): net's transport kinds (timeout, connection,
// too_large, canceled), http_status with the code for a non-200 answer, bad_response for a body
// that does not parse or a "status":"error" answer, bad_config for options. Datasource-supplied
// text (bodies, error texts) is clipped to core::kMaxErrorBody.
//
// Concurrency: the per-datasource cap on queries in flight (-datasource.maxConcurrentQueries)
// is enforced by the transport the caller builds (net::HttpClient: ClientOptions::max_concurrent);
// the TLS options (-datasource.tls*) live there too. Timeouts, retries and keep-alive are the
// transport's.
//
// Range queries (replay, build_range): POST <url>[/prometheus]/api/v1/query_range with `start`
// and `end` (RFC 3339, seconds), `step` = the group interval in whole seconds, `nocache=1`,
// round_digits and the group params as above; the answer must be a matrix.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"
#include "datasource/querier.hpp"
#include "net/transport.hpp"
#include "net/url.hpp"

namespace datasource {

struct HttpQuerierOptions {
  // -datasource.url, e.g. "http://127.0.0.1:8428" or "http://vm/select/0?extra_label=env=prod".
  std::string url;
  // -datasource.appendTypePrefix: add "/prometheus" before "/api/v1/query".
  bool append_type_prefix = false;
  // -remoteRead.disablePathAppend: the URL's path is the instant query endpoint itself
  // (nothing appended; the range endpoint is that path plus "_range").
  bool disable_path_append = false;
  // -datasource.queryStep (default 5m); 0 = use the group's evaluation interval.
  core::Duration query_step = std::chrono::minutes(5);
  // -datasource.disableStepParam.
  bool disable_step_param = false;
  // -datasource.roundDigits (> 0 adds round_digits=N).
  int round_digits = 0;
  // -datasource.headers: "Name: value^^Name2: value2".
  std::string headers;
  // -datasource.basicAuth.username / password (the caller reads -datasource.basicAuth.passwordFile).
  std::string basic_auth_username;
  std::string basic_auth_password;
  // -datasource.bearerToken (the caller reads -datasource.bearerTokenFile).
  std::string bearer_token;
  // -datasource.queryTimeout: deadline of one query (dial + send + full response).
  std::chrono::milliseconds query_timeout{30000};
  // -datasource.maxResponseSize in bytes; 0 = net::kDefaultMaxResponseBytes (64 MiB).
  size_t max_response_size = 0;
  // -datasource.maxConcurrentQueries: informational here, the transport enforces it.
  size_t max_concurrent_queries = 0;
  // -datasource.showURL: print query args with secret-looking names in errors too.
  bool show_url = false;
};

// -datasource.headers is split by net::parse_header_list ("K: v^^K2: v2").
using net::parse_header_list;

class HttpQuerierFactory final : public QuerierFactory, public RangeQuerierFactory {
 public:
  // Validates the options (URL, header list, one auth method). `client` must outlive the
  // factory and every querier it builds.
  static core::Result<std::unique_ptr<HttpQuerierFactory>> create(net::Transport& client,
                                                                  HttpQuerierOptions options);
  ~HttpQuerierFactory() override;

  /* QuerierFactory */
  std::unique_ptr<Querier> build(const QuerierParams& params) override;
  /* RangeQuerierFactory */
  std::unique_ptr<RangeQuerier> build_range(const QuerierParams& params) override;

  struct Shared;

 private:
  explicit HttpQuerierFactory(std::shared_ptr<const Shared> shared);
  std::shared_ptr<const Shared> shared_;
};

}  // namespace datasource
