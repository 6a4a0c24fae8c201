#include "config/glob.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace config {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> split_segments(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '/') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Matches one character class starting after '['; sets `end` to the index after ']'.
bool match_class(std::string_view p, size_t start, char c, size_t& end, bool& valid) {
  size_t i = start;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    char lo = p[i];
    if (lo == '\\' && i + 1 < p.size()) lo = p[++i];
    char hi = lo;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hi = p[i + 2];
      if (hi == '\\' && i + 3 < p.size()) {
        hi = p[i + 3];
        ++i;
      }
      i += 2;
    }
    if (c >= lo && c <= hi) matched = true;
    ++i;
  }
  valid = i < p.size();
  end = i + 1;
  return matched != negate;
}

// Matches one path segment (no '/') against one pattern segment.
bool match_segment(std::string_view p, std::string_view s) {
  size_t pi = 0;
  size_t si = 0;
  while (pi < p.size()) {
    const char pc = p[pi];
    if (pc == '*') {
      while (pi < p.size() && p[pi] == '*') ++pi;
      if (pi == p.size()) return true;
      for (size_t k = si; k <= s.size(); ++k) {
        if (match_segment(p.substr(pi), s.substr(k))) return true;
      }
      return false;
    }
    if (pc == '{') {
      // Find the matching '}' and try each alternative followed by the rest.
      int depth = 0;
      size_t close = pi;
      std::vector<size_t> commas;
      for (; close < p.size(); ++close) {
        if (p[close] == '\\') {
          ++close;
          continue;
        }
        if (p[close] == '{') ++depth;
        if (p[close] == '}' && --depth == 0) break;
        if (p[close] == ',' && depth == 1) commas.push_back(close);
      }
      if (close >= p.size()) return false;  // unbalanced: doublestar reports ErrBadPattern
      const std::string_view rest = p.substr(close + 1);
      size_t from = pi + 1;
      commas.push_back(close);
      for (size_t comma : commas) {
        std::string candidate(p.substr(from, comma - from));
        candidate.append(rest);
        if (match_segment(candidate, s.substr(si))) return true;
        from = comma + 1;
      }
      return false;
    }
    if (si == s.size()) return false;
    if (pc == '?') {
      ++pi;
      ++si;
      continue;
    }
    if (pc == '[') {
      size_t end = 0;
      bool valid = false;
      const bool ok = match_class(p, pi + 1, s[si], end, valid);
      if (!valid || !ok) return false;
      pi = end;
      ++si;
      continue;
    }
    char lit = pc;
    if (pc == '\\' && pi + 1 < p.size()) lit = p[++pi];
    if (lit != s[si]) return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}

bool match_segments(const std::vector<std::string_view>& p, size_t pi,
                    const std::vector<std::string_view>& s, size_t si) {
  while (pi < p.size()) {
    if (p[pi] == "**") {
      if (pi + 1 == p.size()) return true;  // trailing ** matches everything below
      for (size_t k = si; k <= s.size(); ++k) {
        if (match_segments(p, pi + 1, s, k)) return true;
      }
      return false;
    }
    if (si == s.size() || !match_segment(p[pi], s[si])) return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}

}  // namespace

bool has_glob_meta(std::string_view pattern) {
  return pattern.find_first_of("*?[{\\") != std::string_view::npos;
}

bool glob_match(std::string_view pattern, std::string_view path) {
  return match_segments(split_segments(pattern), 0, split_segments(path), 0);
}

core::Result<std::vector<std::string>> glob_files(std::string_view pattern) {
  // The base directory is the longest leading run of segments without meta characters.
  const auto segs = split_segments(pattern);
  size_t first_meta = 0;
  while (first_meta < segs.size() && !has_glob_meta(segs[first_meta])) ++first_meta;
  std::vector<std::string> out;
  if (first_meta == segs.size()) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(pattern), ec)) out.emplace_back(pattern);
    return out;
  }
  std::string base;
  for (size_t i = 0; i < first_meta; ++i) {
    if (i > 0) base += '/';
    base.append(segs[i]);
  }
  const bool absolute = !pattern.empty() && pattern.front() == '/';
  if (base.empty()) base.push_back(absolute ? '/' : '.');
  std::error_code ec;
  if (!fs::exists(base, ec)) return out;
  if (!fs::is_directory(base, ec)) {
    return core::fail("cannot read directory \"" + base + "\" for pattern \"" +
                      std::string(pattern) + "\": not a directory");
  }
  const std::vector<std::string_view> rest(segs.begin() + static_cast<std::ptrdiff_t>(first_meta),
                                           segs.end());
  const bool recursive =
      rest.size() > 1 || std::find(rest.begin(), rest.end(), "**") != rest.end();
  auto consider = [&](const fs::directory_entry& entry) {
    std::error_code fec;
    if (!entry.is_regular_file(fec)) return;
    // Lexically: fs::relative resolves symlinks, so a file that is a symlink elsewhere (every
    // file of a Kubernetes ConfigMap volume: a.yml -> ..data/a.yml) never matched.
    const std::string rel = entry.path().lexically_relative(base).generic_string();
    if (rel.empty()) return;
    if (match_segments(rest, 0, split_segments(rel), 0)) {
      std::string full = (first_meta == 0 && !absolute) ? rel : (base == "/" ? "/" + rel
                                                                             : base + "/" + rel);
      out.push_back(std::move(full));
    }
  };
  if (recursive) {
    // Directory symlinks are not followed, so a link cycle cannot loop.
    fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec);
    if (ec) return core::fail("cannot read directory \"" + base + "\": " + ec.message());
    for (const auto& entry : it) consider(entry);
  } else {
    fs::directory_iterator it(base, fs::directory_options::skip_permission_denied, ec);
    if (ec) return core::fail("cannot read directory \"" + base + "\": " + ec.message());
    for (const auto& entry : it) consider(entry);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace config
