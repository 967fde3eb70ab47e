"""A counting HTTP proxy in front of an object-store server: how many requests a job makes.

Every request stemma's processes send to the store (the orchestrator's and the workers':
they inherit the endpoint) goes through this proxy, which forwards it unchanged over a kept
connection and counts it by method. The figures are what a cloud bills per request.
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


class RequestCounter:
    """Start with :meth:`start`; ``endpoint`` is the URL to give clients; :meth:`take` reads."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._counts: Counter[str] = Counter()
        self.paths: Counter[str] = Counter()
        """Requests by method and path with digits folded (``GET /b/r/delta/x/_delta_log/N.json``),
        kept across takes, for finding where requests come from."""
        self.trace: list[tuple[float, str, str]] | None = None
        """When set to a list, each request's (start time, method, path) is appended, in order."""
        self._lock = threading.Lock()
        self._local = threading.local()
        self._upstream: list[http.client.HTTPConnection] = []  # every one, closed by stop()
        counter = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # (a reply's head and body in two writes: 40 ms each)

            def log_message(self, format: str, *args: object) -> None:
                del format, args

            def _forward(self) -> None:
                counter.count(self.command, self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                connection = counter.connection()
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    reply = connection.getresponse()
                except (OSError, http.client.HTTPException):
                    counter.drop_connection()
                    connection = counter.connection()
                    connection.request(self.command, self.path, body=body, headers=headers)
                    reply = connection.getresponse()
                data = reply.read()
                self.send_response(reply.status, reply.reason)
                for key, value in reply.getheaders():
                    if key.lower() not in _HOP and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> RequestCounter:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and close every socket it opened (a test warns of an unclosed one)."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            upstream, self._upstream = self._upstream, []
        for connection in upstream:
            connection.close()

    def count(self, method: str, path: str = "") -> None:
        with self._lock:
            self._counts[method] += 1
            self.paths[f"{method} {_folded(path)}"] += 1
            if self.trace is not None:
                self.trace.append((time.perf_counter(), method, path))

    def take(self) -> dict[str, int]:
        """The counts since the last take, by method, and their total; then start again."""
        with self._lock:
            counts = dict(self._counts)
            self._counts.clear()
        return {**counts, "total": sum(counts.values())}

    def connection(self) -> http.client.HTTPConnection:
        found = getattr(self._local, "connection", None)
        if found is None:
            found = http.client.HTTPConnection(self._host, self._port, timeout=60)
            found.connect()
            found.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.connection = found
            with self._lock:
                self._upstream.append(found)
        return found

    def drop_connection(self) -> None:
        found = getattr(self._local, "connection", None)
        if found is not None:
            found.close()
        self._local.connection = None


def _folded(path: str) -> str:
    path = path.split("?", 1)[0] + ("?" + path.split("?", 1)[1][:40] if "?" in path else "")
    return re.sub(r"[0-9a-f]{8,}|\d+", "N", path)
