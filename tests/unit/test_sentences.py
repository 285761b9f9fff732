"""Use-cases return kinds, not sentences (CONTRIBUTING): what a person reads in Slack is worded
in ``kandev_slack/cards`` (``words.py``, the cards' own word modules) and
``kandev_slack/slack/presenters/said.py``, never in ``kandev_slack/usecases`` nor in the item
kinds' specs (``kandev_slack/kinds``, scanned as the use-cases are, except each kind's ``cards/``:
its rendering).

A use-case module breaks the rule when one of its string literals (an f-string counts as one,
its holes as ``{}``) is, outside the places that speak to operators or to the code,

- a sentence: two words or more that begin with a capital letter or end with ``.``, ``!`` or
  ``?`` (the bot's texts for operators and for the code — logs, /healthz, the audit's details,
  reasons — are lowercase fragments by convention); or
- words handed to a person: an argument of a call of something imported from ``kandev_slack.cards``
  (the use-case wording with the renderer's help), or a string of a result the presenter shows
  as it is (:data:`SHOWN`).

The places for operators and the code, never checked: docstrings; the arguments of a log
call (``log.warning(…)``), of ``/healthz`` (``health.problem(…)``…), of the audit and of the
metrics; ``raise`` statements and exceptions' own messages (``super().__init__(…)``); dict keys;
type annotations and ``Literal[…]``.

Today's breaches are listed in :data:`KNOWN` with their reasons; the list may only shrink.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USECASES = ROOT / "kandev_slack" / "usecases"
KINDS = ROOT / "kandev_slack" / "kinds"

#: Result types whose strings the presenter shows as they are: ``Problem.detail`` (said.problem
#: puts it in ``invalid_message``), a kind's ``Invalid`` (a Problem before sending), a listing
#: ``Reply``'s text, a ``BadSubscription``.
SHOWN = frozenset({"Problem", "Invalid", "Reply", "BadSubscription"})

#: Calls that speak to operators or to the code: a logger's methods, /healthz's, the audit's,
#: the metrics'.
_LOG_METHODS = frozenset({"debug", "info", "warning", "error", "exception", "critical", "log"})
_HEALTH_METHODS = frozenset({"problem", "failure", "clear", "watch"})
_OPERATOR_RECEIVERS = ("log", "health", "audit", "metrics")
_OPERATOR_FUNCTIONS = frozenset({"audit", "_audit", "audit_plain"})

#: Two words or more: a capital first (after an emoji or a mark), or a full stop, ! or ? last.
_SENTENCE = re.compile(r"^[^\w\s{]*\s*[A-Z][a-z’']*\s+\S|\S\s+\S.*[.!?]$", re.DOTALL)

#: Today's breaches, (module, the literal as the test shows it) → why it is still there.
KNOWN: Mapping[tuple[str, str], str] = {}


def _root_name(node: ast.expr) -> str:
    """``self.health.problem`` → "self.health.problem" (a call's callee, dotted)."""
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - ast.unparse handles every expression
        return ""


def _text(node: ast.Constant | ast.JoinedStr) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    return "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)


def _cards_names(tree: ast.Module) -> frozenset[str]:
    """The names a module binds to something of ``kandev_slack.cards``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "kandev_slack.cards"
        ):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "bot":
            names.update(a.asname or a.name for a in node.names if a.name == "cards")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kandev_slack.cards"):
                    names.add(alias.asname or "bot")
    return frozenset(names)


class _Finder(ast.NodeVisitor):
    def __init__(self, cards: frozenset[str]) -> None:
        self.cards = cards
        self.found: list[tuple[int, str]] = []
        self.sink = 0  # inside words handed to a person

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring (or a bare string: says nothing to anyone)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        return

    def visit_Dict(self, node: ast.Dict) -> None:
        for value in node.values:
            self.visit(value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_arg(self, node: ast.arg) -> None:
        return

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for statement in node.body:
            self.visit(statement)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "Literal":
            return
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        callee = _root_name(node.func)
        last = callee.rpartition(".")[2]
        receiver = callee.rpartition(".")[0]
        if isinstance(node.func, ast.Attribute) and (
            (last in _LOG_METHODS and "log" in receiver)
            or (last in _HEALTH_METHODS and "health" in receiver)
            or any(r in receiver for r in _OPERATOR_RECEIVERS[2:])
            or callee == "super().__init__"
        ):
            return
        if last in _OPERATOR_FUNCTIONS:
            return
        sink = callee.split(".")[0] in self.cards or last in SHOWN
        self.sink += sink
        self.generic_visit(node)
        self.sink -= sink

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._check(node)
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                self.visit(value.value)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self._check(node)

    def _check(self, node: ast.Constant | ast.JoinedStr) -> None:
        text = _text(node).strip()
        if " " not in text:
            return  # one word: an id, a key, a kind
        if self.sink or _SENTENCE.search(text):
            self.found.append((node.lineno, text))


def sentences(source: str) -> list[tuple[int, str]]:
    """(line, text) of every sentence for a person in a use-case module's ``source``."""
    tree = ast.parse(source)
    finder = _Finder(_cards_names(tree))
    finder.visit(tree)
    return finder.found


def _rendering(path: Path) -> bool:
    """A kind's own renderers (kandev_slack/kinds/<kind>/cards/): the cards' words."""
    return KINDS in path.parents and "cards" in path.relative_to(KINDS).parts[1:-1]


def usecase_sources() -> Iterator[tuple[str, str]]:
    """The use-cases' modules and the kinds' (their renderers aside)."""
    paths = [*USECASES.rglob("*.py"), *KINDS.rglob("*.py")]
    for path in sorted(p for p in paths if not _rendering(p)):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts), path.read_text(encoding="utf-8")


def test_the_kinds_are_scanned_but_not_their_renderers() -> None:
    scanned = {m for m, _ in usecase_sources()}
    assert "kandev_slack.kinds.question.spec" in scanned
    assert "kandev_slack.kinds.approval.spec" in scanned
    assert not {m for m in scanned if ".cards" in m}
    assert "kandev_slack.usecases.answering.answers" in scanned


def found_in_usecases() -> dict[tuple[str, str], int]:
    return {(m, text): line for m, src in usecase_sources() for line, text in sentences(src)}


def test_usecases_hold_no_sentences() -> None:
    new = sorted(
        f"{m}:{line}: {text!r}"
        for (m, text), line in found_in_usecases().items()
        if (m, text) not in KNOWN
    )
    assert not new, (
        "a use-case returns a kind and kandev_slack/cards words it (words.py, said.py):\n"
        + "\n".join(new)
    )


def test_the_known_sentences_only_shrink() -> None:
    found = found_in_usecases()
    gone = sorted(f"{m}: {text!r}" for m, text in KNOWN if (m, text) not in found)
    assert not gone, "fixed: remove these from KNOWN\n" + "\n".join(gone)


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ('def f():\n    return "Nothing is waiting."\n', "Nothing is waiting."),
        ('x = f"That is too long (over {n})."\n', "That is too long (over {})."),
        (
            "from kandev_slack.cards import subscriptions as words\n"
            'def f():\n    return words.usage_message("label needs a name")\n',
            "label needs a name",
        ),
        (
            'def f():\n    return Problem("every question needs an answer")\n',
            "every question needs an answer",
        ),
        (
            'def f():\n    return Invalid("that option was not offered by the agent")\n',
            "that option was not offered by the agent",
        ),
        ('def f():\n    return Reply(text=f"{n} waiting", blocks=[])\n', "{} waiting"),
        ('def f(x="Are you sure?"):\n    pass\n', "Are you sure?"),
        ('LABEL = "👀 I’m on it"\n', "👀 I’m on it"),
    ],
)
def test_a_sentence_in_a_usecase_is_caught(source: str, caught: str) -> None:
    assert [text for _, text in sentences(source)] == [caught]


@pytest.mark.parametrize(
    "source",
    [
        '"""A docstring. It may say anything."""\n',
        'def f():\n    """Docstring."""\n    log.warning("Card %s failed.", key)\n',
        'def f():\n    raise ValueError("Not a card.")\n',
        'def f():\n    self.health.problem("outbox", "Store error.")\n',
        'def f():\n    self.audit_log.audit(key, user, "answer", "Slack said no.")\n',
        'class E(Exception):\n    def __init__(self):\n        super().__init__("Paced. Wait.")\n',
        'x = {"A key.": 1}\n',
        'def f(x: "Literal[\'A b.\']") -> None:\n    return Ignored("not a card\'s thread")\n',
        'KIND = Literal["two words"]\nx = "no_channel"\n',
    ],
)
def test_what_speaks_to_operators_or_the_code_passes(source: str) -> None:
    assert sentences(source) == []
