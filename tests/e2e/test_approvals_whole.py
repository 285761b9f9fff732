"""Approvals a person can trust, end to end on the real Kandev: a long command's card shows its
end; "Show whole command" opens the full view, whose own "Allow once" resolves the request;
three waiting approvals with many long "always" options keep /kandev-questions and the App Home
within Slack's limits, their rows leading to the full view instead of offering Allow."""

from __future__ import annotations

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ButtonValue, parse_modal_metadata
from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, blocks_text_length, validate_message, validate_view
from tests.e2e.helpers import buttons, start_bot, wait_card, wait_outcome
from tests.kit.harness import CHANNEL, Permissions, permission_spec
from tests.unit.listing.e2e import run_list, wait_home

END = " && rm -rf /srv/app/releases/old && systemctl restart kandev-app.service"


def command(length: int) -> str:
    start = "cd /srv/app && git fetch --all && "
    n = length - len(start) - len(END)
    filler = ("./build.sh --target=/srv/app/releases/next --verbose && " * (n // 20 + 1))[:n]
    return start + filler + END


def spec(length: int, options=None):
    raw = {"command": command(length), "cwd": "/srv/app"}
    return permission_spec("Deploy the app", "execute", raw, options)


def _text(blocks) -> str:
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(blocks)
    return "\n".join(found)


def test_a_1990_character_command_shows_its_end_on_the_card(app_factory, seed, fake_slack):
    start_bot(app_factory)
    seeded = seed.permission([spec(1990)], title="Deploy whole")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    target = next(b for b in card.blocks if b.get("block_id") == ids.BLOCK_TARGET)
    shown = target["text"]["text"].replace("&amp;", "&")
    assert shown == f"```\n{command(1990)}\n```"  # whole: its dangerous end included
    assert "systemctl restart kandev-app.service" in card.text  # the notification, too
    summary = next(b for b in card.blocks if b.get("block_id") == ids.BLOCK_TOOL)
    assert "1,990 characters" in summary["text"]["text"]


#: Longer than a section holds once escaped, within what Kandev passes on (4,096 bytes).
LONG = 3900


def test_the_full_view_shows_the_whole_command_and_allows_from_it(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    seeded = seed.permission([spec(LONG)], title="Deploy long")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    target = next(b for b in card.blocks if b.get("block_id") == ids.BLOCK_TARGET)
    assert "characters not shown" in target["text"]["text"]
    assert "kandev-app.service" in target["text"]["text"]
    assert "Show whole command" in buttons(card)

    driver = slack_driver(bot.events_url)
    assert driver.click(CHANNEL, card.ts, text="Show whole command", user=ALICE).status == 200
    view = fake_slack.wait_for_view(lambda v: v.callback_id == ids.CALLBACK_APPROVAL_VIEW, 10)
    assert not validate_view("views.open", view.definition)
    codes = [
        b["text"]["text"][4:-4]
        for b in view.blocks
        if b.get("block_id", "").startswith(ids.BLOCK_PART)
    ]
    assert "".join(codes).replace("&amp;", "&") == command(LONG)
    assert buttons(view)[:2] == ["Allow once", "Always allow"]

    assert driver.click_in_view(view, text="Allow once", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, f"✅ Allowed once by <@{ALICE.id}> in Slack")
    # the full view itself says how it went
    fake_slack.wait_for(
        lambda: "the agent has your choice" in fake_slack.view(view.id).all_text or None,
        10,
        "the full view showing the choice was sent",
    )
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}


def test_a_command_kandev_cut_is_never_allowed_from_slack(
    app_factory, seed, fake_slack, slack_driver
):
    """Kandev passes on only the first 4,096 bytes of a command (and says "redacted"): its
    end is unknown here, so no Allow is offered in Slack — the card says so; rejecting works."""
    bot = start_bot(app_factory)
    seeded = seed.permission([spec(7000)], title="Deploy cut")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    notice = next(b for b in card.blocks if b.get("block_id") == ids.BLOCK_CUT)
    assert "Kandev passed on only the first 4,096 bytes" in _text(notice)
    assert "can be allowed only in Kandev" in _text(notice)
    labels = buttons(card)
    assert "Allow once" not in labels and "Always allow" not in labels
    assert "Reject" in labels and "Show whole command" in labels
    driver = slack_driver(bot.events_url)
    assert driver.click(CHANNEL, card.ts, text="Reject", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, f"⛔ Rejected by <@{ALICE.id}> in Slack")
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": "reject_once"}


MANY_ALWAYS = [
    (
        f"always-{i}-" + "x" * 60,
        f"Always allow commands like this, variant {i} " + "y" * 40,
        "allow_always" if i % 2 else "reject_always",
    )
    for i in range(24)
]


def test_three_long_approvals_keep_the_listing_and_home_within_limits(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    seeded = [
        # (commands of different lengths: identical approvals would be one row, issue 33)
        seed.permission([spec(4000 + n, MANY_ALWAYS)], title=f"Long approval {n}")
        for n in range(3)
    ]
    cards = [wait_card(fake_slack, approval_key(s.request_id)) for s in seeded]
    for card in cards:
        assert not validate_message("chat.postMessage", card.text, card.blocks)
    driver = slack_driver(bot.events_url)

    listing = run_list(driver, "", user=ALICE)
    assert "3 approvals wait for a decision" in listing.all_text
    assert not validate_message("chat.postEphemeral", listing.text, listing.blocks)
    assert "characters not shown" in listing.all_text
    labels = buttons(listing)
    assert labels.count("Review and decide…") == 3 and "Allow once" not in labels

    driver.app_home_opened(ALICE)
    home = wait_home(fake_slack, ALICE.id, lambda v: "Long approval 2" in v.all_text)
    assert not validate_view("views.publish", home.definition)
    assert blocks_text_length(home.blocks) <= 11_000
    assert "Allow once" not in buttons(home)

    # "Review and decide…" on Home opens the full view, whose options resolve the request.
    chosen, card = seeded[1], cards[1]
    pending_id = approval_key(chosen.request_id)
    review = ButtonValue(pending_id=pending_id).encode()
    driver.click_in_view(home, value=review, user=ALICE)
    view = fake_slack.wait_for_view(lambda v: v.callback_id == ids.CALLBACK_APPROVAL_VIEW, 10)
    assert not validate_view("views.open", view.definition)
    assert blocks_text_length(view.blocks) <= 11_000
    assert "kandev-app.service" in _text(view.blocks)
    assert parse_modal_metadata(view.private_metadata).pending_id == pending_id
    first = buttons(view)[0]  # an "always reject" (Kandev cut the command: no allow here)
    assert first.startswith("Always allow commands like this, variant 0")
    assert driver.click_in_view(view, text=first, user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, "⛔ Always rejected")
    got = Permissions(seed.server).agent_outcomes(chosen.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": MANY_ALWAYS[0][0]}
