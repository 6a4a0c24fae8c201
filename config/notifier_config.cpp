#include "config/notifier_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/duration.hpp"
#include "core/hash.hpp"
#include "core/strings.hpp"

namespace config {
namespace {

using Entry = std::pair<YAML::Node, YAML::Node>;

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

std::string position(const std::string& file, const YAML::Mark& m) {
  if (m.is_null() || m.line < 0) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}


// Shared YAML reading: fields of a map (merge keys resolved, duplicates and unknown fields
// reported), typed scalars, positions. Every problem becomes one error; parsing goes on.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void error(const YAML::Mark& m, std::string_view where, std::string_view what) {
    std::string msg = position(file_, m) + ": ";
    if (!where.empty()) msg.append(where).append(": ");
    msg.append(what);
    errors_.push_back(Error{m.is_null() ? 0 : m.line, m.is_null() ? 0 : m.column, errors_.size(),
                            std::move(msg)});
  }

  // The map's entries: explicit keys in order, then keys merged with `<<` that were not given.
  std::vector<Entry> entries(const YAML::Node& map, std::string_view where, int depth = 0) {
    std::vector<Entry> out;
    std::vector<Entry> merged;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (key.IsScalar() && key.Scalar() == "<<" && key.Tag() != "tag:yaml.org,2002:str") {
        if (depth >= 8) {
          error(key.Mark(), where, "merge keys nested too deeply");
          continue;
        }
        auto add = [&](const YAML::Node& m) {
          if (!m.IsMap()) {
            error(m.Mark(), where, "map merge requires map or sequence of maps as the value");
            return;
          }
          for (auto& e : entries(m, where, depth + 1)) merged.push_back(e);
        };
        if (value.IsSequence()) {
          for (const auto& m : value) add(m);
        } else {
          add(value);
        }
        continue;
      }
      if (!key.IsScalar()) {
        error(key.Mark(), where, "field names must be strings");
        continue;
      }
      if (!seen.insert(key.Scalar()).second) {
        error(key.Mark(), where, "field " + quote(key.Scalar()) + " is set twice");
        continue;
      }
      out.emplace_back(key, value);
    }
    for (auto& e : merged) {
      if (seen.insert(e.first.Scalar()).second) out.push_back(e);
    }
    return out;
  }

  void unknown(const YAML::Node& key, std::string_view where) {
    error(key.Mark(), where, "unknown field " + quote(key.Scalar()));
  }

  bool expect_map(const YAML::Node& v, std::string_view where) {
    if (v.IsMap()) return true;
    error(v.Mark(), where, "expected a map");
    return false;
  }

  std::optional<std::string> str(const YAML::Node& v, std::string_view where,
                                 std::string_view field) {
    if (v.IsNull()) return std::string{};
    if (v.IsScalar()) return v.Scalar();
    error(v.Mark(), where,
          "field " + quote(field) + ": expected a string, got a " + (v.IsMap() ? "map" : "list"));
    return std::nullopt;
  }

  void str_into(const YAML::Node& v, std::string_view where, std::string_view field,
                std::string& out) {
    if (auto s = str(v, where, field)) out = std::move(*s);
  }

  std::vector<std::string> strings(const YAML::Node& v, std::string_view where,
                                   std::string_view field) {
    std::vector<std::string> out;
    if (v.IsNull()) return out;
    if (!v.IsSequence()) {
      error(v.Mark(), where, "field " + quote(field) + ": expected a list of strings");
      return out;
    }
    for (const auto& item : v) {
      if (auto s = str(item, where, field)) out.push_back(std::move(*s));
    }
    return out;
  }

  std::vector<std::pair<std::string, std::string>> string_map(const YAML::Node& v,
                                                              std::string_view where,
                                                              std::string_view field) {
    std::map<std::string, std::string> sorted;
    if (v.IsNull()) return {};
    if (!v.IsMap()) {
      error(v.Mark(), where, "field " + quote(field) + ": expected a map of strings");
      return {};
    }
    for (const auto& [k, val] : entries(v, where)) {
      if (auto s = str(val, where, std::string(field) + "." + k.Scalar())) {
        sorted[k.Scalar()] = std::move(*s);
      }
    }
    return {sorted.begin(), sorted.end()};
  }

  std::optional<bool> boolean(const YAML::Node& v, std::string_view where,
                              std::string_view field) {
    auto s = str(v, where, field);
    if (!s) return std::nullopt;
    static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                        "on",   "On",   "ON",   "y",   "Y"};
    static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "NO",
                                         "off",   "Off",   "OFF",   "n",  "N"};
    for (const char* t : kTrue) {
      if (*s == t) return true;
    }
    for (const char* f : kFalse) {
      if (*s == f) return false;
    }
    error(v.Mark(), where, "field " + quote(field) + ": cannot parse " + quote(*s) + " as a bool");
    return std::nullopt;
  }

  template <class Int>
  std::optional<Int> integer(const YAML::Node& v, std::string_view where, std::string_view field) {
    auto s = str(v, where, field);
    if (!s) return std::nullopt;
    std::string_view t = *s;
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    Int value{};
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (t.empty() || ec != std::errc{} || p != t.data() + t.size()) {
      error(v.Mark(), where,
            "field " + quote(field) + ": cannot parse " + quote(*s) + " as an integer");
      return std::nullopt;
    }
    return value;
  }

  std::optional<core::Duration> duration(const YAML::Node& v, std::string_view where,
                                         std::string_view field) {
    auto s = str(v, where, field);
    if (!s || s->empty()) return std::nullopt;
    auto d = core::parse_duration(*s);
    if (!d) {
      error(v.Mark(), where, "field " + quote(field) + ": " + d.error().message);
      return std::nullopt;
    }
    return *d;
  }

  // Errors in file order.
  std::vector<core::Error> take_errors() {
    std::stable_sort(errors_.begin(), errors_.end(), [](const Error& a, const Error& b) {
      if (a.line != b.line) return a.line < b.line;
      if (a.column != b.column) return a.column < b.column;
      return a.seq < b.seq;
    });
    std::vector<core::Error> out;
    out.reserve(errors_.size());
    for (auto& e : errors_) out.emplace_back(std::move(e.message), core::ErrorKind::bad_config);
    errors_.clear();
    return out;
  }

  [[nodiscard]] bool has_errors() const { return !errors_.empty(); }

 protected:
  struct Error {
    int line;
    int column;
    size_t seq;
    std::string message;
  };
  std::string file_;
  std::vector<Error> errors_;
};

class NotifierConfigParser : public Reader {
 public:
  NotifierConfigParser(const std::string& file, const NotifierConfigOptions& options)
      : Reader(file), options_(options) {
    const std::filesystem::path parent = std::filesystem::path(file).parent_path();
    dir_ = parent.string();
  }

  NotifierConfigResult parse(std::string_view raw) {
    NotifierConfigResult result;
    const std::string text = expand_env(raw, options_.env);
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      result.errors.emplace_back(position(file_, e.mark) + ": cannot parse YAML: " + e.msg,
                                 core::ErrorKind::bad_config);
      return result;
    }
    NotifierConfig cfg;
    cfg.file = file_;
    core::Fnv1a64 h;
    h.add(text);
    cfg.checksum = h.value();
    if (root.IsDefined() && !root.IsNull()) {
      if (expect_map(root, "")) parse_top(root, cfg);
    }
    result.errors = take_errors();
    if (result.errors.empty()) result.config = std::move(cfg);
    return result;
  }

 private:
  // A relative path is relative to the config file's directory.
  std::string resolve(std::string path) const {
    if (path.empty() || dir_.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (std::filesystem::path(dir_) / path).string();
  }

  void parse_top(const YAML::Node& root, NotifierConfig& cfg) {
    YAML::Mark scheme_mark;
    for (const auto& [k, v] : entries(root, "")) {
      const std::string& key = k.Scalar();
      if (key == "scheme") {
        str_into(v, "", key, cfg.scheme);
        scheme_mark = v.Mark();
      } else if (key == "path_prefix") {
        str_into(v, "", key, cfg.path_prefix);
      } else if (key == "timeout") {
        if (auto d = duration(v, "", key)) {
          if (*d < core::Duration::zero()) {
            error(v.Mark(), "", "field \"timeout\": must not be negative");
          } else if (*d > core::Duration::zero()) {
            cfg.timeout = *d;  // 0 means the default, as in vmalert
          }
        }
      } else if (key == "static_configs") {
        each(v, key, [&](const YAML::Node& n, const std::string& where) {
          cfg.static_configs.push_back(parse_static(n, where));
        });
      } else if (key == "file_sd_configs") {
        each(v, key, [&](const YAML::Node& n, const std::string& where) {
          cfg.file_sd_configs.push_back(parse_file_sd_config(n, where));
        });
      } else if (key == "dns_sd_configs") {
        each(v, key, [&](const YAML::Node& n, const std::string& where) {
          cfg.dns_sd_configs.push_back(parse_dns(n, where));
        });
      } else if (key == "consul_sd_configs") {
        each(v, key, [&](const YAML::Node& n, const std::string& where) {
          cfg.consul_sd_configs.push_back(parse_consul(n, where));
        });
      } else if (key == "relabel_configs") {
        cfg.relabel_configs = relabel_list(v, key);
      } else if (key == "alert_relabel_configs") {
        cfg.alert_relabel_configs = relabel_list(v, key);
      } else if (!http_field(k, v, "", cfg.http)) {
        unknown(k, "");
      }
    }
    if (cfg.scheme != "http" && cfg.scheme != "https") {
      error(scheme_mark, "", "field \"scheme\": unsupported scheme " + quote(cfg.scheme) +
                                 "; want http or https");
    }
    validate_http(cfg.http, root.Mark(), "");
  }

  template <class F>
  void each(const YAML::Node& v, const std::string& field, F&& parse_one) {
    if (v.IsNull()) return;
    if (!v.IsSequence()) {
      error(v.Mark(), "", "field " + quote(field) + ": expected a list");
      return;
    }
    size_t i = 0;
    for (const auto& n : v) {
      const std::string where = field + "[" + std::to_string(i++) + "]";
      if (!expect_map(n, where)) continue;
      parse_one(n, where);
    }
  }

  SourcePos pos_of(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return SourcePos{file_, 0, 0};
    return SourcePos{file_, m.line + 1, m.column + 1};
  }

  StaticConfig parse_static(const YAML::Node& n, const std::string& where) {
    StaticConfig sc;
    sc.pos = pos_of(n);
    for (const auto& [k, v] : entries(n, where)) {
      const std::string& key = k.Scalar();
      if (key == "targets") {
        sc.targets = strings(v, where, key);
        for (const auto& t : sc.targets) {
          if (t.empty()) error(v.Mark(), where, "field \"targets\": empty target");
        }
      } else if (key == "alert_relabel_configs") {
        sc.alert_relabel_configs = relabel_list(v, where + ".alert_relabel_configs");
      } else if (!http_field(k, v, where, sc.http)) {
        unknown(k, where);
      }
    }
    validate_http(sc.http, n.Mark(), where);
    return sc;
  }

  FileSdConfig parse_file_sd_config(const YAML::Node& n, const std::string& where) {
    FileSdConfig fc;
    fc.pos = pos_of(n);
    YAML::Mark files_mark = n.Mark();
    for (const auto& [k, v] : entries(n, where)) {
      const std::string& key = k.Scalar();
      if (key == "files") {
        files_mark = v.Mark();
        for (auto& f : strings(v, where, key)) {
          if (!ends_with(f, ".json") && !ends_with(f, ".yml") && !ends_with(f, ".yaml")) {
            error(v.Mark(), where,
                  "path name " + quote(f) + " is not valid for file discovery (want .json, "
                  ".yml or .yaml)");
          }
          fc.files.push_back(resolve(std::move(f)));
        }
      } else if (key == "refresh_interval") {
        if (auto d = duration(v, where, key)) {
          if (*d <= core::Duration::zero()) {
            error(v.Mark(), where, "field \"refresh_interval\": must be positive");
          } else {
            fc.refresh_interval = *d;
          }
        }
      } else if (key == "alert_relabel_configs") {
        fc.alert_relabel_configs = relabel_list(v, where + ".alert_relabel_configs");
      } else {
        unknown(k, where);
      }
    }
    if (fc.files.empty()) error(files_mark, where, "file service discovery config must contain at least one path name");
    return fc;
  }

  DnsSdConfig parse_dns(const YAML::Node& n, const std::string& where) {
    DnsSdConfig dc;
    dc.pos = pos_of(n);
    YAML::Mark names_mark = n.Mark();
    YAML::Mark type_mark = n.Mark();
    for (const auto& [k, v] : entries(n, where)) {
      const std::string& key = k.Scalar();
      if (key == "names") {
        names_mark = v.Mark();
        dc.names = strings(v, where, key);
      } else if (key == "type") {
        type_mark = v.Mark();
        auto s = str(v, where, key);
        if (!s) continue;
        const std::string_view t = *s;
        if (t.empty() || core::iequals(t, "SRV")) {
          dc.type = DnsRecordType::srv;
        } else if (core::iequals(t, "A")) {
          dc.type = DnsRecordType::a;
        } else if (core::iequals(t, "AAAA")) {
          dc.type = DnsRecordType::aaaa;
        } else if (core::iequals(t, "MX")) {
          dc.type = DnsRecordType::mx;
        } else {
          error(v.Mark(), where, "invalid DNS-SD records type " + quote(*s) +
                                     "; want SRV, A, AAAA or MX");
        }
      } else if (key == "port") {
        if (auto p = integer<int>(v, where, key)) {
          if (*p < 1 || *p > 65535) {
            error(v.Mark(), where, "field \"port\": " + std::to_string(*p) + " is out of range 1..65535");
          } else {
            dc.port = *p;
          }
        }
      } else if (key == "refresh_interval") {
        if (auto d = duration(v, where, key)) {
          if (*d <= core::Duration::zero()) {
            error(v.Mark(), where, "field \"refresh_interval\": must be positive");
          } else {
            dc.refresh_interval = *d;
          }
        }
      } else if (key == "alert_relabel_configs") {
        dc.alert_relabel_configs = relabel_list(v, where + ".alert_relabel_configs");
      } else {
        unknown(k, where);
      }
    }
    if (dc.names.empty()) error(names_mark, where, "DNS-SD config must contain at least one SRV record name");
    for (const auto& name : dc.names) {
      if (name.empty()) error(names_mark, where, "field \"names\": empty name");
    }
    // MX defaults to port 25, as in vmalert.
    if ((dc.type == DnsRecordType::a || dc.type == DnsRecordType::aaaa) && !dc.port) {
      error(type_mark, where,
            "a port is required in DNS-SD configs for all record types except SRV and MX");
    }
    return dc;
  }

  ConsulSdConfig parse_consul(const YAML::Node& n, const std::string& where) {
    ConsulSdConfig cc;
    cc.pos = pos_of(n);
    YAML::Mark scheme_mark = n.Mark();
    for (const auto& [k, v] : entries(n, where)) {
      const std::string& key = k.Scalar();
      if (key == "server") {
        str_into(v, where, key, cc.server);
      } else if (key == "token") {
        str_into(v, where, key, cc.token);
      } else if (key == "token_file") {
        if (auto s = str(v, where, key)) cc.token_file = resolve(std::move(*s));
      } else if (key == "datacenter") {
        str_into(v, where, key, cc.datacenter);
      } else if (key == "namespace") {
        str_into(v, where, key, cc.namespace_);
      } else if (key == "partition") {
        str_into(v, where, key, cc.partition);
      } else if (key == "scheme") {
        scheme_mark = v.Mark();
        str_into(v, where, key, cc.scheme);
      } else if (key == "path_prefix") {
        str_into(v, where, key, cc.path_prefix);
      } else if (key == "services") {
        cc.services = strings(v, where, key);
      } else if (key == "tags") {
        cc.tags = strings(v, where, key);
      } else if (key == "node_meta") {
        cc.node_meta = string_map(v, where, key);
      } else if (key == "tag_separator") {
        str_into(v, where, key, cc.tag_separator);
      } else if (key == "allow_stale") {
        if (auto b = boolean(v, where, key)) cc.allow_stale = *b;
      } else if (key == "filter") {
        str_into(v, where, key, cc.filter);
      } else if (key == "username") {
        str_into(v, where, key, cc.username);
      } else if (key == "password") {
        str_into(v, where, key, cc.password);
      } else if (key == "proxy_url") {
        str_into(v, where, key, cc.proxy_url);
      } else if (key == "refresh_interval") {
        if (auto d = duration(v, where, key)) {
          if (*d <= core::Duration::zero()) {
            error(v.Mark(), where, "field \"refresh_interval\": must be positive");
          } else {
            cc.refresh_interval = *d;
          }
        }
      } else if (key == "alert_relabel_configs") {
        cc.alert_relabel_configs = relabel_list(v, where + ".alert_relabel_configs");
      } else if (!http_field(k, v, where, cc.http)) {
        unknown(k, where);
      }
    }
    if (cc.server.empty()) error(n.Mark(), where, "consul SD configuration requires a server address");
    if (cc.scheme != "http" && cc.scheme != "https") {
      error(scheme_mark, where, "field \"scheme\": unsupported scheme " + quote(cc.scheme) +
                                    "; want http or https");
    }
    if (!cc.username.empty() && cc.http.basic_auth) {
      error(n.Mark(), where, "at most one of username/password and basic_auth must be configured");
    }
    if (!cc.token.empty() && !cc.token_file.empty()) {
      error(n.Mark(), where, "at most one of token and token_file must be configured");
    }
    validate_http(cc.http, n.Mark(), where);
    return cc;
  }

  // The promauth.HTTPClientConfig fields; false when `key` is not one of them.
  bool http_field(const YAML::Node& k, const YAML::Node& v, const std::string& where,
                  HttpClientConfig& http) {
    const std::string& key = k.Scalar();
    const std::string sub = where.empty() ? key : where + "." + key;
    if (key == "basic_auth") {
      BasicAuthConfig ba;
      if (!v.IsNull() && expect_map(v, sub)) {
        for (const auto& [fk, fv] : entries(v, sub)) {
          const std::string& f = fk.Scalar();
          if (f == "username") {
            str_into(fv, sub, f, ba.username);
          } else if (f == "username_file") {
            if (auto s = str(fv, sub, f)) ba.username_file = resolve(std::move(*s));
          } else if (f == "password") {
            str_into(fv, sub, f, ba.password);
          } else if (f == "password_file") {
            if (auto s = str(fv, sub, f)) ba.password_file = resolve(std::move(*s));
          } else {
            unknown(fk, sub);
          }
        }
        if (!ba.password.empty() && !ba.password_file.empty()) {
          error(v.Mark(), sub, "at most one of password and password_file must be configured");
        }
        if (!ba.username.empty() && !ba.username_file.empty()) {
          error(v.Mark(), sub, "at most one of username and username_file must be configured");
        }
      }
      http.basic_auth = std::move(ba);
    } else if (key == "authorization") {
      AuthorizationConfig az;
      if (!v.IsNull() && expect_map(v, sub)) {
        for (const auto& [fk, fv] : entries(v, sub)) {
          const std::string& f = fk.Scalar();
          if (f == "type") {
            str_into(fv, sub, f, az.type);
            if (az.type.empty()) az.type = "Bearer";
          } else if (f == "credentials") {
            str_into(fv, sub, f, az.credentials);
          } else if (f == "credentials_file") {
            if (auto s = str(fv, sub, f)) az.credentials_file = resolve(std::move(*s));
          } else {
            unknown(fk, sub);
          }
        }
        if (!az.credentials.empty() && !az.credentials_file.empty()) {
          error(v.Mark(), sub,
                "at most one of credentials and credentials_file must be configured");
        }
        if (core::iequals(az.type, "basic")) {
          error(v.Mark(), sub,
                "authorization type cannot be set to \"basic\", use \"basic_auth\" instead");
        }
      }
      http.authorization = std::move(az);
    } else if (key == "bearer_token") {
      str_into(v, where, key, http.bearer_token);
    } else if (key == "bearer_token_file") {
      if (auto s = str(v, where, key)) http.bearer_token_file = resolve(std::move(*s));
    } else if (key == "tls_config") {
      http.tls_config = parse_tls(v, sub);
    } else if (key == "headers") {
      if (v.IsNull()) return true;
      if (!v.IsSequence()) {
        error(v.Mark(), where, "field \"headers\": expected a list of \"Name: value\"");
        return true;
      }
      for (const auto& item : v) {
        auto s = str(item, where, key);
        if (!s) continue;
        const size_t colon = s->find(':');
        if (colon == std::string::npos || colon == 0) {
          error(item.Mark(), where, "field \"headers\": missing ':' in header " + quote(*s) +
                                        "; want \"Name: value\"");
          continue;
        }
        auto trim = [](std::string_view t) {
          while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
          while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
          return std::string(t);
        };
        http.headers.emplace_back(trim(std::string_view(*s).substr(0, colon)),
                                  trim(std::string_view(*s).substr(colon + 1)));
      }
    } else if (key == "oauth2") {
      http.oauth2 = parse_oauth2(v, sub);
    } else {
      return false;
    }
    return true;
  }

  TlsConfig parse_tls(const YAML::Node& v, const std::string& where) {
    TlsConfig tls;
    if (v.IsNull() || !expect_map(v, where)) return tls;
    for (const auto& [k, fv] : entries(v, where)) {
      const std::string& f = k.Scalar();
      if (f == "ca_file") {
        if (auto s = str(fv, where, f)) tls.ca_file = resolve(std::move(*s));
      } else if (f == "cert_file") {
        if (auto s = str(fv, where, f)) tls.cert_file = resolve(std::move(*s));
      } else if (f == "key_file") {
        if (auto s = str(fv, where, f)) tls.key_file = resolve(std::move(*s));
      } else if (f == "server_name") {
        str_into(fv, where, f, tls.server_name);
      } else if (f == "insecure_skip_verify") {
        if (auto b = boolean(fv, where, f)) tls.insecure_skip_verify = *b;
      } else if (f == "min_version") {
        str_into(fv, where, f, tls.min_version);
        const std::string_view m = tls.min_version;
        if (!m.empty() && !core::iequals(m, "TLS10") && !core::iequals(m, "TLS11") &&
            !core::iequals(m, "TLS12") && !core::iequals(m, "TLS13")) {
          error(fv.Mark(), where, "field \"min_version\": unknown TLS version " +
                                      quote(tls.min_version) + "; want TLS10, TLS11, TLS12 or TLS13");
        }
      } else {
        unknown(k, where);
      }
    }
    if (tls.cert_file.empty() != tls.key_file.empty()) {
      error(v.Mark(), where, "cert_file and key_file must be set together");
    }
    return tls;
  }

  OAuth2Config parse_oauth2(const YAML::Node& v, const std::string& where) {
    OAuth2Config o;
    if (v.IsNull() || !expect_map(v, where)) return o;
    for (const auto& [k, fv] : entries(v, where)) {
      const std::string& f = k.Scalar();
      if (f == "client_id") {
        str_into(fv, where, f, o.client_id);
      } else if (f == "client_secret") {
        str_into(fv, where, f, o.client_secret);
      } else if (f == "client_secret_file") {
        if (auto s = str(fv, where, f)) o.client_secret_file = resolve(std::move(*s));
      } else if (f == "scopes") {
        o.scopes = strings(fv, where, f);
      } else if (f == "token_url") {
        str_into(fv, where, f, o.token_url);
      } else if (f == "endpoint_params") {
        o.endpoint_params = string_map(fv, where, f);
      } else if (f == "tls_config") {
        o.tls_config = parse_tls(fv, where + ".tls_config");
      } else if (f == "proxy_url") {
        str_into(fv, where, f, o.proxy_url);
      } else {
        unknown(k, where);
      }
    }
    if (o.token_url.empty()) error(v.Mark(), where, "missing `token_url` option");
    if (o.client_secret.empty() == o.client_secret_file.empty()) {
      error(v.Mark(), where, "exactly one of client_secret and client_secret_file must be set");
    }
    return o;
  }

  // Prometheus' HTTPClientConfig.Validate: one way to authenticate.
  void validate_http(const HttpClientConfig& h, const YAML::Mark& m, const std::string& where) {
    if (!h.bearer_token.empty() && !h.bearer_token_file.empty()) {
      error(m, where, "at most one of bearer_token & bearer_token_file must be configured");
    }
    const int ways = (h.basic_auth ? 1 : 0) + (h.authorization ? 1 : 0) + (h.oauth2 ? 1 : 0) +
                     (!h.bearer_token.empty() || !h.bearer_token_file.empty() ? 1 : 0);
    if (ways > 1) {
      error(m, where,
            "at most one of basic_auth, authorization, oauth2, bearer_token & bearer_token_file "
            "must be configured");
    }
  }

  std::vector<core::RelabelConfig> relabel_list(const YAML::Node& v, const std::string& where) {
    std::vector<core::RelabelConfig> out;
    if (v.IsNull()) return out;
    if (!v.IsSequence()) {
      error(v.Mark(), where, "expected a list of relabel configs");
      return out;
    }
    size_t i = 0;
    for (const auto& n : v) {
      const std::string sub = where + "[" + std::to_string(i++) + "]";
      if (!expect_map(n, sub)) continue;
      if (auto rc = parse_relabel(n, sub)) out.push_back(std::move(*rc));
    }
    return out;
  }

  std::optional<core::RelabelConfig> parse_relabel(const YAML::Node& n, const std::string& where) {
    core::RelabelConfig rc;
    const size_t errors_before = errors_.size();
    bool ok = true;
    YAML::Mark regex_mark = n.Mark();
    for (const auto& [k, v] : entries(n, where)) {
      const std::string& key = k.Scalar();
      if (key == "source_labels") {
        rc.source_labels_set = !v.IsNull();  // `source_labels:` alone is unset, as in Go
        if (v.IsScalar()) {  // a single name, as vmalert also accepts
          rc.source_labels.push_back(v.Scalar());
        } else {
          rc.source_labels = strings(v, where, key);
        }
      } else if (key == "separator") {
        str_into(v, where, key, rc.separator);
      } else if (key == "regex") {
        regex_mark = v.Mark();
        if (v.IsSequence()) {  // vmalert: a list of alternatives
          std::string joined;
          for (const auto& s : strings(v, where, key)) {
            if (!joined.empty()) joined += '|';
            joined += s;
          }
          rc.regex = std::move(joined);
        } else if (auto s = str(v, where, key)) {
          rc.regex = std::move(*s);
        }
      } else if (key == "modulus") {
        if (auto m = integer<uint64_t>(v, where, key)) rc.modulus = *m;
      } else if (key == "target_label") {
        str_into(v, where, key, rc.target_label);
      } else if (key == "replacement") {
        str_into(v, where, key, rc.replacement);
      } else if (key == "action") {
        auto s = str(v, where, key);
        if (!s) continue;
        if (s->empty()) {
          error(v.Mark(), where, "relabel action cannot be empty");
          ok = false;
        } else if (auto a = core::parse_relabel_action(*s)) {
          rc.action = *a;
        } else {
          error(v.Mark(), where, "unknown relabel action " + quote(*s));
          ok = false;
        }
      } else {
        unknown(k, where);
        ok = false;
      }
    }
    // A field that did not parse is reported once, not again as a validation error.
    if (!ok || errors_.size() != errors_before) return std::nullopt;
    if (auto err = core::validate_relabel_config(rc)) {
      error(n.Mark(), where, err->message);
      return std::nullopt;
    }
    if (options_.check_relabel) {
      if (auto err = options_.check_relabel(rc)) {
        error(rc.regex ? regex_mark : n.Mark(), where, err->message);
        return std::nullopt;
      }
    }
    return rc;
  }

  const NotifierConfigOptions& options_;
  std::string dir_;
};

core::Result<std::string> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return core::fail(path + ": cannot read: is a directory", core::ErrorKind::io);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string why = std::filesystem::exists(path, ec) ? "permission denied"
                                                               : "no such file";
    return core::fail(path + ": cannot read: " + why, core::ErrorKind::io);
  }
  std::string out;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    out.append(buf, static_cast<size_t>(in.gcount()));
    if (out.size() > kMaxNotifierConfigBytes) {
      return core::fail(path + ": cannot read: larger than " +
                            std::to_string(kMaxNotifierConfigBytes >> 20) + " MiB",
                        core::ErrorKind::too_large);
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(DnsRecordType t) {
  switch (t) {
    case DnsRecordType::srv: return "SRV";
    case DnsRecordType::a: return "A";
    case DnsRecordType::aaaa: return "AAAA";
    case DnsRecordType::mx: return "MX";
  }
  return "SRV";
}

NotifierConfigResult parse_notifier_config_text(std::string_view text, const std::string& file,
                                                const NotifierConfigOptions& options) {
  return NotifierConfigParser(file, options).parse(text);
}

NotifierConfigResult load_notifier_config(const std::string& path,
                                          const NotifierConfigOptions& options) {
  auto text = read_file(path);
  if (!text) {
    NotifierConfigResult r;
    r.errors.push_back(text.error());
    return r;
  }
  return parse_notifier_config_text(*text, path, options);
}

core::Result<std::vector<TargetGroup>> parse_file_sd(std::string_view text,
                                                     const std::string& file) {
  const bool json = ends_with(file, ".json");
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return core::fail(position(file, e.mark) + ": cannot parse " + (json ? "JSON" : "YAML") +
                          ": " + e.msg,
                      core::ErrorKind::bad_config);
  }
  std::vector<TargetGroup> out;
  if (!root.IsDefined() || root.IsNull()) return out;
  Reader r(file);
  if (!root.IsSequence()) {
    r.error(root.Mark(), "", "expected a list of {targets, labels}");
    return core::fail(r.take_errors().front());
  }
  size_t i = 0;
  for (const auto& n : root) {
    const std::string where = "[" + std::to_string(i++) + "]";
    if (!r.expect_map(n, where)) continue;
    TargetGroup g;
    for (const auto& [k, v] : r.entries(n, where)) {
      const std::string& key = k.Scalar();
      if (key == "targets") {
        g.targets = r.strings(v, where, key);
      } else if (key == "labels") {
        for (const auto& [name, value] : r.string_map(v, where, key)) {
          if (!core::is_valid_label_name(name)) {
            r.error(v.Mark(), where, quote(name) + " is not a valid label name");
            continue;
          }
          g.labels.set(name, value);
        }
      } else if (!json) {
        // Prometheus decodes YAML strictly and JSON leniently.
        r.unknown(k, where);
      }
    }
    out.push_back(std::move(g));
  }
  if (r.has_errors()) return core::fail(r.take_errors().front());
  return out;
}

core::Result<std::vector<TargetGroup>> load_file_sd(const std::string& path) {
  auto text = read_file(path);
  if (!text) return core::fail(text.error());
  return parse_file_sd(*text, path);
}

}  // namespace config
