"""Agent-written links cannot impersonate: a label that names another host than its target's,
or imitates the bot's own link texts, keeps its words as plain text and links only the real
host (issue: the third review's link spoofing)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_slack.cards import markdown_to_mrkdwn
from kandev_slack.cards.mrkdwn import is_deceptive_label
from tests.unit.cards.safety import unsafe_angles

_LINK = re.compile(r"<(https?://[^|>]+)\|([^>]*)>")


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        (
            "[docs.python.org](https://evil.example/x)",
            "docs.python.org (<https://evil.example/x|evil.example>)",
        ),
        (
            "[Open in Kandev](https://evil.example/t/1)",
            "Open in Kandev (<https://evil.example/t/1|evil.example>)",
        ),
        (
            "[https://kandev.example/t/1](https://evil.example)",
            "https://kandev.example/t/1 (<https://evil.example|evil.example>)",
        ),
        ("[10.0.0.1](https://evil.example)", "10.0.0.1 (<https://evil.example|evil.example>)"),
        # look-alikes: a Cyrillic і in the label, a zero-width space, a one-dot leader
        (
            "[g\u0456thub.com](https://evil.example)",
            "g\u0456thub.com (<https://evil.example|evil.example>)",
        ),
        (
            "[O\u200bpen in K\u0430ndev](https://e.example)",
            "O\u200bpen in K\u0430ndev (<https://e.example|e.example>)",
        ),
        ("[kandev\u2024dev](https://x.example)", "kandev\u2024dev (<https://x.example|x.example>)"),
        # a look-alike target is shown in its real (ASCII) form
        (
            "[github.com](https://g\u0456thub.com/x)",
            "github.com (<https://g\u0456thub.com/x|xn--gthub-n2e.com>)",
        ),
    ],
)
def test_a_deceptive_label_shows_the_real_host(markdown: str, shown: str) -> None:
    assert markdown_to_mrkdwn(markdown) == shown


@pytest.mark.parametrize(
    "markdown",
    [
        "[the docs](https://docs.example/a)",
        "[github.com](https://docs.github.com/a)",  # the target is under the named domain
        "[GitHub.com](https://github.com/)",
        "<https://auto.example/p>",  # an autolink shows its own target
        "[v1.2 notes](https://notes.example)",  # a version is not a host
    ],
)
def test_honest_labels_stay_links(markdown: str) -> None:
    out = markdown_to_mrkdwn(markdown)
    assert out.startswith("<https://") and out.endswith(">") and " (" not in out


_HOSTS = ["evil.example", "kandev.example", "docs.github.com", "github.com", "10.0.0.1"]
_LABEL_PIECES = [
    *_HOSTS,
    "Open in Kandev",
    "open in kandev",
    "https://kandev.example/t/1",
    "docs",
    "the plan",
    "v2.0",
    "\u200b",
    "\u0430",
    "\u2024",
    ".",
    " ",
]


@settings(max_examples=300, deadline=None)
@given(
    label=st.lists(st.sampled_from(_LABEL_PIECES) | st.text(max_size=6), max_size=4).map("".join),
    host=st.sampled_from(_HOSTS),
    path=st.sampled_from(["", "/", "/t/1", "/a?b=1"]),
)
def test_no_link_text_names_a_host_other_than_its_target(label: str, host: str, path: str) -> None:
    out = markdown_to_mrkdwn(f"see [{label}](https://{host}{path}) now")
    assert unsafe_angles(out) == []
    for target, text in _LINK.findall(out):
        shown = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
        # What is clickable either is the target's own host, or is not deceptive for it.
        assert shown == host or not is_deceptive_label(shown, target)
