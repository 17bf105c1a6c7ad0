"""A small Server-Sent Events reader for the tests: reads /api/v1/stream on a thread and
queues each event, so a test can wait for the next one with a deadline."""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
from dataclasses import dataclass

import requests


@dataclass
class Event:
    id: str | None
    event: str
    data: str
    received: float  # time.monotonic() when it arrived

    def json(self):
        return json.loads(self.data)


class EventStream:
    def __init__(self, base_url: str, token: str, last_event_id: str | None = None):
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.response = requests.get(base_url + "/api/v1/stream", headers=headers, stream=True, timeout=(5, 60))
        self.status = self.response.status_code
        self.events: queue.Queue[Event | None] = queue.Queue()
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        fields: dict[str, str] = {}
        data: list[str] = []
        try:
            for raw in self.response.iter_lines(decode_unicode=True):
                if raw is None:
                    continue
                if raw == "":
                    if data:
                        self.events.put(Event(fields.get("id"), fields.get("event", "message"), "\n".join(data), time.monotonic()))
                    fields, data = {}, []
                elif raw.startswith(":"):
                    continue
                else:
                    name, _, value = raw.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "data":
                        data.append(value)
                    else:
                        fields[name] = value
        except (requests.RequestException, AttributeError, ValueError):
            pass
        self.events.put(None)  # the stream ended

    def next(self, timeout: float = 5.0) -> Event | None:
        """The next event; None when the stream ended. Fails the test on a timeout."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event within {timeout} s")

    def take(self, count: int, timeout: float = 5.0) -> list[Event]:
        events = []
        for _ in range(count):
            event = self.next(timeout)
            assert event is not None, f"the stream ended after {events}"
            events.append(event)
        return events

    def quiet(self, seconds: float = 0.5) -> bool:
        """True when nothing arrives for `seconds`."""
        try:
            event = self.events.get(timeout=seconds)
        except queue.Empty:
            return True
        self.events.put(event)
        return False

    def close(self) -> None:
        # Shut the socket first: closing the response alone waits for the reader thread's
        # blocked read, which only returns at the next heartbeat.
        connection = getattr(self.response.raw, "connection", None)
        sock = getattr(connection, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.response.close()
