#include "parser_variants.hpp"

#include <rapidjson/document.h>
#include <rapidjson/reader.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

namespace alertd_bench {

namespace {

// RapidJSON's base allocator through operator new, so the allocation counter sees it.
struct NewAllocator {
  static const bool kNeedFree = true;
  void* Malloc(size_t size) { return size != 0 ? ::operator new(size) : nullptr; }
  void* Realloc(void* p, size_t old_size, size_t new_size) {
    if (new_size == 0) {
      ::operator delete(p);
      return nullptr;
    }
    void* q = ::operator new(new_size);
    if (p != nullptr) {
      std::memcpy(q, p, old_size < new_size ? old_size : new_size);
      ::operator delete(p);
    }
    return q;
  }
  static void Free(void* p) { ::operator delete(p); }
};
using Pool = rapidjson::MemoryPoolAllocator<NewAllocator>;
using Doc = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, NewAllocator>;
using Val = rapidjson::GenericValue<rapidjson::UTF8<>, Pool>;
using ElemDoc = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool>;
using Reader = rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, NewAllocator>;

bool parse_value_string(std::string_view s, double& v) {
  if (s == "NaN") {
    v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "+Inf" || s == "Inf") {
    v = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Inf") {
    v = -std::numeric_limits<double>::infinity();
    return true;
  }
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// One result element {"metric":{...},"value":[ts,"v"]} into out.
bool extract_element(const Val& elem, core::QueryResult& out) {
  if (!elem.IsObject()) return false;
  const auto m = elem.FindMember("metric");
  const auto v = elem.FindMember("value");
  if (m == elem.MemberEnd() || v == elem.MemberEnd() || !m->value.IsObject() ||
      !v->value.IsArray() || v->value.Size() != 2 || !v->value[0].IsNumber() ||
      !v->value[1].IsString()) {
    return false;
  }
  out.begin_series();
  for (auto it = m->value.MemberBegin(); it != m->value.MemberEnd(); ++it) {
    if (!it->value.IsString()) {
      out.abandon_series();
      return false;
    }
    out.add_label({it->name.GetString(), it->name.GetStringLength()},
                  {it->value.GetString(), it->value.GetStringLength()});
  }
  core::Sample s;
  s.timestamp_ms = std::llround(v->value[0].GetDouble() * 1000.0);
  if (!parse_value_string({v->value[1].GetString(), v->value[1].GetStringLength()}, s.value)) {
    out.abandon_series();
    return false;
  }
  out.add_sample(s);
  out.end_series();
  return true;
}

}  // namespace

bool parse_rapidjson_dom(std::string_view body, core::QueryResult& out) {
  out.clear();
  Doc d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject()) return false;
  const auto st = d.FindMember("status");
  if (st == d.MemberEnd() || !st->value.IsString() ||
      std::string_view(st->value.GetString()) != "success") {
    return false;
  }
  const auto data = d.FindMember("data");
  if (data == d.MemberEnd() || !data->value.IsObject()) return false;
  const auto result = data->value.FindMember("result");
  if (result == data->value.MemberEnd() || !result->value.IsArray()) return false;
  for (const auto& e : result->value.GetArray()) {
    if (!extract_element(e, out)) return false;
  }
  return true;
}

namespace {
// Path-tracking SAX handler for {status, data:{resultType, result:[{metric, value}]}}.
struct SaxHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SaxHandler> {
  core::QueryResult& out;
  int depth = 0;
  std::string key;
  std::string label_name;
  bool in_data = false, in_result = false, in_elem = false, in_metric = false, in_value = false;
  int value_index = 0;
  core::Sample sample;
  bool ok_status = false;

  explicit SaxHandler(core::QueryResult& o) : out(o) {}

  bool Default() { return !in_metric && !in_value; }
  bool Number(double d) {
    if (in_value) {
      if (value_index++ != 0) return false;
      sample.timestamp_ms = std::llround(d * 1000.0);
      return true;
    }
    return !in_metric;
  }
  bool Int(int i) { return Number(i); }
  bool Uint(unsigned u) { return Number(u); }
  bool Int64(int64_t i) { return Number(static_cast<double>(i)); }
  bool Uint64(uint64_t u) { return Number(static_cast<double>(u)); }
  bool Double(double d) { return Number(d); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view v(s, n);
    if (in_metric) {
      out.add_label(label_name, v);
      return true;
    }
    if (in_value) {
      if (value_index++ != 1) return false;
      return parse_value_string(v, sample.value);
    }
    if (depth == 1 && key == "status") ok_status = v == "success";
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (in_metric) {
      label_name.assign(s, n);
    } else {
      key.assign(s, n);
    }
    return true;
  }
  bool StartObject() {
    ++depth;
    if (depth == 2 && key == "data") in_data = true;
    if (depth == 4 && in_result) {
      in_elem = true;
      out.begin_series();
    }
    if (depth == 5 && in_elem && key == "metric") in_metric = true;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (depth == 5 && in_metric) in_metric = false;
    if (depth == 4 && in_elem) {
      in_elem = false;
      out.end_series();
    }
    if (depth == 2) in_data = false;
    --depth;
    return true;
  }
  bool StartArray() {
    ++depth;
    if (depth == 3 && in_data && key == "result") in_result = true;
    if (depth == 5 && in_elem && key == "value") {
      in_value = true;
      value_index = 0;
    }
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    if (depth == 5 && in_value) {
      in_value = false;
      if (value_index != 2) return false;
      out.add_sample(sample);
    }
    if (depth == 3) in_result = false;
    --depth;
    return true;
  }
};
}  // namespace

bool parse_rapidjson_sax(std::string_view body, core::QueryResult& out) {
  out.clear();
  SaxHandler h(out);
  Reader reader;
  rapidjson::MemoryStream ms(body.data(), body.size());
  if (reader.Parse(ms, h).IsError()) return false;
  return h.ok_status;
}

struct SplitRapidjsonParser::Impl {
  std::vector<char> arena = std::vector<char>(64 * 1024);
  std::vector<char> stack_arena = std::vector<char>(16 * 1024);
  std::string element;
};

SplitRapidjsonParser::SplitRapidjsonParser() : impl_(new Impl) {}
SplitRapidjsonParser::~SplitRapidjsonParser() { delete impl_; }

bool SplitRapidjsonParser::parse(std::string_view body, core::QueryResult& out) {
  out.clear();
  // Benchmark shortcut: the envelope is located by search, not parsed.
  const size_t r = body.find(R"("result":[)");
  if (r == std::string_view::npos) return false;
  Pool pool(impl_->arena.data(), impl_->arena.size());
  Pool stack_pool(impl_->stack_arena.data(), impl_->stack_arena.size());
  const char* p = body.data() + r + 10;
  const char* e = body.data() + body.size();
  while (p < e) {
    while (p < e && (*p == ',' || *p == ' ' || *p == '\n')) ++p;
    if (p < e && *p == ']') return true;
    if (p >= e || *p != '{') return false;
    // Split: find the end of this element (quote- and escape-aware depth scan).
    const char* s = p;
    int depth = 0;
    bool in_str = false;
    for (; p < e; ++p) {
      const char c = *p;
      if (in_str) {
        if (c == '\\') {
          ++p;
        } else if (c == '"') {
          in_str = false;
        }
      } else if (c == '"') {
        in_str = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        ++p;
        break;
      }
    }
    if (depth != 0) return false;
    impl_->element.assign(s, static_cast<size_t>(p - s));
    // Both arenas restart at every element: nothing is allocated once they are warm.
    pool.Clear();
    stack_pool.Clear();
    ElemDoc d(&pool, 1024, &stack_pool);
    d.ParseInsitu(impl_->element.data());
    if (d.HasParseError() || !extract_element(d, out)) return false;
  }
  return false;
}

}  // namespace alertd_bench
