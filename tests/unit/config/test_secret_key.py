"""KANDEV_SLACK_SECRET_KEY: validated like every setting (a bad key is a problem by name, never
shown), a secret to redact, and required by name when a route acts with the people's own
Kandev tokens (identity "linked" / "required")."""

from __future__ import annotations

from pathlib import Path

from kandev_slack.config.settings import load_partial, load_settings
from kandev_slack.ops.redaction import Redactor
from kandev_slack.ops.vault import Vault
from tests.unit.config.test_settings import good_env, problems

KEY, OLD_KEY = Vault.new_key(), Vault.new_key()
FIX = "run `kandev-slack secret-key` and set KANDEV_SLACK_SECRET_KEY to the key it prints"


def routes(tmp_path: Path, text: str) -> str:
    path = tmp_path / "routes.toml"
    path.write_text(text)
    return str(path)


def test_the_key_is_optional_and_unset_by_default() -> None:
    settings = load_settings(good_env())
    assert settings.kandev_slack_secret_key is None
    assert settings.vault() is None
    assert settings.secret_keys() == []


def test_a_list_of_keys_makes_the_vault_and_each_key_is_a_secret() -> None:
    settings = load_settings(good_env(KANDEV_SLACK_SECRET_KEY=f" {KEY} , {OLD_KEY}\n"))
    vault = settings.vault()
    assert repr(vault) == "Vault(2 keys)"
    assert vault is not None and Vault.from_keys(KEY).open(vault.seal("t")) == "t"
    assert settings.secret_keys() == [KEY, OLD_KEY]
    assert {KEY, OLD_KEY} <= set(settings.secret_values())
    shown = repr(settings) + str(settings)
    assert KEY not in shown and OLD_KEY not in shown
    redact = Redactor(settings.secret_values())
    assert redact(f"keys {KEY},{OLD_KEY}") == "keys [redacted],[redacted]"


def test_a_bad_key_is_a_problem_by_name_never_shown() -> None:
    bad = KEY[:-3] + "#$%"
    found = problems(good_env(KANDEV_SLACK_SECRET_KEY=f"{KEY},{bad}"))
    assert found == [
        "KANDEV_SLACK_SECRET_KEY: its 2nd key is not a Fernet key (44 characters of url-safe "
        "base64); `kandev-slack secret-key` prints a new one"
    ]
    assert KEY not in found[0] and bad not in found[0]
    found = problems(good_env(KANDEV_SLACK_SECRET_KEY=f"{KEY},,"))
    assert found == [
        "KANDEV_SLACK_SECRET_KEY: its 2nd key is empty (a comma too many?); its 3rd key is "
        "empty (a comma too many?); `kandev-slack secret-key` prints a new one"
    ]


def test_an_empty_key_means_unset() -> None:
    assert load_settings(good_env(KANDEV_SLACK_SECRET_KEY="  ")).kandev_slack_secret_key is None


def test_linked_defaults_without_a_key_is_a_start_up_error_naming_file_and_fix(
    tmp_path: Path,
) -> None:
    path = routes(tmp_path, '[defaults]\nchannel = "C0A1"\nidentity = "linked"\n')
    found = problems(good_env(KANDEV_SLACK_CONFIG=path))
    assert found == [
        f"KANDEV_SLACK_SECRET_KEY is not set, but the routing file {path} has identity = "
        '"linked" in [defaults]: the people\'s own Kandev tokens are stored encrypted with '
        f"that key; {FIX}"
    ]


def test_a_required_route_without_a_key_names_its_line(tmp_path: Path) -> None:
    path = routes(
        tmp_path,
        '[defaults]\nchannel = "C0A1"\n\n[[route]]\nworkspace = "Ops"\n\n'
        '[[route]]\nworkspace = "Platform"\nidentity = "required"\n',
    )
    found = problems(good_env(KANDEV_SLACK_CONFIG=path, PORT="x"))
    assert found[0].startswith("PORT")  # gathered with every other problem
    assert found[1].startswith(
        f"KANDEV_SLACK_SECRET_KEY is not set, but the routing file {path} has identity = "
        '"required" in the [[route]] at line 7:'
    )
    assert found[1].endswith(FIX)
    settings = load_settings(good_env(KANDEV_SLACK_CONFIG=path, KANDEV_SLACK_SECRET_KEY=KEY))
    assert settings.routing.needs_tokens and settings.vault() is not None


def test_a_bad_key_in_a_linked_set_up_is_reported_once(tmp_path: Path) -> None:
    path = routes(tmp_path, '[defaults]\nchannel = "C0A1"\nidentity = "required"\n')
    found = problems(good_env(KANDEV_SLACK_CONFIG=path, KANDEV_SLACK_SECRET_KEY="nope"))
    assert len(found) == 1 and found[0].startswith(
        "KANDEV_SLACK_SECRET_KEY: its 1st key is not a Fernet key"
    )


def test_bot_routes_need_no_key(tmp_path: Path) -> None:
    path = routes(tmp_path, '[defaults]\nchannel = "C0A1"\nidentity = "bot"\n')
    assert not load_settings(good_env(KANDEV_SLACK_CONFIG=path)).routing.needs_tokens


def test_check_sees_the_missing_key_and_keeps_going(tmp_path: Path) -> None:
    path = routes(tmp_path, '[defaults]\nchannel = "C0A1"\nidentity = "linked"\n')
    partial = load_partial(good_env(KANDEV_SLACK_CONFIG=path))
    assert [p.split(" ")[0] for p in partial.problems] == ["KANDEV_SLACK_SECRET_KEY"]
    assert partial.settings.routing.needs_tokens and partial.settings.vault() is None
    partial = load_partial(good_env(KANDEV_SLACK_CONFIG=path, KANDEV_SLACK_SECRET_KEY="x"))
    assert not partial.usable("kandev_slack_secret_key")
    assert partial.settings.kandev_slack_secret_key is None
