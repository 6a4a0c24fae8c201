// app::Clock and app::Timer: the scheduler's names for core::Clock and core::Timer
// (core/clock.hpp), which live in core/ so that datasource/'s remote-write client can arm timers
// without seeing app/.
#pragma once

#include "core/clock.hpp"

namespace app {

using Timer = core::Timer;
using Clock = core::Clock;

}  // namespace app
