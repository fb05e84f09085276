"""`tabpilot` command line. Each subcommand lives in `tabpilot.commands.<name>` and is imported only
when used, so `tabpilot host` (spawned by the browser on demand) starts fast."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .paths import NotYours

# name → (module under tabpilot.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "state": ("state", "print a page exactly as the model sees it"),
    "run": ("run", "run a task in a browser, printing each step"),
    "demo": ("demo", "replay a bundled scripted model on a bundled page (no API key needed)"),
    "history": ("history", "list, show, export or delete past tasks"),
    "config": ("config", "show or change settings (model, base URL, API key, ...)"),
    "secrets": ("secrets", "values the agent may type on one site without the model seeing them"),
    "sites": ("sites", "which web sites may start tasks in your browser: list, allow, revoke"),
    "install": ("install", "register the native messaging host with your browsers"),
    "uninstall": ("uninstall", "remove the native messaging host registration that install wrote"),
    "extension-path": ("extension_path", "print the folder to load as an unpacked extension"),
    "doctor": ("doctor", "check the installation and say how to fix each problem"),
    "mcp": ("mcp", "serve MCP clients (Claude Desktop, Cursor, VS Code): tasks run in your browser"),
    "host": ("host", "run the native messaging host (the browser starts this itself)"),
}
# The commands that drive a browser log what goes on inside (a page read another way, a retry) to cli.log, as the host
# and `tabpilot mcp` log to theirs: with no handler, Python wrote those warnings to the terminal between a task's
# steps, unformatted and unredacted (a warning quoting a page's text or a key reached the terminal as it was).
LOGGED = {"state", "run", "demo"}


def _load(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"tabpilot.commands.{COMMANDS[name][0]}")


def speak(language: str | None) -> None:
    """argparse's own words ("usage: ", "invalid choice: …") in `language` from here on: argparse asks
    gettext for each by its English, and this answers from the catalog instead of .mo files."""
    from .i18n import command_line_text

    argparse._ = lambda message: command_line_text(message, language)  # type: ignore[attr-defined]
    argparse.ngettext = (  # type: ignore[attr-defined]
        lambda singular, plural, count: command_line_text(singular if count == 1 else plural, language))


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its section headings ending with the help's language's colon (argparse writes
    "options:" whatever the language), and each (sub)command answering arguments it does not know itself:
    with its own usage, the closest option to a mistyped one, and a task's words to put in quotes (argparse
    handed them up to the top-level parser, which showed its own usage and no hint)."""

    heading_colon = ":"
    language: str | None = None  # the language of its help and errors (_translate_help)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        arg_list = list(sys.argv[1:] if args is None else args)
        unknown = self._unknown_options(arg_list)
        if unknown:  # before parsing: the value typed after one must not be taken for a positional argument
            self.error(self._unrecognized(unknown, self._option_hint(unknown[0])))
        parsed, extras = super().parse_known_args(arg_list, namespace)
        if extras:
            self.error(self._unrecognized(extras, self._quote_hint(parsed, extras, arg_list)))
        return parsed, extras

    def _options(self) -> list[str]:
        return [option for action in self._actions for option in action.option_strings]

    def _unknown_options(self, arg_list: list[str]) -> list[str]:
        """The options in `arg_list` this parser does not take (an abbreviation, --opt=value and -oVALUE are
        taken as argparse takes them), up to its subcommand's name: what follows is the subcommand's."""
        commands = {name for action in self._actions if isinstance(action, argparse._SubParsersAction)
                    for name in action.choices}
        options = self._options()
        unknown = []
        for arg in arg_list:
            if arg == "--" or arg in commands:
                break
            if (len(arg) < 2 or arg[0] not in self.prefix_chars or " " in arg
                    or self._negative_number_matcher.match(arg)):  # argparse's own (newer ones take "-1e5" too)
                continue  # a positional argument: "-" (standard input), a negative number, words with a space
            name = arg.split("=", 1)[0] if arg.startswith("--") else arg
            if name in options or (arg.startswith("--") and any(option.startswith(name) for option in options)):
                continue
            if not arg.startswith("--") and arg[:2] in options:
                continue  # -oFILE
            unknown.append(arg)
        return unknown

    def _unrecognized(self, arguments: list[str], hint: str | None) -> str:
        from .i18n import command_line_text

        said = command_line_text("unrecognized arguments: %s", self.language) % " ".join(arguments)
        return f"{said}\n{hint}" if hint else said

    def _option_hint(self, typed: str) -> str:
        """The option closest to a mistyped one, or where the options are listed."""
        import difflib

        from .i18n import text

        shown = [option for action in self._actions if action.help != argparse.SUPPRESS
                 for option in action.option_strings if option.startswith("--")]
        close = difflib.get_close_matches(typed.split("=", 1)[0], shown, n=1, cutoff=0.6)
        if close:
            return text("cli.did_you_mean", self.language, option=close[0])
        return text("cli.see_options", self.language, command=self.prog)

    def _quote_hint(self, parsed: argparse.Namespace, extras: list[str], arg_list: list[str]) -> str | None:
        """Words left over after a task in plain words were meant for it: the command with the task quoted."""
        import shlex

        from .commands.arguments import TaskText, quoted
        from .i18n import text

        task = next((action for action in self._actions if isinstance(action, TaskText)), None)
        value = getattr(parsed, task.dest, None) if task is not None else None
        if not isinstance(value, str) or value == "-" or any(word.startswith("-") for word in extras):
            return None
        words = [value, *extras]
        values = set()  # the places of options' values ("--url example"): never a word of the task
        for index, arg in enumerate(arg_list[:-1]):
            action = self._option_string_actions.get(arg)
            if action is not None and action.nargs != 0:
                values.add(index + 1)
        rest, at, wanted = list(arg_list), len(arg_list), list(words)
        for index in range(len(rest) - 1, -1, -1):  # the words' places, the last first
            if wanted and index not in values and rest[index] == wanted[-1]:
                wanted.pop()
                del rest[index]
                at = index
        if wanted:
            return None
        shown = [shlex.quote(arg) for arg in rest]
        shown.insert(min(at, len(shown)), quoted(" ".join(words)))
        return text("cli.quote_task", self.language, command=" ".join([self.prog, *shown]))

    def format_help(self) -> str:
        text = super().format_help()
        for group in self._action_groups if self.heading_colon != ":" else ():
            if group.title:
                text = text.replace(f"\n{group.title}:\n", f"\n{group.title}{self.heading_colon}\n")
        return text


def _translate_help(parser: argparse.ArgumentParser, language: str | None) -> None:
    """Every help text, description and epilog of `parser` and its subcommands in `language`."""
    from .i18n import command_line_text

    if isinstance(parser, _Parser):
        parser.heading_colon = command_line_text(":", language)
        parser.language = language
    parser.description = parser.description and command_line_text(parser.description, language)
    parser.epilog = parser.epilog and command_line_text(parser.epilog, language)
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            action.help = command_line_text(action.help, language)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = choice.help and command_line_text(choice.help, language)
            for command_parser in action.choices.values():
                _translate_help(command_parser, language)


def build_parser(only: str | None = None, language: str | None = None) -> argparse.ArgumentParser:
    """The whole command line (or, with `only`, just that command's part), its help in `language`; call
    `speak(language)` first for argparse's own words."""
    from . import __version__

    parser = _Parser(prog="tabpilot", description="An AI agent that works in the browser you use.")
    parser.add_argument("--version", action="version", version=f"tabpilot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = _load(name)
        except ModuleNotFoundError:
            continue  # a command not built yet
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        module.configure(command_parser)
    _translate_help(parser, language)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .textsafety import clean_text

    # Bytes that are not UTF-8 arrive as lone surrogates (surrogateescape): U+FFFD before anything uses them.
    args_list = [clean_text(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    # Chromium starts the host as `<launcher> chrome-extension://<id>/ [--parent-window=N]`.
    if args_list and args_list[0].startswith("chrome-extension://"):
        args_list = ["host", *args_list]
    from .commands.host import browser_origin, serve

    origin = browser_origin(args_list)
    if origin is not None:  # the extension is waiting for the host's first frame: no parser to build first
        return serve(origin)
    first = args_list[0] if args_list else None
    language = None
    if first != "host":  # the browser starts the host, which prints no help: no settings to read first
        from .commands.run import terminal_language

        language = terminal_language()
        speak(language)
    parser = build_parser(first if first in COMMANDS else None, language)
    args = parser.parse_args(args_list)
    if not args.command:
        parser.print_help()
        return 2
    try:
        if args.command in LOGGED:
            from .logfile import log_to_file_or_stderr

            log_to_file_or_stderr("cli.log")
        return int(_load(args.command).run(args) or 0)
    except BrokenPipeError:  # `tabpilot … | head`: the reader has all it wanted; end quietly, as on SIGPIPE
        from .commands.output import EXIT_BROKEN_PIPE, silence_stdout

        silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:  # Ctrl-C where a command has nothing to stop or clean up: the shell says ^C
        from .commands.run import EXIT_STOPPED

        return EXIT_STOPPED
    except NotYours as exc:
        from .commands.output import fail
        from .commands.run import terminal_language

        return fail(args.command, str(exc), language or terminal_language())


if __name__ == "__main__":
    sys.exit(main())
