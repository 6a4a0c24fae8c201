#include "notifier/target_labels.hpp"

#include <vector>

namespace notifier {

std::string join_url_path(std::string_view prefix, std::string_view path) {
  std::vector<std::string_view> segments;
  auto add = [&](std::string_view s) {
    size_t i = 0;
    while (i <= s.size()) {
      const size_t slash = s.find('/', i);
      const size_t end = slash == std::string_view::npos ? s.size() : slash;
      const std::string_view seg = s.substr(i, end - i);
      if (seg == "..") {
        if (!segments.empty()) segments.pop_back();
      } else if (!seg.empty() && seg != ".") {
        segments.push_back(seg);
      }
      i = end + 1;
    }
  };
  add(prefix);
  add(path);
  std::string out;
  for (std::string_view seg : segments) {
    out += '/';
    out.append(seg);
  }
  return out.empty() ? std::string("/") : out;
}

core::Result<std::optional<TargetSpec>> build_target(std::string_view address,
                                                     const core::Labels& meta,
                                                     std::string_view scheme,
                                                     std::string_view path_prefix,
                                                     const RelabelRules& relabel) {
  std::string_view addr = address;
  std::string_view sch = scheme.empty() ? std::string_view("http") : scheme;
  std::string alerts_path;
  if (addr.starts_with("http://")) {
    sch = "http";
    addr.remove_prefix(7);
  } else if (addr.starts_with("https://")) {
    sch = "https";
    addr.remove_prefix(8);
  }
  if (const size_t slash = addr.find('/'); slash != std::string_view::npos) {
    alerts_path = std::string(addr.substr(slash));
    addr = addr.substr(0, slash);
  } else {
    alerts_path = join_url_path(path_prefix, kAlertsPath);
  }
  core::Labels labels = meta;
  labels.set("__address__", addr);
  labels.set("__scheme__", sch);
  labels.set("__alerts_path__", alerts_path);
  if (!relabel.apply(labels)) return std::optional<TargetSpec>{};
  std::vector<std::string> meta_names;
  for (const core::Label& l : labels) {
    if (l.name.starts_with("__meta_")) meta_names.emplace_back(l.name);
  }
  for (const auto& n : meta_names) labels.erase(n);
  if (labels.empty()) return std::optional<TargetSpec>{};

  const std::string final_scheme(labels.get("__scheme__").value_or("http"));
  std::string path(labels.get("__alerts_path__").value_or(""));
  if (!path.starts_with('/')) path.insert(path.begin(), '/');
  std::string host(labels.get("__address__").value_or(""));
  if (host.empty()) return std::optional<TargetSpec>{};
  for (char c : host) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return core::fail("invalid address \"" + core::clip(host, 256) + "\" for scheme " +
                            final_scheme + " (target " + core::clip(address, 256) + ")",
                        core::ErrorKind::bad_config);
    }
  }
  if (host.find(':') == std::string::npos) host += final_scheme == "https" ? ":443" : ":80";
  TargetSpec out;
  out.url = final_scheme + "://" + host + path;
  out.labels = std::move(labels);
  return std::optional<TargetSpec>{std::move(out)};
}

}  // namespace notifier
