"""``kandev-slack preview`` as a person runs it: what it prints and logs never shows the
password of ``KANDEV_URL`` (its start line, nor the warning each poll logs while that Kandev
is unreachable), redacted as ``run`` redacts it."""

from __future__ import annotations

import os
import signal
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
