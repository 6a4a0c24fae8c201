// HttpQuerier: builds vmalert's instant-query request (and, for replay, its range-query
// request), streams the response into an InstantParser and turns failures into vmalert's error
// texts.
#include "datasource/http_querier.hpp"

#include <map>
#include <optional>

#include "core/strings.hpp"
#include "core/time.hpp"
#include "datasource/response_parser.hpp"
#include "net/url.hpp"

namespace datasource {

namespace {

// Placeholder value for the args filled per query (query, time; start and end for ranges).
constexpr std::string_view kPerQuery = "\x01";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

using Params = std::map<std::string, std::vector<std::string>>;

void parse_query_string(std::string_view qs, Params& out) {
  while (!qs.empty()) {
    const size_t amp = qs.find('&');
    const std::string_view pair = qs.substr(0, amp);
    qs = amp == std::string_view::npos ? std::string_view{} : qs.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string key = net::query_unescape(pair.substr(0, eq));
    const std::string value =
        eq == std::string_view::npos ? std::string{} : net::query_unescape(pair.substr(eq + 1));
    out[key].push_back(value);
  }
}

std::string whole_seconds(core::Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

struct HttpQuerierFactory::Shared {
  net::Transport* client = nullptr;
  HttpQuerierOptions options;
  std::string endpoint;  // scheme://host/path/api/v1/query, userinfo kept (net sends it)
  std::string range_endpoint;  // the same with /api/v1/query_range
  Params base_params;    // the -datasource.url's own query args
  net::Headers headers;  // Content-Type, Authorization, -datasource.headers
};

namespace {

using Shared = HttpQuerierFactory::Shared;

// 'text' for a POSIX shell: single quotes, an embedded ' written as '\''.
void append_shell_quoted(std::string& out, std::string_view text) {
  out += '\'';
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
}

// One part of the query string: fixed text, or a per-query value (query, time, start, end).
struct Part {
  enum class Kind { fixed, query, time, start, end };
  Kind kind;
  std::string text;  // fixed: "k=v&k2=v2"
};

Part::Kind per_query_kind(std::string_view key) {
  if (key == "query") return Part::Kind::query;
  if (key == "start") return Part::Kind::start;
  if (key == "end") return Part::Kind::end;
  return Part::Kind::time;
}

// The per-query values of one request.
struct Args {
  std::string_view expr;
  std::string_view time;
  std::string_view start;
  std::string_view end;
};

// `endpoint`?query-string, the per-query parts filled from `a`.
std::string render_url(std::string_view endpoint, const std::vector<Part>& parts, const Args& a) {
  std::string url;
  url.reserve(endpoint.size() + 64 + a.expr.size() * 2);
  url.append(endpoint).push_back('?');
  for (const Part& p : parts) {
    switch (p.kind) {
      case Part::Kind::fixed:
        url.append(p.text);
        break;
      case Part::Kind::query:
        net::append_query_escaped(url, a.expr);
        break;
      case Part::Kind::time:
        net::append_query_escaped(url, a.time);
        break;
      case Part::Kind::start:
        net::append_query_escaped(url, a.start);
        break;
      case Part::Kind::end:
        net::append_query_escaped(url, a.end);
        break;
    }
  }
  return url;
}

// What an instant query's curl command is made of, fixed when the querier is built and shared
// by the curl makers of its rules (which outlive it in the rules' update histories).
struct CurlForm {
  std::string endpoint;
  std::vector<Part> parts;  // the display parts: secret-looking arguments hidden
  std::string prefix;       // "curl -X POST -H '...' ..."

  [[nodiscard]] std::string command(std::string_view expr, core::TimePoint ts) const {
    const std::string time = core::format_rfc3339_seconds(ts);
    const std::string url = net::redact_url(render_url(endpoint, parts, Args{expr, time, {}, {}}));
    std::string out;
    out.reserve(prefix.size() + url.size() + 8);
    out.append(prefix);
    out += ' ';
    append_shell_quoted(out, url);
    return out;
  }
};

class State : public std::enable_shared_from_this<State> {
 public:
  // range: /api/v1/query_range for replay, as vmalert's: start, end, step = the group
  // interval in whole seconds (not -datasource.queryStep), nocache=1 (VictoriaMetrics would
  // otherwise align the range to its cache), group params still override.
  State(std::shared_ptr<const Shared> shared, const QuerierParams& params, bool range = false)
      : shared_(std::move(shared)), range_(range) {
    const HttpQuerierOptions& o = shared_->options;
    Params q = shared_->base_params;
    if (range_) {
      q["start"] = {std::string(kPerQuery)};
      q["end"] = {std::string(kPerQuery)};
      q["nocache"] = {"1"};
      if (params.eval_interval > core::Duration::zero()) {
        q["step"] = {whole_seconds(params.eval_interval)};
      }
    } else {
      q["time"] = {std::string(kPerQuery)};
    }
    if (!range_ && !o.disable_step_param) {
      if (o.query_step > core::Duration::zero()) {
        q["step"] = {whole_seconds(o.query_step)};
      } else if (params.eval_interval > core::Duration::zero()) {
        q["step"] = {whole_seconds(params.eval_interval)};
      }
    }
    if (o.round_digits > 0) q["round_digits"] = {std::to_string(o.round_digits)};
    for (const auto& [key, values] : params.query_params) q[key] = values;
    q["query"] = {std::string(kPerQuery)};
    build_parts(q, false, parts_);
    for (const auto& [key, values] : q) secret_args_ |= net::looks_secret(key);
    if (secret_args_ && !o.show_url) build_parts(q, true, display_parts_);

    headers_ = shared_->headers;
    for (const auto& [name, value] : params.headers) {
      bool replaced = false;
      for (auto& h : headers_) {
        if (core::iequals(h.first, name)) {
          h.second = value;
          replaced = true;
        }
      }
      if (!replaced) headers_.emplace_back(name, value);
    }
    // What every rule's curl command is made of (the headers do not change per query).
    if (!range_) {
      CurlForm form{.endpoint = shared_->endpoint,
                    .parts = display_parts_.empty() ? parts_ : display_parts_,
                    .prefix = "curl -X POST"};
      for (const auto& [name, value] : headers_) {
        form.prefix += " -H ";
        append_shell_quoted(form.prefix,
                            name + ": " +
                                (core::iequals(name, "authorization") || net::looks_secret(name)
                                     ? std::string("<secret>")
                                     : value));
      }
      curl_form_ = std::make_shared<const CurlForm>(std::move(form));
    }
  }

  [[nodiscard]] std::shared_ptr<const CurlMaker> curl_maker(std::string_view expr) const {
    if (curl_form_ == nullptr) return nullptr;
    return std::make_shared<const CurlMaker>(
        [form = curl_form_, expr = std::string(expr)](core::TimePoint ts) {
          return form->command(expr, ts);
        });
  }

  void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out, QueryDone done) {
    auto call = std::make_shared<Call>();
    call->time = core::format_rfc3339_seconds(ts);
    send(std::move(call), expr, out, std::move(done));
  }

  void query_range(std::string_view expr, core::TimePoint start, core::TimePoint end,
                   core::QueryResult& out, QueryDone done) {
    auto call = std::make_shared<Call>();
    call->start = core::format_rfc3339_seconds(start);
    call->end = core::format_rfc3339_seconds(end);
    send(std::move(call), expr, out, std::move(done));
  }

 private:
  struct Call {
    std::shared_ptr<State> state;
    std::string expr;
    std::string time;
    std::string start;
    std::string end;
    core::QueryResult* out = nullptr;
    QueryDone done;
    std::unique_ptr<InstantParser> parser;
    std::optional<core::Error> parse_error;

    [[nodiscard]] Args args() const { return Args{expr, time, start, end}; }
  };

  void send(std::shared_ptr<Call> call, std::string_view expr, core::QueryResult& out,
            QueryDone done) {
    call->state = shared_from_this();
    call->expr.assign(expr);
    call->out = &out;
    call->done = std::move(done);
    if (free_parsers_.empty()) {
      call->parser = std::make_unique<InstantParser>();
    } else {
      call->parser = std::move(free_parsers_.back());
      free_parsers_.pop_back();
    }
    call->parser->reset(out);

    net::Request req;
    req.method = "POST";
    req.url = render(parts_, call->args());
    req.headers = headers_;
    req.timeout = shared_->options.query_timeout;
    req.max_response_bytes = shared_->options.max_response_size;
    req.accept_gzip = true;  // as vmalert (Go's transport); inflated chunk by chunk into the parser
    req.on_body_chunk = [call](std::string_view chunk) -> std::optional<core::Error> {
      auto r = call->parser->feed(chunk);
      if (r) return std::nullopt;
      call->parse_error = r.error();
      return r.error();
    };
    // net names the URL in its errors (`Post "<url>": ...`): the display form, secrets hidden.
    if (!display_parts_.empty()) req.display_url = display_url(*call);
    shared_->client->send(std::move(req), [call](core::Result<net::Response> r) {
      call->state->complete(*call, std::move(r));
    });
  }

  void build_parts(const Params& q, bool redact, std::vector<Part>& parts) const {
    parts.clear();
    std::string fixed;
    auto flush = [&] {
      if (!fixed.empty()) parts.push_back(Part{Part::Kind::fixed, std::move(fixed)});
      fixed.clear();
    };
    bool first = true;
    for (const auto& [key, values] : q) {
      for (const auto& value : values) {
        if (!first) fixed.push_back('&');
        first = false;
        net::append_query_escaped(fixed, key);
        fixed.push_back('=');
        if (value == kPerQuery) {
          flush();
          parts.push_back(Part{per_query_kind(key), {}});
        } else if (redact && net::looks_secret(key)) {
          fixed.append("secret");
        } else {
          net::append_query_escaped(fixed, value);
        }
      }
    }
    flush();
  }

  std::string render(const std::vector<Part>& parts, const Args& a) const {
    return render_url(range_ ? shared_->range_endpoint : shared_->endpoint, parts, a);
  }

  [[nodiscard]] std::string display_url(const Call& call) const {
    // Rendered again from the call's arguments: only error paths name the URL.
    if (display_parts_.empty()) return net::redact_url(render(parts_, call.args()));
    return net::redact_url(render(display_parts_, call.args()));
  }

  // A parser error: the datasource's own "status":"error" answer (structured, from
  // InstantParser::status_error()), printed as vmalert does, or a malformed body. Both are
  // bad_response; datasource-supplied text is clipped.
  static core::Error parse_failure(const InstantParser& parser, const core::Error& e,
                                   const std::string& url) {
    if (const InstantParser::StatusError* se = parser.status_error()) {
      return core::Error{"response error, query: " + url + ", errorType: " +
                             core::clip(se->error_type, 256) + ", error: " + core::clip(se->error),
                         core::ErrorKind::bad_response};
    }
    return core::Error{"error parsing prometheus metrics for " + url + ": " + core::clip(e.message),
                       core::ErrorKind::bad_response};
  }

  void complete(Call& call, core::Result<net::Response> r) {
    std::optional<core::Error> err;
    if (!r) {
      if (call.parse_error) {
        err = parse_failure(*call.parser, *call.parse_error, display_url(call));
      } else {
        // net's text already names the display URL (Request::display_url); the kind is net's.
        err = r.error();
        if (err->kind == core::ErrorKind::too_large) {
          err->message += " (raise -datasource.maxResponseSize)";
        }
      }
    } else if (r->status != 200) {
      err = core::Error{"unexpected response code " + std::to_string(r->status) + " for " +
                            display_url(call) + ". Response body " + core::clip(r->body),
                        core::ErrorKind::http_status, r->status};
    } else if (auto f = call.parser->finish(); !f) {
      err = parse_failure(*call.parser, f.error(), display_url(call));
    } else if (range_ && call.out->type != core::ResultType::matrix) {
      err = core::Error{"error parsing prometheus metrics for " + display_url(call) +
                            ": unexpected result type for a range query (want matrix)",
                        core::ErrorKind::bad_response};
    } else if (!range_ && call.out->type != core::ResultType::vector &&
               call.out->type != core::ResultType::scalar) {
      const char* name = call.out->type == core::ResultType::matrix ? "matrix" : "string";
      err = core::Error{"error parsing prometheus metrics for " + display_url(call) +
                            ": unknown result type \"" + name + "\"",
                        core::ErrorKind::bad_response};
    }
    // A parser that had to buffer a big element is dropped, not kept at that size.
    if (free_parsers_.size() < 16 &&
        call.parser->buffered_bytes() <= InstantParser::kReuseMaxBytes) {
      free_parsers_.push_back(std::move(call.parser));
    }
    QueryDone done = std::move(call.done);
    done(std::move(err));
  }

  std::shared_ptr<const Shared> shared_;
  bool range_ = false;
  std::vector<Part> parts_;
  std::vector<Part> display_parts_;  // with secret-looking args hidden; empty = same as parts_
  bool secret_args_ = false;
  net::Headers headers_;
  std::shared_ptr<const CurlForm> curl_form_;  // instant queries' curl commands (curl_maker)
  std::vector<std::unique_ptr<InstantParser>> free_parsers_;
};

class HttpQuerier final : public Querier {
 public:
  explicit HttpQuerier(std::shared_ptr<State> state) : state_(std::move(state)) {}

  /* Querier */
  void query(std::string_view expr, core::TimePoint ts, core::QueryResult& out,
             QueryDone done) override {
    state_->query(expr, ts, out, std::move(done));
  }
  [[nodiscard]] std::shared_ptr<const CurlMaker> curl_maker(std::string_view expr) const override {
    return state_->curl_maker(expr);
  }

 private:
  std::shared_ptr<State> state_;
};

class HttpRangeQuerier final : public RangeQuerier {
 public:
  explicit HttpRangeQuerier(std::shared_ptr<State> state) : state_(std::move(state)) {}

  /* RangeQuerier */
  void query_range(std::string_view expr, core::TimePoint start, core::TimePoint end,
                   core::QueryResult& out, QueryDone done) override {
    state_->query_range(expr, start, end, out, std::move(done));
  }

 private:
  std::shared_ptr<State> state_;
};

core::Error unsupported_type(const std::string& type) {
  return core::Error{"datasource type \"" + type +
                         "\" is not supported by alertd (only \"prometheus\")",
                     core::ErrorKind::bad_config};
}

// Datasource types alertd does not speak yet fail every query with a clear message.
class UnsupportedQuerier final : public Querier, public RangeQuerier {
 public:
  explicit UnsupportedQuerier(std::string type) : type_(std::move(type)) {}

  /* Querier */
  void query(std::string_view, core::TimePoint, core::QueryResult& out, QueryDone done) override {
    out.clear();
    done(unsupported_type(type_));
  }
  /* RangeQuerier */
  void query_range(std::string_view, core::TimePoint, core::TimePoint, core::QueryResult& out,
                   QueryDone done) override {
    out.clear();
    done(unsupported_type(type_));
  }

 private:
  std::string type_;
};

}  // namespace

core::Result<std::unique_ptr<HttpQuerierFactory>> HttpQuerierFactory::create(
    net::Transport& client, HttpQuerierOptions options) {
  auto shared = std::make_shared<Shared>();
  shared->client = &client;
  std::string_view url = options.url;
  if (trim(url).empty()) return core::fail("the datasource URL is empty", core::ErrorKind::bad_config);
  const size_t hash = url.find('#');
  if (hash != std::string_view::npos) url = url.substr(0, hash);
  const size_t qmark = url.find('?');
  std::string_view path = url.substr(0, qmark);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (qmark != std::string_view::npos) parse_query_string(url.substr(qmark + 1), shared->base_params);
  shared->endpoint.assign(path);
  if (!options.disable_path_append) {
    if (options.append_type_prefix) shared->endpoint.append("/prometheus");
    shared->endpoint.append("/api/v1/query");
  }
  shared->range_endpoint = shared->endpoint + "_range";
  if (auto parsed = net::parse_url(shared->endpoint); !parsed) return core::fail(parsed.error());

  shared->headers.emplace_back("Content-Type", "application/json");
  const bool basic = !options.basic_auth_username.empty() || !options.basic_auth_password.empty();
  if (basic && !options.bearer_token.empty()) {
    return core::fail("at most one of basic auth (username/password) and bearer token can be set",
                      core::ErrorKind::bad_config);
  }
  if (basic) {
    shared->headers.emplace_back(
        "Authorization",
        "Basic " + net::base64_encode(options.basic_auth_username + ":" +
                                      options.basic_auth_password));
  } else if (!options.bearer_token.empty()) {
    shared->headers.emplace_back("Authorization", "Bearer " + options.bearer_token);
  }
  auto extra = parse_header_list(options.headers);
  if (!extra) return core::fail(extra.error().wrap("-datasource.headers"));
  for (auto& [name, value] : *extra) {
    bool replaced = false;
    for (auto& h : shared->headers) {
      if (core::iequals(h.first, name)) {
        h.second = value;
        replaced = true;
      }
    }
    if (!replaced) shared->headers.emplace_back(std::move(name), std::move(value));
  }
  shared->options = std::move(options);
  return std::unique_ptr<HttpQuerierFactory>(new HttpQuerierFactory(std::move(shared)));
}

HttpQuerierFactory::HttpQuerierFactory(std::shared_ptr<const Shared> shared)
    : shared_(std::move(shared)) {}

HttpQuerierFactory::~HttpQuerierFactory() = default;

std::unique_ptr<Querier> HttpQuerierFactory::build(const QuerierParams& params) {
  if (params.type != "prometheus" && !params.type.empty()) {
    return std::make_unique<UnsupportedQuerier>(params.type);
  }
  return std::make_unique<HttpQuerier>(std::make_shared<State>(shared_, params));
}

std::unique_ptr<RangeQuerier> HttpQuerierFactory::build_range(const QuerierParams& params) {
  if (params.type != "prometheus" && !params.type.empty()) {
    return std::make_unique<UnsupportedQuerier>(params.type);
  }
  return std::make_unique<HttpRangeQuerier>(std::make_shared<State>(shared_, params, true));
}

}  // namespace datasource
