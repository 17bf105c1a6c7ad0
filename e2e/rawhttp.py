"""HTTP/1.1 over a bare socket, for tests that must send bytes no HTTP library would (the
mutation fuzzer): `exchange` sends them as they are and reads what comes back; `parse_responses`
checks that it is well-formed HTTP."""

from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass, field

STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([1-5][0-9][0-9])(?: [\x20-\x7e\t]*)?")
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
FIELD_VALUE = re.compile(rb"[\x20-\x7e\t\x80-\xff]*")


@dataclass
class Exchange:
    """What came back for one request: the bytes, and how reading ended."""
    data: bytes
    ended: str  # "eof", "stream" (an event stream's head arrived), "timeout", "refused", "reset"
    seconds: float


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


class Malformed(Exception):
    """The bytes that came back are not a well-formed HTTP/1.1 response."""


def exchange(port: int, data: bytes, timeout: float = 10.0) -> Exchange:
    """Connects to 127.0.0.1:port, sends `data`, half-closes (so a server waiting for more of a
    cut request sees the end at once), and reads until the server closes, `timeout` passes, or
    the head of an event stream (which never ends by itself) has arrived."""
    started = time.monotonic()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except ConnectionRefusedError:
        return Exchange(b"", "refused", time.monotonic() - started)
    received = bytearray()
    ended = "eof"
    try:
        sock.settimeout(timeout)
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early and closed: what it said is still readable
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                ended = "timeout"
                break
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                ended = "timeout"
                break
            except ConnectionResetError:
                ended = "reset"
                break
            if not chunk:
                break
            received += chunk
            head_end = received.find(b"\r\n\r\n")
            if head_end >= 0 and b"text/event-stream" in received[:head_end].lower():
                ended = "stream"
                break
    finally:
        sock.close()
    return Exchange(bytes(received), ended, time.monotonic() - started)


def parse_responses(data: bytes, request_method: bytes = b"GET", complete: bool = True) -> list[Response]:
    """Every response in `data`, strictly: status line, header fields (token names, no control
    bytes in values, at most one Content-Length), and a body framed by Content-Length, chunked
    coding or the end of the connection. An event stream's body is not read. Raises Malformed.
    `complete` says the connection ended (a close-delimited body is then whole)."""
    responses = []
    position = 0
    first = True
    while position < len(data):
        head_end = data.find(b"\r\n\r\n", position)
        if head_end < 0:
            raise Malformed(f"no end of head after byte {position}: {data[position:position + 200]!r}")
        lines = data[position:head_end].split(b"\r\n")
        match = STATUS_LINE.fullmatch(lines[0])
        if not match:
            raise Malformed(f"bad status line {lines[0][:200]!r}")
        response = Response(int(match.group(1)))
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not TOKEN.fullmatch(name) or not FIELD_VALUE.fullmatch(value):
                raise Malformed(f"bad header line {line[:200]!r}")
            response.headers.append((name.decode(), value.strip(b" \t").decode("latin-1")))
        position = head_end + 4
        lengths = [v for k, v in response.headers if k.lower() == "content-length"]
        chunked = any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in response.headers)
        if len(lengths) > 1 or (lengths and chunked):
            raise Malformed(f"conflicting framing headers {response.headers}")
        responses.append(response)
        if 100 <= response.status < 200:
            continue  # 100 Continue: the real response follows
        if (response.header("content-type") or "").startswith("text/event-stream"):
            break
        no_body = response.status in (204, 304) or (first and request_method == b"HEAD")
        first = False
        if no_body:
            continue
        if chunked:
            body = bytearray()
            while True:
                line_end = data.find(b"\r\n", position)
                if line_end < 0:
                    raise Malformed("chunked body cut short")
                size_text = data[position:line_end].split(b";")[0].strip()
                if not re.fullmatch(rb"[0-9A-Fa-f]{1,16}", size_text):
                    raise Malformed(f"bad chunk size {size_text[:40]!r}")
                size = int(size_text, 16)
                position = line_end + 2
                if size == 0:
                    trailer_end = data.find(b"\r\n", position)
                    while trailer_end > position:  # skip trailer fields
                        position = trailer_end + 2
                        trailer_end = data.find(b"\r\n", position)
                    if trailer_end < 0:
                        raise Malformed("chunked body without its final CRLF")
                    position = trailer_end + 2
                    break
                if len(data) < position + size + 2 or data[position + size:position + size + 2] != b"\r\n":
                    raise Malformed("chunk cut short or not followed by CRLF")
                body += data[position:position + size]
                position += size + 2
            response.body = bytes(body)
        elif lengths:
            if not re.fullmatch(r"[0-9]{1,15}", lengths[0]):
                raise Malformed(f"bad Content-Length {lengths[0]!r}")
            length = int(lengths[0])
            if len(data) - position < length:
                raise Malformed(f"body of {len(data) - position} bytes, Content-Length says {length}")
            response.body = data[position:position + length]
            position += length
        else:
            if not complete:
                raise Malformed("a body without length that did not end with the connection")
            response.body = data[position:]
            position = len(data)
    return responses
