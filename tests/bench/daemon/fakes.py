#!/usr/bin/env python3
"""Fake peers for the daemon benchmark (tests/bench/daemon/run.sh).

  fakes.py ds PORT   fake datasource: answers POST/GET /api/v1/query with K series of 10 labels.
                     The query names K and the rule: `bench_k<K>{rule="<name>"}`. Each answer is
                     rendered once per query and cached; serving is one bytes.replace of the
                     sample timestamp.
  fakes.py am PORT   fake Alertmanager: accepts POST /api/v2/alerts and counts alerts (occurrences
                     of `"labels":`, no JSON parsing). Also a remote-write receiver: POST
                     /api/v1/write is answered 204 and counted (requests and body bytes, never
                     decoded). GET /count answers `<alerts> <posts> <writes> <write bytes>`.

Single-threaded asyncio on raw sockets (http.server costs ~1 ms per request); run.sh measures
each fake's own CPU and prints it beside alertd's.
"""
import asyncio
import re
import sys
from urllib.parse import parse_qs, unquote_plus

QUERY_RE = re.compile(r'bench_k(\d+)\{rule="([^"]+)"\}')
TS = b"@TS@"

REGIONS = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1"]
TEAMS = ["payments", "search", "storage", "checkout", "identity", "platform"]


def render(k, rule):
    out = []
    for i in range(k):
        metric = (
            '{"__name__":"bench_k%d","rule":"%s","job":"node-exporter","instance":"10.%d.%d.%d:9100",'
            '"env":"production","region":"%s","cluster":"k8s-%s-%02d","namespace":"monitoring",'
            '"service":"node-exporter-svc","team":"%s","datacenter":"dc-%d"}'
            % (k, rule, (i >> 16) & 255, (i >> 8) & 255, i & 255, REGIONS[i % 5], REGIONS[i % 5],
               i % 7, TEAMS[i % 6], i % 4))
        out.append('{"metric":%s,"value":[@TS@,"%d.5"]}' % (metric, 100 + i % 900))
    body = '{"status":"success","data":{"resultType":"vector","result":[' + ",".join(out) + "]}}"
    return body.encode()


class Peer(asyncio.Protocol):
    cache = {}
    alerts = 0
    posts = 0
    writes = 0
    write_bytes = 0

    def __init__(self, mode):
        self.mode = mode
        self.buf = bytearray()
        self.need = None

    def connection_made(self, transport):
        self.t = transport

    def data_received(self, data):
        self.buf += data
        while True:
            if self.need is None:  # headers not parsed yet: parse them once per request
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                self.head = bytes(self.buf[:end]).decode("latin-1")
                length = 0
                for line in self.head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                self.end, self.need = end, end + 4 + length
            if len(self.buf) < self.need:
                return
            head, end, length = self.head, self.end, self.need - self.end - 4
            self.need = None
            body = bytes(self.buf[end + 4:end + 4 + length])
            del self.buf[:end + 4 + length]
            self.handle(head.split("\r\n", 1)[0], body)

    def reply(self, status, body, ctype=b"application/json"):
        self.t.write(b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" %
                     (status, ctype, len(body)) + body)

    def handle(self, request_line, body):
        parts = request_line.split(" ")
        target = parts[1] if len(parts) > 1 else "/"
        path, _, qs = target.partition("?")
        if self.mode == "am":
            if path == "/api/v2/alerts":
                Peer.alerts += body.count(b'"labels":')
                Peer.posts += 1
                return self.reply(b"200 OK", b"")
            if path == "/api/v1/write":
                Peer.writes += 1
                Peer.write_bytes += len(body)
                self.t.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                return None
            if path == "/count":
                return self.reply(b"200 OK", b"%d %d %d %d" % (
                    Peer.alerts, Peer.posts, Peer.writes, Peer.write_bytes), b"text/plain")
            return self.reply(b"404 Not Found", b"not found")
        if path != "/api/v1/query":
            return self.reply(b"404 Not Found", b"not found")
        args = parse_qs(qs)
        if body:
            args.update(parse_qs(body.decode()))
        query = args.get("query", [""])[0]
        ts = args.get("time", ["0"])[0]
        cached = Peer.cache.get(query)
        if cached is None:
            m = QUERY_RE.search(query)
            if not m:
                return self.reply(b"400 Bad Request",
                                  b'{"status":"error","errorType":"bad_data","error":"unknown query"}')
            cached = Peer.cache[query] = render(int(m.group(1)), m.group(2))
        self.reply(b"200 OK", cached.replace(TS, epoch(ts)))


_ts_cache = {}


def epoch(ts):
    """`time` is RFC 3339 (vmalert) or a Unix number; the answer carries it as a number."""
    got = _ts_cache.get(ts)
    if got is None:
        if len(_ts_cache) > 4096:
            _ts_cache.clear()
        try:
            got = str(float(ts)).encode()
        except ValueError:
            import datetime
            t = unquote_plus(ts).replace("Z", "+00:00")
            got = str(datetime.datetime.fromisoformat(t).timestamp()).encode()
        _ts_cache[ts] = got
    return got


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(
        loop.create_server(lambda: Peer(mode), "127.0.0.1", port, backlog=1024))
    print("fake %s listening on %d" % (mode, port), flush=True)
    loop.run_until_complete(server.serve_forever())


if __name__ == "__main__":
    main()
