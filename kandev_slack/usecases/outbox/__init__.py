"""The outbox flow: every Slack write of a card (post, edit, copy, thread notice) kept durably as
an outbox entry and made by the publisher, once, at the channel's pace, across replicas."""
