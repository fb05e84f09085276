"""The browser profile folder a person names with --user-data-dir (`install`, `run`, `state`): a mistyped path is
refused before anything is made (a launched browser would have made it, a new empty profile, and the person's
logins would seem lost); a folder missing in a folder that exists is a new profile, and said to be one."""

from __future__ import annotations

import sys
from pathlib import Path

from ..i18n import Language
from ..i18n import text as say


def profile_folder(given: str | Path) -> Path:
    """The folder as given, absolute (`~` expanded), symbolic links left as they are."""
    return Path(given).expanduser().absolute()


def mistyped(profile: Path, language: Language) -> str | None:
    """Why `profile` is refused, in `language`: neither it nor the folder it would go in exists (a typo: a whole new
    path is never made). None when it exists, or when only the folder itself is missing."""
    if profile.exists() or profile.parent.is_dir():
        return None
    return say("install.no_profile", language, path=profile, parent=profile.parent)


def check_profile(given: str | Path, language: Language) -> str | None:
    """For a command that launches a browser on the folder given (`run`, `state`): the refusal of a mistyped one,
    or None, having said on stderr that a missing one will be a new, empty profile (the browser makes it)."""
    profile = profile_folder(given)
    refusal = mistyped(profile, language)
    if refusal is None and not profile.exists():
        print(say("profile.new", language, path=profile), file=sys.stderr, flush=True)
    return refusal
