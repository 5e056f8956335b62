"""The demo cluster the compose screenshots and the UI tests share, and the helpers that drive the app.

The app runs headless with a :class:`~tests.support.fakes.FakeRunner` answering sinfo, sacctmgr and
sbatch like a small Perlmutter-shaped cluster, a frozen clock, no user/host/version in the header,
no cursor blink, and a temporary user preset directory holding ``alice-ddp`` (shipped
``perlmutter-torchrun`` with absolute script and log paths, so nothing shows the checkout location).
The UI tests reuse :func:`demo_runner`, :data:`FROZEN_NOW`, :func:`settle` and :func:`type_into`;
:mod:`tests.support.screenshots` takes the pictures.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tests.support.fakes import FakeRunner, result
from tests.support.waits import WAIT_BOUND_S

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
    """Wait until every worker, debounce timer and render of the current view has finished: gives up after
    ``rounds`` looks, and no sooner than the suite's bound (a count of looks alone gave up early under load)."""
    from ntui.ui.screens.compose import ComposeScreen

    app = pilot.app
    deadline = asyncio.get_running_loop().time() + WAIT_BOUND_S
    looked = 0
    while looked < rounds or asyncio.get_running_loop().time() < deadline:
        looked += 1
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
