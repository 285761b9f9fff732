"""Slack payloads read (pure, defensive): typed payloads, who / where / what, form values,
message markup — into the use-cases' requests. Parsing only: no decisions."""
