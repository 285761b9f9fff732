"""When the bot speaks to people (pure): quiet hours and the calm-DM rule, wall-clock
arithmetic in each person's or route's time zone, daylight-saving changes included."""
