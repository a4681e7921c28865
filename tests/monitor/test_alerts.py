"""Alerts delivered to a local HTTP receiver: the payload, retries, and a failure that is
logged (without the URL's token) and never stops the monitor."""

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragmeter.monitor import Monitor, post_webhook
from tests.monitor.judge import judge, row
from tests.monitor.test_monitor import BAD, GOOD, write

TOKEN = "s3cr3t-t0ken-123"


class Receiver:
    """An HTTP server on 127.0.0.1 answering POSTs with the given statuses in turn (the last
    one again after), keeping every JSON body and path it got."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.bodies = []
        self.paths = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers["Content-Length"])
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                receiver.paths.append(self.path)
                status = (
                    receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook?token={TOKEN}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def drop_monitor(tmp_path, url):
    write(tmp_path / "traffic.jsonl", GOOD + BAD, mode="w")
    return Monitor(
        tmp_path / "traffic.jsonl",
        "faithfulness",
        window=8,
        n_resamples=2000,
        state_dir=tmp_path / "state",
        judge=judge(),
        log=tmp_path / "alerts.jsonl",
        webhook=url,
        webhook_backoff_s=0.01,
        record_runs=False,
    )


def test_an_alert_is_posted_to_the_webhook(tmp_path):
    with Receiver([200]) as receiver:
        report = drop_monitor(tmp_path, receiver.url).poll()
    (alert,) = report.alerts
    assert receiver.bodies == [alert] and not report.webhook_failures
    assert receiver.paths == [f"/hook?token={TOKEN}"]
    body = receiver.bodies[0]
    assert body["metric"] == "faithfulness" and body["window"] == 2
    assert body["baseline_mean"] == pytest.approx(0.875)
    assert body["window_mean"] == pytest.approx(0.375)
    assert set(body["worst_sample_ids"][:4]) == {"s8", "s10", "s12", "s14"}
    assert TOKEN not in json.dumps(body)  # the payload never carries the URL or its token


def test_a_failed_delivery_is_retried(tmp_path):
    with Receiver([503, 200]) as receiver:
        report = drop_monitor(tmp_path, receiver.url).poll()
    assert len(receiver.bodies) == 2 and receiver.bodies[0] == receiver.bodies[1]
    assert not report.webhook_failures


def test_a_webhook_that_keeps_failing_is_logged_and_the_monitor_goes_on(tmp_path):
    with Receiver([500]) as receiver:
        monitoring = drop_monitor(tmp_path, receiver.url)
        report = monitoring.poll()
    assert len(receiver.bodies) == 3  # three tries
    (failure,) = report.webhook_failures
    assert "HTTP 500 after 3 tries" in failure and TOKEN not in failure and "***" in failure
    logged = [json.loads(line) for line in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert [entry["event"] for entry in logged] == ["alert", "webhook_failed"]
    assert TOKEN not in (tmp_path / "alerts.jsonl").read_text()
    # The monitor goes on: later samples are still read and placed.
    write(tmp_path / "traffic.jsonl", [row(50, 4)])
    assert monitoring.poll().samples == 1


def test_an_unreachable_webhook_is_a_logged_failure(tmp_path):
    with Receiver([200]) as receiver:
        url = receiver.url
    report = drop_monitor(tmp_path, url).poll()  # the receiver is gone: connection refused
    (failure,) = report.webhook_failures
    assert "after 3 tries" in failure and TOKEN not in failure
    assert len(report.alerts) == 1


@contextlib.contextmanager
def trickler():
    """A receiver that reads the POST, then sends its answer one byte every 0.2 s for as
    long as it is let (each read is quick: only a total deadline stops the wait); yields
    its URL."""
    server = socket.create_server(("127.0.0.1", 0))
    connections = []
    closed = threading.Event()

    def trickle(connection):
        with contextlib.suppress(OSError):
            connection.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                if closed.wait(0.2):
                    return
                connection.sendall(bytes([byte]))

    def serve():
        while not closed.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connections.append(connection)
            threading.Thread(target=trickle, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook?token={TOKEN}"
    finally:
        closed.set()
        server.close()
        for connection in connections:
            connection.close()


def test_a_trickling_webhook_is_cut_off_at_its_total_timeout():
    with trickler() as url:
        started = time.monotonic()
        failed = post_webhook(url, {"a": 1}, tries=2, timeout_s=1.0, backoff_s=0.01)
        took = time.monotonic() - started
    assert failed is not None and "no whole answer within 1 s after 2 tries" in failed
    assert TOKEN not in failed
    assert took < 5.0  # two tries of 1 s each, not 10 s per byte read


def test_a_stop_ends_a_webhook_delivery_in_progress():
    stop = threading.Event()
    with trickler() as url:
        timer = threading.Timer(0.5, stop.set)
        timer.start()
        started = time.monotonic()
        failed = post_webhook(url, {"a": 1}, timeout_s=60.0, stop=stop)
        took = time.monotonic() - started
        timer.cancel()
    assert failed == "stopped after 1 of 3 tries (no answer yet when stopped)"
    assert took < 5.0  # not the 60 s timeout, nor 3 tries of it
