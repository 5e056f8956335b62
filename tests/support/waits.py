"""How long the tests' waits for a state may take before they give up.

A wait polls until the state it wants holds; its bound only ends a wait that would never end. On a shared machine
(both cores busy, a Textual screen mounting under load) a state the idle machine reaches in a second took over
10 s, so the bound is generous: a passing test never waits for it, a hung one fails within it.
"""

from __future__ import annotations

WAIT_BOUND_S = 60.0
