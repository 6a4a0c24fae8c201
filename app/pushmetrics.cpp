#include "app/pushmetrics.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "net/gzip.hpp"
#include "net/url.hpp"

namespace app {

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c == '.';
}
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

bool is_ident(std::string_view s) {
  if (s.empty() || !is_ident_start(s.front())) return false;
  return std::all_of(s.begin(), s.end(), is_ident_char);
}

std::string_view trim_blanks(std::string_view s) {
  const auto blank = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
  };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view lower) {
  return a.size() == lower.size() &&
         std::equal(a.begin(), a.end(), lower.begin(), [](char x, char y) {
           return static_cast<char>(std::tolower(static_cast<unsigned char>(x))) == y;
         });
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

std::string check_extra_labels(std::string_view s) {
  if (s.empty()) return "empty label; want name=\"value\"";
  for (;;) {
    const auto eq = s.find('=');
    if (eq == std::string_view::npos) return "missing `=` after " + quoted(s);
    const std::string_view name = s.substr(0, eq);
    s.remove_prefix(eq + 1);
    if (!is_ident(name)) return "invalid label name " + quoted(name);
    if (s.empty() || s.front() != '"') {
      return "missing starting `\"` for " + quoted(name) + " value";
    }
    s.remove_prefix(1);
    // The closing quote is the first one not escaped by an odd number of backslashes.
    size_t pos = 0;
    for (;;) {
      const auto q = s.find('"', pos);
      if (q == std::string_view::npos) return "missing trailing `\"` for " + quoted(name) + " value";
      size_t backslashes = 0;
      while (backslashes < q && s[q - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) {
        s.remove_prefix(q + 1);
        break;
      }
      pos = q + 1;
    }
    if (s.empty()) return "";
    if (s.front() != ',') return "missing `,` after " + quoted(name) + " value";
    s.remove_prefix(1);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  }
}

std::string check_push_header(std::string_view header) {
  const auto colon = header.find(':');
  if (colon == std::string_view::npos) return "missing `:` delimiter; want \"Name: value\"";
  if (trim_blanks(header.substr(0, colon)).empty()) return "empty header name";
  return "";
}

std::string check_push_url(std::string_view url) {
  auto parsed = net::parse_url(url);
  if (!parsed) return parsed.error().message;
  if (parsed->host.empty()) return "missing host in " + net::redact_url(url);
  return "";
}

std::string add_extra_labels(std::string_view text, std::string_view extra) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    line = trim_blanks(line);
    if (line.empty()) continue;
    if (line.front() == '#') {
      out.append(line).push_back('\n');
      continue;
    }
    if (const auto brace = line.find('{'); brace != std::string_view::npos) {
      out.append(line.substr(0, brace + 1)).append(extra).push_back(',');
      out.append(line.substr(brace + 1));
    } else if (const auto sp = line.rfind(' '); sp != std::string_view::npos) {
      out.append(line.substr(0, sp)).push_back('{');
      out.append(extra).push_back('}');
      out.append(line.substr(sp));
    } else {
      out.append(line);
    }
    out.push_back('\n');
  }
  return out;
}

std::string go_redacted_url(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t auth_start = scheme_end + 3;
  const size_t auth_end = std::min(url.find_first_of("/?#", auth_start), url.size());
  const std::string_view authority = url.substr(auth_start, auth_end - auth_start);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const std::string_view userinfo = authority.substr(0, at);
  const auto colon = userinfo.find(':');
  if (colon == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, auth_start));
  out.append(userinfo.substr(0, colon)).append(":xxxxx");
  out.append(url.substr(auth_start + at));
  return out;
}

struct MetricsPusher::Target {
  std::string url;
  PushTargetStats stats;
  bool in_flight = false;
  bool skip_logged = false;  // a skipped tick was logged since the push in flight started
  std::string last_error;  // what was logged last; "" = the last push worked
};

MetricsPusher::MetricsPusher(core::Clock& clock, net::Transport& http, PushOptions options,
                             std::function<std::string()> render)
    : clock_(clock),
      http_(http),
      options_(std::move(options)),
      render_(std::move(render)),
      alive_(std::make_shared<MetricsPusher*>(this)) {
  for (const auto& label : options_.extra_labels) {
    if (!extra_labels_.empty()) extra_labels_ += ',';
    extra_labels_ += label;
  }
  for (const auto& h : options_.headers) {
    const auto colon = h.find(':');
    if (colon == std::string::npos) continue;  // refused by the flag parser already
    headers_.emplace_back(trim_blanks(std::string_view(h).substr(0, colon)),
                          trim_blanks(std::string_view(h).substr(colon + 1)));
  }
  const double interval_seconds = std::chrono::duration<double>(options_.interval).count();
  for (const auto& url : options_.urls) {
    auto t = std::make_unique<Target>();
    t->url = url;
    t->stats.url = go_redacted_url(url);
    t->stats.interval_seconds = interval_seconds;
    targets_.push_back(std::move(t));
  }
}

MetricsPusher::~MetricsPusher() = default;

void MetricsPusher::start() {
  if (targets_.empty() || options_.interval <= core::Duration::zero()) return;
  stopped_ = false;
  timer_ = clock_.make_timer();
  next_tick_ = clock_.monotonic() + options_.interval;
  timer_->start(options_.interval, [this] { do_tick(); });
}

void MetricsPusher::stop() {
  stopped_ = true;
  if (timer_) timer_->cancel();
}

std::vector<const PushTargetStats*> MetricsPusher::stats() const {
  std::vector<const PushTargetStats*> out;
  out.reserve(targets_.size());
  for (const auto& t : targets_) out.push_back(&t->stats);
  return out;
}

void MetricsPusher::do_tick() {
  if (stopped_) return;
  // The next tick on the same grid, as time.Ticker: ticks missed while the loop was busy are
  // dropped, not caught up.
  const auto now = clock_.monotonic();
  next_tick_ += options_.interval;
  if (next_tick_ <= now) {
    const auto behind = (now - next_tick_) / options_.interval + 1;
    next_tick_ += behind * options_.interval;
  }
  timer_->start(std::chrono::duration_cast<core::Duration>(next_tick_ - now),
                [this] { do_tick(); });

  std::vector<Target*> due;
  for (const auto& t : targets_) {
    if (t->in_flight) {
      if (!t->skip_logged) {
        SPDLOG_WARN("metrics.push: the previous push to \"{}\" is still in progress; skipping "
                    "-pushmetrics.interval ticks until it ends",
                    t->stats.url);
        t->skip_logged = true;
      }
      continue;
    }
    due.push_back(t.get());
  }
  if (due.empty()) return;

  std::string body = render_();
  if (!extra_labels_.empty()) body = add_extra_labels(body, extra_labels_);
  if (!options_.disable_compression) {
    auto gz = net::gzip_compress(body);
    if (!gz) {
      SPDLOG_ERROR("metrics.push: {}", gz.error().message);
      for (auto* t : due) {
        t->stats.pushes_total.fetch_add(1);
        t->stats.errors_total.fetch_add(1);
      }
      return;
    }
    body = std::move(*gz);
  }

  for (auto* t : due) {
    t->stats.pushes_total.fetch_add(1);
    t->stats.bytes_pushed_total.fetch_add(body.size());
    {
      std::lock_guard lock(t->stats.mu);
      t->stats.block_size_bytes.update(static_cast<double>(body.size()));
    }
    net::Request req;
    req.method = "GET";
    req.url = t->url;
    req.display_url = t->stats.url;
    req.body = body;
    req.headers.emplace_back("Content-Type", "text/plain");
    for (const auto& [name, value] : headers_) {
      // A -pushmetrics.header Content-Type replaces the default one (the Go library means to
      // allow that, though its Header.Add sends both); the gzip Content-Encoding replaces a
      // -pushmetrics.header one, as the library's Header.Set does.
      if (iequals(name, "content-type")) {
        req.headers.front().second = value;
        continue;
      }
      if (!options_.disable_compression && iequals(name, "content-encoding")) continue;
      req.headers.emplace_back(name, value);
    }
    if (!options_.disable_compression) req.headers.emplace_back("Content-Encoding", "gzip");
    req.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options_.interval);
    if (req.timeout <= std::chrono::milliseconds::zero()) req.timeout = std::chrono::milliseconds(1);
    req.max_response_bytes = options_.max_response_bytes;
    t->in_flight = true;
    const auto started = clock_.monotonic();
    std::weak_ptr<MetricsPusher*> alive = alive_;
    http_.send(std::move(req), [alive, t, started](core::Result<net::Response> result) {
      if (auto self = alive.lock()) (*self)->on_pushed(*t, started, std::move(result));
    });
  }
}

void MetricsPusher::on_pushed(Target& t, std::chrono::steady_clock::time_point started,
                              core::Result<net::Response> result) {
  t.in_flight = false;
  t.skip_logged = false;
  {
    std::lock_guard lock(t.stats.mu);
    t.stats.duration_seconds.update(
        std::chrono::duration<double>(clock_.monotonic() - started).count());
  }
  std::string err;
  if (!result) {
    // Shutdown closes the transport under a push in flight: not a failure of the target (the
    // Go library ignores context.Canceled the same way).
    if (result.error().kind == core::ErrorKind::canceled) return;
    err = "cannot push metrics to \"" + t.stats.url + "\": " + result.error().message;
  } else if (result->status / 100 != 2) {
    err = "unexpected status code in response from \"" + t.stats.url +
          "\": " + std::to_string(result->status) + "; expecting 2xx; response body: \"" +
          result->body + "\"";
  }
  if (!err.empty()) {
    t.stats.errors_total.fetch_add(1);
    if (err != t.last_error) SPDLOG_ERROR("metrics.push: {}", err);
    t.last_error = std::move(err);
    return;
  }
  if (!t.last_error.empty()) {
    spdlog::info("metrics.push: pushing metrics to \"{}\" works again", t.stats.url);
    t.last_error.clear();
  }
}

}  // namespace app
