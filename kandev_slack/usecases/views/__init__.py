"""Views one person asks for: the ``/kandev-questions`` listing, the App Home, the Conversation
view and an approval's whole text, built from what is waiting (Kandev's list and the cards)."""
