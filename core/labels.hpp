// Labels: an owning label set kept sorted by name, for alerts, rules and notifications. The
// datasource hot path uses the compact QueryResult instead and converts only what it keeps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

struct Label {
  std::string name;
  std::string value;
  friend bool operator==(const Label&, const Label&) = default;
};

class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<Label> init);

  // Sets name=value, replacing an existing value. Keeps the set sorted.
  void set(std::string_view name, std::string_view value);
  // Removes name; returns whether it was present.
  bool erase(std::string_view name);
  [[nodiscard]] std::optional<std::string_view> get(std::string_view name) const;
  [[nodiscard]] bool contains(std::string_view name) const { return get(name).has_value(); }

  [[nodiscard]] size_t size() const { return items_.size(); }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] auto begin() const { return items_.begin(); }
  [[nodiscard]] auto end() const { return items_.end(); }
  void clear() { items_.clear(); }
  void reserve(size_t n) { items_.reserve(n); }

  // vmalert's alert/series identity: FNV-1a 64 over (name, value, 0xFF) for every label in
  // name order, skipping __name__.
  [[nodiscard]] uint64_t hash_without_name() const;
  // Prometheus text form: {a="x", b="y"}.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const Labels&, const Labels&) = default;

 private:
  std::vector<Label> items_;
};

}  // namespace core
