// The string and number helpers behind vmalert's template functions (internal to templates/),
// each a port of the Go function it names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace templates::tmplfn {

// humanize, humanize1024, humanizeDuration, humanizePercentage on a float64.
void humanize(std::string& out, double v);
void humanize1024(std::string& out, double v);
void humanize_duration(std::string& out, double v);
void humanize_percentage(std::string& out, double v);
// vmalert's float seconds -> time: ms = int64(v*1e3), then Unix seconds and nanoseconds.
void unix_float_to_time(double v, int64_t& sec, int64_t& nsec);

// strings.Title / ToUpper / ToLower (simple Unicode case mapping for Latin, Greek, Cyrillic).
std::string title(std::string_view s);
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);

// url.QueryEscape / url.PathEscape.
void query_escape(std::string& out, std::string_view s);
void path_escape(std::string& out, std::string_view s);
// text/template html / js builtins.
void html_builtin(std::string& out, std::string_view s);
void js_builtin(std::string& out, std::string_view s);
// vmalert's quicktemplate escapers.
void html_escape(std::string& out, std::string_view s);
void quotes_escape(std::string& out, std::string_view s);
void crlf_escape(std::string& out, std::string_view s);

// net.SplitHostPort based helpers.
std::string_view strip_port(std::string_view host_port);
std::string strip_domain(std::string_view host_port);
// The path of a URL ("http://h:1/prefix?x" -> "/prefix").
std::string_view url_path(std::string_view url);

// regexp.MatchString and regexp.MustCompile(pattern).ReplaceAllString(text, repl) with RE2.
core::Result<bool> regex_match(std::string_view pattern, std::string_view text);
// Fails once the result would exceed `max_size` bytes (an empty pattern inserts `repl` between
// every two characters: sizes multiply).
core::Result<std::string> regex_replace_all(std::string_view pattern, std::string_view repl,
                                            std::string_view text,
                                            size_t max_size = SIZE_MAX);

}  // namespace templates::tmplfn
