"""The latency, backlog and footprint benchmark of kandev-slack.

``python -m bench`` starts a real Kandev, the fake Slack and the bot as a process (HTTP mode,
SQLite file, the production defaults), runs six measurements and prints their tables; see
``bench/run.py`` for the flags and docs/performance.md for the figures.
"""
