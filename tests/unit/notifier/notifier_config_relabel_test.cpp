// config::parse_notifier_config_text with notifier::check_relabel_config as its regex check (what
// -dryRun and start-up pass): RE2 errors come back at the rule's position, and every relabel list
// of a valid file compiles and relabels as written.
#include <catch2/catch.hpp>

#include "config/notifier_config.hpp"
#include "notifier/relabel.hpp"
#include "notifier/target_labels.hpp"

namespace {

config::NotifierConfigResult parse(const std::string& text) {
  config::NotifierConfigOptions o;
  o.env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  o.check_relabel = notifier::check_relabel_config;
  return config::parse_notifier_config_text(text, "n.yml", o);
}

}  // namespace

TEST_CASE("notifier config: regex errors from RE2 at the rule's position",
          "[notifier][notifier_config]") {
  const auto r = parse(R"Y(static_configs:
  - targets: [am:9093]
alert_relabel_configs:
  - source_labels: [a]
    regex: "x(?P<n"
    target_label: b
  - action: labelmap
    regex: "(a"
)Y");
  REQUIRE(r.errors.size() == 2);
  CHECK(r.errors[0].message ==
        "n.yml:5:12: alert_relabel_configs[0]: error parsing regexp: invalid named capture: "
        "`(?P<n)$`");
  CHECK(r.errors[1].message ==
        "n.yml:8:12: alert_relabel_configs[1]: error parsing regexp: missing closing ): "
        "`^(?:(a)$`");
}

TEST_CASE("notifier config: relabel lists compile and run", "[notifier][notifier_config]") {
  const auto r = parse(R"Y(path_prefix: /am
static_configs:
  - targets: [am1:9093]
    alert_relabel_configs:
      - source_labels: [severity]
        regex: info
        action: drop
relabel_configs:
  - source_labels: [__address__]
    regex: "am1:(.*)"
    target_label: __address__
    replacement: "am1.example.com:$1"
alert_relabel_configs:
  - action: labeldrop
    regex: "tmp_.*"
  - target_label: cluster
    replacement: eu-1
)Y");
  INFO((r.errors.empty() ? std::string() : r.errors[0].message));
  REQUIRE(r.ok());
  const auto& cfg = *r.config;
  auto global = notifier::RelabelRules::compile(cfg.alert_relabel_configs);
  auto per_target = notifier::RelabelRules::compile(cfg.static_configs.at(0).alert_relabel_configs);
  auto targets = notifier::RelabelRules::compile(cfg.relabel_configs);
  REQUIRE(global.has_value());
  REQUIRE(per_target.has_value());
  REQUIRE(targets.has_value());

  auto t = notifier::build_target(cfg.static_configs[0].targets.at(0), {}, cfg.scheme,
                                  cfg.path_prefix, *targets);
  REQUIRE(t.has_value());
  REQUIRE(t->has_value());
  CHECK((*t)->url == "http://am1.example.com:9093/am/api/v2/alerts");

  core::Labels alert{{"alertname", "X"}, {"severity", "critical"}, {"tmp_id", "1"}};
  REQUIRE(notifier::relabel_alert(alert, {&*global, &*per_target}));
  CHECK(alert == core::Labels{{"alertname", "X"}, {"cluster", "eu-1"}, {"severity", "critical"}});
  core::Labels info{{"alertname", "Y"}, {"severity", "info"}};
  CHECK_FALSE(notifier::relabel_alert(info, {&*global, &*per_target}));
}
