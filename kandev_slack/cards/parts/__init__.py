"""The parts every card is made of, whatever its kind (pure): its head (title, grey line),
its task line and link, the "I'm on it" and "Also asked by" lines, its copies' note and its
plain form. Each kind's card (kandev_slack/kinds/<kind>/cards/) is built from these."""
