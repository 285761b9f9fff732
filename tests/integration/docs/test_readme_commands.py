"""The README's `kandev-slack` commands, run: every subcommand its shell blocks name answers
`--help` as the installed console script, and knows every option the README gives it."""

from __future__ import annotations

import subprocess

import pytest

from tests.kit.harness import CONSOLE_SCRIPT
from tests.unit.docs.markdown import README, commands, options, shell_blocks, subcommand, tool


def named_subcommands() -> dict[tuple[str, ...], set[str]]:
    """Each `kandev-slack` subcommand the README's shell blocks run → the options given it."""
    named: dict[tuple[str, ...], set[str]] = {}
    for block in shell_blocks(README.read_text()):
        for command in commands(block):
            if tool(command) == "kandev-slack":
                named.setdefault(subcommand(command), set()).update(options(command))
    return named


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_readme_runs_the_commands_a_newcomer_needs() -> None:
    assert {("run",), ("check",), ("preview",)} <= set(named_subcommands())


@pytest.mark.parametrize(
    "words", sorted(named_subcommands()), ids=lambda words: " ".join(words) or "(none)"
)
def test_each_readme_subcommand_answers_help_with_its_options(words) -> None:
    assert words, "a bare `kandev-slack` in the README does nothing"
    result = run(*words, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: kandev-slack {' '.join(words)}")
    for option in named_subcommands()[words]:
        assert option in result.stdout, f"kandev-slack {' '.join(words)} has no {option}"


def test_version_answers() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("kandev-slack ")
