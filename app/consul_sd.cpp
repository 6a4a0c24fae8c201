#include "app/consul_sd.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <utility>

#include <rapidjson/document.h>

#include "app/oauth2.hpp"
#include "app/secret_file.hpp"
#include "net/asio.hpp"
#include "net/http_client.hpp"
#include "net/url.hpp"

namespace app {
namespace {

core::unexpected<core::Error> bad_response(std::string msg) {
  return core::fail(std::move(msg), core::ErrorKind::bad_response);
}

// Any character outside [a-zA-Z0-9_] becomes '_' (VictoriaMetrics' SanitizeLabelName).
std::string sanitize_name(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_';
    if (!ok) c = '_';
  }
  return out;
}

std::string_view string_field(const rapidjson::Value& obj, const char* name) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

// Adds `prefix + sanitized key` = value for each string member of obj[name].
void add_map(core::Labels& labels, const rapidjson::Value& obj, const char* name,
             std::string_view prefix) {
  if (!obj.IsObject()) return;
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsObject()) return;
  for (const auto& m : it->value.GetObject()) {
    if (!m.value.IsString()) continue;
    labels.set(std::string(prefix) + sanitize_name({m.name.GetString(), m.name.GetStringLength()}),
               {m.value.GetString(), m.value.GetStringLength()});
  }
}

// Consul's HealthChecks.AggregatedStatus (as vmalert copies it).
std::string aggregated_status(const rapidjson::Value& node) {
  auto it = node.FindMember("Checks");
  if (it == node.MemberEnd() || !it->value.IsArray()) return "passing";
  bool passing = false, warning = false, critical = false, maintenance = false;
  for (const auto& check : it->value.GetArray()) {
    const std::string_view id = string_field(check, "CheckID");
    if (id == "_node_maintenance" || id.starts_with("_service_maintenance:")) {
      maintenance = true;
      continue;
    }
    const std::string_view status = string_field(check, "Status");
    if (status == "passing") {
      passing = true;
    } else if (status == "warning") {
      warning = true;
    } else if (status == "critical") {
      critical = true;
    } else {
      return "";
    }
  }
  if (maintenance) return "maintenance";
  if (critical) return "critical";
  if (warning) return "warning";
  (void)passing;
  return "passing";
}

std::string join_host_port(std::string_view host, long port) {
  std::string out;
  if (host.find(':') != std::string_view::npos) {
    out.append("[").append(host).append("]");
  } else {
    out.append(host);
  }
  return out + ":" + std::to_string(port);
}

// Unreserved characters stay, the rest is %XX (a service name in a URL path).
std::string path_escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string base_query(const config::ConsulSdConfig& c) {
  std::string q;
  auto arg = [&q](std::string_view name, std::string_view value) {
    q.append(q.empty() ? "?" : "&").append(name);
    if (!value.empty()) {
      q.push_back('=');
      net::append_query_escaped(q, value);
    }
  };
  if (!c.datacenter.empty()) arg("dc", c.datacenter);
  if (c.allow_stale) arg("stale", "");
  for (const auto& [k, v] : c.node_meta) arg("node-meta", k + ":" + v);
  if (!c.namespace_.empty()) arg("ns", c.namespace_);
  if (!c.partition.empty()) arg("partition", c.partition);
  if (!c.filter.empty()) arg("filter", c.filter);
  return q;
}

bool has_all_tags(const std::vector<std::string>& want, const rapidjson::Value& tags) {
  for (const auto& w : want) {
    bool found = false;
    if (tags.IsArray()) {
      for (const auto& t : tags.GetArray()) {
        if (t.IsString() && std::string_view(t.GetString(), t.GetStringLength()) == w) {
          found = true;
          break;
        }
      }
    }
    if (!found) return false;
  }
  return true;
}

// One discovery round's HTTP client: its own io_context run by the calling thread while a request
// is out (net::fetch_blocking's way), keep-alive within the round, and an OAuth2Transport in
// front when the entry has oauth2 (one token per round).
class BlockingClient {
 public:
  BlockingClient(const net::ClientOptions& options, std::optional<OAuth2Settings> oauth2)
      : http_(std::make_unique<net::HttpClient>(io_, options)) {
    if (oauth2) oauth2_ = std::make_unique<OAuth2Transport>(*http_, std::move(*oauth2));
  }
  ~BlockingClient() {
    oauth2_.reset();
    http_.reset();
    io_.restart();
    io_.run();  // the client's close()
  }
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  core::Result<net::Response> fetch(net::Request req) {
    std::optional<core::Result<net::Response>> out;
    net::Transport& t = oauth2_ ? static_cast<net::Transport&>(*oauth2_) : *http_;
    io_.restart();
    t.send(std::move(req), [&out](core::Result<net::Response> r) { out = std::move(r); });
    // Not run(): the idle-connection timer would keep it busy.
    while (!out && io_.run_one() != 0) {
    }
    if (!out) return core::fail("request did not complete", core::ErrorKind::canceled);
    return std::move(*out);
  }

 private:
  boost::asio::io_context io_{1};
  std::unique_ptr<net::HttpClient> http_;
  std::unique_ptr<OAuth2Transport> oauth2_;
};

core::Result<std::string> value_or_file(std::string_view what, const std::string& value,
                                        const std::string& file) {
  if (file.empty()) return value;
  return read_secret_file(what, file);
}

}  // namespace

core::Result<std::vector<std::string>> parse_consul_services(std::string_view body,
                                                            const config::ConsulSdConfig& c) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return bad_response("cannot parse Consul's service list: want a JSON object of tag lists");
  }
  std::vector<std::string> out;
  for (const auto& m : doc.GetObject()) {
    std::string name(m.name.GetString(), m.name.GetStringLength());
    if (!c.services.empty() &&
        std::find(c.services.begin(), c.services.end(), name) == c.services.end()) {
      continue;
    }
    if (!has_all_tags(c.tags, m.value)) continue;
    out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

core::Result<std::vector<config::TargetGroup>> parse_consul_service_nodes(
    std::string_view body, const config::ConsulSdConfig& c) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsArray()) {
    return bad_response("cannot parse Consul's service nodes: want a JSON array");
  }
  std::vector<config::TargetGroup> out;
  for (const auto& entry : doc.GetArray()) {
    if (!entry.IsObject()) return bad_response("cannot parse Consul's service nodes: an entry is not an object");
    auto node_it = entry.FindMember("Node");
    auto service_it = entry.FindMember("Service");
    if (node_it == entry.MemberEnd() || service_it == entry.MemberEnd() ||
        !node_it->value.IsObject() || !service_it->value.IsObject()) {
      return bad_response("cannot parse Consul's service nodes: an entry lacks Node or Service");
    }
    const auto& node = node_it->value;
    const auto& service = service_it->value;
    static const rapidjson::Value kNoTags(rapidjson::kArrayType);
    auto tags_it = service.FindMember("Tags");
    const rapidjson::Value& tags =
        tags_it != service.MemberEnd() && tags_it->value.IsArray() ? tags_it->value : kNoTags;
    if (!has_all_tags(c.tags, tags)) continue;
    long port = 0;
    if (auto p = service.FindMember("Port"); p != service.MemberEnd() && p->value.IsInt64()) {
      port = static_cast<long>(p->value.GetInt64());
    }
    const std::string_view service_address = string_field(service, "Address");
    const std::string_view node_address = string_field(node, "Address");

    config::TargetGroup g;
    g.targets.push_back(
        join_host_port(service_address.empty() ? node_address : service_address, port));
    auto& l = g.labels;
    l.set("__meta_consul_address", node_address);
    l.set("__meta_consul_dc", string_field(node, "Datacenter"));
    l.set("__meta_consul_health", aggregated_status(entry));
    l.set("__meta_consul_node", string_field(node, "Node"));
    l.set("__meta_consul_service", string_field(service, "Service"));
    l.set("__meta_consul_service_address", service_address);
    l.set("__meta_consul_service_id", string_field(service, "ID"));
    l.set("__meta_consul_service_port", std::to_string(port));
    std::string_view ns = string_field(service, "Namespace");
    if (ns.empty()) ns = c.namespace_;
    l.set("__meta_consul_namespace", ns);
    std::string_view partition = string_field(service, "Partition");
    if (partition.empty()) partition = c.partition;
    l.set("__meta_consul_partition", partition);
    std::string joined = c.tag_separator;
    for (const auto& t : tags.GetArray()) {
      if (!t.IsString()) continue;
      const std::string_view tag(t.GetString(), t.GetStringLength());
      joined.append(tag).append(c.tag_separator);
      const auto eq = tag.find('=');
      const std::string name = sanitize_name(tag.substr(0, eq));
      l.set("__meta_consul_tag_" + name,
            eq == std::string_view::npos ? std::string_view{} : tag.substr(eq + 1));
      l.set("__meta_consul_tagpresent_" + name, "true");
    }
    if (joined.size() == c.tag_separator.size()) joined += c.tag_separator;  // no tags: ",,"
    l.set("__meta_consul_tags", joined);
    add_map(l, node, "Meta", "__meta_consul_metadata_");
    add_map(l, service, "Meta", "__meta_consul_service_metadata_");
    add_map(l, node, "TaggedAddresses", "__meta_consul_tagged_address_");
    out.push_back(std::move(g));
  }
  return out;
}

std::string consul_services_path(const config::ConsulSdConfig& c) {
  return "/v1/catalog/services" + base_query(c);
}

std::string consul_service_path(const config::ConsulSdConfig& c, std::string_view name) {
  std::string path = "/v1/health/service/" + path_escape(name) + base_query(c);
  for (const auto& t : c.tags) {
    path.append(path.find('?') == std::string::npos ? "?" : "&").append("tag=");
    net::append_query_escaped(path, t);
  }
  return path;
}

core::Result<std::vector<config::TargetGroup>> consul_discover(const config::ConsulSdConfig& c,
                                                               const ConsulFetch& fetch) {
  auto list = fetch(consul_services_path(c));
  if (!list) return core::fail(list.error());
  auto names = parse_consul_services(*list, c);
  if (!names) return core::fail(names.error());
  std::vector<config::TargetGroup> out;
  for (const auto& name : *names) {
    auto body = fetch(consul_service_path(c, name));
    if (!body) return core::fail(body.error());
    auto groups = parse_consul_service_nodes(*body, c);
    if (!groups) return core::fail(groups.error().wrap("service \"" + name + "\""));
    for (auto& g : *groups) out.push_back(std::move(g));
  }
  return out;
}

core::Result<ConsulFetch> consul_http_fetch(const config::ConsulSdConfig& c) {
  const auto& http = c.http;
  std::string base = c.server;
  if (base.find("://") == std::string::npos) base = c.scheme + "://" + base;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::string prefix = c.path_prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (!prefix.empty() && prefix.front() != '/') prefix.insert(0, "/");
  base += prefix;

  net::Headers headers;
  // The token: the config's, else the environment's (as vmalert and Consul's own client).
  std::string token = c.token;
  if (!c.token_file.empty()) {
    auto t = read_secret_file("consul_sd_configs.token_file", c.token_file);
    if (!t) return core::fail(t.error());
    token = std::move(*t);
  } else if (token.empty()) {
    if (const char* f = std::getenv("CONSUL_HTTP_TOKEN_FILE"); f != nullptr && *f != '\0') {
      auto t = read_secret_file("CONSUL_HTTP_TOKEN_FILE", f);
      if (!t) return core::fail(t.error());
      token = std::move(*t);
    } else if (const char* e = std::getenv("CONSUL_HTTP_TOKEN"); e != nullptr) {
      token = e;
    }
  }
  if (!token.empty()) headers.emplace_back("X-Consul-Token", token);
  if (!c.username.empty()) {
    headers.emplace_back("Authorization",
                         "Basic " + net::base64_encode(c.username + ":" + c.password));
  }
  if (http.basic_auth) {
    auto u = value_or_file("basic_auth.username_file", http.basic_auth->username,
                           http.basic_auth->username_file);
    if (!u) return core::fail(u.error());
    auto p = value_or_file("basic_auth.password_file", http.basic_auth->password,
                           http.basic_auth->password_file);
    if (!p) return core::fail(p.error());
    headers.emplace_back("Authorization", "Basic " + net::base64_encode(*u + ":" + *p));
  }
  if (!http.bearer_token.empty() || !http.bearer_token_file.empty()) {
    auto b = value_or_file("bearer_token_file", http.bearer_token, http.bearer_token_file);
    if (!b) return core::fail(b.error());
    headers.emplace_back("Authorization", "Bearer " + *b);
  }
  if (http.authorization) {
    auto cr = value_or_file("authorization.credentials_file", http.authorization->credentials,
                            http.authorization->credentials_file);
    if (!cr) return core::fail(cr.error());
    headers.emplace_back("Authorization", http.authorization->type + " " + *cr);
  }
  for (const auto& h : http.headers) headers.push_back(h);
  std::optional<OAuth2Settings> oauth2;
  if (http.oauth2) {
    auto o = oauth2_settings(*http.oauth2);
    if (!o) return core::fail(o.error());
    oauth2 = std::move(*o);
  }
  net::ClientOptions options;
  if (http.tls_config) {
    options.tls.ca_file = http.tls_config->ca_file;
    options.tls.cert_file = http.tls_config->cert_file;
    options.tls.key_file = http.tls_config->key_file;
    options.tls.server_name = http.tls_config->server_name;
    options.tls.insecure_skip_verify = http.tls_config->insecure_skip_verify;
  }
  auto client = std::make_shared<BlockingClient>(options, std::move(oauth2));
  return ConsulFetch([base = std::move(base), headers = std::move(headers),
                      client](const std::string& path) -> core::Result<std::string> {
    net::Request req;
    req.method = "GET";
    req.url = base + path;
    req.headers = headers;
    req.timeout = std::chrono::seconds(10);
    req.max_response_bytes = size_t{64} << 20;
    auto r = client->fetch(std::move(req));
    const std::string shown = net::redact_url(base + path);
    if (!r) return core::fail(r.error().wrap("consul: GET \"" + shown + "\""));
    if (r->status != 200) {
      std::string body = r->body.substr(0, 512);
      return core::fail(core::Error{"consul: GET \"" + shown + "\": unexpected status " +
                                        std::to_string(r->status) +
                                        (body.empty() ? "" : ": " + body),
                                    core::ErrorKind::http_status, r->status});
    }
    return std::move(r->body);
  });
}

}  // namespace app
