"""Question bundles (``ask_user_question_kandev``): 1–4 questions sharing a pending id, answered
or rejected with Kandev's clarification calls. Rendered by kandev_slack/kinds/question/cards/."""
