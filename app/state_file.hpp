// app::StateFile: -state.path, the state of every pending and firing alert kept on disk, so a
// restart (or kill -9, or an OOM) with no remote storage brings firing alerts back firing, with
// the same activeAt and startsAt, and Alertmanager sends no new notification.
//
// After each round that changed a group's alerts, the scheduler hands the group to save(); a
// writer thread writes the whole state (JSON) at most once per second: temp file, fsync, rename,
// fsync of the folder, so the file is always either the old or the new state. Both ways the JSON
// streams through a 64 KiB buffer (a 100k-alert state is ~70 MB: holding it, or a DOM of it,
// would be the daemon's largest allocation). read() is all or nothing: a corrupt, truncated or
// foreign file is an error (reported, then ignored), never half-applied. Alerts are matched back by group ID and rule ID, so rules that changed (their
// ID changed) or vanished get no state.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "rules/alert.hpp"
#include "rules/group.hpp"

namespace app {

// Rule ID -> that rule's pending and firing alerts; group ID -> its rules'.
using RuleAlerts = std::map<uint64_t, std::vector<rules::Alert>>;
using SavedState = std::map<uint64_t, RuleAlerts>;

// Where a scheduler reports its group's alert state (nullptr in SchedulerDeps: none kept).
class StateSink {
 public:
  virtual ~StateSink() = default;
  virtual void save(const rules::Group& group) = 0;
  virtual void forget(uint64_t group_id) = 0;
};

class StateFile final : public StateSink {
 public:
  // A group whose alerts changed only in when they were last sent is saved again after
  // `refresh` (see digest() in state_file.cpp).
  explicit StateFile(std::string path,
                     std::chrono::steady_clock::duration refresh = std::chrono::seconds(60));
  ~StateFile() override;  // writes what is pending, then stops the writer
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  // A missing file is an empty state; anything unreadable is an error naming the file.
  [[nodiscard]] static core::Result<SavedState> read(const std::string& path);
  // The JSON text of `state` and its parser (exposed for tests).
  [[nodiscard]] static std::string encode(const SavedState& state);
  [[nodiscard]] static core::Result<SavedState> decode(std::string_view text);
  // Puts saved alerts back into a group's rules (matched by rule ID); returns how many.
  static size_t restore(rules::Group& group, const SavedState& state);

  // StateSink (loop thread)
  void save(const rules::Group& group) override;
  void forget(uint64_t group_id) override;

  // Writes now if anything is pending (tests, shutdown).
  void flush();
  [[nodiscard]] uint64_t writes() const;
  [[nodiscard]] std::string last_error() const;

 private:
  // Group ID -> its alerts as last saved; a group's entry is replaced whole, never changed, so
  // the writer reads a copy of these pointers outside the lock.
  using Groups = std::map<uint64_t, std::shared_ptr<const RuleAlerts>>;

  void writer_loop();
  core::Result<void> write_file(const Groups& groups);

  std::string path_;
  std::mutex write_mu_;  // held by flush() around encode + write_file
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Groups state_;                           // guarded by mu_
  struct Saved {
    uint64_t digest = 0;  // of the group's alerts when last saved
    std::chrono::steady_clock::time_point at;
  };
  std::chrono::steady_clock::duration refresh_;
  std::map<uint64_t, Saved> saved_;        // group ID -> its last save (loop thread)
  bool dirty_ = false;
  bool stop_ = false;
  uint64_t writes_ = 0;
  std::string last_error_;
  std::thread writer_;
};

}  // namespace app
