"""``ragmeter serve``: the local web dashboard over the run store."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli._app import RunStoreOption, _fail, app, console, open_run_store


@app.command("serve")
def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = 8321,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote", help="Listen on an address other machines can reach (needs a token)."
        ),
    ] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="RAGMETER_DASHBOARD_TOKEN",
            help="Token every request must carry (generated with --allow-remote if not given).",
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Another name (NAME or NAME:PORT) the dashboard answers to, e.g. behind a proxy "
            "(repeatable). Requests naming any other host are refused.",
        ),
    ] = None,
    gate: Annotated[
        Path | None,
        typer.Option(
            "--gate",
            "-g",
            help="Gate file (TOML or YAML) whose thresholds the trend charts draw.",
        ),
    ] = None,
    store: RunStoreOption = None,
) -> None:
    """Browse runs, their samples and comparisons in a web browser (works offline)."""
    try:
        import uvicorn

        from ragmeter.dashboard import create_app, is_loopback
    except ImportError as error:
        _fail(f"the dashboard needs its extra: pip install 'ragmeter[serve]' ({error})")
    rules = None
    if gate is not None:
        from ragmeter.gate import GateFileError, load_rules

        try:
            rules = load_rules(gate)
        except (GateFileError, FileNotFoundError, ImportError) as error:
            _fail(f"--gate: {error}")
    if not is_loopback(host):
        if not allow_remote:
            _fail(
                f"--host {host} can be reached from other machines: add --allow-remote "
                "(a token is then required) or keep the default 127.0.0.1"
            )
        if not token:
            token = secrets.token_urlsafe(24)
            console.print(f"token (pass it once as ?token=...): {token}", highlight=False)
    opened = open_run_store(store)
    where = f"http://{host}:{port}/" + ("?token=…" if token else "")
    console.print(f"ragmeter dashboard on {where} (Ctrl+C to stop)", highlight=False)
    try:
        dashboard = create_app(
            opened,
            token=token,
            host=host,
            port=port,
            allowed_hosts=allowed_host or (),
            gate=rules,
            gate_source=None if gate is None else str(gate),
        )
    except ValueError as error:
        _fail(f"--allowed-host: {error}")
    uvicorn.run(dashboard, host=host, port=port, log_level="warning")
