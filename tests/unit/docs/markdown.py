"""Reading the project's Markdown as a reader's tools do: its links (with GitHub's heading
anchors), its fenced shell blocks and the commands in them."""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
CONTRIBUTING = REPO / "CONTRIBUTING.md"

_FENCE = re.compile(r"^(```|~~~)([^\n]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
#: Shell blocks: what a reader copies into a terminal.
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}


def documents() -> list[Path]:
    """README.md, CONTRIBUTING.md and every page under docs/."""
    return [README, CONTRIBUTING, *sorted((REPO / "docs").glob("*.md"))]


def without_code(text: str) -> str:
    """The text with fenced blocks and code spans blanked out (links there are not links)."""
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return _CODE_SPAN.sub(" ", text)


def links(path: Path) -> list[str]:
    """Every link and image target of a Markdown file, outside code."""
    return _LINK.findall(without_code(path.read_text()))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (code marks and link targets dropped) in lower
    case, punctuation removed, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file (a repeated one gets -1, -2…)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` whose file, or anchor in that file, does not exist."""
    broken = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:…
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor in {resolved.name}")
    return broken


def section(text: str, heading: str) -> str:
    """The part of a Markdown text under ``## heading``, up to the next heading of level 2."""
    match = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def shell_blocks(text: str) -> list[str]:
    """The fenced shell blocks of a Markdown text."""
    return [
        body
        for _, language, body in _FENCE.findall(text)
        if language.strip().split(" ")[0] in SHELL_LANGUAGES
    ]


@dataclass(frozen=True)
class Command:
    """One simple command of a shell block: its words, and the line it came from."""

    words: tuple[str, ...]
    line: str

    @property
    def program(self) -> str:
        return self.words[0]


def commands(block: str) -> list[Command]:
    """The simple commands of a shell block (split at ``&&``, ``||``, ``;`` and ``|``), with
    comments dropped and continuation lines joined."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in lexer:
            if token and set(token) <= set(";&|"):
                if words:
                    found.append(Command(tuple(words), line.strip()))
                words = []
            else:
                words.append(token)
        if words:
            found.append(Command(tuple(words), line.strip()))
    return found


def tool(command: Command) -> str:
    """The program a command runs, without its folder (``.venv/bin/pytest`` → ``pytest``)."""
    return command.program.rsplit("/", 1)[-1]


def subcommand(command: Command) -> tuple[str, ...]:
    """The words of a ``kandev-slack`` command up to its first option (``db upgrade``)."""
    words = []
    for word in command.words[1:]:
        if word.startswith("-"):
            break
        words.append(word)
    return tuple(words)


def options(command: Command) -> list[str]:
    """The long options a command names (``--with-kandev``)."""
    return [w.split("=", 1)[0] for w in command.words[1:] if w.startswith("--")]


# ---- what a pip install installs ----------------------------------------------------------


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def install_spec(command: Command) -> str | None:
    """What ``pip install -e <spec>`` installs from this checkout (``.`` or ``.[test]``), or
    None when the command is no such install."""
    if tool(command) != "pip" or command.words[1:2] != ("install",):
        return None
    targets = [w for w in command.words[2:] if not w.startswith("-")]
    assert len(targets) == 1 and targets[0].startswith("."), command.line
    return targets[0]


def distributions(spec: str) -> set[str]:
    """The distributions ``pip install -e <spec>`` installs directly: the project's own
    dependencies and those of the extras named."""
    meta = project()
    match = re.fullmatch(r"\.(?:\[([^\]]*)\])?", spec)
    assert match, f"unexpected install target {spec!r}"
    extras = [e.strip() for e in (match.group(1) or "").split(",") if e.strip()]
    names = {_name(meta["name"])} | {_name(r) for r in meta["dependencies"]}
    for extra in extras:
        assert extra in meta["optional-dependencies"], f"no extra [{extra}] in pyproject.toml"
        names |= {_name(r) for r in meta["optional-dependencies"][extra]}
    return names
