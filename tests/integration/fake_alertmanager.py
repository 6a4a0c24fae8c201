# An Alertmanager v2 receiver that misbehaves on demand, for the fault matrix
# (faults_alertmanager_test.sh): answers 503 until the file FAIL_FLAG is removed, and waits
# DELAY seconds before each answer. Every accepted POST updates STATE (JSON): the latest
# state per alertname, "firing" or "resolved" (endsAt in the past), and a count of posts.
# STATE is read back at start: a receiver that keeps what it accepted across its restarts.
#   usage: python3 fake_alertmanager.py PORT STATE FAIL_FLAG DELAY
import datetime, http.server, json, os, sys, threading, time

port, state_path, fail_flag, delay = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
lock = threading.Lock()
state = {"alerts": {}, "accepted": 0, "refused": 0}
if os.path.exists(state_path):
    state = json.load(open(state_path))


def parse_time(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.reply(200, b"ok")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(delay)
        with lock:
            if os.path.exists(fail_flag):
                state["refused"] += 1
                code = 503
            else:
                now = time.time()
                for a in json.loads(body):
                    ends = a.get("endsAt")
                    resolved = bool(ends) and not ends.startswith("0001") and parse_time(ends) <= now
                    state["alerts"][a["labels"]["alertname"]] = "resolved" if resolved else "firing"
                state["accepted"] += 1
                code = 200
            with open(state_path + ".tmp", "w") as f:
                json.dump(state, f)
            os.replace(state_path + ".tmp", state_path)
        self.reply(code, b"fake: unavailable" if code == 503 else b"")

    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class S(http.server.ThreadingHTTPServer):
    daemon_threads = True


S(("127.0.0.1", port), H).serve_forever()
