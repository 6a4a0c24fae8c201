#include "app/dns_lookup.hpp"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>

#include <array>
#include <cstring>

namespace app {

core::Result<std::vector<DnsTarget>> dns_lookup(const std::string& name,
                                                config::DnsRecordType type, int port,
                                                const std::string& server) {
  int qtype = 0;
  switch (type) {
    case config::DnsRecordType::srv: qtype = ns_t_srv; break;
    case config::DnsRecordType::a: qtype = ns_t_a; break;
    case config::DnsRecordType::aaaa: qtype = ns_t_aaaa; break;
    case config::DnsRecordType::mx: qtype = ns_t_mx; break;
  }
  const std::string what = "DNS " + std::string(config::to_string(type)) + " query for \"" +
                           name + "\"";
  struct __res_state st;
  std::memset(&st, 0, sizeof st);
  if (res_ninit(&st) != 0) return core::fail(what + ": cannot initialize the resolver");
  struct Close {
    struct __res_state* s;
    ~Close() { res_nclose(s); }
  } close{&st};
  if (!server.empty()) {
    const auto colon = server.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    if (colon == std::string::npos ||
        inet_pton(AF_INET, server.substr(0, colon).c_str(), &sa.sin_addr) != 1) {
      return core::fail("-notifier.dnsServer=" + server + ": want IPv4:port",
                        core::ErrorKind::bad_config);
    }
    sa.sin_port = htons(static_cast<uint16_t>(std::stoi(server.substr(colon + 1))));
    st.nscount = 1;
    st.nsaddr_list[0] = sa;
  }
  std::array<unsigned char, 65536> answer{};
  const int len = res_nquery(&st, name.c_str(), ns_c_in, qtype, answer.data(),
                             static_cast<int>(answer.size()));
  if (len < 0) {
    // NXDOMAIN / no data: no targets, as Prometheus treats an empty answer.
    if (st.res_h_errno == HOST_NOT_FOUND || st.res_h_errno == NO_DATA) {
      return std::vector<DnsTarget>{};
    }
    return core::fail(what + " failed: " + hstrerror(st.res_h_errno),
                      core::ErrorKind::connection);
  }
  ns_msg msg;
  if (ns_initparse(answer.data(), len, &msg) != 0) return core::fail(what + ": malformed answer");
  std::vector<DnsTarget> out;
  const int count = ns_msg_count(msg, ns_s_an);
  for (int i = 0; i < count; ++i) {
    ns_rr rr;
    if (ns_parserr(&msg, ns_s_an, i, &rr) != 0) continue;
    if (ns_rr_type(rr) != qtype) continue;  // e.g. a CNAME on the way
    const unsigned char* rd = ns_rr_rdata(rr);
    const auto rdlen = ns_rr_rdlen(rr);
    if (qtype == ns_t_srv) {
      if (rdlen < 7) continue;
      const int srv_port = (rd[4] << 8) | rd[5];
      std::array<char, NS_MAXDNAME> target{};
      if (dn_expand(ns_msg_base(msg), ns_msg_end(msg), rd + 6, target.data(),
                    static_cast<int>(target.size())) < 0) {
        continue;
      }
      std::string host = target.data();
      if (!host.empty() && host.back() == '.') host.pop_back();
      out.push_back({std::move(host), srv_port});
    } else if (qtype == ns_t_mx) {
      // preference (2 bytes), then the exchange's name
      if (rdlen < 3) continue;
      std::array<char, NS_MAXDNAME> target{};
      if (dn_expand(ns_msg_base(msg), ns_msg_end(msg), rd + 2, target.data(),
                    static_cast<int>(target.size())) < 0) {
        continue;
      }
      std::string host = target.data();
      while (!host.empty() && host.back() == '.') host.pop_back();
      out.push_back({std::move(host), port});
    } else {
      std::array<char, INET6_ADDRSTRLEN> text{};
      const int af = qtype == ns_t_a ? AF_INET : AF_INET6;
      if (rdlen != (af == AF_INET ? 4 : 16) ||
          inet_ntop(af, rd, text.data(), static_cast<socklen_t>(text.size())) == nullptr) {
        continue;
      }
      std::string host;
      if (af == AF_INET6) host.push_back('[');
      host.append(text.data());
      if (af == AF_INET6) host.push_back(']');
      out.push_back({std::move(host), port});
    }
  }
  return out;
}

}  // namespace app
