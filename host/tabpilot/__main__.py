"""`python -m tabpilot`: the command line; or, as the browser starts the host (through the launcher `tabpilot
install` wrote), the host at once, without importing the command line's parser (commands/host.py)."""

import sys

from .commands.host import browser_origin, serve
from .textsafety import clean_text

origin = browser_origin([clean_text(arg) for arg in sys.argv[1:]])  # as cli.main reads its arguments
if origin is not None:
    sys.exit(serve(origin))

from .cli import main  # noqa: E402

sys.exit(main())
