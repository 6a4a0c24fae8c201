# One fake peer for the OAuth2 test (oauth2_test.sh): an OAuth2 token endpoint and the three
# servers alertd authenticates to with its tokens. Appends one line per request to LOG:
#   POST /token            client credentials grant; the client id and secret must come as HTTP
#                          basic auth (each query-escaped, as Go's oauth2 sends them) and equal
#                          CLIENT_ID/CLIENT_SECRET, else 401. Answers {"access_token": "tok-N",
#                          "token_type": "bearer", "expires_in": EXPIRES}.
#                          Logged: "token N <scope> <audience>" or "token refused".
#   POST /api/v1/query     (datasource) one sample of value 1      logged: "query <Authorization>"
#   POST /api/v2/alerts    (Alertmanager) 200                      logged: "alerts <Authorization>"
#   POST /api/v1/write     (remote write) 204                      logged: "write <Authorization>"
#   usage: python3 fake_oauth2_peer.py PORT LOG CLIENT_ID CLIENT_SECRET EXPIRES
import base64, http.server, json, sys, threading, urllib.parse

port, log_path, client_id, client_secret, expires = sys.argv[1:6]
lock = threading.Lock()
tokens = [0]
QUERY = b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]}]}}'


def log(line):
    with lock, open(log_path, "a") as f:
        f.write(line + "\n")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.reply(200, b"ok")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = urllib.parse.urlsplit(self.path).path
        auth = self.headers.get("Authorization") or "-"
        if path == "/token":
            form = urllib.parse.parse_qs(body.decode())
            want = "Basic " + base64.b64encode(
                (urllib.parse.quote_plus(client_id) + ":" + urllib.parse.quote_plus(client_secret)).encode()).decode()
            if auth != want or form.get("grant_type") != ["client_credentials"]:
                log("token refused")
                return self.reply(401, b'{"error":"invalid_client"}')
            with lock:
                tokens[0] += 1
                n = tokens[0]
            log("token %d %s %s" % (n, form.get("scope", ["-"])[0].replace(" ", "+"),
                                     form.get("audience", ["-"])[0]))
            return self.reply(200, json.dumps({"access_token": "tok-%d" % n, "token_type": "bearer",
                                               "expires_in": int(expires)}).encode())
        if path.endswith("/api/v1/query"):
            log("query " + auth)
            return self.reply(200, QUERY)
        if path.endswith("/api/v2/alerts"):
            log("alerts " + auth)
            return self.reply(200, b"")
        if path.endswith("/api/v1/write"):
            log("write " + auth)
            return self.reply(204, b"")
        self.reply(404, b"not found")

    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def log_message(self, *a):
        pass


class S(http.server.ThreadingHTTPServer):
    daemon_threads = True


S(("127.0.0.1", int(port)), H).serve_forever()
