"""The documentation a newcomer reads first holds together: every relative link of the README
and of docs/ reaches a file (and heading) that exists; every command of the README's shell
blocks names programs, scripts, files, extras, markers and settings that exist; CONTRIBUTING's
quick test command needs only what the README's set-up installs. (The README's `kandev-slack`
commands are run with `--help` in tests/integration/docs.)"""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.unit.docs.markdown import (
    CONTRIBUTING,
    README,
    REPO,
    Command,
    broken_links,
    commands,
    distributions,
    documents,
    install_spec,
    section,
    shell_blocks,
    tool,
)

#: What the README's shell blocks may run, beside the project's own programs in .venv/bin.
SYSTEM_PROGRAMS = {"python3", "bash", "export", "cd", "git"}


def readme_commands() -> list[Command]:
    return [c for block in shell_blocks(README.read_text()) for c in commands(block)]


def markers() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return {m.split(":", 1)[0].strip() for m in config["markers"]}


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_a_file_and_heading_that_exist(path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_or_anchor_is_found(tmp_path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Health: `/healthz`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#health-healthz) [gone](missing.md) [bad](other.md#nothing) "
        "`[code](not-a-link.md)` [web](https://example.com/x) [self](#page)\n\n# Page\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nothing: no heading with that anchor in other.md",
    ]


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) <= 300
    first_image = next(i for i, line in enumerate(lines) if line.startswith("!["))
    assert first_image < 15, "the picture belongs at the top"
    for heading in ("Contents", "Set-up on a fresh machine", "Troubleshooting"):
        assert f"\n## {heading}\n" in text
    assert text.index("## Creating the Slack app") < text.index("## Configuration")


def test_the_readme_has_shell_commands_to_check() -> None:
    programs = {tool(c) for c in readme_commands()}
    assert {"pip", "kandev-slack", "pytest", "bash"} <= programs


@pytest.mark.parametrize("command", readme_commands(), ids=lambda c: c.line)
def test_each_readme_command_names_what_exists(command) -> None:
    program = tool(command)
    if command.program.startswith(".venv/bin/"):
        assert program in {"pip", "python", "pytest", "kandev-slack", "ruff", "mypy"}, program
    else:
        assert program in SYSTEM_PROGRAMS | {"kandev-slack"}, f"unknown program {program}"
    if program == "pip":
        spec = install_spec(command)
        assert spec is not None and distributions(spec)
    if program == "pytest":
        words = list(command.words)
        for flag, value in zip(words, words[1:], strict=False):
            if flag == "-m":
                assert set(re.findall(r"[a-z_]+", value)) - {"and", "or", "not"} <= markers()
    if program == "bash":
        assert (REPO / command.words[1]).is_file(), command.words[1]
    if program == "export":
        configuration = (REPO / "docs" / "configuration.md").read_text()
        for assignment in command.words[1:]:
            name = assignment.split("=", 1)[0]
            assert f"| `{name}` |" in configuration, f"{name} is not documented"
    for word in command.words[1:]:
        if re.fullmatch(r"[\w.-]+/[\w./-]+\.(sh|py|toml|yml|md)", word):
            assert (REPO / word).exists(), word


def test_contributing_quick_test_command_needs_only_the_readme_set_up() -> None:
    """The first shell block of CONTRIBUTING's inner loop runs right after the README's
    set-up: every program it runs is installed by an install the set-up names (or is one
    of those installs itself)."""
    set_up = [
        c
        for block in shell_blocks(section(README.read_text(), "Set-up on a fresh machine"))
        for c in commands(block)
    ]
    installs = {spec for c in set_up if (spec := install_spec(c))}
    installed = set().union(*(distributions(spec) for spec in installs))
    quick = commands(shell_blocks(section(CONTRIBUTING.read_text(), "The inner loop"))[0])
    assert quick
    for command in quick:
        spec = install_spec(command)
        if spec is not None:
            assert spec in installs, f"{command.line}: not one of the README's installs"
            installed |= distributions(spec)
            continue
        assert command.program.startswith(".venv/bin/"), command.line
        program = tool(command)
        if program not in {"python", "pip"}:
            assert program in installed, f"{command.line}: the README's set-up has no {program}"
        if program == "pytest" and "-m" in command.words:
            marker = command.words[command.words.index("-m") + 1]
            assert marker in markers()


def test_contributing_carries_no_hand_written_test_counts() -> None:
    counts = re.findall(r"\b\d[\d,]*\s+(?:unit\s+)?tests\b", CONTRIBUTING.read_text())
    assert counts == [], "a count goes stale: say how to get it (pytest --collect-only)"


def test_the_readme_names_the_kandev_runtime_the_tests_fetch() -> None:
    """The size and platforms stated are those of this package and version: a new runtime
    version makes this fail until they are measured again."""
    from kandev_slack.kits.kandevkit import KANDEV_VERSION, NPM_PACKAGE

    text = " ".join(section(README.read_text(), "Set-up on a fresh machine").split())
    assert f"`{NPM_PACKAGE}` (version {KANDEV_VERSION}," in text
    assert "158 MB download, 512 MB unpacked" in text and "Linux x86-64 only" in text
