// Baselines for the parser benchmarks, each filling a core::QueryResult from a whole body
// (instant vector responses only; they exist to be measured, not used):
//   - rapidjson_dom:   whole-document RapidJSON DOM, then extraction (the C++ reference point)
//   - rapidjson_sax:   one RapidJSON SAX pass with a path-tracking handler
//   - split_rapidjson: a quote-aware splitter cuts data.result into elements, each parsed
//                      in situ as a small RapidJSON DOM in one reused arena, then extracted
// RapidJSON allocates through operator new here, so bench_alloc counts its memory too.
#pragma once

#include <string_view>

#include "core/query_result.hpp"

namespace alertd_bench {

bool parse_rapidjson_dom(std::string_view body, core::QueryResult& out);
bool parse_rapidjson_sax(std::string_view body, core::QueryResult& out);

class SplitRapidjsonParser {
 public:
  SplitRapidjsonParser();
  ~SplitRapidjsonParser();
  bool parse(std::string_view body, core::QueryResult& out);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace alertd_bench
