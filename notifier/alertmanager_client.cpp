#include "notifier/alertmanager_client.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "core/strings.hpp"
#include "net/url.hpp"
#include "notifier/alertmanager_payload.hpp"

namespace notifier {
namespace {

// Sets name: value, replacing a header of the same name (case-insensitive).
void set_header(net::Headers& headers, std::string_view name, std::string_view value) {
  for (auto& [k, v] : headers) {
    if (core::iequals(k, name)) {
      v.assign(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::string(value));
}

}  // namespace

std::string alertmanager_post_url(std::string_view base) {
  base = base.substr(0, base.find('#'));
  const size_t qmark = base.find('?');
  std::string_view path = base.substr(0, qmark);
  const size_t authority = path.find("://");
  const size_t keep = authority == std::string_view::npos ? 0 : authority + 3;
  while (path.size() > keep && path.back() == '/') path.remove_suffix(1);
  std::string out(path);
  out += "/api/v2/alerts";
  if (qmark != std::string_view::npos) out.append(base.substr(qmark));
  return out;
}

AlertmanagerClient::AlertmanagerClient(net::Transport& http, AlertmanagerTarget target)
    : http_(http), target_(std::move(target)) {
  post_url_ = target_.full_url ? target_.url : alertmanager_post_url(target_.url);
  addr_ = target_.show_url ? post_url_ : net::redact_url_secrets(post_url_);
  if (!target_.basic_auth_username.empty() || !target_.basic_auth_password.empty()) {
    auth_header_ =
        "Basic " + net::base64_encode(target_.basic_auth_username + ":" + target_.basic_auth_password);
  } else if (!target_.bearer_token.empty()) {
    auth_header_ = "Bearer " + target_.bearer_token;
  }
}

void AlertmanagerClient::send(std::span<const Alert> alerts,
                              const std::vector<std::pair<std::string, std::string>>& headers,
                              SendDone done) {
  if (alerts.empty()) {
    done(std::nullopt);
    return;
  }
  const size_t count = alerts.size();
  sent_.fetch_add(count, std::memory_order_relaxed);

  net::Request req;
  req.method = "POST";
  req.url = post_url_;
  req.display_url = addr_;
  req.timeout = target_.timeout;
  req.max_response_bytes = target_.max_response_bytes;
  // Sized from the last POST's bytes per alert, so the body is allocated once.
  req.body.reserve(count * body_bytes_per_alert_);
  encode_alerts(alerts, req.body);
  body_bytes_per_alert_ = std::max<size_t>(256, req.body.size() / count + 64);
  req.headers.reserve(2 + target_.headers.size() + headers.size());
  req.headers.emplace_back("Content-Type", "application/json");
  if (!auth_header_.empty()) req.headers.emplace_back("Authorization", auth_header_);
  for (const auto& [k, v] : target_.headers) set_header(req.headers, k, v);
  for (const auto& [k, v] : headers) set_header(req.headers, k, v);

  http_.send(std::move(req), [this, count, done = std::move(done)](core::Result<net::Response> r) {
    on_response(count, std::move(r), done);
  });
}

void AlertmanagerClient::on_response(size_t count, core::Result<net::Response> r,
                                     const SendDone& done) {
  const std::string prefix = "failed to send alerts to addr \"" + addr_ + "\": ";
  if (!r) {
    // net's errors already read `Post "<url>": <cause>`, like Go's *url.Error.
    std::string msg = prefix + r.error().message;
    record_error(count, msg);
    done(core::Error{std::move(msg), r.error().kind, r.error().http_status});
    return;
  }
  if (r->status < 200 || r->status > 299) {
    std::string msg = prefix + "invalid SC " + std::to_string(r->status) + " from \"" + addr_ +
                      "\"; response body: " + core::clip(r->body);
    record_error(count, msg);
    done(core::Error{std::move(msg), core::ErrorKind::http_status, r->status});
    return;
  }
  {
    std::lock_guard lock(mu_);
    last_error_.clear();
  }
  done(std::nullopt);
}

void AlertmanagerClient::record_error(size_t count, std::string msg) {
  errors_.fetch_add(count, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  last_error_ = std::move(msg);
}

NotifierStats AlertmanagerClient::stats() const {
  NotifierStats s;
  s.sent = sent_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  s.last_error = last_error_;
  return s;
}

void BlackholeNotifier::send(std::span<const Alert> alerts,
                             const std::vector<std::pair<std::string, std::string>>& /*headers*/,
                             SendDone done) {
  sent_.fetch_add(alerts.size(), std::memory_order_relaxed);
  done(std::nullopt);
}

NotifierStats BlackholeNotifier::stats() const {
  NotifierStats s;
  s.sent = sent_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace notifier
