#include "notifier/alertmanager_client.hpp"

#include <cctype>
#include <string_view>
#include <utility>

#include "notifier/alertmanager_payload.hpp"

namespace notifier {
namespace {

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << 16) |
                       (static_cast<uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8) |
                       static_cast<uint32_t>(static_cast<unsigned char>(in[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Sets name: value, replacing a header of the same name (case-insensitive).
void set_header(net::Headers& headers, std::string_view name, std::string_view value) {
  for (auto& [k, v] : headers) {
    if (iequals(k, name)) {
      v.assign(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::string(value));
}

}  // namespace

AlertmanagerClient::AlertmanagerClient(net::Transport& http, AlertmanagerTarget target)
    : http_(http), target_(std::move(target)) {
  addr_ = target_.url;
  while (!addr_.empty() && addr_.back() == '/') addr_.pop_back();
  addr_ += "/api/v2/alerts";
  if (!target_.basic_auth_username.empty() || !target_.basic_auth_password.empty()) {
    auth_header_ = "Basic " + base64(target_.basic_auth_username + ":" + target_.basic_auth_password);
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
  req.url = addr_;
  req.timeout = target_.timeout;
  req.max_response_bytes = target_.max_response_bytes;
  req.body.reserve(count * 512);
  encode_alerts(alerts, req.body);
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
    done(core::Error{std::move(msg)});
    return;
  }
  if (r->status < 200 || r->status > 299) {
    std::string msg = prefix + "invalid SC " + std::to_string(r->status) + " from \"" + addr_ +
                      "\"; response body: " + r->body;
    record_error(count, msg);
    done(core::Error{std::move(msg)});
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
