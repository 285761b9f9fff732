"""The kits: a fake Slack (Web API + Socket Mode, faithful to Slack's shapes and limits) and a
real Kandev on loopback. The tests, the benchmark and the preview run on them; they import
nothing of the product."""
