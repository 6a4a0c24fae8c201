#include "app/pprof.hpp"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "app/memory.hpp"

namespace app {

namespace {

struct GoProfile {
  std::string_view name;
  std::string_view instead;
};

// Go's runtime profiles and what gives the same insight into a C++ process.
constexpr GoProfile kGoOnly[] = {
    {"profile", "a CPU profile: perf record -g -p <pid> (then perf report), or perf top -p <pid>"},
    {"heap", "a heap profile: heaptrack -p <pid>, or /debug/pprof/malloc_info for the allocator"},
    {"allocs", "allocations: heaptrack -p <pid>"},
    {"goroutine", "threads' stacks: gdb -p <pid> -batch -ex 'thread apply all bt' (or eu-stack -p <pid>)"},
    {"threadcreate", "threads: ls /proc/<pid>/task, or gdb -p <pid> -batch -ex 'info threads'"},
    {"block", "off-CPU time: perf sched record -p <pid>, or offcputime from bcc"},
    {"mutex", "lock contention: perf lock record -p <pid>, or valgrind --tool=drd"},
    {"trace", "an execution trace: perf record -e sched:sched_switch -g -p <pid>, or perf trace -p <pid>"},
    {"symbol", "symbols: addr2line -e alertd (with the package's split debug info installed)"},
};

net::ServerResponse text(unsigned status, std::string body) {
  net::ServerResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out += c;
    }
  }
  return out;
}

net::ServerResponse index_page() {
  std::string body =
      "<html><head><title>/debug/pprof/</title></head><body>\n"
      "<p>alertd is a C++ program: Go's runtime profiles do not exist here. Served:</p>\n"
      "<ul>\n"
      "<li><a href=\"cmdline\">cmdline</a>: the command line, NUL-separated (as Go's)</li>\n"
      "<li><a href=\"malloc_info\">malloc_info</a>: glibc's allocator state, malloc_info(3) "
      "XML</li>\n"
      "<li><a href=\"mallinfo\">mallinfo</a>: glibc's allocator totals, mallinfo2(3)</li>\n"
      "</ul>\n<p>Instead of Go's profiles:</p>\n<ul>\n";
  for (const auto& p : kGoOnly) {
    body += "<li>" + std::string(p.name) + ": " + html_escape(p.instead) + "</li>\n";
  }
  body += "</ul>\n</body></html>\n";
  net::ServerResponse r = text(200, std::move(body));
  r.content_type = "text/html; charset=utf-8";
  return r;
}

net::ServerResponse cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string args((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The kernel ends every argument with NUL; Go joins them with NUL (none at the end).
  if (!args.empty() && args.back() == '\0') args.pop_back();
  return text(200, std::move(args));
}

net::ServerResponse malloc_info_xml() {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* f = ::open_memstream(&buf, &size);
  if (f == nullptr) return text(500, "open_memstream failed\n");
  const int rc = ::malloc_info(0, f);
  std::fclose(f);
  std::string body(buf != nullptr ? buf : "", size);
  std::free(buf);
  if (rc != 0) return text(500, "malloc_info failed\n");
  net::ServerResponse r = text(200, std::move(body));
  r.content_type = "text/xml; charset=utf-8";
  return r;
}

net::ServerResponse mallinfo_text() {
  const struct mallinfo2 m = ::mallinfo2();
  std::string body;
  auto line = [&body](std::string_view name, size_t v, std::string_view what) {
    body.append(name).append(" ").append(std::to_string(v)).append("  # ").append(what).append("\n");
  };
  line("arena", m.arena, "bytes from sbrk (main arena)");
  line("ordblks", m.ordblks, "free chunks");
  line("smblks", m.smblks, "free fastbin chunks");
  line("hblks", m.hblks, "mmapped regions");
  line("hblkhd", m.hblkhd, "bytes in mmapped regions");
  line("fsmblks", m.fsmblks, "bytes in free fastbin chunks");
  line("uordblks", m.uordblks, "bytes in use (allocated)");
  line("fordblks", m.fordblks, "bytes free in the arenas");
  line("keepcost", m.keepcost, "releasable bytes at the top of the main arena");
  line("memory_checks", memory_releaser().checks(),
       "checks for free heap pages to give back (a light one, once steady, reads RSS only)");
  line("memory_full_checks", memory_releaser().full_checks(),
       "checks that read these totals (mallinfo2 walks every free chunk)");
  line("memory_trims", memory_releaser().trims(), "malloc_trim calls that gave pages back");
  line("file_releases", memory_releaser().file_releases(),
       "releases of read-only file pages (after startup, reloads and work the rounds do not do)");
  line("file_bytes_released", memory_releaser().file_bytes_released(),
       "file-backed bytes the last release took out of RSS");
  return text(200, std::move(body));
}

}  // namespace

net::ServerResponse pprof_response(std::string_view name) {
  if (name.empty()) return index_page();
  if (name == "cmdline") return cmdline();
  if (name == "malloc_info") return malloc_info_xml();
  if (name == "mallinfo") return mallinfo_text();
  for (const auto& p : kGoOnly) {
    if (name == p.name) {
      return text(501, "/debug/pprof/" + std::string(name) +
                           " is a Go runtime profile; alertd is a C++ program. For " +
                           std::string(p.instead) + "\n");
    }
  }
  return text(404, "Unknown profile\n");
}

}  // namespace app
