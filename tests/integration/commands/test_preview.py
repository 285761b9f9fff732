"""``kandev-slack preview`` as a person runs it: what it prints and logs never shows the
password of ``KANDEV_URL`` (its start line, nor the warning each poll logs while that Kandev
is unreachable), redacted as ``run`` redacts it; Ctrl-C stops it even when SIGINT came ignored."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.kit.harness import CONSOLE_SCRIPT, free_port

PASSWORD = "s3cret-preview-pw"


def test_the_preview_never_shows_the_kandev_password(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KANDEV_"))}
    env |= {
        "KANDEV_URL": f"http://kandev:{PASSWORD}@127.0.0.1:{free_port()}",  # nothing listens
        "KANDEV_POLL_INTERVAL": "1",
        "LOG_LEVEL": "DEBUG",
    }
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [str(CONSOLE_SCRIPT), "preview", "--port", "0"], env=env, stdout=stdout, stderr=stderr
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and err.read_text().count("unavailable") < 3:
                assert process.poll() is None, err.read_text()
                time.sleep(0.2)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
    printed, logged = out.read_text(), err.read_text()
    assert "Preview of kandev-slack: open http://127.0.0.1:" in printed
    assert "Kandev: http://[redacted]@127.0.0.1:" in printed
    assert logged.count("unavailable") >= 3, logged  # the polls did warn, with the URL
    assert "[redacted]@127.0.0.1" in logged
    assert PASSWORD not in printed + logged


def _preview_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KANDEV_"))}
    return env | {"KANDEV_URL": f"http://127.0.0.1:{free_port()}"}


def _one_clear_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_busy_port_is_one_clear_line_and_a_failure() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(CONSOLE_SCRIPT), "preview", "--port", str(port)],
            env=_preview_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    line = _one_clear_line(done.stderr)
    assert f"port {port} on 127.0.0.1 is already in use" in line and "--port" in line


def test_busy_kandev_ports_are_one_clear_line_and_a_failure() -> None:
    """``--kandev-port`` chooses the local Kandev's ports; taken ones are said before any
    Kandev is started."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(CONSOLE_SCRIPT), "preview", "--port", "0", "--with-kandev"]
            + ["--kandev-port", str(port)],
            env=_preview_env() | {"KANDEV_RUNTIME_DIR": os.environ.get("KANDEV_RUNTIME_DIR", "")},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    line = _one_clear_line(done.stderr)
    assert f"Kandev's ports {port}–" in line and f"port {port} is in use" in line, line
    assert "--kandev-port" in line


def test_the_kandev_port_must_be_a_port_number() -> None:
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "preview", "--with-kandev", "--kandev-port", "99999"],
        env=_preview_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "not a port number: '99999'" in done.stderr


def test_the_kandev_port_goes_with_with_kandev() -> None:
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "preview", "--kandev-port", "40000"],
        env=_preview_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "--kandev-port goes with --with-kandev" in _one_clear_line(done.stderr)


def _sigint_ignored() -> None:
    """As a background job of a non-interactive shell starts: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_stops_it_even_when_it_started_with_sigint_ignored(tmp_path: Path) -> None:
    # Like ``run``, the preview handles SIGINT itself: it used to rely on Python's
    # KeyboardInterrupt, which an inherited SIG_IGN disables, and then it never stopped.
    out = tmp_path / "stdout"
    with out.open("w") as stdout:
        process = subprocess.Popen(
            [str(CONSOLE_SCRIPT), "preview", "--port", "0"],
            env=_preview_env(),
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            preexec_fn=_sigint_ignored,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and "Ctrl-C stops" not in out.read_text():
                assert process.poll() is None, out.read_text()
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 0
        finally:
            process.kill()
    assert "Stopping the preview" in out.read_text()
