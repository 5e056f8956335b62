"""Regenerate ``screenshots/*.svg`` from the real app with deterministic data.

    python -m ntui.screenshots [--out screenshots] [--only NAME ...]

The app runs headless with a :class:`~ntui.core.runner.FakeRunner` answering sinfo, sacctmgr and
sbatch like a small Perlmutter-shaped cluster, a frozen clock, no user/host/version in the header,
no cursor blink, and a temporary user preset directory holding ``alice-ddp`` (shipped
``perlmutter-torchrun`` with absolute script and log paths, so nothing shows the checkout location).
The UI tests reuse :func:`demo_runner`, :data:`FROZEN_NOW` and :func:`settle`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ntui.core.runner import FakeRunner, result

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from ntui.ui.app import NtuiApp

FROZEN_NOW = datetime(2026, 6, 1, 9, 30, 0)
SEP = "\x1f"

SINFO = "\n".join(
    SEP.join(row)
    for row in (
        ("debug*", "up", "30:00", "8", "idle", "nid[001-008]", "gpu:4"),
        ("regular", "up", "2-00:00:00", "1536", "mixed", "nid[001-1536]", "gpu:4"),
        ("shared", "up", "2-00:00:00", "64", "idle", "nid[2001-2064]", "gpu:4"),
    )
) + "\n"
SACCTMGR = "m4242|debug,premium,regular\nm4242_g|debug,regular,shared\n"
TEST_ONLY = (
    "sbatch: Job 48213777 to start at 2026-06-01T09:41:12 using 256 processors on nodes nid[001-002] "
    "in partition regular\n"
)

DEMO_PRESET = """\
# Screenshot preset: shipped perlmutter-torchrun with absolute paths.
extends: perlmutter-torchrun
name: alice-ddp
description: perlmutter-torchrun with Alice's training script
sbatch:
  account: m4242_g
script: /global/homes/a/alice/train/ddp_check.py
args: ["--epochs", "3", "--batch-size", "64"]
logs:
  dir: /pscratch/sd/a/alice/ntui/logs
"""


def demo_runner(*, job_id: str = "48213777", reject: str | None = None) -> FakeRunner:
    """Canned Slurm answers; ``reject`` makes sbatch refuse with that reason."""
    runner = FakeRunner(
        {
            "sinfo": result(stdout=SINFO),
            "sacctmgr": result(stdout=SACCTMGR),
            "sbatch --test-only": result(stderr=TEST_ONLY),
            "sbatch --parsable": result(stdout=f"{job_id}\n"),
        }
    )
    if reject is not None:
        message = f"sbatch: error: Batch job submission failed: {reject}\n"
        runner.add("sbatch --parsable", result(stderr=message, returncode=1))
        runner.add("sbatch --test-only", result(stderr=f"allocation failure: {reject}\n", returncode=1))
    return runner


def demo_app(*, runner: FakeRunner | None = None, preset: str | None = "alice-ddp") -> NtuiApp:
    from ntui.ui.app import make_app

    return make_app(
        runner=runner or demo_runner(),
        clock=lambda: FROZEN_NOW,
        history_factory=lambda: None,
        preset=preset,
        identity="",
        cursor_blink=False,
    )


async def settle(pilot: Pilot[Any], rounds: int = 40) -> None:
    """Wait until every worker, debounce timer and render of the current view has finished."""
    from ntui.ui.screens.compose import ComposeScreen

    app = pilot.app
    for _ in range(rounds):
        await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        compose = next((s for s in app.screen_stack if isinstance(s, ComposeScreen)), None)
        if compose is None:
            if not app.workers._workers:
                return
            continue
        if compose.up_to_date and compose.cluster is not None and not compose._busy and screen.is_current:
            await pilot.pause()
            return
    raise TimeoutError("the app did not settle")


async def type_into(pilot: Pilot[Any], key: str, text: str) -> None:
    """Replace a compose-form field's text as a user would (focus, select all, type)."""
    screen = pilot.app.screen
    control = screen.form.control(key)  # type: ignore[attr-defined]
    control.focus()
    await pilot.pause()
    control.value = ""
    await pilot.press(*list(text))


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
    parser = argparse.ArgumentParser(prog="python -m ntui.screenshots", description=__doc__.splitlines()[0])
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
        from ntui.ui.screenshots_gpu import gpu_pane_screenshot
        from ntui.ui.screenshots_jobs import save_jobs_screenshot
        from ntui.ui.screenshots_logs import log_pane_screenshots

        print(save_jobs_screenshot(args.out))
        print(gpu_pane_screenshot(args.out / "gpu-pane.svg"))
        for path in log_pane_screenshots(args.out):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
