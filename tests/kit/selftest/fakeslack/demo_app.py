"""A small real Bolt app the fake is proven against (HTTP and Socket Mode)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import Ack, App, Respond
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient

from kandev_slack.kits.fakeslack import FakeSlack

CARD_BLOCKS: list[dict[str, Any]] = [
    {"type": "header", "text": {"type": "plain_text", "text": "Which database?"}},
    {
        "type": "actions",
        "block_id": "card_actions",
        "elements": [
            {
                "type": "button",
                "action_id": "open_answer",
                "text": {"type": "plain_text", "text": "Answer…"},
                "value": "q1",
            },
            {
                "type": "button",
                "action_id": "pick_mongo",
                "text": {"type": "plain_text", "text": "MongoDB"},
                "value": "mongo",
            },
            {
                "type": "overflow",
                "action_id": "more",
                "options": [
                    {"text": {"type": "plain_text", "text": "Skip…"}, "value": "skip"},
                    {"text": {"type": "plain_text", "text": "Conversation"}, "value": "talk"},
                ],
            },
        ],
    },
]


def answer_modal(private_metadata: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": "answer_modal",
        "title": {"type": "plain_text", "text": "Answer"},
        "submit": {"type": "plain_text", "text": "Send"},
        "private_metadata": private_metadata,
        "blocks": [
            {
                "type": "input",
                "block_id": "db",
                "dispatch_action": True,  # a pick is sent at once (see picked_in_form)
                "label": {"type": "plain_text", "text": "Database"},
                "element": {
                    "type": "radio_buttons",
                    "action_id": "choice",
                    "options": [
                        {"text": {"type": "plain_text", "text": "Postgres"}, "value": "pg"},
                        {"text": {"type": "plain_text", "text": "MongoDB"}, "value": "mongo"},
                    ],
                },
            },
            {
                "type": "input",
                "block_id": "note",
                "optional": True,
                "label": {"type": "plain_text", "text": "Note"},
                "element": {"type": "plain_text_input", "action_id": "text", "max_length": 2000},
            },
        ],
    }


def _later(item: str) -> dict[str, Any]:
    """An actions block with a "later" select per item (the same action_id in each)."""
    options = [
        {"text": {"type": "plain_text", "text": f"{h} h"}, "value": f"{item}:{h}"} for h in (1, 4)
    ]
    select = {"type": "static_select", "action_id": "later", "options": options}
    return {"type": "actions", "block_id": f"b-{item}", "elements": [select]}


def build_app(fake: FakeSlack) -> App:
    client = WebClient(token=fake.workspace.bot_token, base_url=fake.api_url)
    app = App(client=client, signing_secret=fake.workspace.signing_secret)

    @app.action("open_answer")
    def open_answer(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        container = body["container"]
        meta = json.dumps({"channel": container["channel_id"], "ts": container["message_ts"]})
        client.views_open(trigger_id=body["trigger_id"], view=answer_modal(meta))

    @app.action("pick_mongo")
    def pick_mongo(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        respond(text=f"<@{body['user']['id']}> picked {body['actions'][0]['value']}")

    @app.action("more")
    def more(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        action = body["actions"][0]
        respond(text=f"{action['type']}: {action['selected_option']['value']}")

    @app.action("choice")
    def picked_in_form(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        """A pick in the answer modal: the view says so on top (its inputs unchanged)."""
        ack()
        view = body["view"]
        picked = view["state"]["values"]["db"]["choice"]["selected_option"]["value"]
        said = {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Picked {picked}"}]}
        updated = answer_modal(view["private_metadata"])
        updated["blocks"] = [said, *updated["blocks"]]
        client.views_update(view_id=view["id"], hash=view["hash"], view=updated)

    @app.view("answer_modal")
    def submit(ack: Ack, view: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        values = view["state"]["values"]
        note = values["note"]["text"]["value"] or ""
        if "bad" in note:
            ack(response_action="errors", errors={"note": "Please be nice"})
            return
        ack()
        choice = values["db"]["choice"]["selected_option"]["value"]
        meta = json.loads(view["private_metadata"])
        client.chat_update(
            channel=meta["channel"],
            ts=meta["ts"],
            text=f"Answered: {choice}",
            blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": f"✅ {choice}"}}],
        )

    @app.command("/kq")
    def command(ack: Ack, command: dict[str, Any]) -> None:
        if command["text"] == "later":  # a listing with a "later" select per item
            ack(text="Later?", blocks=[_later("item-1"), _later("item-2")])
            return
        ack(text=f"you asked for {command['text']!r}")

    @app.event("app_home_opened")
    def home(event: dict[str, Any], client: WebClient) -> None:
        text = {"type": "mrkdwn", "text": "Waiting: 0"}
        blocks = [{"type": "section", "text": text}, _later("item-1"), _later("item-2")]
        client.views_publish(user_id=event["user"], view={"type": "home", "blocks": blocks})

    @app.action("later")
    def later(ack: Ack, body: dict[str, Any], client: WebClient, respond: Respond) -> None:
        ack()
        chosen = body["actions"][0]["selected_option"]["value"]
        if "view" not in body:  # in an ephemeral message: no view, no message, a response_url
            container = body["container"]
            respond(text=f"Chose {chosen} in an ephemeral: {container['is_ephemeral']}")
            return
        state = body["view"]["state"]["values"]
        held = [
            e["selected_option"]["value"]
            for b in state.values()
            for e in b.values()
            if e.get("selected_option")  # the other item's select: nothing chosen (null)
        ]
        said = f"Chose {chosen}; the view's state holds {held}"
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": said}}]
        client.views_publish(user_id=body["user"]["id"], view={"type": "home", "blocks": blocks})

    @app.shortcut("reject_question")
    def shortcut(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        client.chat_postEphemeral(
            channel=body["channel"]["id"],
            user=body["user"]["id"],
            text=f"shortcut on {body['message']['ts']}",
        )

    return app


def post_card(fake: FakeSlack, channel: str = "C0QUESTION") -> str:
    client = WebClient(token=fake.workspace.bot_token, base_url=fake.api_url)
    return client.chat_postMessage(channel=channel, text="Which database?", blocks=CARD_BLOCKS)[
        "ts"
    ]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


@contextmanager
def serve_http(app: App) -> Iterator[str]:
    """Serve the app's /slack/events on 127.0.0.1; yields its request URL."""
    server = make_server(
        "127.0.0.1",
        0,
        SlackRequestHandler(app),
        server_class=_ThreadingWSGIServer,
        handler_class=_QuietHandler,
    )
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/slack/events"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def socket_mode(app: App, fake: FakeSlack) -> Iterator[SocketModeHandler]:
    handler = SocketModeHandler(app, app_token=fake.workspace.app_token, ping_interval=1)
    handler.connect()
    try:
        fake.socket.wait_for_connection()
        yield handler
    finally:
        # Closing from our side first spares the client its 3 s receive timeout on close().
        handler.client.auto_reconnect_enabled = False
        fake.socket.close_connections()
        handler.close()
