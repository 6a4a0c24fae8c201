// /debug/pprof/*: what of Go's net/http/pprof applies to a C++ process (vmalert serves Go's
// profiles there, behind -pprofAuthKey; app/auth.cpp routes and guards the paths).
//   /debug/pprof/             an index of what is served and what to use instead
//   /debug/pprof/cmdline      Go's format: the command line, arguments separated by NUL bytes
//   /debug/pprof/malloc_info  glibc's malloc_info(3) XML (arenas, free chunks, mmapped bytes)
//   /debug/pprof/mallinfo     glibc's mallinfo2(3) totals as "name value" text lines
//   Go-only profiles (profile, heap, allocs, goroutine, block, mutex, threadcreate, trace,
//   symbol): 501 with the tool to use instead (perf, heaptrack, gdb); anything else 404.
#pragma once

#include <string_view>

#include "net/http_server.hpp"

namespace app {

// `name` is the path after "/debug/pprof/" ("" for the index).
[[nodiscard]] net::ServerResponse pprof_response(std::string_view name);

}  // namespace app
