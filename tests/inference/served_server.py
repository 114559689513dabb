"""A small served-model server for the tests, on 127.0.0.1 in a thread: both protocols for Dot
count, answering by counting the dots of the image it is sent (or from a table the test gives it),
with faults the test scripts per unit."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.dotcount.baselines import count_blobs

#: What a scripted fault does to one request for its unit (each is used once, in order).
SERVICE_UNAVAILABLE, TOO_MANY, SLOW, GARBAGE = "503", "429", "slow", "garbage"


class DotServer:
    """`url` is where it listens. `unit_of`: an image's sha256 -> the unit it shows (a chat request
    names no unit: the server knows it by its image). `faults`: unit -> faults still to come;
    `broken`: units always answered 500; `key`: the bearer token it requires (empty: none);
    `table`: unit -> the reply text (chat) or answer (yardstick) instead of a count. `seen`: every
    request, as {"path", "units", "authorization", "body"}."""

    def __init__(self, unit_of: dict[str, str]):
        self.unit_of = unit_of
        self.faults: dict[str, list[str]] = {}
        self.broken: set[str] = set()
        self.key = ""
        self.table: dict[str, str] = {}
        self.slow_s = 0.8
        self.seen: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_fault(self, unit: str) -> str:
        with self.lock:
            if unit in self.broken:
                return "500"
            queued = self.faults.get(unit) or []
            return queued.pop(0) if queued else ""

    def units_seen(self) -> list[list[str]]:
        with self.lock:
            return [list(request["units"]) for request in self.seen]

    def answer(self, path: str, headers: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
        chat = path.endswith("/chat/completions")
        if chat:
            images = [
                part["image_url"]["url"]
                for part in body["messages"][0]["content"]
                if part.get("type") == "image_url"
            ]
            units = [self.unit_of.get(sha256_of(images[0]), "?")] if images else ["?"]
        else:
            units = [item["id"] for item in body["items"]]
        with self.lock:
            self.seen.append(
                {
                    "path": path,
                    "units": units,
                    "authorization": headers.get("Authorization", ""),
                    "body": body,
                }
            )
        if self.key and headers.get("Authorization") != f"Bearer {self.key}":
            return 401, {}, json.dumps({"error": "a bearer token is needed"})
        fault = self.next_fault(units[0])
        if fault == SERVICE_UNAVAILABLE:
            return 503, {}, "busy, try again"
        if fault == TOO_MANY:
            return 429, {"Retry-After": "0"}, json.dumps({"error": "slow down"})
        if fault == "500":
            return 500, {}, "boom: the model crashed"
        if fault == SLOW:
            time.sleep(self.slow_s)
        if chat:
            count = count_blobs(io.BytesIO(image_bytes(images[0])))
            text = self.table.get(units[0], f"I can see {count} dots.\nAnswer: {count}")
            if fault == GARBAGE:
                text = "I am not sure what this picture shows."
            reply = {
                "id": "chat-1",
                "object": "chat.completion",
                "model": "dot-counter-1",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5},
            }
            return 200, {}, json.dumps(reply)
        answers = [
            {
                "id": item["id"],
                "answer": self.table.get(
                    item["id"], str(count_blobs(io.BytesIO(image_bytes(item["images"]["image"]))))
                ),
            }
            for item in body["items"]
        ]
        return 200, {}, json.dumps({"answers": answers})

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                status, headers, text = server.answer(self.path, self.headers, body)
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a scripted slow answer)

            def log_message(self, format, *args):  # noqa: A002 (the standard library's name)
                pass

        return Handler


def image_bytes(data_uri: str) -> bytes:
    return base64.b64decode(data_uri.split(",", 1)[1])


def sha256_of(data_uri: str) -> str:
    return hashlib.sha256(image_bytes(data_uri)).hexdigest()
