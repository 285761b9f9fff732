"""``kandev-slack preview [--port 3100] [--with-kandev [--kandev-port PORT]]
[--allow-slack-env]``: start the preview, say where it is, serve until Ctrl-C (or SIGTERM),
then stop all it started. A port in use is one line and a non-zero exit."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping
from types import FrameType

from kandev_slack.core.exitcodes import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from kandev_slack.preview.guard import refusal

log = logging.getLogger("kandev_slack.preview")


def main_preview(
    port: int,
    *,
    with_kandev: bool,
    allow_slack_env: bool,
    kandev_port: int | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    env = os.environ if env is None else env
    refused = refusal(env, allow_slack_env=allow_slack_env)
    if refused:
        print(f"kandev-slack preview: {refused}", file=sys.stderr)
        return EXIT_CONFIG
    from kandev_slack.config.routing import RoutingError
    from kandev_slack.kits.kandevkit import KandevHarnessError, PortsInUse, RuntimeInstallError
    from kandev_slack.ops.logs import configure_logging, install_redaction
    from kandev_slack.ops.redaction import Redactor
    from kandev_slack.preview.app import Preview, PreviewOptions
    from kandev_slack.preview.server import PortInUse

    configure_logging(env.get("LOG_LEVEL", "INFO"), "text")
    for noisy in ("httpx", "httpcore", "slack_sdk.web.base_client", "websockets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if with_kandev:
        print("Starting a local Kandev (the first run fetches its runtime from npm)…")
    if kandev_port is not None and not with_kandev:
        print("kandev-slack preview: --kandev-port goes with --with-kandev", file=sys.stderr)
        return EXIT_CONFIG
    options = PreviewOptions(port=port, with_kandev=with_kandev, kandev_port=kandev_port)
    preview = Preview(env, options)
    install_redaction(preview.secret_values())  # as ``run`` does: no log line shows a secret
    redact = Redactor(preview.secret_values())  # nor any line printed here
    # Ctrl-C and SIGTERM both stop it, as they stop ``run``. Handled here, so that a SIGINT an
    # inherited disposition would ignore (a background job's) still stops it; while it starts,
    # either interrupts the start (which stops what it started).
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        if not started.is_set():
            raise KeyboardInterrupt

    started = threading.Event()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        preview.start()
        started.set()
    except KeyboardInterrupt:
        preview.stop()  # what it started (safe when the start stopped it already)
        print("Stopped while starting.")
        return EXIT_OK
    except PortInUse as busy:
        print(f"kandev-slack preview: {busy.strerror}; choose another with --port", file=sys.stderr)
        return EXIT_FAILED
    except PortsInUse as busy:
        print(f"kandev-slack preview: {busy}; choose another with --kandev-port", file=sys.stderr)
        return EXIT_FAILED
    except (OSError, RoutingError, KandevHarnessError, RuntimeInstallError) as problem:
        print(f"kandev-slack preview: could not start: {redact(str(problem))}", file=sys.stderr)
        return EXIT_FAILED
    where = preview.kandev.base_url if preview.kandev else env.get("KANDEV_URL", "the default")
    where = redact(where)
    print(f"Preview of kandev-slack: open {preview.url}  (Kandev: {where}; Ctrl-C stops)")
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        print("Stopping the preview…")
        preview.stop()
    return EXIT_OK
