// consul_sd_configs of -notifier.config: Consul's HTTP API -> notifier target groups, as vmalert
// (VictoriaMetrics' lib/promscrape/discovery/consul) and Prometheus discover them.
//
//   GET /v1/catalog/services        {"name": ["tag", ...], ...}: the services to look at (those
//                                   in `services`, all when empty, carrying every tag in `tags`)
//   GET /v1/health/service/<name>   [{"Node": {...}, "Service": {...}, "Checks": [...]}]: one
//                                   target per entry, as vmalert and Prometheus (the health
//                                   endpoint, not /v1/catalog/service/<name>: it also gives
//                                   the checks behind __meta_consul_health)
//
// Both carry `dc` (datacenter), `stale` (allow_stale), `node-meta`, `ns` (namespace),
// `partition` and `filter`; the second also one `tag` per configured tag. The token goes in
// Consul's `X-Consul-Token` header (token, token_file, else $CONSUL_HTTP_TOKEN_FILE or
// $CONSUL_HTTP_TOKEN, as vmalert). `username`/`password`, basic_auth, authorization,
// bearer_token, oauth2, headers and tls_config apply to the requests to Consul.
//
// The address is `<Service.Address, else Node.Address>:<Service.Port>`; meta labels are
// Prometheus' documented set plus vmalert's per-tag ones: __meta_consul_address, _dc, _health,
// _metadata_<key>, _namespace, _node, _partition, _service, _service_address, _service_id,
// _service_metadata_<key>, _service_port, _tagged_address_<key>, _tags (tags joined by
// tag_separator, with a separator at both ends), _tag_<name> (value after '=', else empty) and
// _tagpresent_<name> ("true"). Key and tag names are sanitized to [a-zA-Z0-9_].
//
// The parsing functions are pure; consul_discover does the requests through an injected fetch.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/notifier_config.hpp"
#include "core/error.hpp"

namespace app {

// The names in a /v1/catalog/services answer that `c` selects, sorted.
[[nodiscard]] core::Result<std::vector<std::string>> parse_consul_services(
    std::string_view body, const config::ConsulSdConfig& c);

// A /v1/health/service/<name> answer -> one group per entry (one target, its meta labels).
// Entries lacking a tag of `c.tags` are skipped (the server filters too; this keeps an
// older server's answer right).
[[nodiscard]] core::Result<std::vector<config::TargetGroup>> parse_consul_service_nodes(
    std::string_view body, const config::ConsulSdConfig& c);

// The request paths (with their query strings), relative to the server.
[[nodiscard]] std::string consul_services_path(const config::ConsulSdConfig& c);
[[nodiscard]] std::string consul_service_path(const config::ConsulSdConfig& c,
                                              std::string_view name);

// GETs a path (query string included) from the Consul server; the body of a 200 answer, else
// an error naming the URL and the status.
using ConsulFetch = std::function<core::Result<std::string>(const std::string& path)>;

// Every target of `c` now: the service list, then each selected service's nodes.
[[nodiscard]] core::Result<std::vector<config::TargetGroup>> consul_discover(
    const config::ConsulSdConfig& c, const ConsulFetch& fetch);

// A fetch with `c`'s server, scheme, path_prefix, token and HTTP client config (secret files
// read here), on an HTTP client of its own run by the calling thread (keep-alive and one OAuth2
// token for as long as the fetch lives: one discovery round). Blocking: call it off the loop.
[[nodiscard]] core::Result<ConsulFetch> consul_http_fetch(const config::ConsulSdConfig& c);

}  // namespace app
