// rules::RecordingRule: vmalert's recording rule (app/vmalert/rule/recording.go), pure.
//
// apply(result, ts): every result series becomes one series to remote-write, named `record`,
// with the rule's labels (external < group < rule; NOT templated, as in vmalert): an empty value
// deletes the label, a different value renames the series' own label to exported_<name>.
// The value and timestamp come from the response sample. Two series with the same resulting
// label set, or more than `limit` series, fail the round and write nothing. A series written in
// the previous round and missing now gets a staleness marker at ts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "config/model.hpp"
#include "core/error.hpp"
#include "core/labels.hpp"
#include "core/query_result.hpp"
#include "core/time.hpp"
#include "rules/alerting_rule.hpp"
#include "rules/rule.hpp"

namespace rules {

class RecordingRule final : public Rule {
 public:
  // Uses ctx.external_labels, ctx.limit and ctx.update_entries_limit.
  [[nodiscard]] static core::Result<RecordingRule> create(const config::RuleSpec& rule,
                                                         const config::GroupSpec& group,
                                                         const RuleContext& ctx);
  RecordingRule(RecordingRule&&) noexcept;
  RecordingRule& operator=(RecordingRule&&) noexcept;
  ~RecordingRule() override;

  // Rule
  [[nodiscard]] RuleType type() const override { return RuleType::recording; }
  [[nodiscard]] uint64_t id() const override;
  [[nodiscard]] const std::string& name() const override;
  [[nodiscard]] const std::string& expr() const override;
  [[nodiscard]] bool uses_query() const override { return false; }
  [[nodiscard]] core::Result<ExecStats> apply(const core::QueryResult& result, core::TimePoint ts,
                                              const templates::TemplateEnv& env,
                                              const EvalInfo& info) override;
  void record_error(const core::Error& err, core::TimePoint ts, const EvalInfo& info) override;
  [[nodiscard]] std::vector<notifier::Alert> alerts_to_send(core::TimePoint, core::Duration,
                                                            core::Duration) override {
    return {};
  }
  void update_from(Rule&& newer) override;
  [[nodiscard]] Closed close(core::TimePoint now) override;
  [[nodiscard]] RuleView describe() const override;
  [[nodiscard]] const UpdateHistory& history() const override;

  [[nodiscard]] const core::Labels& labels() const;  // merged external < group < rule
  [[nodiscard]] uint64_t errors_total() const;

 private:
  struct Impl;
  explicit RecordingRule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rules
