"""``ragmeter judge serve --fake``: a deterministic offline judge for CI smoke tests."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.cli._app import _fail
from ragmeter.cli._judging import judge_app, whole_paragraphs


@judge_app.command("serve")
@whole_paragraphs
def judge_serve(
    fake: Annotated[
        bool,
        typer.Option(
            "--fake",
            help="Serve the fake judge: deterministic word-overlap answers (required: it is "
            "the only judge this command serves).",
        ),
    ] = False,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port (0: a free one).")
    ] = 8399,
    env_file: Annotated[
        Path | None,
        typer.Option(
            "--env-file",
            help="Also append the variables as NAME=value lines to this file (e.g. "
            "$GITHUB_ENV), once the server listens.",
        ),
    ] = None,
) -> None:
    """Serve an offline, deterministic judge and embeddings endpoint (OpenAI-compatible) for
    CI smoke tests of a pipeline's wiring: every built-in judgment and test-set generation
    call gets a plausible, schema-valid answer from word overlap (no model, no network, no
    key). Its scores say nothing about quality.

    Prints the base URL and the RAGMETER_JUDGE_* / RAGMETER_EMBEDDINGS_* variables to export,
    then serves until Ctrl+C or SIGTERM (exit 0). Exit 2 without --fake or when the port
    cannot be bound.
    """
    if not fake:
        _fail(
            "ragmeter judge serve serves the fake judge only: add --fake (a deterministic "
            "offline judge for CI smoke tests; scores say nothing about quality)"
        )
    from ragmeter.testing import FakeJudgeServer

    server = FakeJudgeServer(host=host, port=port)
    try:
        server.start()
    except OSError as error:
        _fail(f"cannot listen on {host}:{port}: {error}")
    stop = threading.Event()

    def stopping(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, stopping) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        variables = server.environment()
        if env_file is not None:  # written before the lines below: who reads them may read it
            try:
                with env_file.open("a", encoding="utf-8") as out:
                    out.writelines(f"{name}={value}\n" for name, value in variables.items())
            except OSError as error:
                _fail(f"--env-file: {error}")
        print(
            f"ragmeter fake judge on {server.base_url} (word-overlap answers for CI smoke "
            "tests; Ctrl+C to stop)",
            flush=True,
        )
        for name, value in variables.items():
            print(f"export {name}={value}", flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        server.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print("ragmeter fake judge stopped", file=sys.stderr, flush=True)
