"""One module per `tabpilot` subcommand: `configure(parser)` adds its arguments, `run(args)` returns
the exit code. Heavy imports belong inside `run`."""
