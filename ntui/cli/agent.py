"""``ntui agent --stdio``: the cluster's side of ntui over ssh (:mod:`ntui.core.remote.agent`).

Started by ntui on another machine over its shared ssh connection; answers JSON lines on standard input and output
(:mod:`ntui.core.remote.protocol`) until its input ends. Not meant to be run by hand.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ntui agent",
        description="Serve this machine's files (log tails, stats, follows, records) to ntui on another machine, "
                    "as JSON lines on standard input and output. ntui starts it over ssh; not meant to be run by "
                    "hand.")
    parser.add_argument("--stdio", action="store_true", required=True, help="speak on standard input and output")
    parser.parse_args(list(argv))
    from ntui.core.remote.agent import serve

    try:
        return serve(sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
