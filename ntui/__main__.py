"""Entry point: ``ntui`` opens the app; ``ntui SUBCOMMAND`` runs the plain CLI.

Only the app path imports Textual, so ``ntui render`` and friends start fast; and the app path
skips building the CLI parser (which imports every subcommand module), so the app starts fast. ``ntui agent
--stdio`` (the cluster's side of ntui over ssh, started by ntui on another machine) skips it too.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["agent"]:  # the cluster's side of ntui over ssh: starts without the CLI's parser
        from ntui.cli.agent import main as agent_main

        return agent_main(args[1:])
    if not args:
        from ntui.ui.app import run_app

        return run_app()
    from ntui.cli import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
