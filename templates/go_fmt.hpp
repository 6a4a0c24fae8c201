// Go's fmt and strconv output, byte for byte, for the values templates print: %v of float64
// (shortest round trip, exponent iff X < -4 || X >= 6: "1e+06"), printf verbs with flags,
// widths and precisions, %!verb(type=value) for bad verbs, EXTRA/MISSING/NOVERB, Sprint's
// spacing rule, strconv.Quote, time.Time.String and time.Time.Format layouts (UTC only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "templates/value.hpp"

namespace templates::gofmt {

// strconv.FormatFloat(v, fmt, prec, 64) for fmt in e E f F g G x X; prec < 0 = shortest.
void append_float(std::string& out, double v, char fmt, int prec);
// fmt's %v of a float64.
inline void append_float_v(std::string& out, double v) { append_float(out, v, 'g', -1); }
void append_int(std::string& out, int64_t v);
void append_uint(std::string& out, uint64_t v);

// strconv.Quote.
void append_quote(std::string& out, std::string_view s);
// time.Time.String() of a UTC time given as Unix seconds and nanoseconds (0..999999999).
void append_time(std::string& out, int64_t unix_sec, int64_t nsec);
// time.Time.Format(layout) of a UTC time.
void append_time_layout(std::string& out, int64_t unix_sec, int64_t nsec, std::string_view layout);
// time.Duration.String().
void append_duration(std::string& out, int64_t ns);

// fmt.Sprint / Sprintln / Sprintf of the values. Each stops early once it has appended more
// than `max_size` bytes: a caller that caps its output checks out's size afterwards.
void sprint(std::string& out, std::span<const tmpl::Value> args, size_t max_size = SIZE_MAX);
void sprintln(std::string& out, std::span<const tmpl::Value> args, size_t max_size = SIZE_MAX);
void sprintf(std::string& out, std::string_view format, std::span<const tmpl::Value> args,
             size_t max_size = SIZE_MAX);
// fmt.Sprint of one value (%v).
void print_value(std::string& out, const tmpl::Value& v);

// strconv.ParseFloat(s, 64); the error reads like Go's
// (`strconv.ParseFloat: parsing "abc": invalid syntax`).
[[nodiscard]] core::Result<double> parse_float(std::string_view s);

}  // namespace templates::gofmt
