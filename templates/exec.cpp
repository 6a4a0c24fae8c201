// Go's text/template exec.go, ported: evaluation of pipelines, commands, fields, methods on
// time values, function calls with Go's argument typing, and the vmalert function set.
//
// Errors unwind with a private exception type, the way exec.go unwinds with panic/recover;
// it never leaves execute(), which returns a Result.
#include "templates/exec.hpp"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include "core/duration.hpp"
#include "core/limit_hits.hpp"
#include "templates/funcs.hpp"
#include "templates/go_fmt.hpp"

namespace templates::tmpl {

std::string_view type_name(const Value& v) {
  switch (v.kind) {
    case Kind::nil: return "<nil>";
    case Kind::boolean: return "bool";
    case Kind::int_: return "int";
    case Kind::int64_: return "int64";
    case Kind::uint8_: return "uint8";
    case Kind::uint64_: return "uint64";
    case Kind::float_: return "float64";
    case Kind::string: return "string";
    case Kind::html: return "template.HTML";
    case Kind::duration: return "time.Duration";
    case Kind::time: return "time.Time";
    case Kind::labels: return "map[string]string";
    case Kind::args: return "map[string]interface {}";
    case Kind::metrics: return "[]templates.metric";
    case Kind::metric: return "templates.metric";
    case Kind::root: return "notifier.tplData";
  }
  return "?";
}

bool truth(const Value& v) {
  switch (v.kind) {
    case Kind::nil: return false;
    case Kind::boolean: return v.b;
    case Kind::int_:
    case Kind::int64_:
    case Kind::duration: return v.i != 0;
    case Kind::uint8_:
    case Kind::uint64_: return v.u != 0;
    case Kind::float_: return v.f != 0;
    case Kind::string:
    case Kind::html: return !v.str().empty();
    case Kind::labels: return v.labels != nullptr && !v.labels->empty();
    case Kind::args: return v.args && !v.args->items.empty();
    case Kind::metrics: return v.metrics && !v.metrics->empty();
    case Kind::time:
    case Kind::metric:
    case Kind::root: return true;
  }
  return false;
}

namespace {

struct ExecError {
  std::string msg;
};
struct FuncError {
  std::string msg;
};

enum class P : uint8_t { any, rv, str, metric, metrics, duration, time };

std::string_view p_name(P p) {
  switch (p) {
    case P::any: return "interface {}";
    case P::rv: return "reflect.Value";
    case P::str: return "string";
    case P::metric: return "templates.metric";
    case P::metrics: return "[]templates.metric";
    case P::duration: return "time.Duration";
    case P::time: return "time.Time";
  }
  return "?";
}

struct Sig {
  P params[3] = {P::any, P::any, P::any};
  uint8_t n = 0;
  bool variadic = false;
};

Sig sig(std::initializer_list<P> ps, bool variadic = false) {
  Sig s;
  for (P p : ps) s.params[s.n++] = p;
  s.variadic = variadic;
  return s;
}

Sig make_func_sig(Func f) {
  switch (f) {
    case Func::and_:
    case Func::or_:
    case Func::index:
    case Func::slice:
    case Func::eq:
    case Func::call: return sig({P::rv, P::rv}, true);
    case Func::not_:
    case Func::len: return sig({P::rv});
    case Func::print:
    case Func::println:
    case Func::html:
    case Func::js:
    case Func::urlquery:
    case Func::args: return sig({P::any}, true);
    case Func::printf: return sig({P::str, P::any}, true);
    case Func::ne:
    case Func::lt:
    case Func::le:
    case Func::gt:
    case Func::ge: return sig({P::rv, P::rv});
    case Func::title:
    case Func::toUpper:
    case Func::toLower:
    case Func::crlfEscape:
    case Func::quotesEscape:
    case Func::jsonEscape:
    case Func::htmlEscape:
    case Func::stripPort:
    case Func::stripDomain:
    case Func::parseDuration:
    case Func::parseDurationTime:
    case Func::pathEscape:
    case Func::queryEscape:
    case Func::safeHtml:
    case Func::query: return sig({P::str});
    case Func::match: return sig({P::str, P::str});
    case Func::reReplaceAll: return sig({P::str, P::str, P::str});
    case Func::humanize:
    case Func::humanize1024:
    case Func::humanizeDuration:
    case Func::humanizePercentage:
    case Func::humanizeTimestamp:
    case Func::toTime: return sig({P::any});
    case Func::formatTime: return sig({P::str, P::any});
    case Func::now:
    case Func::externalURL:
    case Func::pathPrefix: return sig({});
    case Func::first: return sig({P::metrics});
    case Func::label: return sig({P::str, P::metric});
    case Func::value:
    case Func::strvalue: return sig({P::metric});
    case Func::sortByLabel: return sig({P::str, P::metrics});
  }
  return sig({});
}

// Signatures by function id, built once.
const Sig& func_sig(Func f) {
  static const auto table = [] {
    std::vector<Sig> t(static_cast<size_t>(Func::query) + 1);
    for (size_t i = 0; i < t.size(); ++i) t[i] = make_func_sig(static_cast<Func>(i));
    return t;
  }();
  return table[static_cast<size_t>(f)];
}

enum class Method : uint8_t {
  t_add, t_sub, t_unix, t_unix_milli, t_unix_micro, t_unix_nano, t_format, t_string, t_utc,
  t_before, t_after, t_equal, t_is_zero, t_round, t_truncate, t_year, t_year_day, t_day, t_hour,
  t_minute, t_second, t_nanosecond,
  d_string, d_seconds, d_minutes, d_hours, d_milliseconds, d_microseconds, d_nanoseconds, d_abs,
  d_round, d_truncate,
};

bool lookup_method(Kind k, std::string_view name, Method& m, Sig& s) {
  struct Entry {
    std::string_view name;
    Method m;
    Sig s;
  };
  if (k == Kind::time) {
    static const Entry kTime[] = {
        {"Add", Method::t_add, sig({P::duration})},       {"Sub", Method::t_sub, sig({P::time})},
        {"Unix", Method::t_unix, sig({})},                {"UnixMilli", Method::t_unix_milli, sig({})},
        {"UnixMicro", Method::t_unix_micro, sig({})},     {"UnixNano", Method::t_unix_nano, sig({})},
        {"Format", Method::t_format, sig({P::str})},      {"String", Method::t_string, sig({})},
        {"UTC", Method::t_utc, sig({})},                  {"Local", Method::t_utc, sig({})},
        {"Before", Method::t_before, sig({P::time})},     {"After", Method::t_after, sig({P::time})},
        {"Equal", Method::t_equal, sig({P::time})},       {"IsZero", Method::t_is_zero, sig({})},
        {"Round", Method::t_round, sig({P::duration})},   {"Truncate", Method::t_truncate, sig({P::duration})},
        {"Year", Method::t_year, sig({})},                {"YearDay", Method::t_year_day, sig({})},
        {"Day", Method::t_day, sig({})},                  {"Hour", Method::t_hour, sig({})},
        {"Minute", Method::t_minute, sig({})},            {"Second", Method::t_second, sig({})},
        {"Nanosecond", Method::t_nanosecond, sig({})},
    };
    for (const auto& e : kTime) {
      if (e.name == name) {
        m = e.m;
        s = e.s;
        return true;
      }
    }
  } else if (k == Kind::duration) {
    static const Entry kDur[] = {
        {"String", Method::d_string, sig({})},
        {"Seconds", Method::d_seconds, sig({})},
        {"Minutes", Method::d_minutes, sig({})},
        {"Hours", Method::d_hours, sig({})},
        {"Milliseconds", Method::d_milliseconds, sig({})},
        {"Microseconds", Method::d_microseconds, sig({})},
        {"Nanoseconds", Method::d_nanoseconds, sig({})},
        {"Abs", Method::d_abs, sig({})},
        {"Round", Method::d_round, sig({P::duration})},
        {"Truncate", Method::d_truncate, sig({P::duration})},
    };
    for (const auto& e : kDur) {
      if (e.name == name) {
        m = e.m;
        s = e.s;
        return true;
      }
    }
  }
  return false;
}

enum class Flow { normal, brk, cont };

struct Scratch {
  std::vector<Value> vars;
  // Per slot of `vars`: 1 once written in this render. A slot read before it is written (Go
  // parses `{{ $x := $x }}` and `{{ range $i, $i }}`, then fails with "undefined variable")
  // must not see what an earlier render left there.
  std::vector<uint8_t> set;
  std::vector<Value> stack;
};

class ScratchLease {
 public:
  ScratchLease() {
    auto& pool = free_list();
    if (pool.empty()) {
      s_ = std::make_unique<Scratch>();
    } else {
      s_ = std::move(pool.back());
      pool.pop_back();
    }
  }
  ~ScratchLease() {
    if (s_->vars.size() > 64) {  // do not keep a deep recursion's frames
      s_->vars.clear();
      s_->set.clear();
    }
    s_->stack.clear();
    free_list().push_back(std::move(s_));
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch& operator*() { return *s_; }

 private:
  static std::vector<std::unique_ptr<Scratch>>& free_list() {
    thread_local std::vector<std::unique_ptr<Scratch>> pool;
    return pool;
  }
  std::unique_ptr<Scratch> s_;
};

std::string quote(std::string_view s) {
  std::string q;
  gofmt::append_quote(q, s);
  return q;
}

std::string sprint_v(const Value& v) {
  std::string s;
  if (v.is_nil()) return "<nil>";
  gofmt::print_value(s, v);
  return s;
}

// A string value sharing the keep-alive of `src`.
Value sub_value(const Value& src, std::string_view sub) {
  if (src.owned) return Value::make_string(std::string(sub));
  Value v = Value::make_view(sub);
  v.metrics = src.metrics;
  v.args = src.args;
  return v;
}

double to_float64(const Value& v) {
  switch (v.kind) {
    case Kind::float_: return v.f;
    case Kind::int_:
    case Kind::int64_: return static_cast<double>(v.i);
    case Kind::uint64_: return static_cast<double>(v.u);
    case Kind::string: {
      auto r = gofmt::parse_float(v.str());
      if (!r) throw FuncError{r.error().message};
      return *r;
    }
    default: throw FuncError{"unexpected value type " + sprint_v(v)};
  }
}

enum class BK { invalid, boolean, int_, uint_, float_, string, other };

BK basic_kind(const Value& v) {
  switch (v.kind) {
    case Kind::nil: return BK::invalid;
    case Kind::boolean: return BK::boolean;
    case Kind::int_:
    case Kind::int64_:
    case Kind::duration: return BK::int_;
    case Kind::uint8_:
    case Kind::uint64_: return BK::uint_;
    case Kind::float_: return BK::float_;
    case Kind::string:
    case Kind::html: return BK::string;
    default: return BK::other;
  }
}

const char* const kBadComparisonType = "invalid type for comparison";
const char* const kBadComparison = "incompatible types for comparison";

bool eq2(const Value& a, BK k1, const Value& b) {
  const BK k2 = basic_kind(b);
  if (k1 != k2) {
    if (k1 == BK::int_ && k2 == BK::uint_) return a.i >= 0 && static_cast<uint64_t>(a.i) == b.u;
    if (k1 == BK::uint_ && k2 == BK::int_) return b.i >= 0 && a.u == static_cast<uint64_t>(b.i);
    if (!a.is_nil() && !b.is_nil()) throw FuncError{kBadComparison};
    return false;
  }
  switch (k1) {
    case BK::boolean: return a.b == b.b;
    case BK::float_: return a.f == b.f;
    case BK::int_: return a.i == b.i;
    case BK::string: return a.str() == b.str();
    case BK::uint_: return a.u == b.u;
    case BK::invalid: return true;
    case BK::other:
      if (a.kind == Kind::time && b.kind == Kind::time) return a.i == b.i && a.u == b.u;
      throw FuncError{"non-comparable type " + sprint_v(b) + ": " + std::string(type_name(b))};
  }
  return false;
}

bool eq(const Value& a, std::span<const Value> rest) {
  if (rest.empty()) throw FuncError{"missing argument for comparison"};
  const BK k1 = basic_kind(a);
  for (const Value& b : rest) {
    if (eq2(a, k1, b)) return true;
  }
  return false;
}

bool lt(const Value& a, const Value& b) {
  const BK k1 = basic_kind(a);
  if (k1 == BK::invalid || k1 == BK::other) throw FuncError{kBadComparisonType};
  const BK k2 = basic_kind(b);
  if (k2 == BK::invalid || k2 == BK::other) throw FuncError{kBadComparisonType};
  if (k1 != k2) {
    if (k1 == BK::int_ && k2 == BK::uint_) return a.i < 0 || static_cast<uint64_t>(a.i) < b.u;
    if (k1 == BK::uint_ && k2 == BK::int_) return b.i >= 0 && a.u < static_cast<uint64_t>(b.i);
    throw FuncError{kBadComparison};
  }
  switch (k1) {
    case BK::boolean: throw FuncError{kBadComparisonType};
    case BK::float_: return a.f < b.f;
    case BK::int_: return a.i < b.i;
    case BK::string: return a.str() < b.str();
    case BK::uint_: return a.u < b.u;
    default: throw FuncError{kBadComparisonType};
  }
}

int64_t index_arg(const Value& index, size_t cap) {
  int64_t x = 0;
  switch (index.kind) {
    case Kind::int_:
    case Kind::int64_:
    case Kind::duration: x = index.i; break;
    case Kind::uint8_:
    case Kind::uint64_: x = static_cast<int64_t>(index.u); break;
    case Kind::nil: throw FuncError{"cannot index slice/array with nil"};
    default: throw FuncError{"cannot index slice/array with type " + std::string(type_name(index))};
  }
  if (x < 0 || static_cast<uint64_t>(x) > cap) throw FuncError{"index out of range: " + std::to_string(x)};
  return x;
}

Value metric_at(const Value& list, size_t i) {
  Value m;
  m.kind = Kind::metric;
  m.metrics = list.metrics;
  m.i = static_cast<int64_t>(i);
  return m;
}

std::string escape_args(std::span<const Value> a) {
  if (a.size() == 1 && a[0].kind == Kind::string) return std::string(a[0].str());
  std::string s;
  gofmt::sprint(s, a);
  return s;
}

__extension__ using I128 = __int128;

// Nanoseconds since Go's zero time (January 1, year 1 UTC).
I128 abs_ns(const Value& t) {
  return (static_cast<I128>(t.i) - Value::kGoZeroTimeUnixSec) * 1000000000 + static_cast<I128>(t.u);
}

Value time_from_abs(I128 abs) {
  I128 sec = abs / 1000000000;
  I128 nsec = abs % 1000000000;
  if (nsec < 0) {
    nsec += 1000000000;
    --sec;
  }
  return Value::make_go_time(static_cast<int64_t>(sec + Value::kGoZeroTimeUnixSec), static_cast<int64_t>(nsec));
}

// Time.Round/Truncate, relative to Go's zero time as Go computes them.
Value time_round(const Value& t, int64_t d, bool round) {
  if (d <= 0) return t;
  const I128 abs = abs_ns(t);
  I128 r = abs % d;
  if (r < 0) r += d;
  I128 res = abs - r;
  if (round && r + r >= d) res += d;
  return time_from_abs(res);
}

int64_t saturate(I128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

int64_t dur_round(int64_t v, int64_t m, bool round) {
  if (m <= 0) return v;
  int64_t r = v % m;
  if (!round) return v - r;
  if (v < 0) {
    r = -r;
    if (r + r < m) return v + r;
    return v - m + r;
  }
  if (r + r < m) return v - r;
  return v + m - r;
}

// The calling thread's stack, as far as a render may use it: nested blocks inside recursive
// {{ template }} calls can go deeper than any stack (1000 calls x 1000 levels of nesting), so a
// render stops with an error once its frames come within kStackReserve of the stack's end.
// Zeros when unknown (no check).
struct StackBounds {
  uintptr_t low = 0;    // the stack's lowest address
  uintptr_t floor = 0;  // low + the reserve: frames below it stop the render
};

constexpr size_t kStackReserve = size_t{256} << 10;  // room to throw (more under sanitizers)

const StackBounds& stack_bounds() {
  thread_local const StackBounds bounds = [] {
    StackBounds b;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return b;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size > 0) {
      b.low = reinterpret_cast<uintptr_t>(addr);
      b.floor = b.low + std::min(kStackReserve, size / 4);
    }
    pthread_attr_destroy(&attr);
    return b;
  }();
  return bounds;
}

class State {
 public:
  State(const RootData& root, std::string& out, Scratch& sc, const TreeMap& own,
        const TemplateSetData* shared)
      : root_(root),
        out_(out),
        start_(out.size()),
        sc_(sc),
        own_(own),
        shared_(shared),
        stack_(stack_bounds()) {}

  void run(const Tree& t) {
    tree_ = &t;
    // Slots keep their values between renders (the scratch is reused); `set` says which were
    // written in this render: the predeclared ones here, the others by their declarations.
    if (sc_.vars.size() < static_cast<size_t>(t.slots)) sc_.vars.resize(static_cast<size_t>(t.slots));
    sc_.set.resize(sc_.vars.size());
    std::fill_n(sc_.set.begin(), t.slots, uint8_t{0});
    base_ = 0;
    Value rootv;
    rootv.kind = Kind::root;
    rootv.root = &root_;
    set_var(0, rootv);
    const uint32_t used = t.prefix_used;
    if (used != 0) {
      const TemplateData& d = *root_.data;
      const TemplateEnv& e = *root_.env;
      auto set = [&](int slot, Value v) {
        if (used & (1u << slot)) set_var(slot, std::move(v));
      };
      set(1, Value::make_float(d.value));
      set(2, Value::make_view(d.type));
      set(3, Value::make_labels(root_.labels));
      set(4, Value::make_view(d.expr));
      set(5, Value::make_duration(d.interval));
      set(6, Value::make_labels(root_.external_labels));
      set(7, Value::make_view(e.external_url));
      set(8, Value::make_uint(d.alert_id, Kind::uint64_));
      set(9, Value::make_uint(d.group_id, Kind::uint64_));
      set(10, Value::make_time(d.active_at));
      set(11, Value::make_duration(d.for_));
      set(12, Value::make_bool(d.is_partial));
    }
    walk(rootv, t.root);
  }

 private:
  // ---- error context (Go's s.at(node)) ----
  enum class CtxKind : uint8_t { none, arg, cmd, pipe, node };
  struct Ctx {
    CtxKind kind = CtxKind::none;
    const void* p = nullptr;
    uint32_t pos = 0;
  };
  void at(const Arg& a) { ctx_ = {CtxKind::arg, &a, a.pos}; }
  void at(const Command& c) { ctx_ = {CtxKind::cmd, &c, c.pos}; }
  void at(const Pipe& p) { ctx_ = {CtxKind::pipe, &p, p.pos}; }
  void at(const Node& n) { ctx_ = {CtxKind::node, &n, n.pos}; }

  std::string ctx_string() const {
    switch (ctx_.kind) {
      case CtxKind::none: return {};
      case CtxKind::arg: return to_string(*static_cast<const Arg*>(ctx_.p));
      case CtxKind::cmd: return to_string(*static_cast<const Command*>(ctx_.p));
      case CtxKind::pipe: return to_string(*static_cast<const Pipe*>(ctx_.p));
      case CtxKind::node: {
        const Node& n = *static_cast<const Node*>(ctx_.p);
        const std::string pipe = n.pipe ? to_string(*n.pipe) : std::string();
        switch (n.type) {
          case NodeType::text: return n.text;
          case NodeType::action: return "{{" + pipe + "}}";
          case NodeType::if_: return "{{if " + pipe + "}}";
          case NodeType::range: return "{{range " + pipe + "}}";
          case NodeType::with: return "{{with " + pipe + "}}";
          case NodeType::template_:
            return "{{template " + quote(n.text) + (pipe.empty() ? "" : " " + pipe) + "}}";
          case NodeType::break_: return "{{break}}";
          case NodeType::continue_: return "{{continue}}";
        }
        return {};
      }
    }
    return {};
  }

  [[noreturn]] void errorf(const std::string& msg) const {
    const std::string& src = *tree_->source;
    const size_t pos = std::min<size_t>(ctx_.pos, src.size());
    const std::string_view before(src.data(), pos);
    const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    const size_t nl = before.rfind('\n');
    int col = nl == std::string_view::npos ? static_cast<int>(pos) : static_cast<int>(pos - nl - 1);
    if (line == 1) col += tree_->col_offset;
    std::string context = ctx_string();
    // Go: %.20s... (20 runes)
    size_t runes = 0, cut = 0;
    while (cut < context.size() && runes < 20) {
      ++cut;
      while (cut < context.size() && (static_cast<unsigned char>(context[cut]) & 0xC0) == 0x80) ++cut;
      ++runes;
    }
    if (cut < context.size()) context = context.substr(0, cut) + "...";
    throw ExecError{"template: " + tree_->parse_name + ":" + std::to_string(line) + ":" +
                    std::to_string(col) + ": executing " + quote(tree_->name) + " at <" + context +
                    ">: " + msg};
  }

  void set_var(int slot, Value v) {
    const size_t i = base_ + static_cast<size_t>(slot);
    sc_.vars[i] = std::move(v);
    sc_.set[i] = 1;
  }

  // kMaxRenderedBytes: checked after every write, so a loop stops as soon as it crosses it.
  void check_size() const {
    if (out_.size() - start_ > kMaxRenderedBytes) {
      core::count_limit_hit(core::Limit::rendered_template);
      errorf("rendered value exceeds " + std::to_string(kMaxRenderedBytes) + " bytes");
    }
  }

  // TemplateEnv::max_render_steps (kMaxRenderSteps): one step per node walked, range iteration and command; a function call
  // also pays for the bytes it reads and writes (so a loop over megabyte strings stops sooner)
  // and a `query` for its round trip. Counted before the work, so the error names the node.
  // `where` becomes the error's context only when the budget runs out.
  void spend(uint64_t steps, Ctx where) {
    steps_ += steps;
    if (steps_ > root_.env->max_render_steps) {
      ctx_ = where;
      core::count_limit_hit(core::Limit::template_steps);
      errorf("exceeded " + std::to_string(root_.env->max_render_steps) + " evaluation steps");
    }
  }

  // Before going a level deeper (a list of nodes, a pipeline): stops when the stack is nearly
  // full. The frame's address is on the thread's stack (also with a sanitizer's fake stack).
  void check_stack() const {
    const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    if (sp < stack_.floor && sp >= stack_.low) {
      errorf("exceeded maximum template depth (the thread's stack is nearly full)");
    }
  }

  // ---- walking ----
  Flow walk(const Value& dot, const std::vector<Node>& list) {
    check_stack();
    for (const Node& n : list) {
      spend(1, Ctx{CtxKind::node, &n, n.pos});
      switch (n.type) {
        case NodeType::text:
          out_.append(n.text);
          at(n);
          check_size();
          break;
        case NodeType::action: {
          at(n);
          Value v = eval_pipeline(dot, n.pipe.get());
          if (n.pipe->decls.empty()) {
            at(n);
            print(v);
            check_size();
          }
          break;
        }
        case NodeType::if_:
        case NodeType::with: {
          const Flow f = walk_if_or_with(dot, n);
          if (f != Flow::normal) return f;
          break;
        }
        case NodeType::range: walk_range(dot, n); break;
        case NodeType::template_: walk_template(dot, n); break;
        case NodeType::break_: return Flow::brk;
        case NodeType::continue_: return Flow::cont;
      }
    }
    return Flow::normal;
  }

  void print(const Value& v) {
    switch (v.kind) {
      case Kind::nil: out_.append("<no value>"); return;
      case Kind::root: print_root(*v.root); return;
      default: gofmt::print_value(out_, v); return;
    }
  }

  void print_root(const RootData& r) {
    const TemplateData& d = *r.data;
    out_.append("{{");
    out_.append(d.type);
    out_.push_back(' ');
    gofmt::print_value(out_, Value::make_labels(r.labels));
    out_.push_back(' ');
    gofmt::append_float_v(out_, d.value);
    out_.push_back(' ');
    out_.append(d.expr);
    out_.push_back(' ');
    gofmt::append_duration(out_, d.interval.count());
    out_.push_back(' ');
    gofmt::append_uint(out_, d.alert_id);
    out_.push_back(' ');
    gofmt::append_uint(out_, d.group_id);
    out_.push_back(' ');
    {
      const Value at = Value::make_time(d.active_at);
      gofmt::append_time(out_, at.i, static_cast<int64_t>(at.u));
    }
    out_.push_back(' ');
    gofmt::append_duration(out_, d.for_.count());
    out_.append(d.is_partial ? " true} " : " false} ");
    gofmt::print_value(out_, Value::make_labels(r.external_labels));
    out_.push_back(' ');
    out_.append(r.env->external_url);
    out_.push_back('}');
  }

  Flow walk_if_or_with(const Value& dot, const Node& n) {
    at(n);
    Value val = eval_pipeline(dot, n.pipe.get());
    if (truth(val)) {
      if (n.type == NodeType::with) return walk(val, n.branches->list);
      return walk(dot, n.branches->list);
    }
    if (n.branches->has_else) return walk(dot, n.branches->else_list);
    return Flow::normal;
  }

  void walk_range(const Value& dot, const Node& n) {
    at(n);
    Value val = eval_pipeline(dot, n.pipe.get());
    const auto& decls = n.pipe->decls;
    auto one = [&](Value index, Value elem) -> bool {
      spend(1, Ctx{CtxKind::node, &n, n.pos});
      if (!decls.empty() && decls.back().slot >= 0) set_var(decls.back().slot, elem);
      if (decls.size() > 1 && decls[0].slot >= 0) set_var(decls[0].slot, std::move(index));
      return walk(elem, n.branches->list) == Flow::brk;
    };
    bool ran = false;
    switch (val.kind) {
      case Kind::metrics:
        for (size_t i = 0; i < val.metrics->size(); ++i) {
          ran = true;
          if (one(Value::make_int(static_cast<int64_t>(i)), metric_at(val, i))) break;
        }
        break;
      case Kind::labels:
        if (val.labels != nullptr) {
          for (const auto& l : *val.labels) {
            ran = true;
            if (one(sub_value(val, l.name), sub_value(val, l.value))) break;
          }
        }
        break;
      case Kind::args:
        for (const auto& [k, v] : val.args->items) {
          ran = true;
          Value key = Value::make_view(k);
          key.args = val.args;
          if (one(std::move(key), v)) break;
        }
        break;
      case Kind::int_:
      case Kind::int64_:
      case Kind::uint8_:
      case Kind::uint64_: {
        // Go >= 1.22 (vmalert's toolchain): range over an integer n yields 0..n-1.
        if (decls.size() > 1) errorf("can't use " + sprint_v(val) + " to iterate over more than one variable");
        const bool is_uint = val.kind == Kind::uint8_ || val.kind == Kind::uint64_;
        const uint64_t count = is_uint ? val.u : (val.i > 0 ? static_cast<uint64_t>(val.i) : 0);
        for (uint64_t i = 0; i < count; ++i) {
          ran = true;
          Value elem = is_uint ? Value::make_uint(i, val.kind) : Value::make_int(static_cast<int64_t>(i), val.kind);
          if (one(Value{}, std::move(elem))) break;
        }
        break;
      }
      case Kind::nil: break;
      default: at(n); errorf("range can't iterate over " + sprint_v(val));
    }
    if (!ran && n.branches->has_else) walk(dot, n.branches->else_list);
  }

  const Tree* lookup_tree(std::string_view name) const {
    if (auto it = own_.find(name); it != own_.end()) return it->second.get();
    if (shared_ != nullptr) {
      if (auto it = shared_->trees.find(name); it != shared_->trees.end()) return it->second.get();
    }
    return nullptr;
  }

  void walk_template(const Value& dot, const Node& n) {
    at(n);
    const Tree* t = lookup_tree(n.text);
    if (t == nullptr) errorf("template " + quote(n.text) + " not defined");
    if (depth_ >= kMaxDepth) errorf("exceeded maximum template depth (" + std::to_string(kMaxDepth) + ")");
    Value newdot = n.pipe ? eval_pipeline(dot, n.pipe.get()) : Value{};
    const size_t saved_base = base_;
    const Tree* saved_tree = tree_;
    const size_t nb = sc_.vars.size();
    sc_.vars.resize(nb + static_cast<size_t>(t->slots));
    sc_.set.resize(nb + static_cast<size_t>(t->slots), uint8_t{0});
    base_ = nb;
    tree_ = t;
    ++depth_;
    set_var(0, newdot);
    walk(newdot, t->root);
    --depth_;
    sc_.vars.resize(nb);
    sc_.set.resize(nb);
    base_ = saved_base;
    tree_ = saved_tree;
  }

  // ---- evaluation ----
  Value eval_pipeline(const Value& dot, const Pipe* pipe) {
    if (pipe == nullptr) return {};
    check_stack();
    at(*pipe);
    Value value;
    bool has = false;
    for (const Command& cmd : pipe->cmds) {
      Value next = eval_command(dot, cmd, has ? &value : nullptr);
      value = std::move(next);
      has = true;
    }
    for (const Decl& d : pipe->decls) {
      if (d.slot < 0) errorf("undefined variable: " + d.name);
      set_var(d.slot, value);
    }
    return value;
  }

  void not_a_function(std::span<const Arg> args, const Value* final) {
    if (args.size() > 1 || final != nullptr) {
      errorf("can't give argument to non-function " + to_string(args[0]));
    }
  }

  Value eval_command(const Value& dot, const Command& cmd, const Value* final) {
    spend(1, Ctx{CtxKind::cmd, &cmd, cmd.pos});
    const Arg& first = cmd.args[0];
    const std::span<const Arg> args(cmd.args);
    switch (first.type) {
      case ArgType::field: return eval_field_node(dot, first, args, final);
      case ArgType::chain: return eval_chain_node(dot, first, args, final);
      case ArgType::identifier: return eval_function(dot, first, Ctx{CtxKind::cmd, &cmd, cmd.pos}, args, final);
      case ArgType::pipe:
        not_a_function(args, final);
        return eval_pipeline(dot, first.pipe.get());
      case ArgType::variable: return eval_variable_node(dot, first, args, final);
      default: break;
    }
    at(first);
    not_a_function(args, final);
    switch (first.type) {
      case ArgType::boolean: return Value::make_bool(first.b);
      case ArgType::dot: return dot;
      case ArgType::nil: errorf("nil is not a command");
      case ArgType::number: return ideal_constant(first);
      case ArgType::string: return Value::make_view(first.text);
      default: break;
    }
    errorf("can't evaluate command " + quote(to_string(first)));
  }

  Value ideal_constant(const Arg& a) {
    at(a);
    const Number& n = a.num;
    if (n.float_form) return Value::make_float(n.f);
    if (n.is_int) return Value::make_int(n.i);
    if (n.is_uint) errorf(a.text + " overflows int");
    return {};
  }

  Value eval_field_node(const Value& dot, const Arg& field, std::span<const Arg> args, const Value* final) {
    at(field);
    return eval_field_chain(dot, dot, field, field.fields, args, final);
  }

  Value eval_chain_node(const Value& dot, const Arg& chain, std::span<const Arg> args, const Value* final) {
    at(chain);
    if (chain.base && chain.base->type == ArgType::nil) {
      errorf("indirection through explicit nil in " + to_string(chain));
    }
    Value base = chain.pipe ? eval_pipeline(dot, chain.pipe.get()) : eval_arg(dot, P::any, *chain.base);
    return eval_field_chain(dot, base, chain, chain.fields, args, final);
  }

  Value eval_variable_node(const Value& dot, const Arg& v, std::span<const Arg> args, const Value* final) {
    at(v);
    if (v.slot < 0 || sc_.set[base_ + static_cast<size_t>(v.slot)] == 0) {
      errorf("undefined variable: " + v.name);
    }
    Value value = sc_.vars[base_ + static_cast<size_t>(v.slot)];
    if (v.fields.empty()) {
      not_a_function(args, final);
      return value;
    }
    return eval_field_chain(dot, value, v, v.fields, args, final);
  }

  Value eval_field_chain(const Value& dot, Value receiver, const Arg& node,
                         const std::vector<std::string>& idents, std::span<const Arg> args,
                         const Value* final) {
    const size_t n = idents.size();
    for (size_t i = 0; i + 1 < n; ++i) {
      receiver = eval_field(dot, idents[i], node, {}, nullptr, receiver);
    }
    return eval_field(dot, idents[n - 1], node, args, final, receiver);
  }

  Value root_field(const RootData& r, std::string_view name, bool& found) {
    const TemplateData& d = *r.data;
    found = true;
    if (name == "Value") return Value::make_float(d.value);
    if (name == "Labels") return Value::make_labels(r.labels);
    if (name == "Type") return Value::make_view(d.type);
    if (name == "Expr") return Value::make_view(d.expr);
    if (name == "Interval") return Value::make_duration(d.interval);
    if (name == "AlertID") return Value::make_uint(d.alert_id, Kind::uint64_);
    if (name == "GroupID") return Value::make_uint(d.group_id, Kind::uint64_);
    if (name == "ActiveAt") return Value::make_time(d.active_at);
    if (name == "For") return Value::make_duration(d.for_);
    if (name == "IsPartial") return Value::make_bool(d.is_partial);
    if (name == "ExternalLabels") return Value::make_labels(r.external_labels);
    if (name == "ExternalURL") return Value::make_view(r.env->external_url);
    found = false;
    return {};
  }

  Value eval_field(const Value& dot, const std::string& name, const Arg& node,
                   std::span<const Arg> args, const Value* final, const Value& receiver) {
    if (receiver.is_nil()) return {};
    Method m;
    Sig s;
    if (lookup_method(receiver.kind, name, m, s)) {
      return eval_call(dot, s, nullptr, &m, &receiver, name, Ctx{CtxKind::arg, &node, node.pos},
                       args.empty() ? args : args.subspan(1), final);
    }
    const bool has_args = args.size() > 1 || final != nullptr;
    switch (receiver.kind) {
      case Kind::root: {
        bool found = false;
        Value v = root_field(*receiver.root, name, found);
        if (found) {
          if (has_args) errorf(name + " has arguments but cannot be invoked as function");
          return v;
        }
        break;
      }
      case Kind::metric: {
        const QuerySample& smp = receiver.sample();
        Value v;
        if (name == "Labels") {
          v = Value::make_labels(&smp.labels, receiver.metrics);
        } else if (name == "Timestamp") {
          v = Value::make_int(smp.timestamp_ms / 1000, Kind::int64_);
        } else if (name == "Value") {
          v = Value::make_float(smp.value);
        } else {
          break;
        }
        if (has_args) errorf(name + " has arguments but cannot be invoked as function");
        return v;
      }
      case Kind::labels: {
        if (has_args) errorf(name + " is not a method but has arguments");
        std::string_view val;
        if (receiver.labels != nullptr) val = receiver.labels->get(name).value_or(std::string_view{});
        Value v = Value::make_view(val);
        v.metrics = receiver.metrics;
        return v;
      }
      case Kind::args: {
        if (has_args) errorf(name + " is not a method but has arguments");
        const Value* v = receiver.args->find(name);
        return v != nullptr ? *v : Value{};
      }
      default: break;
    }
    errorf("can't evaluate field " + name + " in type " + std::string(type_name(receiver)));
  }

  Value eval_function(const Value& dot, const Arg& ident, Ctx node, std::span<const Arg> args,
                      const Value* final) {
    at(ident);
    const Sig& s = func_sig(ident.func);
    return eval_call(dot, s, &ident.func, nullptr, nullptr, ident.name, node,
                     args.empty() ? args : args.subspan(1), final);
  }

  // Go's evalCall; `args` excludes the function node.
  Value eval_call(const Value& dot, const Sig& s, const Func* f, const Method* m, const Value* recv,
                  std::string_view name, Ctx node, std::span<const Arg> args, const Value* final) {
    const size_t num_in = args.size() + (final != nullptr ? 1 : 0);
    size_t num_fixed = args.size();
    if (s.variadic) {
      num_fixed = static_cast<size_t>(s.n) - 1;
      if (num_in < num_fixed) {
        errorf("wrong number of args for " + std::string(name) + ": want at least " +
               std::to_string(num_fixed) + " got " + std::to_string(num_in));
      }
    } else if (num_in != s.n) {
      errorf("wrong number of args for " + std::string(name) + ": want " + std::to_string(s.n) +
             " got " + std::to_string(num_in));
    }
    if (f != nullptr && (*f == Func::and_ || *f == Func::or_)) {
      const bool is_or = *f == Func::or_;
      Value v;
      for (const Arg& a : args) {
        v = eval_arg(dot, P::rv, a);
        if (truth(v) == is_or) return v;
      }
      if (final != nullptr) v = validate(*final, P::rv);
      return v;
    }
    auto& stack = sc_.stack;
    const size_t mark = stack.size();
    size_t i = 0;
    for (; i < num_fixed && i < args.size(); ++i) stack.push_back(eval_arg(dot, s.params[i], args[i]));
    if (s.variadic) {
      for (; i < args.size(); ++i) stack.push_back(eval_arg(dot, s.params[s.n - 1], args[i]));
    }
    if (final != nullptr) {
      P t = s.params[s.n - 1];
      if (s.variadic && num_in - 1 < num_fixed) t = s.params[num_in - 1];
      stack.push_back(validate(*final, t));
    }
    const std::span<Value> argv(stack.data() + mark, stack.size() - mark);
    size_t arg_bytes = 0;
    for (const Value& v : argv) arg_bytes += v.str().size();
    spend(arg_bytes / kBytesPerStep + (f != nullptr && *f == Func::query ? kStepsPerQuery : 0), node);
    Value result;
    try {
      result = f != nullptr ? call_func(*f, argv) : call_method(*m, *recv, argv);
      if (result.owned) spend(result.own.size() / kBytesPerStep, node);
      if (result.owned && result.own.size() > kMaxRenderedBytes) {
        core::count_limit_hit(core::Limit::rendered_template);
        throw FuncError{"result exceeds " + std::to_string(kMaxRenderedBytes) + " bytes"};
      }
    } catch (const FuncError& e) {
      stack.resize(mark);
      ctx_ = node;
      errorf("error calling " + std::string(name) + ": " + e.msg);
    }
    stack.resize(mark);
    return result;
  }

  Value eval_arg(const Value& dot, P typ, const Arg& a) {
    at(a);
    switch (a.type) {
      case ArgType::dot: return validate(dot, typ);
      case ArgType::nil:
        if (typ == P::any) return {};
        if (typ == P::metrics) {
          Value v;
          v.kind = Kind::metrics;
          v.metrics = std::make_shared<Metrics>();
          return v;
        }
        errorf("cannot assign nil to " + std::string(p_name(typ)));
      case ArgType::field: return validate(eval_field_node(dot, a, std::span<const Arg>(&a, 1), nullptr), typ);
      case ArgType::variable: return validate(eval_variable_node(dot, a, {}, nullptr), typ);
      case ArgType::pipe: return validate(eval_pipeline(dot, a.pipe.get()), typ);
      case ArgType::identifier:
        return validate(eval_function(dot, a, Ctx{CtxKind::arg, &a, a.pos}, {}, nullptr), typ);
      case ArgType::chain: return validate(eval_chain_node(dot, a, {}, nullptr), typ);
      default: break;
    }
    switch (typ) {
      case P::str:
        if (a.type == ArgType::string) return Value::make_view(a.text);
        errorf("expected string; found " + to_string(a));
      case P::duration:
        if (a.type == ArgType::number && a.num.is_int) return Value::make_int(a.num.i, Kind::duration);
        errorf("expected integer; found " + to_string(a));
      case P::any:
      case P::rv:
        switch (a.type) {
          case ArgType::boolean: return Value::make_bool(a.b);
          case ArgType::number: return ideal_constant(a);
          case ArgType::string: return Value::make_view(a.text);
          default: break;
        }
        break;
      default: break;
    }
    errorf("can't handle " + to_string(a) + " for arg of type " + std::string(p_name(typ)));
  }

  Value validate(const Value& v, P typ) {
    if (v.is_nil()) {
      if (typ == P::any) return {};
      if (typ == P::metrics) {
        Value e;
        e.kind = Kind::metrics;
        e.metrics = std::make_shared<Metrics>();
        return e;
      }
      errorf("invalid value; expected " + std::string(p_name(typ)));
    }
    bool ok = true;
    switch (typ) {
      case P::any:
      case P::rv: break;
      case P::str: ok = v.kind == Kind::string; break;
      case P::metric: ok = v.kind == Kind::metric; break;
      case P::metrics: ok = v.kind == Kind::metrics; break;
      case P::duration: ok = v.kind == Kind::duration; break;
      case P::time: ok = v.kind == Kind::time; break;
    }
    if (!ok) {
      errorf("wrong type for value; expected " + std::string(p_name(typ)) + "; got " +
             std::string(type_name(v)));
    }
    return v;
  }

  // ---- functions ----
  Value string_result(std::string s) { return Value::make_string(std::move(s)); }

  Value call_func(Func f, std::span<Value> a) {
    std::string s;
    switch (f) {
      case Func::and_:
      case Func::or_: return {};
      case Func::not_: return Value::make_bool(!truth(a[0]));
      case Func::len:
        switch (a[0].kind) {
          case Kind::string:
          case Kind::html: return Value::make_int(static_cast<int64_t>(a[0].str().size()));
          case Kind::labels: return Value::make_int(a[0].labels ? static_cast<int64_t>(a[0].labels->size()) : 0);
          case Kind::args: return Value::make_int(static_cast<int64_t>(a[0].args->items.size()));
          case Kind::metrics: return Value::make_int(static_cast<int64_t>(a[0].metrics->size()));
          default: throw FuncError{"len of type " + std::string(type_name(a[0]))};
        }
      case Func::index: {
        Value item = a[0];
        if (item.is_nil()) throw FuncError{"index of untyped nil"};
        for (size_t k = 1; k < a.size(); ++k) {
          const Value& idx = a[k];
          switch (item.kind) {
            case Kind::string:
            case Kind::html: {
              const auto str = item.str();
              const int64_t x = index_arg(idx, str.size());
              if (static_cast<size_t>(x) == str.size()) throw FuncError{"reflect: string index out of range"};
              item = Value::make_uint(static_cast<unsigned char>(str[static_cast<size_t>(x)]), Kind::uint8_);
              break;
            }
            case Kind::metrics: {
              const int64_t x = index_arg(idx, item.metrics->size());
              if (static_cast<size_t>(x) == item.metrics->size()) throw FuncError{"reflect: slice index out of range"};
              item = metric_at(item, static_cast<size_t>(x));
              break;
            }
            case Kind::labels: {
              if (idx.is_nil()) throw FuncError{"value is nil; should be of type string"};
              if (idx.kind != Kind::string) {
                throw FuncError{"value has type " + std::string(type_name(idx)) + "; should be string"};
              }
              std::string_view v;
              if (item.labels != nullptr) v = item.labels->get(idx.str()).value_or(std::string_view{});
              Value nv = Value::make_view(v);
              nv.metrics = item.metrics;
              item = std::move(nv);
              break;
            }
            case Kind::args: {
              if (idx.is_nil()) throw FuncError{"value is nil; should be of type string"};
              if (idx.kind != Kind::string) {
                throw FuncError{"value has type " + std::string(type_name(idx)) + "; should be string"};
              }
              const Value* v = item.args->find(idx.str());
              Value nv = v != nullptr ? *v : Value{};
              item = std::move(nv);
              if (item.is_nil() && k + 1 < a.size()) throw FuncError{"index of untyped nil"};
              break;
            }
            default: throw FuncError{"can't index item of type " + std::string(type_name(item))};
          }
        }
        return item;
      }
      case Func::slice: {
        const Value& item = a[0];
        if (item.is_nil()) throw FuncError{"slice of untyped nil"};
        const size_t nidx = a.size() - 1;
        if (nidx > 3) throw FuncError{"too many slice indexes: " + std::to_string(nidx)};
        size_t cap = 0;
        if (item.kind == Kind::string || item.kind == Kind::html) {
          if (nidx == 3) throw FuncError{"cannot 3-index slice a string"};
          cap = item.str().size();
        } else if (item.kind == Kind::metrics) {
          cap = item.metrics->size();
        } else {
          throw FuncError{"can't slice item of type " + std::string(type_name(item))};
        }
        size_t idx[3] = {0, cap, cap};
        for (size_t k = 0; k < nidx; ++k) idx[k] = static_cast<size_t>(index_arg(a[k + 1], cap));
        if (idx[0] > idx[1]) {
          throw FuncError{"invalid slice index: " + std::to_string(idx[0]) + " > " + std::to_string(idx[1])};
        }
        if (item.kind == Kind::metrics) {
          if (nidx == 3 && idx[1] > idx[2]) {
            throw FuncError{"invalid slice index: " + std::to_string(idx[1]) + " > " + std::to_string(idx[2])};
          }
          Value v;
          v.kind = Kind::metrics;
          v.metrics = std::make_shared<Metrics>(item.metrics->begin() + static_cast<std::ptrdiff_t>(idx[0]),
                                                item.metrics->begin() + static_cast<std::ptrdiff_t>(idx[1]));
          return v;
        }
        Value v = sub_value(item, item.str().substr(idx[0], idx[1] - idx[0]));
        v.kind = item.kind;
        return v;
      }
      case Func::print: gofmt::sprint(s, a, kMaxRenderedBytes); return string_result(std::move(s));
      case Func::println: gofmt::sprintln(s, a, kMaxRenderedBytes); return string_result(std::move(s));
      case Func::printf:
        gofmt::sprintf(s, a[0].str(), a.subspan(1), kMaxRenderedBytes);
        return string_result(std::move(s));
      case Func::eq: return Value::make_bool(eq(a[0], a.subspan(1)));
      case Func::ne: return Value::make_bool(!eq(a[0], a.subspan(1)));
      case Func::lt: return Value::make_bool(lt(a[0], a[1]));
      case Func::le: return Value::make_bool(lt(a[0], a[1]) || eq(a[0], a.subspan(1)));
      case Func::gt: return Value::make_bool(!(lt(a[0], a[1]) || eq(a[0], a.subspan(1))));
      case Func::ge: return Value::make_bool(!lt(a[0], a[1]));
      case Func::html: tmplfn::html_builtin(s, escape_args(a)); return string_result(std::move(s));
      case Func::js: tmplfn::js_builtin(s, escape_args(a)); return string_result(std::move(s));
      case Func::urlquery: tmplfn::query_escape(s, escape_args(a)); return string_result(std::move(s));
      case Func::call:
        if (a[0].is_nil()) throw FuncError{"call of nil"};
        throw FuncError{"non-function of type " + std::string(type_name(a[0]))};
      case Func::title: return string_result(tmplfn::title(a[0].str()));
      case Func::toUpper: return string_result(tmplfn::to_upper(a[0].str()));
      case Func::toLower: return string_result(tmplfn::to_lower(a[0].str()));
      case Func::crlfEscape: tmplfn::crlf_escape(s, a[0].str()); return string_result(std::move(s));
      case Func::quotesEscape: tmplfn::quotes_escape(s, a[0].str()); return string_result(std::move(s));
      case Func::jsonEscape:
        s.push_back('"');
        tmplfn::quotes_escape(s, a[0].str());
        s.push_back('"');
        return string_result(std::move(s));
      case Func::htmlEscape: tmplfn::html_escape(s, a[0].str()); return string_result(std::move(s));
      case Func::stripPort: return sub_value(a[0], tmplfn::strip_port(a[0].str()));
      case Func::stripDomain: return string_result(tmplfn::strip_domain(a[0].str()));
      case Func::match: {
        auto r = tmplfn::regex_match(a[0].str(), a[1].str());
        if (!r) throw FuncError{r.error().message};
        return Value::make_bool(*r);
      }
      case Func::reReplaceAll: {
        auto r = tmplfn::regex_replace_all(a[0].str(), a[1].str(), a[2].str(), kMaxRenderedBytes);
        if (!r) throw FuncError{r.error().message};
        return string_result(std::move(*r));
      }
      case Func::parseDuration:
      case Func::parseDurationTime: {
        auto d = core::parse_duration(a[0].str());
        if (!d) throw FuncError{d.error().message};
        if (f == Func::parseDurationTime) return Value::make_duration(*d);
        const int64_t ns = d->count();
        return Value::make_float(static_cast<double>(ns / 1000000000) +
                                 static_cast<double>(ns % 1000000000) / 1e9);
      }
      case Func::humanize: tmplfn::humanize(s, to_float64(a[0])); return string_result(std::move(s));
      case Func::humanize1024: tmplfn::humanize1024(s, to_float64(a[0])); return string_result(std::move(s));
      case Func::humanizeDuration:
        tmplfn::humanize_duration(s, to_float64(a[0]));
        return string_result(std::move(s));
      case Func::humanizePercentage:
        tmplfn::humanize_percentage(s, to_float64(a[0]));
        return string_result(std::move(s));
      case Func::humanizeTimestamp: {
        const double v = to_float64(a[0]);
        if (std::isnan(v) || std::isinf(v)) {
          gofmt::append_float(s, v, 'g', 4);
        } else {
          int64_t sec = 0, nsec = 0;
          tmplfn::unix_float_to_time(v, sec, nsec);
          gofmt::append_time(s, sec, nsec);
        }
        return string_result(std::move(s));
      }
      case Func::toTime:
      case Func::formatTime: {
        const double v = to_float64(a[f == Func::toTime ? 0 : 1]);
        if (std::isnan(v) || std::isinf(v)) throw FuncError{"cannot convert " + sprint_v(Value::make_float(v)) + " to time.Time"};
        int64_t sec = 0, nsec = 0;
        tmplfn::unix_float_to_time(v, sec, nsec);
        if (f == Func::toTime) return Value::make_go_time(sec, nsec);
        gofmt::append_time_layout(s, sec, nsec, a[0].str());
        return string_result(std::move(s));
      }
      case Func::now: {
        if (!root_.env->now) throw FuncError{"now() is not available in this context"};
        const auto t = root_.env->now();
        return Value::make_float(static_cast<double>(core::unix_seconds(t)));
      }
      case Func::externalURL: return Value::make_view(root_.env->external_url);
      case Func::pathPrefix: return Value::make_view(tmplfn::url_path(root_.env->external_url));
      case Func::pathEscape: tmplfn::path_escape(s, a[0].str()); return string_result(std::move(s));
      case Func::queryEscape: tmplfn::query_escape(s, a[0].str()); return string_result(std::move(s));
      case Func::first:
        if (a[0].metrics->empty()) throw FuncError{"first() called on vector with no elements"};
        return metric_at(a[0], 0);
      case Func::label: {
        const QuerySample& smp = a[1].sample();
        Value v = Value::make_view(smp.labels.get(a[0].str()).value_or(std::string_view{}));
        v.metrics = a[1].metrics;
        return v;
      }
      case Func::value: return Value::make_float(a[0].sample().value);
      case Func::strvalue: {
        const QuerySample& smp = a[0].sample();
        Value v = Value::make_view(smp.labels.get("__name__").value_or(std::string_view{}));
        v.metrics = a[0].metrics;
        return v;
      }
      case Func::sortByLabel: {
        const std::string key(a[0].str());
        Metrics& ms = *a[1].metrics;
        std::stable_sort(ms.begin(), ms.end(), [&](const QuerySample& x, const QuerySample& y) {
          return x.labels.get(key).value_or(std::string_view{}) < y.labels.get(key).value_or(std::string_view{});
        });
        return a[1];
      }
      case Func::args: {
        auto m = std::make_shared<ArgsMap>();
        for (size_t k = 0; k < a.size(); ++k) m->items.emplace_back("arg" + std::to_string(k), a[k]);
        std::sort(m->items.begin(), m->items.end(),
                  [](const auto& x, const auto& y) { return x.first < y.first; });
        Value v;
        v.kind = Kind::args;
        v.args = std::move(m);
        return v;
      }
      case Func::safeHtml: {
        Value v = a[0];
        v.kind = Kind::html;
        return v;
      }
      case Func::query: {
        if (!root_.env->query) {
          throw FuncError{"cannot execute query " + quote(a[0].str()) + ": query is not available in this context"};
        }
        auto r = root_.env->query(a[0].str());
        if (!r) throw FuncError{r.error().message};
        Value v;
        v.kind = Kind::metrics;
        v.metrics = std::make_shared<Metrics>(std::move(*r));
        return v;
      }
    }
    return {};
  }

  Value call_method(Method m, const Value& recv, std::span<Value> a) {
    const int64_t t = recv.i;  // time: Unix seconds; duration: nanoseconds
    const auto nsec = static_cast<int64_t>(recv.u);
    std::string s;
    auto civil_part = [&](int which) -> int64_t {
      std::string tmp;
      // Reuse the layout formatter for the civil fields.
      static const char* const kLayouts[] = {"2006", "002", "2", "15", "4", "5"};
      gofmt::append_time_layout(tmp, t, nsec, kLayouts[which]);
      return std::stoll(tmp);
    };
    // Go computes these with wrapping int64 arithmetic.
    auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
    switch (m) {
      case Method::t_add: return time_from_abs(abs_ns(recv) + a[0].i);
      case Method::t_sub: return Value::make_duration(core::Duration{saturate(abs_ns(recv) - abs_ns(a[0]))});
      case Method::t_unix: return Value::make_int(t, Kind::int64_);
      case Method::t_unix_milli:
        return Value::make_int(wrap(static_cast<uint64_t>(t) * 1000u + static_cast<uint64_t>(nsec / 1000000)), Kind::int64_);
      case Method::t_unix_micro:
        return Value::make_int(wrap(static_cast<uint64_t>(t) * 1000000u + static_cast<uint64_t>(nsec / 1000)), Kind::int64_);
      case Method::t_unix_nano:
        return Value::make_int(wrap(static_cast<uint64_t>(t) * 1000000000u + static_cast<uint64_t>(nsec)), Kind::int64_);
      case Method::t_format: gofmt::append_time_layout(s, t, nsec, a[0].str()); return string_result(std::move(s));
      case Method::t_string: gofmt::append_time(s, t, nsec); return string_result(std::move(s));
      case Method::t_utc: return recv;
      case Method::t_before: return Value::make_bool(abs_ns(recv) < abs_ns(a[0]));
      case Method::t_after: return Value::make_bool(abs_ns(recv) > abs_ns(a[0]));
      case Method::t_equal: return Value::make_bool(abs_ns(recv) == abs_ns(a[0]));
      case Method::t_is_zero: return Value::make_bool(t == Value::kGoZeroTimeUnixSec && nsec == 0);
      case Method::t_round: return time_round(recv, a[0].i, true);
      case Method::t_truncate: return time_round(recv, a[0].i, false);
      case Method::t_year: return Value::make_int(civil_part(0));
      case Method::t_year_day: return Value::make_int(civil_part(1));
      case Method::t_day: return Value::make_int(civil_part(2));
      case Method::t_hour: return Value::make_int(civil_part(3));
      case Method::t_minute: return Value::make_int(civil_part(4));
      case Method::t_second: return Value::make_int(civil_part(5));
      case Method::t_nanosecond: return Value::make_int(nsec);
      case Method::d_string: gofmt::append_duration(s, t); return string_result(std::move(s));
      case Method::d_seconds:
        return Value::make_float(static_cast<double>(t / 1000000000) + static_cast<double>(t % 1000000000) / 1e9);
      case Method::d_minutes:
        return Value::make_float(static_cast<double>(t / 60000000000LL) +
                                 static_cast<double>(t % 60000000000LL) / 60e9);
      case Method::d_hours:
        return Value::make_float(static_cast<double>(t / 3600000000000LL) +
                                 static_cast<double>(t % 3600000000000LL) / 3600e9);
      case Method::d_milliseconds: return Value::make_int(t / 1000000, Kind::int64_);
      case Method::d_microseconds: return Value::make_int(t / 1000, Kind::int64_);
      case Method::d_nanoseconds: return Value::make_int(t, Kind::int64_);
      case Method::d_abs: return Value::make_int(t < 0 && t != INT64_MIN ? -t : t, Kind::duration);
      case Method::d_round: return Value::make_int(dur_round(t, a[0].i, true), Kind::duration);
      case Method::d_truncate: return Value::make_int(dur_round(t, a[0].i, false), Kind::duration);
    }
    return {};
  }

  static constexpr int kMaxDepth = 1000;
  static constexpr uint64_t kBytesPerStep = 256;
  static constexpr uint64_t kStepsPerQuery = 1000;

  const RootData& root_;
  std::string& out_;
  const size_t start_;  // out_'s size before this render: the cap counts from here
  Scratch& sc_;
  const TreeMap& own_;
  const TemplateSetData* shared_;
  const StackBounds& stack_;
  const Tree* tree_ = nullptr;
  size_t base_ = 0;
  int depth_ = 0;
  uint64_t steps_ = 0;
  Ctx ctx_;
};

const core::Labels& empty_labels() {
  static const core::Labels kEmpty;
  return kEmpty;
}

}  // namespace

core::Result<void> execute(const Tree& main, const TreeMap& own, const TemplateSetData* shared,
                           const TemplateData& data, const TemplateEnv& env, std::string& out) {
  RootData root;
  root.data = &data;
  root.env = &env;
  root.labels = data.labels != nullptr ? data.labels : &empty_labels();
  root.external_labels = env.external_labels != nullptr ? env.external_labels : &empty_labels();
  const size_t start = out.size();
  ScratchLease lease;
  try {
    State st(root, out, *lease, own, shared);
    st.run(main);
  } catch (const ExecError& e) {
    out.resize(start);
    return core::fail(e.msg);
  }
  return {};
}

}  // namespace templates::tmpl
