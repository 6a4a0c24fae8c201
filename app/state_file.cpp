#include "app/state_file.hpp"

#include <fcntl.h>
#include <rapidjson/error/en.h>
#include <rapidjson/filereadstream.h>
#include <rapidjson/filewritestream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/hash.hpp"
#include "core/limit_hits.hpp"

namespace app {
namespace {

constexpr std::string_view kFormat = "alertd-state";
constexpr int kVersion = 1;
constexpr size_t kMaxStateFile = 256u << 20;
constexpr auto kMinWriteGap = std::chrono::seconds(1);
// The file is written and read through a buffer of this size: memory for the file does not
// grow with the number of alerts (a 100k-alert state is ~70 MB of JSON).
constexpr size_t kIoBuffer = 64 * 1024;

template <class Stream>
using Writer = rapidjson::Writer<Stream, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                 rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

int64_t ns(core::TimePoint t) { return t.time_since_epoch().count(); }

template <class W>
void write_labels(W& w, const core::Labels& ls) {
  w.StartObject();
  for (const auto& l : ls) {
    w.Key(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size()));
    w.String(l.value.data(), static_cast<rapidjson::SizeType>(l.value.size()));
  }
  w.EndObject();
}

template <class W>
void write_u64(W& w, uint64_t v) {
  const auto s = std::to_string(v);  // as a string: JSON readers lose 64-bit integers
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

template <class W>
void write_alert(W& w, const rules::Alert& a) {
  w.StartObject();
  w.Key("state");
  const auto st = rules::to_string(a.state);
  w.String(st.data(), static_cast<rapidjson::SizeType>(st.size()));
  w.Key("labels");
  write_labels(w, a.labels);
  w.Key("annotations");
  write_labels(w, a.annotations);
  w.Key("value");
  w.Double(a.value);
  w.Key("active_at");
  w.Int64(ns(a.active_at));
  w.Key("start");
  w.Int64(ns(a.start));
  w.Key("last_sent");
  w.Int64(ns(a.last_sent));
  w.Key("end");
  w.Int64(ns(a.end));
  w.Key("keep_firing_since");
  w.Int64(ns(a.keep_firing_since));
  w.Key("restored");
  w.Bool(a.restored);
  w.EndObject();
}

// The whole document; `groups` maps a group ID to its RuleAlerts, or to a pointer to them.
template <class W, class Groups>
void write_state(W& w, const Groups& groups) {
  w.StartObject();
  w.Key("format");
  w.String(kFormat.data(), static_cast<rapidjson::SizeType>(kFormat.size()));
  w.Key("version");
  w.Int(kVersion);
  w.Key("groups");
  w.StartArray();
  for (const auto& [gid, group] : groups) {
    const RuleAlerts& rules = [&]() -> const RuleAlerts& {
      if constexpr (std::is_same_v<std::decay_t<decltype(group)>, RuleAlerts>) {
        return group;
      } else {
        return *group;
      }
    }();
    w.StartObject();
    w.Key("id");
    write_u64(w, gid);
    w.Key("rules");
    w.StartArray();
    for (const auto& [rid, alerts] : rules) {
      w.StartObject();
      w.Key("id");
      write_u64(w, rid);
      w.Key("alerts");
      w.StartArray();
      for (const auto& a : alerts) write_alert(w, a);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// What a group's saved alerts depend on, except last_sent and end: those move with every
// notification (each round for a firing alert under -rule.resendDelay=0), and a restart that
// finds them up to kRefresh old only re-sends an alert sooner than it would have. Without them
// a steady set of firing alerts is written once per kRefresh instead of after every round (at
// 10k alerts and a 10 s interval the writes had cost a quarter of the daemon's CPU).
uint64_t digest(const rules::Group& g) {
  core::Fnv1a64 h;
  auto add = [&h](int64_t v) { h.add(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); };
  for (size_t i = 0; i < g.size(); ++i) {
    for (const auto& a : g.rule(i).alerts()) {
      if (a.state == rules::AlertState::inactive) continue;
      add(static_cast<int64_t>(a.id));
      add(static_cast<int64_t>(a.state));
      add(ns(a.active_at));
      add(ns(a.start));
      add(ns(a.keep_firing_since));
    }
    h.add_byte(0xFF);
  }
  return h.value();
}

// The state file read as a stream of SAX events (rapidjson::Reader, iterative, so no nesting
// depth reaches the C++ stack): the memory is one alert's, not a DOM of the whole file (~2.5x
// its size). Accepts the keys of an object in any order and skips unknown ones; every missing
// or mistyped field is an error, so a file is applied whole or not at all.
class StateReader : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, StateReader> {
 public:
  SavedState out;
  std::string err;

  // After a successful parse: the checks that need the whole document.
  bool finish() {
    if (!top_seen_) return fail("not an alertd state file");
    if (!format_ok_) return fail(not_alertd_state());
    if (!version_ok_) return fail(unsupported_version());
    if (!groups_seen_) return fail("no \"groups\" list");
    return true;
  }

  // ---- SAX events ----
  bool Null() { return scalar(Scalar{}); }
  bool Bool(bool b) { return scalar(Scalar{Kind::boolean, 0, b ? 1.0 : 0.0, {}}); }
  bool Int(int i) { return integer(i); }
  bool Uint(unsigned u) { return integer(u); }
  bool Int64(int64_t i) { return integer(i); }
  bool Uint64(uint64_t u) {
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      return scalar(Scalar{Kind::number, 0, static_cast<double>(u), {}});
    }
    return integer(static_cast<int64_t>(u));
  }
  bool Double(double d) { return scalar(Scalar{Kind::number, 0, d, {}}); }
  bool String(const char* str, rapidjson::SizeType len, bool /*copy*/) {
    return scalar(Scalar{Kind::string, 0, 0, std::string_view(str, len)});
  }
  bool Key(const char* str, rapidjson::SizeType len, bool /*copy*/) {
    if (skip_ == 0) key_.assign(str, len);
    return true;
  }
  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }
  bool EndObject(rapidjson::SizeType /*members*/) { return close(); }
  bool EndArray(rapidjson::SizeType /*elements*/) { return close(); }

 private:
  enum class At : uint8_t { top, groups, group, rules, rule, alerts, alert, labels };
  enum class Kind : uint8_t { null, boolean, integer, number, string };
  struct Scalar {
    Kind kind = Kind::null;
    int64_t i = 0;
    double d = 0;
    std::string_view s;
  };
  // Fields an alert must have, in the order a missing one is reported.
  enum Field : uint16_t {
    kState = 1, kValue = 2, kLabels = 4, kAnnotations = 8, kActiveAt = 16, kStart = 32,
    kLastSent = 64, kEnd = 128, kKeepFiringSince = 256, kAll = 511,
  };

  bool fail(std::string what) {
    if (err.empty()) err = std::move(what);
    return false;
  }
  static std::string not_alertd_state() {
    return "not an alertd state file (no \"format\": \"alertd-state\")";
  }
  static std::string unsupported_version() {
    return "unsupported state file version (this alertd reads version " +
           std::to_string(kVersion) + ")";
  }
  bool integer(int64_t i) { return scalar(Scalar{Kind::integer, i, static_cast<double>(i), {}}); }

  static bool parse_id(std::string_view s, uint64_t& id_out) {
    if (s.empty() || s.size() > 20) return false;
    uint64_t v = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') return false;
      const uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    id_out = v;
    return true;
  }
  bool id(const Scalar& v, uint64_t& id_out, bool& seen, const char* what) {
    if (v.kind != Kind::string) return fail(std::string(what) + " is not a string");
    if (!parse_id(v.s, id_out)) return fail(std::string(what) + " is not an ID");
    seen = true;
    return true;
  }
  bool time(const Scalar& v, core::TimePoint& t, Field f, const char* key) {
    if (v.kind != Kind::integer) {
      return fail(std::string("alert field \"") + key + "\" missing or not an integer");
    }
    t = core::TimePoint{core::Duration{v.i}};
    fields_ |= f;
    return true;
  }

  // A scalar value: an element of the innermost array or the value of key_.
  bool scalar(const Scalar& v) {
    if (skip_ > 0) return true;
    if (stack_.empty()) return fail("not an alertd state file");
    switch (stack_.back()) {
      case At::top:
        if (key_ == "format") {
          format_ok_ = v.kind == Kind::string && v.s == kFormat;
          if (!format_ok_) return fail(not_alertd_state());
        } else if (key_ == "version") {
          version_ok_ = v.kind == Kind::integer && v.i == kVersion;
          if (!version_ok_) return fail(unsupported_version());
        } else if (key_ == "groups") {
          return fail("no \"groups\" list");
        }
        return true;
      case At::groups: return fail("a group is not an object");
      case At::rules: return fail("a rule is not an object");
      case At::alerts: return fail("an alert is not an object");
      case At::group:
        if (key_ == "id") return id(v, gid_, gid_seen_, "group id");
        if (key_ == "rules") return fail("group without a \"rules\" list");
        return true;
      case At::rule:
        if (key_ == "id") return id(v, rid_, rid_seen_, "rule id");
        if (key_ == "alerts") return fail("rule without an \"alerts\" list");
        return true;
      case At::alert: return alert_field(v);
      case At::labels:
        if (v.kind != Kind::string) {
          return fail(std::string("a value in \"") + labels_key_ + "\" is not a string");
        }
        pairs_.emplace_back(key_, std::string(v.s));
        return true;
    }
    return true;
  }

  bool alert_field(const Scalar& v) {
    auto& a = alert_;
    if (key_ == "state") {
      if (v.kind != Kind::string) return fail("alert without a state");
      if (v.s == "firing") {
        a.state = rules::AlertState::firing;
      } else if (v.s == "pending") {
        a.state = rules::AlertState::pending;
      } else {
        return fail("unknown alert state \"" + std::string(v.s) + "\"");
      }
      fields_ |= kState;
    } else if (key_ == "value") {
      if (v.kind != Kind::integer && v.kind != Kind::number) return fail("alert without a value");
      a.value = v.d;
      fields_ |= kValue;
    } else if (key_ == "restored") {
      a.restored = v.kind == Kind::boolean && v.d != 0;
    } else if (key_ == "labels" || key_ == "annotations") {
      return fail("alert field \"" + key_ + "\" missing or not an object");
    } else if (key_ == "active_at") {
      return time(v, a.active_at, kActiveAt, "active_at");
    } else if (key_ == "start") {
      return time(v, a.start, kStart, "start");
    } else if (key_ == "last_sent") {
      return time(v, a.last_sent, kLastSent, "last_sent");
    } else if (key_ == "end") {
      return time(v, a.end, kEnd, "end");
    } else if (key_ == "keep_firing_since") {
      return time(v, a.keep_firing_since, kKeepFiringSince, "keep_firing_since");
    }
    return true;
  }

  // An object (is_object) or array starts.
  bool open(bool is_object) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (stack_.empty()) {
      if (!is_object || top_seen_) return fail("not an alertd state file");
      top_seen_ = true;
      return push(At::top);
    }
    switch (stack_.back()) {
      case At::top:
        if (key_ == "groups") {
          if (is_object) return fail("no \"groups\" list");
          groups_seen_ = true;
          return push(At::groups);
        }
        if (key_ == "format") return fail(not_alertd_state());
        if (key_ == "version") return fail(unsupported_version());
        break;
      case At::groups:
        if (!is_object) return fail("a group is not an object");
        gid_seen_ = false;
        rules_seen_ = false;
        group_.clear();
        return push(At::group);
      case At::group:
        if (key_ == "id") return fail("group id is not a string");
        if (key_ == "rules") {
          if (is_object) return fail("group without a \"rules\" list");
          rules_seen_ = true;
          return push(At::rules);
        }
        break;
      case At::rules:
        if (!is_object) return fail("a rule is not an object");
        rid_seen_ = false;
        alerts_seen_ = false;
        rule_alerts_.clear();
        return push(At::rule);
      case At::rule:
        if (key_ == "id") return fail("rule id is not a string");
        if (key_ == "alerts") {
          if (is_object) return fail("rule without an \"alerts\" list");
          alerts_seen_ = true;
          return push(At::alerts);
        }
        break;
      case At::alerts:
        if (!is_object) return fail("an alert is not an object");
        alert_ = rules::Alert{};
        fields_ = 0;
        return push(At::alert);
      case At::alert:
        if (key_ == "labels" || key_ == "annotations") {
          if (!is_object) return fail("alert field \"" + key_ + "\" missing or not an object");
          labels_key_ = key_;
          pairs_.clear();
          return push(At::labels);
        }
        if (key_ == "state") return fail("alert without a state");
        if (key_ == "value") return fail("alert without a value");
        if (key_ == "active_at" || key_ == "start" || key_ == "last_sent" || key_ == "end" ||
            key_ == "keep_firing_since") {
          return fail("alert field \"" + key_ + "\" missing or not an integer");
        }
        break;
      case At::labels:
        return fail(std::string("a value in \"") + labels_key_ + "\" is not a string");
    }
    skip_ = 1;  // an unknown key's object or array: skipped whole
    return true;
  }
  bool push(At at) {
    stack_.push_back(at);
    return true;
  }

  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const At at = stack_.back();
    stack_.pop_back();
    switch (at) {
      case At::labels: {
        std::vector<core::Label> items;
        items.reserve(pairs_.size());
        for (const auto& [k, v] : pairs_) items.push_back(core::Label{k, v});
        // Of two with the same name the later one wins, as in a JSON object read into a map.
        (labels_key_ == "labels" ? alert_.labels : alert_.annotations) = core::Labels::from(items);
        fields_ |= labels_key_ == "labels" ? kLabels : kAnnotations;
        return true;
      }
      case At::alert: {
        static constexpr std::array<std::pair<Field, const char*>, 9> kRequired{{
            {kState, "alert without a state"},
            {kValue, "alert without a value"},
            {kLabels, "alert field \"labels\" missing or not an object"},
            {kAnnotations, "alert field \"annotations\" missing or not an object"},
            {kActiveAt, "alert field \"active_at\" missing or not an integer"},
            {kStart, "alert field \"start\" missing or not an integer"},
            {kLastSent, "alert field \"last_sent\" missing or not an integer"},
            {kEnd, "alert field \"end\" missing or not an integer"},
            {kKeepFiringSince, "alert field \"keep_firing_since\" missing or not an integer"},
        }};
        for (const auto& [f, msg] : kRequired) {
          if ((fields_ & f) == 0) return fail(msg);
        }
        alert_.id = alert_.labels.hash_without_name();
        rule_alerts_.push_back(std::move(alert_));
        return true;
      }
      case At::rule: {
        if (!rid_seen_) return fail("rule without an \"id\"");
        if (!alerts_seen_) return fail("rule without an \"alerts\" list");
        auto& dst = group_[rid_];
        for (auto& a : rule_alerts_) dst.push_back(std::move(a));
        rule_alerts_.clear();
        return true;
      }
      case At::group: {
        if (!gid_seen_) return fail("group without an \"id\"");
        if (!rules_seen_) return fail("group without a \"rules\" list");
        auto& dst = out[gid_];
        for (auto& [rid, alerts] : group_) {
          auto& d = dst[rid];
          for (auto& a : alerts) d.push_back(std::move(a));
        }
        group_.clear();
        return true;
      }
      default:
        return true;
    }
  }

  std::vector<At> stack_;
  int skip_ = 0;  // > 0: inside an unknown key's value, this deep
  std::string key_;
  bool top_seen_ = false, format_ok_ = false, version_ok_ = false, groups_seen_ = false;
  uint64_t gid_ = 0, rid_ = 0;
  bool gid_seen_ = false, rules_seen_ = false, rid_seen_ = false, alerts_seen_ = false;
  RuleAlerts group_;
  std::vector<rules::Alert> rule_alerts_;
  rules::Alert alert_;
  uint16_t fields_ = 0;
  std::string labels_key_;
  std::vector<std::pair<std::string, std::string>> pairs_;
};

template <class Stream>
core::Result<SavedState> parse_state(Stream& in) {
  StateReader handler;
  rapidjson::Reader reader;
  const auto ok = reader.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseIterativeFlag>(
      in, handler);
  if (!handler.err.empty()) return core::fail(handler.err);
  if (ok.IsError()) {
    return core::fail(core::Error{std::string("not valid JSON at byte ") +
                                      std::to_string(ok.Offset()) + ": " +
                                      rapidjson::GetParseError_En(ok.Code()),
                                  core::ErrorKind::bad_response});
  }
  if (!handler.finish()) return core::fail(handler.err);
  return std::move(handler.out);
}

}  // namespace

std::string StateFile::encode(const SavedState& state) {
  rapidjson::StringBuffer buf;
  Writer<rapidjson::StringBuffer> w(buf);
  write_state(w, state);
  return std::string(buf.GetString(), buf.GetSize());
}

core::Result<SavedState> StateFile::decode(std::string_view text) {
  rapidjson::MemoryStream in(text.data(), text.size());
  return parse_state(in);
}

core::Result<SavedState> StateFile::read(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) {
    if (errno == ENOENT) return SavedState{};
    return core::fail(core::Error{"cannot read state file " + path + ": " + std::strerror(errno),
                                  core::ErrorKind::io});
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, &std::fclose);
  struct stat st {};
  const bool stat_ok = ::fstat(::fileno(f), &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    const std::string why = !stat_ok               ? std::string(std::strerror(errno))
                            : S_ISDIR(st.st_mode) ? std::string("is a directory")
                                                  : std::string("not a regular file");
    return core::fail(core::Error{"cannot read state file " + path + ": " + why,
                                  core::ErrorKind::io});
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxStateFile) {
    core::count_limit_hit(core::Limit::state_file_size);
    return core::fail(core::Error{"state file " + path + " is larger than " +
                                      std::to_string(kMaxStateFile >> 20) + " MiB",
                                  core::ErrorKind::too_large});
  }
  const auto buf = std::make_unique<char[]>(kIoBuffer);
  rapidjson::FileReadStream in(f, buf.get(), kIoBuffer);
  auto state = parse_state(in);
  if (std::ferror(f)) {
    return core::fail(core::Error{"cannot read state file " + path, core::ErrorKind::io});
  }
  if (!state) return core::fail(state.error().wrap("state file " + path));
  return state;
}

size_t StateFile::restore(rules::Group& group, const SavedState& state) {
  auto g = state.find(group.id());
  if (g == state.end()) return 0;
  size_t n = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    auto r = g->second.find(group.rule(i).id());
    if (r == g->second.end()) continue;
    n += group.rule(i).restore_alerts(r->second);
  }
  return n;
}

StateFile::StateFile(std::string path, std::chrono::steady_clock::duration refresh)
    : path_(std::move(path)), refresh_(refresh) {
  writer_ = std::thread([this] { writer_loop(); });
}

StateFile::~StateFile() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
}

void StateFile::save(const rules::Group& group) {
  const uint64_t d = digest(group);
  const auto now = std::chrono::steady_clock::now();
  auto [it, inserted] = saved_.try_emplace(group.id(), Saved{d, now});
  if (!inserted) {
    if (it->second.digest == d && now - it->second.at < refresh_) return;
    it->second = Saved{d, now};
  }
  auto rules = std::make_shared<RuleAlerts>();
  for (size_t i = 0; i < group.size(); ++i) {
    auto alerts = group.rule(i).active_alerts();
    if (!alerts.empty()) (*rules)[group.rule(i).id()] = std::move(alerts);
  }
  {
    std::lock_guard lock(mu_);
    if (rules->empty()) {
      state_.erase(group.id());
    } else {
      state_[group.id()] = std::move(rules);
    }
    dirty_ = true;
  }
  cv_.notify_one();
}

void StateFile::forget(uint64_t group_id) {
  saved_.erase(group_id);
  {
    std::lock_guard lock(mu_);
    if (state_.erase(group_id) == 0) return;
    dirty_ = true;
  }
  cv_.notify_one();
}

void StateFile::flush() {
  // One write at a time: the writer thread and a caller (a test, shutdown) may both flush, and
  // two writers of the same temporary file would interleave or rename it from under each other.
  std::lock_guard write_lock(write_mu_);
  Groups groups;
  {
    // A copy of the group pointers: rounds keep saving while the file is written.
    std::lock_guard lock(mu_);
    if (!dirty_) return;
    groups = state_;
    dirty_ = false;
  }
  auto r = write_file(groups);
  std::lock_guard lock(mu_);
  ++writes_;
  last_error_ = r ? std::string() : r.error().message;
  if (!r) SPDLOG_ERROR("{}", r.error().message);
}

uint64_t StateFile::writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

std::string StateFile::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void StateFile::writer_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || dirty_; });
    const bool stopping = stop_;
    lock.unlock();
    flush();
    lock.lock();
    if (stopping) return;
    // At most one write a second: rounds of many groups coalesce into one file write.
    cv_.wait_for(lock, kMinWriteGap, [this] { return stop_; });
  }
}

core::Result<void> StateFile::write_file(const Groups& groups) {
  const std::string tmp = path_ + ".tmp";
  auto fail = [&](const char* what) {
    const int e = errno;
    return core::fail(core::Error{"state file " + path_ + ": " + what + ": " + std::strerror(e),
                                  core::ErrorKind::io});
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot create temporary file");
  std::FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) {
    const auto r = fail("cannot open temporary file");
    ::close(fd);
    return r;
  }
  {
    // Streamed through one buffer: no copy of the whole text in memory.
    const auto buf = std::make_unique<char[]>(kIoBuffer);
    rapidjson::FileWriteStream out(f, buf.get(), kIoBuffer);
    Writer<rapidjson::FileWriteStream> w(out);
    write_state(w, groups);
    out.Flush();
  }
  if (std::fflush(f) != 0 || std::ferror(f)) {
    const auto r = fail("write");
    std::fclose(f);
    return r;
  }
  if (::fsync(::fileno(f)) != 0) {
    const auto r = fail("fsync");
    std::fclose(f);
    return r;
  }
  if (std::fclose(f) != 0) return fail("close");
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return fail("rename");
  // The rename itself is durable only once the folder is synced.
  const auto slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash + 1);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace app
