"""The scripted agents stop asking once the preview stops, without a warning for each."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from kandev_slack.kits.kandevkit import KandevServer
from kandev_slack.preview import scenario


def test_nothing_is_asked_nor_warned_once_the_preview_stops(tmp_path: Path, caplog) -> None:
    gone = KandevServer(tmp_path / "no-runtime", work_dir=tmp_path / "work")  # never started
    stopping = threading.Event()
    stopping.set()
    asked: list[str] = []
    with caplog.at_level(logging.WARNING, logger="kandev_slack.preview.scenario"):
        scenario.ask_all(gone, done=asked.append, stopping=stopping)
    assert asked == [] and caplog.records == []


def test_the_scripted_names_are_meaningful() -> None:
    names = scenario.names()
    assert names.workspace and names.workspace != "Default Workspace"
    assert names.agent and "mock" not in names.agent.lower()
