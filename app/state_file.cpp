#include "app/state_file.hpp"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/hash.hpp"
#include "core/limit_hits.hpp"

namespace app {
namespace {

constexpr std::string_view kFormat = "alertd-state";
constexpr int kVersion = 1;
constexpr size_t kMaxStateFile = 256u << 20;
constexpr auto kMinWriteGap = std::chrono::seconds(1);

using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                 rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

int64_t ns(core::TimePoint t) { return t.time_since_epoch().count(); }

void write_labels(Writer& w, const core::Labels& ls) {
  w.StartObject();
  for (const auto& l : ls) {
    w.Key(l.name.data(), static_cast<rapidjson::SizeType>(l.name.size()));
    w.String(l.value.data(), static_cast<rapidjson::SizeType>(l.value.size()));
  }
  w.EndObject();
}

void write_u64(Writer& w, uint64_t v) {
  const auto s = std::to_string(v);  // as a string: JSON readers lose 64-bit integers
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

uint64_t digest(const rules::Group& g) {
  core::Fnv1a64 h;
  auto add = [&h](int64_t v) { h.add(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); };
  for (size_t i = 0; i < g.size(); ++i) {
    for (const auto& a : g.rule(i).active_alerts()) {
      add(static_cast<int64_t>(a.id));
      add(static_cast<int64_t>(a.state));
      add(ns(a.active_at));
      add(ns(a.start));
      add(ns(a.last_sent));
      add(ns(a.end));
      add(ns(a.keep_firing_since));
    }
    h.add_byte(0xFF);
  }
  return h.value();
}

struct Reader {
  std::string err;
  bool fail(std::string what) {
    if (err.empty()) err = std::move(what);
    return false;
  }
  bool u64(const rapidjson::Value& v, uint64_t& out, const char* what) {
    if (!v.IsString()) return fail(std::string(what) + " is not a string");
    const std::string s(v.GetString(), v.GetStringLength());
    char* end = nullptr;
    errno = 0;
    out = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || errno != 0 || *end != '\0') return fail(std::string(what) + " is not an ID");
    return true;
  }
  bool time(const rapidjson::Value& obj, const char* key, core::TimePoint& out) {
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || !it->value.IsInt64()) {
      return fail(std::string("alert field \"") + key + "\" missing or not an integer");
    }
    out = core::TimePoint{core::Duration{it->value.GetInt64()}};
    return true;
  }
  bool labels(const rapidjson::Value& obj, const char* key, core::Labels& out) {
    auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || !it->value.IsObject()) {
      return fail(std::string("alert field \"") + key + "\" missing or not an object");
    }
    for (const auto& m : it->value.GetObject()) {
      if (!m.value.IsString()) return fail(std::string("a value in \"") + key + "\" is not a string");
      out.set(std::string_view(m.name.GetString(), m.name.GetStringLength()),
              std::string_view(m.value.GetString(), m.value.GetStringLength()));
    }
    return true;
  }
  bool alert(const rapidjson::Value& v, rules::Alert& a) {
    if (!v.IsObject()) return fail("an alert is not an object");
    auto st = v.FindMember("state");
    if (st == v.MemberEnd() || !st->value.IsString()) return fail("alert without a state");
    const std::string_view s(st->value.GetString(), st->value.GetStringLength());
    if (s == "firing") {
      a.state = rules::AlertState::firing;
    } else if (s == "pending") {
      a.state = rules::AlertState::pending;
    } else {
      return fail("unknown alert state \"" + std::string(s) + "\"");
    }
    auto val = v.FindMember("value");
    if (val == v.MemberEnd() || !val->value.IsNumber()) return fail("alert without a value");
    a.value = val->value.GetDouble();
    auto restored = v.FindMember("restored");
    a.restored = restored != v.MemberEnd() && restored->value.IsBool() && restored->value.GetBool();
    return labels(v, "labels", a.labels) && labels(v, "annotations", a.annotations) &&
           time(v, "active_at", a.active_at) && time(v, "start", a.start) &&
           time(v, "last_sent", a.last_sent) && time(v, "end", a.end) &&
           time(v, "keep_firing_since", a.keep_firing_since);
  }
};

}  // namespace

std::string StateFile::encode(const SavedState& state) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("format");
  w.String(kFormat.data(), static_cast<rapidjson::SizeType>(kFormat.size()));
  w.Key("version");
  w.Int(kVersion);
  w.Key("groups");
  w.StartArray();
  for (const auto& [gid, rules] : state) {
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
      for (const auto& a : alerts) {
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
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

core::Result<SavedState> StateFile::decode(std::string_view text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag>(text.data(), text.size());
  if (doc.HasParseError()) {
    return core::fail(core::Error{std::string("not valid JSON at byte ") +
                                      std::to_string(doc.GetErrorOffset()) + ": " +
                                      rapidjson::GetParseError_En(doc.GetParseError()),
                                  core::ErrorKind::bad_response});
  }
  if (!doc.IsObject()) return core::fail("not an alertd state file");
  auto fmt = doc.FindMember("format");
  if (fmt == doc.MemberEnd() || !fmt->value.IsString() ||
      std::string_view(fmt->value.GetString(), fmt->value.GetStringLength()) != kFormat) {
    return core::fail("not an alertd state file (no \"format\": \"alertd-state\")");
  }
  auto ver = doc.FindMember("version");
  if (ver == doc.MemberEnd() || !ver->value.IsInt() || ver->value.GetInt() != kVersion) {
    return core::fail("unsupported state file version (this alertd reads version " +
                      std::to_string(kVersion) + ")");
  }
  auto groups = doc.FindMember("groups");
  if (groups == doc.MemberEnd() || !groups->value.IsArray()) return core::fail("no \"groups\" list");
  SavedState out;
  Reader r;
  for (const auto& g : groups->value.GetArray()) {
    uint64_t gid = 0;
    if (!g.IsObject() || !g.HasMember("id") || !r.u64(g["id"], gid, "group id")) break;
    auto rules = g.FindMember("rules");
    if (rules == g.MemberEnd() || !rules->value.IsArray()) {
      r.fail("group without a \"rules\" list");
      break;
    }
    for (const auto& rv : rules->value.GetArray()) {
      uint64_t rid = 0;
      if (!rv.IsObject() || !rv.HasMember("id") || !r.u64(rv["id"], rid, "rule id")) break;
      auto alerts = rv.FindMember("alerts");
      if (alerts == rv.MemberEnd() || !alerts->value.IsArray()) {
        r.fail("rule without an \"alerts\" list");
        break;
      }
      auto& dst = out[gid][rid];
      for (const auto& av : alerts->value.GetArray()) {
        rules::Alert a;
        if (!r.alert(av, a)) break;
        a.id = a.labels.hash_without_name();
        dst.push_back(std::move(a));
      }
      if (!r.err.empty()) break;
    }
    if (!r.err.empty()) break;
  }
  if (!r.err.empty()) return core::fail(r.err);
  return out;
}

core::Result<SavedState> StateFile::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return SavedState{};
    return core::fail(core::Error{"cannot read state file " + path + ": " + std::strerror(errno),
                                  core::ErrorKind::io});
  }
  std::string text;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0 || static_cast<size_t>(size) > kMaxStateFile) {
    if (size >= 0) core::count_limit_hit(core::Limit::state_file_size);
    return core::fail(core::Error{"state file " + path + " is larger than " +
                                      std::to_string(kMaxStateFile >> 20) + " MiB",
                                  core::ErrorKind::too_large});
  }
  in.seekg(0);
  text.resize(static_cast<size_t>(size));
  in.read(text.data(), size);
  if (!in) return core::fail(core::Error{"cannot read state file " + path, core::ErrorKind::io});
  auto state = decode(text);
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

StateFile::StateFile(std::string path) : path_(std::move(path)) {
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
  auto [it, inserted] = digests_.try_emplace(group.id(), d);
  if (!inserted && it->second == d) return;
  it->second = d;
  std::map<uint64_t, std::vector<rules::Alert>> rules;
  for (size_t i = 0; i < group.size(); ++i) {
    auto alerts = group.rule(i).active_alerts();
    if (!alerts.empty()) rules[group.rule(i).id()] = std::move(alerts);
  }
  {
    std::lock_guard lock(mu_);
    if (rules.empty()) {
      state_.erase(group.id());
    } else {
      state_[group.id()] = std::move(rules);
    }
    dirty_ = true;
  }
  cv_.notify_one();
}

void StateFile::forget(uint64_t group_id) {
  digests_.erase(group_id);
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
  std::string text;
  {
    std::lock_guard lock(mu_);
    if (!dirty_) return;
    text = encode(state_);
    dirty_ = false;
  }
  auto r = write_file(text);
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

core::Result<void> StateFile::write_file(const std::string& text) {
  const std::string tmp = path_ + ".tmp";
  auto fail = [&](const char* what) {
    const int e = errno;
    return core::fail(core::Error{"state file " + path_ + ": " + what + ": " + std::strerror(e),
                                  core::ErrorKind::io});
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot create temporary file");
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return fail("write");
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("fsync");
  }
  ::close(fd);
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
