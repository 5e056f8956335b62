"""Regenerate ``screenshots/*.svg`` from the real app with deterministic data.

    scripts/screenshots [--out screenshots] [--only NAME ...]

Compose-view pictures from :mod:`tests.support.demo` (canned Slurm answers, frozen clock, no user/host/version,
a temporary user preset directory holding ``alice-ddp``); without ``--only``, also the jobs view and its panes
(:mod:`tests.support.screenshots_jobs`, ``screenshots_gpu``, ``screenshots_logs``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.demo import DEMO_PRESET, demo_app, demo_runner, settle, type_into
from tests.support.fakes import FakeRunner

if TYPE_CHECKING:
    from textual.pilot import Pilot


Scene = Callable[["Pilot[Any]"], Awaitable[None]]


@dataclass(frozen=True)
class Shot:
    name: str
    size: tuple[int, int]
    scene: Scene
    runner: Callable[[], FakeRunner] = demo_runner


async def _compose(pilot: Pilot[Any]) -> None:
    await settle(pilot)


async def _edited(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await type_into(pilot, "sbatch.nodes", "4")
    await type_into(pilot, "sbatch.time", "2:00:00")
    await pilot.press("escape", "t")
    await settle(pilot)


async def _errors(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await type_into(pilot, "sbatch.ntasks-per-node", "4")
    await type_into(pilot, "sbatch.time", "90 min")
    await pilot.press("escape")
    await settle(pilot)


async def _confirm(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot)


async def _editor(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("e")
    await settle(pilot)


async def _help(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("question_mark")
    await pilot.pause()


SHOTS: tuple[Shot, ...] = (
    Shot("compose", (120, 36), _compose),
    Shot("compose-narrow", (80, 24), _compose),
    Shot("compose-edited", (120, 36), _edited),
    Shot("compose-errors", (120, 36), _errors),
    Shot("confirm-submit", (120, 36), _confirm),
    Shot("preset-editor", (120, 36), _editor),
    Shot("help", (120, 36), _help),
)


async def take(shot: Shot, out: Path) -> Path:
    app = demo_app(runner=shot.runner())
    async with app.run_test(size=shot.size) as pilot:
        await shot.scene(pilot)
        path = out / f"{shot.name}.svg"
        svg = app.export_screenshot(title=f"ntui · {shot.name}")
        path.write_text(svg, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    parser.add_argument("--only", nargs="*", default=None, help="shot names: " + ", ".join(s.name for s in SHOTS))
    args = parser.parse_args(argv)
    shots = [s for s in SHOTS if args.only is None or s.name in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ntui-shots-") as tmp:
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        from ntui.core.paths import user_presets_dir

        user_presets_dir().mkdir(parents=True)
        (user_presets_dir() / "alice-ddp.yaml").write_text(DEMO_PRESET, encoding="utf-8")
        for shot in shots:
            path = asyncio.run(take(shot, args.out))
            print(path)
    if args.only is None:
        # The jobs view and its panes, each from its own deterministic scene.
        from tests.support.screenshots_clusters import save_clusters_screenshot
        from tests.support.screenshots_gpu import gpu_pane_screenshot
        from tests.support.screenshots_jobs import (
            save_jobs_screenshot,
            save_recent_screenshot,
            save_report_screenshot,
        )
        from tests.support.screenshots_logs import log_pane_screenshots
        from tests.support.screenshots_progress import save_progress_screenshot
        from tests.support.screenshots_stacks import save_stacks_screenshot
        from tests.support.screenshots_sweep import save_sweep_screenshots
        from tests.support.screenshots_waiting import save_whatif_screenshot, save_why_screenshot

        print(save_jobs_screenshot(args.out))
        print(save_recent_screenshot(args.out))
        print(save_report_screenshot(args.out))
        print(save_progress_screenshot(args.out))
        print(save_stacks_screenshot(args.out))
        print(save_why_screenshot(args.out))
        print(save_whatif_screenshot(args.out))
        print(save_clusters_screenshot(args.out))
        print(gpu_pane_screenshot(args.out / "gpu-pane.svg"))
        for path in log_pane_screenshots(args.out):
            print(path)
        for path in save_sweep_screenshots(args.out):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
