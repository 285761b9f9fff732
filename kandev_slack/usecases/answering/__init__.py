"""Answering, Slack → Kandev: every click or form goes through one pipeline (reserve a place,
admit, record the submission, send it to Kandev once, tell the verdict), and the gestures around
it: who may answer, claims, snooze, thread replies, Send to all, crash recovery of submissions."""
