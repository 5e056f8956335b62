"""Entry point: ``ntui`` opens the app; ``ntui SUBCOMMAND`` runs the plain CLI.

Only the app path imports Textual, so ``ntui render`` and friends start fast; and the app path
skips building the CLI parser (which imports every subcommand module), so the app starts fast.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        from ntui.ui.app import run_app

        return run_app()
    from ntui.cli import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
