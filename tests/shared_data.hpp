// Tests that read ../shared/ (the rule corpus, vmalert's template cases, testdata). That folder
// sits beside CI's checkout, not beside a user's clone, so such a test carries the Catch tag
// [shared] (CTest label "shared", see alertd_discover_tests in tests/CMakeLists.txt) and starts
// with ALERTD_NEEDS_SHARED(path): when the path is absent it prints one line that CTest's
// SKIP_REGULAR_EXPRESSION reports as "Skipped", and returns. scripts/test.sh fails a CI run
// (CI=true) in which anything was skipped.
#pragma once

#include <filesystem>
#include <iostream>

namespace test_shared {

inline bool available(const char* path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return true;
  std::cout << "ALERTD_SKIP: " << path
            << " is absent (../shared/ exists beside CI's checkout, not in a clone)\n";
  return false;
}

}  // namespace test_shared

#define ALERTD_NEEDS_SHARED(path)                \
  do {                                           \
    if (!test_shared::available(path)) return;   \
  } while (false)
