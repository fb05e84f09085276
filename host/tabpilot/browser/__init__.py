"""The agent's eyes and hands: launching or attaching to a browser, tabs, page state, actions."""
