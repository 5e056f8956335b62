"""Entry point: ``ntui`` opens the app; ``ntui SUBCOMMAND`` runs the plain CLI.

Only the app path imports Textual, so ``ntui render`` and friends start fast.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from ntui.cli import run

    return run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
