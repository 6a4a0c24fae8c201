#include "app/manager.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace app {

Manager::Manager(ManagerDeps deps, SchedulerOptions options)
    : deps_(std::move(deps)), options_(options) {}

Manager::~Manager() = default;

datasource::QuerierParams querier_params(const config::GroupSpec& spec) {
  datasource::QuerierParams params;
  params.type = spec.type;
  params.eval_interval = spec.effective_interval;
  params.query_params = spec.params;
  params.headers = spec.headers;
  params.debug = spec.debug;
  return params;
}

std::unique_ptr<datasource::Querier> Manager::querier_for(const config::GroupSpec& spec) {
  return deps_.queriers.build(querier_params(spec));
}

std::unique_ptr<Worker> Manager::worker_for(const rules::Group& g) {
  if (!g.uses_query() || !deps_.make_worker) return nullptr;
  return deps_.make_worker(g.spec().name);
}

core::Result<ApplyStats> Manager::apply(std::vector<config::GroupSpec> groups,
                                        rules::GroupContext ctx,
                                        std::shared_ptr<const templates::TemplateSet> templates,
                                        uint64_t templates_checksum,
                                        std::function<void()> applied) {
  const bool templates_changed = !templates_ || templates_checksum != templates_checksum_;
  ctx.templates = templates_changed ? templates.get() : templates_.get();

  // Build everything first: a configuration that cannot be built changes nothing.
  std::map<uint64_t, std::unique_ptr<rules::Group>> built;
  for (auto& spec : groups) {
    const uint64_t id = spec.id;
    auto it = groups_.find(id);
    if (it != groups_.end() && !templates_changed && checksums_[id] == spec.checksum) {
      built.emplace(id, nullptr);  // unchanged
      continue;
    }
    auto g = rules::Group::create(std::move(spec), ctx);
    if (!g) return core::fail(g.error());
    built.emplace(id, std::move(*g));
  }

  if (templates_changed) {
    if (templates_) retired_templates_.push_back(std::move(templates_));
    templates_ = std::move(templates);
    templates_checksum_ = templates_checksum;
  }

  ApplyStats stats;
  // Removed groups first, so their stop runs while the new ones start.
  std::vector<uint64_t> removed;
  for (const auto& [id, sched] : groups_)
    if (!built.contains(id)) removed.push_back(id);
  auto pending = std::make_shared<size_t>(removed.size() + 1);
  auto done = std::make_shared<std::function<void()>>(std::move(applied));
  auto finish_one = [pending, done, this] {
    if (--*pending == 0) {
      retired_templates_.clear();
      if (*done) (*done)();
    }
  };
  for (uint64_t id : removed) {
    auto sched = std::move(groups_[id]);
    groups_.erase(id);
    checksums_.erase(id);
    ++stats.stopped;
    sched->stop([sched, finish_one] { finish_one(); }, /*close=*/true);
  }

  for (auto& [id, g] : built) {
    if (!g) {
      ++stats.unchanged;
      continue;
    }
    checksums_[id] = g->spec().checksum;
    auto q = querier_for(g->spec());
    auto w = worker_for(*g);
    if (auto it = groups_.find(id); it != groups_.end()) {
      ++stats.updated;
      it->second->update(std::move(g), std::move(q), std::move(w));
      continue;
    }
    ++stats.started;
    if (restore_) {
      if (const size_t n = StateFile::restore(*g, *restore_); n > 0) {
        spdlog::info("group \"{}\": restored {} alert(s) from the state file", g->spec().name, n);
        stats.restored += n;
      }
    }
    auto sched = std::make_shared<GroupScheduler>(
        std::move(g), std::move(q), std::move(w),
        SchedulerDeps{deps_.clock, deps_.notifiers, deps_.series, deps_.store, deps_.counters,
                      deps_.state},
        options_);
    groups_.emplace(id, sched);
    if (first_apply_ && deps_.remote_read != nullptr) {
      sched->restore_before_first_round(deps_.remote_read->build(querier_params(sched->spec())),
                                        deps_.remote_read_lookback);
    }
    sched->start();
  }
  restore_.reset();
  first_apply_ = false;
  finish_one();
  return stats;
}

void Manager::stop(std::function<void()> stopped) {
  auto pending = std::make_shared<size_t>(groups_.size() + 1);
  auto done = std::make_shared<std::function<void()>>(std::move(stopped));
  auto finish_one = [pending, done] {
    if (--*pending == 0 && *done) (*done)();
  };
  auto groups = std::move(groups_);
  groups_.clear();
  checksums_.clear();
  for (auto& [id, sched] : groups) sched->stop([sched, finish_one] { finish_one(); });
  finish_one();
}

}  // namespace app
