from tests.fakeslack.fixtures import fake_slack, slack_driver  # noqa: F401
