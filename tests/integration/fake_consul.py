# A fake of Consul's catalog and health HTTP API (Consul is not packaged in Debian), for
# notifier_consul_test.sh. CATALOG (JSON, re-read on every request, so a test changes the members
# by rewriting it) holds the entries /v1/health/service/<name> returns, in Consul's documented
# shape: [{"Node": {"Node", "Address", "Datacenter", "TaggedAddresses", "Meta"},
#          "Service": {"ID", "Service", "Tags", "Address", "Port", "Meta"}, "Checks": [...]}].
#   GET /v1/catalog/services        {"<service>": [tags of all its instances], ...}
#   GET /v1/health/service/<name>   the entries of that service carrying every `tag` argument
#                                   and every `node-meta` key:value argument
# Both answer with an X-Consul-Index header. A request without the header X-Consul-Token: TOKEN
# gets 403 (Consul's "ACL not found"); while the file FAIL_FLAG exists every request gets 500.
# Every request is appended to LOG as one JSON line {"path", "token", "auth"} (auth: the
# Authorization header).
#   usage: python3 fake_consul.py PORT CATALOG TOKEN FAIL_FLAG LOG
import http.server, json, os, sys, urllib.parse

port, catalog_path, token, fail_flag, log_path = sys.argv[1:6]


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with open(log_path, "a") as f:
            f.write(json.dumps({"path": self.path, "token": self.headers.get("X-Consul-Token"),
                                "auth": self.headers.get("Authorization")}) + "\n")
        if os.path.exists(fail_flag):
            return self.reply(500, b"fake consul: unavailable")
        if self.headers.get("X-Consul-Token") != token:
            return self.reply(403, b"ACL not found")
        url = urllib.parse.urlsplit(self.path)
        args = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        entries = json.load(open(catalog_path))
        if url.path == "/v1/catalog/services":
            out = {}
            for e in entries:
                tags = out.setdefault(e["Service"]["Service"], [])
                tags.extend(t for t in e["Service"].get("Tags") or [] if t not in tags)
            return self.reply(200, json.dumps(out).encode())
        prefix = "/v1/health/service/"
        if url.path.startswith(prefix):
            name = urllib.parse.unquote(url.path[len(prefix):])
            want_tags = args.get("tag", [])
            want_meta = [m.split(":", 1) for m in args.get("node-meta", [])]
            out = [e for e in entries
                   if e["Service"]["Service"] == name
                   and all(t in (e["Service"].get("Tags") or []) for t in want_tags)
                   and all((e["Node"].get("Meta") or {}).get(k) == v for k, v in want_meta)]
            return self.reply(200, json.dumps(out).encode())
        self.reply(404, b"not found")

    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Consul-Index", "1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class S(http.server.ThreadingHTTPServer):
    daemon_threads = True


S(("127.0.0.1", int(port)), H).serve_forever()
