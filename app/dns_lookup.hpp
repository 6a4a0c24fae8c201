// app::dns_lookup: the DNS queries behind dns_sd_configs (SRV, A, AAAA, MX), through glibc's
// resolver (res_nquery), against the system's name servers or one given as IP:port
// (-notifier.dnsServer, e.g. a local dnsmasq on a high port). Blocking: call it off the loop.
#pragma once

#include <string>
#include <vector>

#include "config/notifier_config.hpp"
#include "core/error.hpp"

namespace app {

struct DnsTarget {
  std::string host;  // SRV or MX target (no trailing dot) or the address (IPv6 in brackets)
  int port = 0;
};

// SRV: every record's target and port. A/AAAA: every address with `port`. MX: every record's
// exchange host with `port`.
// `server` empty: /etc/resolv.conf; else "IPv4:port". Errors name the query.
[[nodiscard]] core::Result<std::vector<DnsTarget>> dns_lookup(const std::string& name,
                                                             config::DnsRecordType type, int port,
                                                             const std::string& server);

}  // namespace app
