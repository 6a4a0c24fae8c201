// core::expected / core::unexpected: std::expected where the standard library has it (g++ 12
// with -std=c++23, every production build). clang 14, the only compiler here with libFuzzer,
// cannot compile libstdc++'s <expected>, so fuzz builds get this small stand-in with the
// subset alertd uses: has_value, operator bool, *, ->, value(), error(), value_or.
// Code spells core::Result / core::fail / core::unexpected, never std::expected directly.
#pragma once

#include <version>

#if defined(__cpp_lib_expected)
#include <expected>
namespace core {
using std::expected;
using std::unexpected;
}  // namespace core
#else
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

namespace core {

template <class E>
class unexpected {
 public:
  explicit unexpected(E e) : e_(std::move(e)) {}
  const E& error() const& { return e_; }
  E& error() & { return e_; }
  E&& error() && { return std::move(e_); }

 private:
  E e_;
};
template <class E>
unexpected(E) -> unexpected<E>;

template <class T, class E>
class expected {
 public:
  using value_type = T;
  expected() : v_(std::in_place_index<0>) {}
  template <class U = T,
            class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                     !std::is_same_v<std::decay_t<U>, expected>>>
  expected(U&& v) : v_(std::in_place_index<0>, std::forward<U>(v)) {}
  template <class G>
  expected(const unexpected<G>& u) : v_(std::in_place_index<1>, u.error()) {}
  template <class G>
  expected(unexpected<G>&& u) : v_(std::in_place_index<1>, std::move(u).error()) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  T&& operator*() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& value() & { check(); return std::get<0>(v_); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  E& error() & { return std::get<1>(v_); }
  const E& error() const& { return std::get<1>(v_); }
  template <class U>
  T value_or(U&& d) const& { return has_value() ? **this : static_cast<T>(std::forward<U>(d)); }

 private:
  void check() const { if (!has_value()) std::abort(); }
  std::variant<T, E> v_;
};

template <class E>
class expected<void, E> {
 public:
  using value_type = void;
  expected() = default;
  template <class G>
  expected(const unexpected<G>& u) : e_(u.error()), ok_(false) {}
  template <class G>
  expected(unexpected<G>&& u) : e_(std::move(u).error()), ok_(false) {}
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const { if (!ok_) std::abort(); }
  void operator*() const {}
  E& error() & { return e_; }
  const E& error() const& { return e_; }

 private:
  E e_{};
  bool ok_ = true;
};

}  // namespace core
#endif
