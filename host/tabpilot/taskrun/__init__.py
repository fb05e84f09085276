"""One task run: what every way of starting a task stands on (the popup and web pages through the
native host, `tabpilot run`, and the entry points to come).

- `plan.py`: settings + what this one task overrides → a `TaskPlan` (model endpoint, agent config,
  debug capture, the secrets to keep out of everything), or a `PlanError` saying what to do where the
  user is (popup, page, terminal).
- `run.py`: `TaskRun` runs one plan on a browser tab to its end: records each event the moment it
  happens, redacts once, maps the final status once, can pause/resume between steps and stop.
- `events.py`: the typed run events it tells its observers (the CLI prints them, the host turns them
  into `task.*` pushes).

Import the modules themselves (`from tabpilot.taskrun.run import TaskRun`): this package's
`__init__` stays empty so the host can name it without loading the agent.
"""
