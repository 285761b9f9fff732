"""The preview's own workspace (its routing file is one the bot accepts) and a team's file
(its channels are shown, the people it names can be acted as)."""

from __future__ import annotations

from pathlib import Path

from kandev_slack.config.routing_file import parse_routing
from kandev_slack.preview.actions import form_values
from kandev_slack.preview.workspace import ANA, BEN, CAROL, QUESTIONS, own_workspace, team_workspace


def test_the_own_routing_lets_ana_and_ben_answer_but_not_carol(tmp_path: Path) -> None:
    workspace = own_workspace(tmp_path)
    routing = parse_routing(workspace.routing_file.read_text(), "preview")
    assert routing.default_channel == QUESTIONS.id
    assert routing.default_answerers == {ANA.id, BEN.id}
    assert CAROL.id not in routing.default_answerers
    assert routing.default_followups.remind_after == 180
    assert [c.id for c in workspace.channels] == routing.channels() + ["C0PVLEADS1"]
    assert workspace.roles[CAROL.id] == "may not answer"


def test_follow_ups_can_be_left_out(tmp_path: Path) -> None:
    workspace = own_workspace(tmp_path, follow_ups=False)
    routing = parse_routing(workspace.routing_file.read_text(), "preview")
    assert not routing.any_followups
    assert len(workspace.channels) == 2


def test_a_team_file_names_the_channels_and_people(tmp_path: Path) -> None:
    path = tmp_path / "routing.toml"
    path.write_text(
        "[defaults]\n"
        'channel = "C0TEAM"\n'
        'answerers = ["U0DANA", "S0ONCALL"]\n'
        'remind_after = "15m"\n'
        'escalate_after = "1h"\n'
        'escalate_to = "C0LEADS"\n'
        "[[route]]\n"
        'priority = ["critical"]\n'
        'channel = "C0ONCALL"\n'
    )
    workspace = team_workspace(path, None)
    assert [c.id for c in workspace.channels] == ["C0TEAM", "C0ONCALL", "C0LEADS"]
    assert "U0DANA" in [u.id for u in workspace.users]
    assert workspace.usergroups == {"S0ONCALL": [ANA.id, BEN.id]}
    assert workspace.routing_file == path


def test_form_values_from_the_page() -> None:
    assert form_values({"q1/choice": "q1_opt1", "t1/text": "", "c/boxes": ["a"]}) == {
        "q1": {"choice": "q1_opt1"},
        "t1": {"text": None},
        "c": {"boxes": ["a"]},
    }
