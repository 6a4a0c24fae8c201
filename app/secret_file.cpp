#include "app/secret_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace app {

core::Result<std::string> read_secret_file(std::string_view flag, const std::string& path) {
  const auto fail = [&](std::string_view why) {
    return core::fail(std::string(flag) + ": cannot read \"" + path + "\": " + std::string(why),
                      core::ErrorKind::bad_config);
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return fail(std::strerror(errno));
  std::string text(kMaxSecretFileBytes + 1, '\0');
  const size_t n = std::fread(text.data(), 1, text.size(), f.get());
  if (std::ferror(f.get()) != 0) return fail(std::strerror(errno));
  if (n > kMaxSecretFileBytes) {
    return fail("larger than " + std::to_string(kMaxSecretFileBytes) + " bytes");
  }
  text.resize(n);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' ||
                           text.back() == '\t' || text.back() == '\v' || text.back() == '\f')) {
    text.pop_back();
  }
  return text;
}

}  // namespace app
