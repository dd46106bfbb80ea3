#!/usr/bin/python3
"""The star's HTTP data plane driven by Python's `requests` (urllib3 underneath): a client this
project did not write. Run by test/conformance/python-requests.test.ts, one scenario group per run:

    python-requests.py BASE_URL BUCKET GROUP

BUCKET is a fresh bucket name (the group makes it, or streams in it); GROUP is one of GROUPS below.
Every check is asserted here, against the interface spec (Endpoints, Append envelope, Read query,
Subscribe, Events, Errors). One JSON line is printed per check passed, then a summary line:
    {"group": G, "ok": true|false, "passed": [names], "failed": {"name": "why"}}
The exit code is 0 only when every check of the group passed; a failure's message says what was
expected and what the star answered. Only requests and the standard library are imported."""

import base64
import json
import sys
import time
import traceback
from urllib.parse import quote

import requests

# Every request gives up after these (connect, read) seconds: a bounded wait, never an assertion.
# The read bound is per socket read; an SSE stream sends a heartbeat every 15 s, so 30 s of silence
# means the star stopped sending.
TIMEOUT = (10, 30)
# An SSE wait for an expected frame gives up after this long in all (heartbeats keep each read alive).
SSE_WAIT_S = 30


class CheckFailed(Exception):
    pass


def fail(what, got=None):
    raise CheckFailed(what if got is None else f"{what}; got {got!r}")


def expect_eq(got, want, what):
    if got != want:
        raise CheckFailed(f"{what}: expected {want!r}, got {got!r}")


def b64(data):
    return base64.b64encode(data).decode("ascii")


def unb64(text):
    return base64.b64decode(text.encode("ascii"), validate=True)


def seg(s):
    """One percent-encoded path segment: every byte outside A-Z a-z 0-9 - . _ ~ escaped, `/` too."""
    return quote(s, safe="")


class Run:
    def __init__(self, base, bucket):
        self.base = base.rstrip("/")
        self.bucket = bucket
        self.s = requests.Session()
        self.passed = []
        self.failed = {}

    def url(self, *segments, query=""):
        # Built by hand, segment by segment: requests keeps %2F as sent (it only un-escapes unreserved
        # characters), and each check on a key with escapes also asserts the path that went out.
        return self.base + "/" + "/".join(segments) + (("?" + query) if query else "")

    def stream_url(self, key, *rest, query=""):
        return self.url("v1", "streams", seg(self.bucket), seg(key), *rest, query=query)

    def ok(self, name):
        self.passed.append(name)
        print(json.dumps({"check": name, "ok": True}), flush=True)

    # --- response helpers -------------------------------------------------------------------------

    @staticmethod
    def json_of(r, status, what):
        """Asserts the status and the JSON content type, then parses the body."""
        if r.status_code != status:
            fail(f"{what}: expected HTTP {status}", f"{r.status_code} {r.text[:500]}")
        ctype = r.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            fail(f"{what}: expected Content-Type application/json", ctype)
        try:
            return r.json()
        except ValueError:
            fail(f"{what}: the body is not JSON", r.text[:500])

    def error_of(self, r, status, what):
        """An error answer: the status, application/json, and the envelope {"error": "<reason>"}."""
        body = self.json_of(r, status, what)
        if not isinstance(body, dict) or not isinstance(body.get("error"), str) or body["error"] == "":
            fail(f"{what}: expected the envelope {{\"error\": \"<reason>\"}}", body)
        return body

    def create_bucket(self):
        r = self.s.post(self.url("v1", "buckets", seg(self.bucket)), json={}, timeout=TIMEOUT)
        body = self.json_of(r, 201, f"POST /v1/buckets/{self.bucket}")
        expect_eq(body.get("name"), self.bucket, "the created bucket's name")

    def create_stream(self, key):
        r = self.s.post(self.stream_url(key), json={}, timeout=TIMEOUT)
        body = self.json_of(r, 201, f"POST stream {key!r}")
        expect_eq(body.get("bucket"), self.bucket, "the created stream's bucket")
        expect_eq(body.get("key"), key, "the created stream's key")
        return body

    def append(self, key, records, session=None, status=200, **extra):
        r = (session or self.s).post(self.stream_url(key, "records"), json={"records": records, **extra}, timeout=TIMEOUT)
        return self.json_of(r, status, f"append of {len(records)} to {key!r}")

    def read(self, key, query):
        r = self.s.get(self.stream_url(key, "records", query=query), timeout=TIMEOUT)
        body = self.json_of(r, 200, f"read {key!r} ?{query}")
        if not isinstance(body.get("records"), list):
            fail("a read's records is a list", body)
        check_position(body.get("tail"), "a read's tail")
        return body

    def tail(self, key):
        r = self.s.get(self.stream_url(key, "records", "tail"), timeout=TIMEOUT)
        pos = self.json_of(r, 200, f"tail of {key!r}")
        check_position(pos, "GET .../records/tail")
        return pos


def check_position(p, what):
    if not isinstance(p, dict) or set(p) != {"seq_num", "timestamp_ms"}:
        fail(f"{what}: expected a Position {{seq_num, timestamp_ms}}", p)
    for f in ("seq_num", "timestamp_ms"):
        if not isinstance(p[f], int) or isinstance(p[f], bool) or p[f] < 0:
            fail(f"{what}: {f} is a non-negative JSON integer", p)


def check_ack(ack, start, count, what):
    """{start, end, tail} for `count` records appended at `start` by the only producer: start and end
    bound the batch, and the committed tail is end (nobody else appends to the stream)."""
    if not isinstance(ack, dict) or set(ack) != {"start", "end", "tail"}:
        fail(f"{what}: expected exactly {{start, end, tail}}", ack)
    for f in ("start", "end", "tail"):
        check_position(ack[f], f"{what}.{f}")
    expect_eq(ack["start"]["seq_num"], start, f"{what}: start.seq_num")
    expect_eq(ack["end"]["seq_num"], start + count, f"{what}: end.seq_num (one past the last)")
    expect_eq(ack["tail"], ack["end"], f"{what}: tail (the only producer's end)")


# --- records used by several groups ----------------------------------------------------------------

NOT_UTF8 = bytes([0x00, 0xFF, 0xFE, 0x80, 0x0A])  # 0xff never appears in UTF-8
NOT_UTF8_NAME = bytes([0xC3])  # a truncated two-byte sequence
UTF8_TEXT = "héllo, wörld ✓ \u0000 end"  # valid UTF-8 with a NUL in it


def sample_records(stamp_ms):
    """What is appended, and what a raw read must give back (the read encoding rule: a byte field rides
    its plain name when it is valid UTF-8, its _b64 sibling otherwise, per field; empty headers omitted)."""
    sent = [
        {"body": UTF8_TEXT, "timestamp_ms": stamp_ms,
         "headers": [{"name": "content-type", "value": "text/plain"}, {"name": "empty"}]},
        {"body_b64": b64(NOT_UTF8),
         "headers": [{"name_b64": b64(NOT_UTF8_NAME), "value_b64": b64(b"\xff\x00")}]},
        {"body_b64": b64("plain after all".encode()),  # valid UTF-8 sent as base64: read back plain
         "headers": [{"name_b64": b64(b"x-utf8"), "value_b64": b64("välue".encode())},
                     {"name": "x-raw", "value_b64": b64(b"\x80")}]},
        {"body": ""},  # an empty body, no headers
    ]
    read = [
        {"body": UTF8_TEXT, "headers": [{"name": "content-type", "value": "text/plain"}, {"name": "empty", "value": ""}]},
        {"body_b64": b64(NOT_UTF8), "headers": [{"name_b64": b64(NOT_UTF8_NAME), "value_b64": b64(b"\xff\x00")}]},
        {"body": "plain after all", "headers": [{"name": "x-utf8", "value": "välue"}, {"name": "x-raw", "value_b64": b64(b"\x80")}]},
        {"body": ""},
    ]
    # format=base64: every byte field base64 in its plain name, whatever it holds.
    as_b64 = [
        {"body": b64(UTF8_TEXT.encode()), "headers": [{"name": b64(b"content-type"), "value": b64(b"text/plain")}, {"name": b64(b"empty"), "value": ""}]},
        {"body": b64(NOT_UTF8), "headers": [{"name": b64(NOT_UTF8_NAME), "value": b64(b"\xff\x00")}]},
        {"body": b64(b"plain after all"), "headers": [{"name": b64(b"x-utf8"), "value": b64("välue".encode())}, {"name": b64(b"x-raw"), "value": b64(b"\x80")}]},
        {"body": ""},
    ]
    return sent, read, as_b64


def without_time(records):
    """Each record with seq_num and timestamp_ms checked for type and dropped, to compare the rest."""
    out = []
    for r in records:
        if not isinstance(r, dict):
            fail("a record is a JSON object", r)
        for f in ("seq_num", "timestamp_ms"):
            if not isinstance(r.get(f), int) or isinstance(r.get(f), bool):
                fail(f"a read record carries {f} as a JSON integer", r)
        out.append({k: v for k, v in r.items() if k not in ("seq_num", "timestamp_ms")})
    return out


def seqs(records):
    return [r.get("seq_num") for r in records]


# --- the groups -------------------------------------------------------------------------------------

def g_create(run):
    run.create_bucket()
    run.ok("POST /v1/buckets/{b} is 201 with the bucket")
    for key in ("orders/eu", "a b%c/ü?#"):
        url = run.stream_url(key)
        r = run.s.post(url, json={}, timeout=TIMEOUT)
        # What went on the wire: the key as one escaped segment, not re-normalised by requests.
        expect_eq(r.request.path_url, f"/v1/streams/{run.bucket}/{seg(key)}", "the path requests sent")
        body = run.json_of(r, 201, f"POST stream {key!r}")
        expect_eq((body.get("bucket"), body.get("key")), (run.bucket, key), "the created stream's address")
        for f in ("stream_id", "class", "producer_policy", "timestamping_mode", "created_at_unix_ms"):
            if f not in body:
                fail(f"the created stream carries {f}", body)
        if "fencing_token" in body:
            fail("only the get-one answer carries fencing_token", body)
        got = run.json_of(run.s.get(url, timeout=TIMEOUT), 200, f"GET stream {key!r}")
        expect_eq(got.get("key"), key, "GET stream: the key, decoded once")
        expect_eq(got.get("stream_id"), body["stream_id"], "GET stream: the same stream_id")
        expect_eq(got.get("fencing_token"), "", "GET stream: an unfenced stream's fencing_token")
        run.ok(f"a key that needs escaping ({key!r} as {seg(key)}) is one segment: 201, and GET gives it back")
    # orders%2Feu is not orders/eu split in two: the unescaped form is another (missing) path.
    r = run.s.get(run.url("v1", "streams", seg(run.bucket), "orders", "eu"), timeout=TIMEOUT)
    run.error_of(r, 404, "GET /v1/streams/{b}/orders/eu (an unescaped slash: no such route)")
    run.ok("an unescaped slash does not reach the escaped key's stream")
    tail = run.tail("orders/eu")
    expect_eq(tail, {"seq_num": 0, "timestamp_ms": 0}, "a fresh stream's tail")
    run.ok("a fresh stream's tail is {seq_num 0, timestamp_ms 0}")


def g_append_read(run):
    key = "orders/eu"
    run.create_bucket()
    run.create_stream(key)
    stamp = int(time.time() * 1000) - 1000  # recent, and before the star's clock: kept (client-prefer)
    sent, want_raw, want_b64 = sample_records(stamp)
    r = run.s.post(run.stream_url(key, "records"), json={"records": sent}, timeout=TIMEOUT)
    expect_eq(r.request.headers.get("Content-Type"), "application/json", "requests' json= content type")
    ack = run.json_of(r, 200, "append of the sample records")
    check_ack(ack, 0, len(sent), "the first append")
    run.ok("append (json=) of body, body_b64 and headers is 200 {start, end, tail}, application/json")

    page = run.read(key, "seq_num=0")
    expect_eq(seqs(page["records"]), list(range(len(sent))), "read from 0: seq_nums in order")
    expect_eq(without_time(page["records"]), want_raw, "read from 0: bodies and headers by the read encoding rule")
    expect_eq(page["records"][0]["timestamp_ms"], stamp, "the client timestamp on record 0")
    expect_eq(ack["start"]["timestamp_ms"], stamp, "the ack's start: the first record's time")
    expect_eq(ack["end"]["timestamp_ms"], page["records"][-1]["timestamp_ms"], "the ack's end: the last record's time")
    expect_eq(page["tail"], ack["tail"], "the read's tail")
    stamps = [x["timestamp_ms"] for x in page["records"]]
    if stamps != sorted(stamps):
        fail("timestamps never go back within a stream", stamps)
    if unb64(page["records"][1]["body_b64"]) != NOT_UTF8:
        fail("the non-UTF-8 body decodes to the bytes sent", page["records"][1])
    run.ok("read from 0: the records in order; a non-UTF-8 field as _b64, a UTF-8 one plain; empty headers omitted; tail")

    page64 = run.read(key, "seq_num=0&format=base64")
    expect_eq(without_time(page64["records"]), want_b64, "format=base64: every byte field base64 in its plain name")
    expect_eq(seqs(page64["records"]), list(range(len(sent))), "format=base64: seq_nums")
    expect_eq(page64["tail"], ack["tail"], "format=base64: tail")
    run.ok("format=base64: every byte field is base64 in its plain name")

    page = run.read(key, "tail_offset=2")
    expect_eq(seqs(page["records"]), [len(sent) - 2, len(sent) - 1], "tail_offset=2: the last two records")
    expect_eq(without_time(page["records"]), want_raw[-2:], "tail_offset=2: their content")
    page = run.read(key, f"tail_offset={len(sent) + 50}")
    expect_eq(seqs(page["records"]), list(range(len(sent))), "a tail_offset past the head clamps at 0")
    run.ok("tail_offset: that many records before the tail, clamped at 0")

    page = run.read(key, "seq_num=1&limit=2")
    expect_eq(seqs(page["records"]), [1, 2], "seq_num=1&limit=2")
    expect_eq(page["tail"], ack["tail"], "a limited read still carries the tail")
    page = run.read(key, f"seq_num={len(sent)}")
    expect_eq(page["records"], [], "a read at the tail is an empty page (never a long poll)")
    expect_eq(page["tail"], ack["tail"], "the caught-up page's tail")
    run.ok("limit caps the page; a read at the tail is an empty page with the tail")

    expect_eq(run.tail(key), ack["tail"], "GET .../records/tail")
    run.ok("GET .../records/tail is the committed tail Position")


def g_match(run):
    key = "m"
    run.create_bucket()
    run.create_stream(key)
    check_ack(run.append(key, [{"body": "a"}, {"body": "b"}], match_seq_num=0), 0, 2, "an append matching 0")
    before = run.tail(key)
    expect_eq(before["seq_num"], 2, "the tail after two records")
    for wrong in (0, 3, 7):
        r = run.s.post(run.stream_url(key, "records"), json={"records": [{"body": "miss"}], "match_seq_num": wrong}, timeout=TIMEOUT)
        body = run.error_of(r, 412, f"match_seq_num {wrong} against tail 2")
        expect_eq(body.get("tail"), before, "a miss's tail field: the tail, exactly the next value to try")
        if "fencing_token" in body:
            fail("a match miss carries no fencing_token", body)
    expect_eq(run.tail(key), before, "the tail after the misses (nothing appended)")
    expect_eq(seqs(run.read(key, "seq_num=0")["records"]), [0, 1], "the stream after the misses")
    run.ok("a match_seq_num miss is 412 {error, tail}; nothing appended")
    ack = run.append(key, [{"body": "c"}], match_seq_num=body["tail"]["seq_num"])
    check_ack(ack, 2, 1, "the retry at the 412's tail")
    page = run.read(key, "seq_num=2")
    expect_eq([x.get("body") for x in page["records"]], ["c"], "the retried record")
    run.ok("a retry at the 412's tail is 200 and lands at that seq_num")


def g_errors(run):
    key = "e/1"
    run.create_bucket()
    run.create_stream(key)
    run.append(key, [{"body": "only"}])

    run.error_of(run.s.get(run.stream_url("missing"), timeout=TIMEOUT), 404, "GET a missing stream")
    run.error_of(run.s.get(run.stream_url("missing", "records", query="seq_num=0"), timeout=TIMEOUT), 404, "read a missing stream")
    run.error_of(run.s.get(run.stream_url("missing", "records", "tail"), timeout=TIMEOUT), 404, "tail of a missing stream")
    run.error_of(run.s.post(run.stream_url("missing", "records"), json={"records": [{"body": "x"}]}, timeout=TIMEOUT), 404, "append to a missing stream")
    run.error_of(run.s.get(run.url("v1", "buckets", seg(run.bucket + "-none")), timeout=TIMEOUT), 404, "GET a missing bucket")
    run.error_of(run.s.get(run.url("v1", "streams", seg(run.bucket), "", "records", query="seq_num=0"), timeout=TIMEOUT), 404, "an empty key segment")
    run.ok("404 {error} for a missing stream (get, read, tail, append), a missing bucket and an empty segment")

    for method, rest, must in (("PUT", ("records",), {"GET", "POST"}), ("DELETE", ("records",), {"GET", "POST"}),
                               ("POST", ("records", "tail"), {"GET"}), ("PUT", ("records", "subscribe"), {"GET"})):
        r = run.s.request(method, run.stream_url(key, *rest), json={}, timeout=TIMEOUT)
        what = f"{method} .../{'/'.join(rest)}"
        run.error_of(r, 405, what)
        allow = {m.strip().upper() for m in r.headers.get("Allow", "").split(",") if m.strip()}
        if not must <= allow or method in allow:
            fail(f"{what}: the Allow header lists {sorted(must)} and not {method}", r.headers.get("Allow"))
    run.ok("405 {error} with an Allow header naming the route's methods for a wrong method")

    bad = [
        ({"records": []}, "empty records"),
        ({}, "no records"),
        ({"records": [{"body": "x", "body_b64": b64(b"x")}]}, "both body and body_b64"),
        ({"records": [{"headers": [{"name": "h", "value": "v"}]}]}, "neither body nor body_b64"),
        ({"records": [{"body": "x", "headers": [{"value": "v"}]}]}, "a header without a name"),
        ({"records": [{"body_b64": "@@not base64@@"}]}, "body_b64 that is not base64"),
    ]
    for envelope, what in bad:
        run.error_of(run.s.post(run.stream_url(key, "records"), json=envelope, timeout=TIMEOUT), 400, f"append with {what}")
    r = run.s.post(run.stream_url(key, "records"), data=b'{"records": [', headers={"Content-Type": "application/json"}, timeout=TIMEOUT)
    run.error_of(r, 400, "append with a body that is not JSON")
    expect_eq(run.tail(key)["seq_num"], 1, "the tail after the refused appends (nothing appended)")
    run.ok("400 {error} for empty records, both/neither of body and body_b64, a nameless header, bad base64, bad JSON")

    for query, what in (("", "no start"), ("limit=5", "only a knob"), ("seq_num=0&tail_offset=1", "two starts"),
                        ("seq_num=-1", "a negative seq_num"), ("seq_num=abc", "a seq_num that is not a number")):
        run.error_of(run.s.get(run.stream_url(key, "records", query=query), timeout=TIMEOUT), 400, f"read with {what}")
    run.ok("400 {error} for a read with no start, two starts, or a malformed one")


def g_chunked(run):
    key = "chunked"
    run.create_bucket()
    run.create_stream(key)
    records = [{"body": f"chunk-{i}", "headers": [{"name": "i", "value": str(i)}]} for i in range(50)]
    payload = json.dumps({"records": records}).encode()

    def pieces():
        for i in range(0, len(payload), 97):  # many small chunks, split mid-token
            yield payload[i:i + 97]

    r = run.s.post(run.stream_url(key, "records"), data=pieces(), headers={"Content-Type": "application/json"}, timeout=TIMEOUT)
    expect_eq(r.request.headers.get("Transfer-Encoding"), "chunked", "requests' framing of a generator body")
    if "Content-Length" in r.request.headers:
        fail("a chunked upload carries no Content-Length", dict(r.request.headers))
    check_ack(run.json_of(r, 200, "chunked append"), 0, len(records), "the chunked append")
    page = run.read(key, "seq_num=0")
    expect_eq(without_time(page["records"]), records, "the chunked append read back")
    run.ok("a Transfer-Encoding: chunked append is 200 and reads back whole")

    # A chunked body that is not a valid envelope is still a 400, and the connection serves on.
    bad = json.dumps({"records": []}).encode()
    r = run.s.post(run.stream_url(key, "records"), data=iter([bad[:5], bad[5:]]), headers={"Content-Type": "application/json"}, timeout=TIMEOUT)
    run.error_of(r, 400, "chunked append of empty records")
    check_ack(run.append(key, [{"body": "after"}]), len(records), 1, "an append after the refused chunked one")
    run.ok("a chunked envelope with empty records is 400 {error}; the next append lands")


class Sse:
    """A text/event-stream answer read with requests' raw iteration (iter_content(None): each chunk as it
    arrives), split into frames by blank lines. Waits are bounded: each socket read by TIMEOUT's read
    bound, the whole wait for a frame by SSE_WAIT_S."""

    def __init__(self, response):
        self.r = response
        self.chunks = response.iter_content(chunk_size=None)
        self.buf = b""
        self.comments = 0

    def close(self):
        self.r.close()

    def next_frame(self):
        deadline = time.monotonic() + SSE_WAIT_S
        while True:
            self.buf = self.buf.replace(b"\r\n", b"\n")
            idx = self.buf.find(b"\n\n")
            if idx >= 0:
                block, self.buf = self.buf[:idx], self.buf[idx + 2:]
                frame, data = {}, []
                for line in block.decode("utf-8").split("\n"):
                    if line.startswith(":"):
                        self.comments += 1
                        continue
                    field, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "data":
                        data.append(value)
                    elif field:
                        frame[field] = value
                if data:
                    frame["data"] = "\n".join(data)
                if frame:
                    return frame
                continue  # a comment-only block (": open", a heartbeat)
            if time.monotonic() > deadline:
                fail(f"no SSE frame within {SSE_WAIT_S} s", self.buf[:500])
            try:
                chunk = next(self.chunks)
            except StopIteration:
                fail("the SSE stream ended while a frame was awaited", self.buf[:500])
            self.buf += chunk

    def batch(self):
        """The next batch frame, checked: id is the next seq_num, data {records, tail}, never empty."""
        f = self.next_frame()
        if "event" in f:
            fail("expected a batch frame, got an event", f)
        try:
            data = json.loads(f.get("data", ""))
        except ValueError:
            fail("a batch frame's data is JSON", f)
        if not isinstance(data, dict) or set(data) != {"records", "tail"}:
            fail("a batch frame's data is {records, tail}", data)
        recs = data["records"]
        if not isinstance(recs, list) or not recs:
            fail("empty batches are never emitted", data)
        check_position(data["tail"], "a batch's tail")
        if not str(f.get("id", "")).isdigit():
            fail("a batch frame has a numeric id", f)
        fid = int(f["id"])
        expect_eq(fid, recs[-1]["seq_num"] + 1, "a batch frame's id: the next seq_num after its last record")
        expect_eq(data["tail"]["seq_num"], fid, "a batch's tail: the position after its last record")
        expect_eq(seqs(recs), list(range(recs[0]["seq_num"], fid)), "a batch's records are contiguous")
        return fid, recs

    def until(self, target):
        """Batches until the frame whose id is `target`: the records delivered, in order."""
        got = []
        while True:
            fid, recs = self.batch()
            got.extend(recs)
            if fid == target:
                return got
            if fid > target:
                fail(f"frame id {target} never came: the stream went past it to {fid}")


def g_subscribe(run):
    key = "live/1"
    run.create_bucket()
    run.create_stream(key)
    stamp = int(time.time() * 1000) - 1000
    sent, want_raw, _ = sample_records(stamp)
    check_ack(run.append(key, sent), 0, len(sent), "the history")
    check_ack(run.append(key, [{"body": f"h{i}"} for i in range(3)]), len(sent), 3, "more history")
    history = run.read(key, "seq_num=0")["records"]
    tail = run.tail(key)["seq_num"]
    expect_eq(tail, len(sent) + 3, "the tail before subscribing")

    sse_headers = {"Accept": "text/event-stream"}
    r = run.s.get(run.stream_url(key, "records", "subscribe", query="seq_num=0"), headers=sse_headers, stream=True, timeout=TIMEOUT)
    sse = Sse(r)
    try:
        expect_eq(r.status_code, 200, "subscribe ?seq_num=0")
        expect_eq(r.headers.get("Content-Type", "").split(";")[0].strip(), "text/event-stream", "the subscription's Content-Type")
        expect_eq(r.headers.get("Cache-Control"), "no-cache", "the subscription's Cache-Control")
        got = sse.until(tail)
        expect_eq(got, history, "the subscription's history: the read's records, the same encoding")
        expect_eq(without_time(got[:len(sent)]), want_raw, "the subscription's history content")
        run.ok("subscribe ?seq_num=0: 200 text/event-stream, no-cache; batches up to id == tail, the history in order")

        # A producer on its own connection (another Session) appends while the subscription pends.
        producer = requests.Session()
        try:
            ack = run.append(key, [{"body": "live one", "headers": [{"name": "n", "value": "1"}]}], session=producer)
            check_ack(ack, tail, 1, "the live append")
            live = sse.until(tail + 1)
        finally:
            producer.close()
        expect_eq(seqs(live), [tail], "the live record's seq_num")
        expect_eq(without_time(live), [{"body": "live one", "headers": [{"name": "n", "value": "1"}]}], "the live record")
        run.ok("a record appended from another Session arrives live as the next batch, id == its seq_num + 1")
    finally:
        sse.close()
    history = history + live
    end = tail + 1

    # Reconnect with the cursor: starts exactly at n (no repeat, no skip), the header over the query.
    for n, query in ((2, ""), (3, "seq_num=0"), (1, f"seq_num={end}"), (end, "seq_num=0")):
        r = run.s.get(run.stream_url(key, "records", "subscribe", query=query), headers={**sse_headers, "Last-Event-ID": str(n)},
                      stream=True, timeout=TIMEOUT)
        sse = Sse(r)
        try:
            expect_eq(r.status_code, 200, f"subscribe with Last-Event-ID {n} and ?{query}")
            if n < end:
                got = sse.until(end)
                expect_eq(seqs(got), list(range(n, end)), f"Last-Event-ID {n} (?{query}): the seq_nums delivered")
                expect_eq(got, history[n:], f"Last-Event-ID {n}: the records delivered")
            else:
                # At the tail: nothing is owed until a record commits; the next one is exactly `end`.
                producer = requests.Session()
                try:
                    check_ack(run.append(key, [{"body": "after resume"}], session=producer), end, 1, "an append at the resumed tail")
                finally:
                    producer.close()
                got = sse.until(end + 1)
                expect_eq(seqs(got), [end], f"Last-Event-ID {n} at the tail: the next record only")
        finally:
            sse.close()
    run.ok("a reconnect with Last-Event-ID: n resumes exactly at n (no repeat, no skip) and overrides the query start")

    r = run.s.get(run.stream_url(key, "records", "subscribe"), headers=sse_headers, timeout=TIMEOUT)
    run.error_of(r, 400, "subscribe with neither a start nor Last-Event-ID")
    r = run.s.get(run.stream_url(key, "records", "subscribe", query="limit=3"), headers=sse_headers, timeout=TIMEOUT)
    run.error_of(r, 400, "subscribe with only a knob")
    r = run.s.get(run.stream_url("missing", "records", "subscribe", query="seq_num=0"), headers=sse_headers, timeout=TIMEOUT)
    run.error_of(r, 404, "subscribe to a missing stream")
    run.ok("subscribe with neither a start nor Last-Event-ID is 400 {error}; a missing stream 404")


def g_keepalive(run):
    key = "ka"
    count = 200
    run.create_bucket()
    run.create_stream(key)
    for i in range(count):
        check_ack(run.append(key, [{"body": f"r{i}"}]), i, 1, f"keep-alive append {i}")
    # urllib3's pool counts the connections it opened for this host: one, reused for every request.
    pool = run.s.get_adapter(run.base).poolmanager.connection_from_url(run.base)
    expect_eq(pool.num_connections, 1, "connections the Session opened for all its requests")
    run.ok(f"{count} appends over one keep-alive Session connection: 200 each, seq_nums contiguous")
    got = []
    while len(got) < count:
        page = run.read(key, f"seq_num={len(got)}")
        if not page["records"]:
            fail("a read below the tail returned no records", page)
        got.extend(page["records"])
    expect_eq(seqs(got), list(range(count)), "the appended seq_nums read back")
    expect_eq([x.get("body") for x in got], [f"r{i}" for i in range(count)], "the appended bodies, in order")
    expect_eq(pool.num_connections, 1, "connections after the reads too")
    run.ok("read back: every record once, in the order appended, still over the one connection")


GROUPS = {
    "create": g_create,
    "append-read": g_append_read,
    "match": g_match,
    "errors": g_errors,
    "chunked": g_chunked,
    "subscribe": g_subscribe,
    "keepalive": g_keepalive,
}


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in GROUPS:
        sys.stderr.write(f"usage: {sys.argv[0]} BASE_URL BUCKET GROUP   (GROUP: {', '.join(GROUPS)})\n")
        return 2
    base, bucket, group = sys.argv[1:]
    run = Run(base, bucket)
    try:
        GROUPS[group](run)
    except CheckFailed as e:
        run.failed[f"after {len(run.passed)} passed"] = str(e)
    except Exception:  # a transport error, a timeout, a KeyError on a missing field: all failures
        run.failed[f"after {len(run.passed)} passed"] = traceback.format_exc()
    finally:
        run.s.close()
    ok = not run.failed
    print(json.dumps({"group": group, "ok": ok, "passed": run.passed, "failed": run.failed,
                      "requests": requests.__version__}), flush=True)
    if not ok:
        sys.stderr.write(f"python-requests {group}: FAILED: {next(iter(run.failed.values()))}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
