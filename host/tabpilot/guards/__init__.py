"""What the agent may not do without the user: go to a domain outside the task's allowed ones, and take an
irreversible action (pay, send, delete, submit a password…) without a yes.

- `domains.py`: the allowed / blocked domain lists and the one rule that matches a URL against them.
- `navigation.py`: enforcement in the browser, before a request leaves (CDP Fetch interception on every
  tab of the task, popups and redirects included).
- `irreversible.py`: which actions need the user's yes under the `ask-before` setting, decided in one place.
"""
