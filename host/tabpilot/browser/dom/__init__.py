"""Reading a page: DOM snapshots → what a person can see and use → the text the model reads."""
