// ManualClock: a clock tests advance by hand (pure code takes the time as an argument).
#pragma once

#include "core/time.hpp"

namespace fakes {

class ManualClock {
 public:
  explicit ManualClock(core::TimePoint start = core::from_unix_ms(1'700'000'000'000)) : now_(start) {}
  [[nodiscard]] core::TimePoint now() const { return now_; }
  void advance(core::Duration d) { now_ += d; }
  void set(core::TimePoint t) { now_ = t; }

 private:
  core::TimePoint now_;
};

}  // namespace fakes
