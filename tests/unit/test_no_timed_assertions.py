"""No test depends on the machine's speed: a lint over every test module.

A test may bound a *wait* (poll until a state shows, give up at a deadline: a hung job must not hang the suite),
but it never asserts how long something *took*: on a shared machine (two cores, a laptop, a CI runner beside
other work) the same mechanism takes longer, and the test goes red for no defect. What a timed assertion meant to
check is checked as a mechanism instead (the timeout ntui set, and that it fired; each kill left a whole version),
and the time itself is measured in ``bench/``.

Flagged, in any ``assert`` of a module under ``tests/``:

* an *elapsed time* compared with a constant: a subtraction with a clock reading (``time.monotonic() - start``,
  ``perf_counter() - t0``), or a name assigned from one in the same module (``elapsed = time.monotonic() - t0``;
  also the conventional names ``elapsed``, ``took``, ``wall``; a difference with a name assigned a clock's reading,
  ``shown_at = time.time()``), against a number, an UPPER_CASE constant or arithmetic of those;
* a clock reading compared with anything outside a loop (``assert time.monotonic() < start + 5`` after the work
  is the same claim in other words). Inside a ``while``/``for`` body a clock compared with a deadline computed
  before the loop (a name: ``assert time.monotonic() < deadline, "never ready"``) is a wait's bound, allowed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"}
ELAPSED_NAMES = {"elapsed", "took", "wall", "elapsed_s", "took_s", "wall_s"}


def _is_clock(node: ast.AST) -> bool:
    """``time.monotonic()``, ``monotonic()``, ``loop.time()``-free: a call of a clock by its usual names."""
    if not isinstance(node, ast.Call) or node.args:
        return False
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr in CLOCKS and isinstance(f.value, ast.Name) and f.value.id == "time"
    return isinstance(f, ast.Name) and f.id in CLOCKS - {"time"}


def _has_clock(node: ast.AST, readings: frozenset[str] = frozenset()) -> bool:
    """A clock call in ``node``, or a name in ``readings`` (one assigned a clock reading: ``t1 = time.time()``)."""
    return any(_is_clock(n) or (isinstance(n, ast.Name) and n.id in readings) for n in ast.walk(node))


def _is_clock_difference(node: ast.AST, readings: frozenset[str] = frozenset()) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _has_clock(node, readings)


def _clock_readings(tree: ast.AST) -> frozenset[str]:
    """Names assigned a clock's reading as it is (``shown_at = time.time()``), anywhere in the module."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_clock(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(names)


def _is_constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.BinOp):
        return _is_constant(node.left) and _is_constant(node.right)
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    return False


def _elapsed_names(tree: ast.AST, readings: frozenset[str]) -> set[str]:
    """Names (and subscripts, as written: ``figures["keys_s"]``) assigned an elapsed time in the module."""
    names = set(ELAPSED_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_clock_difference(node.value, readings):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            names |= {ast.unparse(t) for t in node.targets if isinstance(t, ast.Subscript)}
        if (isinstance(node, ast.AnnAssign) and node.value is not None
                and _is_clock_difference(node.value, readings) and isinstance(node.target, ast.Name)):
            names.add(node.target.id)
    return names


class _Finder(ast.NodeVisitor):
    def __init__(self, elapsed: set[str], readings: frozenset[str]) -> None:
        self.elapsed = elapsed
        self.readings = readings
        self.loops = 0
        self.found: list[tuple[int, str]] = []

    def _loop(self, node: ast.While | ast.For | ast.AsyncFor) -> None:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    visit_While = visit_For = visit_AsyncFor = _loop

    def _nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        outer, self.loops = self.loops, 0  # a function defined in a loop is not in the loop
        self.generic_visit(node)
        self.loops = outer

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _nested

    def _is_elapsed(self, node: ast.AST) -> bool:
        return (_is_clock_difference(node, self.readings) or (isinstance(node, ast.Name) and node.id in self.elapsed)
                or (isinstance(node, ast.Subscript) and ast.unparse(node) in self.elapsed))

    def visit_Assert(self, node: ast.Assert) -> None:
        for cmp in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            sides = [cmp.left, *cmp.comparators]
            for a, b in zip(sides, sides[1:], strict=False):
                if (self._is_elapsed(a) and _is_constant(b)) or (self._is_elapsed(b) and _is_constant(a)):
                    self.found.append((node.lineno, "an elapsed time compared with a constant"))
                elif _has_clock(a) or _has_clock(b):
                    other = b if _has_clock(a) else a
                    if self.loops == 0:
                        self.found.append((node.lineno, "a clock reading asserted outside a wait loop"))
                    elif not isinstance(other, ast.Name | ast.Attribute):
                        self.found.append((node.lineno, "a wait's deadline computed in the assertion"))
        self.generic_visit(node)


def timed_assertions(source: str) -> list[tuple[int, str]]:
    """The line and kind of every timed assertion in a module's source."""
    tree = ast.parse(source)
    readings = _clock_readings(tree)
    finder = _Finder(_elapsed_names(tree, readings), readings)
    finder.visit(tree)
    return finder.found


def _modules() -> Iterator[Path]:
    for path in sorted(TESTS.rglob("*.py")):
        if "data" not in path.relative_to(TESTS).parts:
            yield path


def test_no_test_asserts_how_long_something_took() -> None:
    found = [f"{path.relative_to(TESTS.parent)}:{line}: {what}"
             for path in _modules() for line, what in timed_assertions(path.read_text())]
    assert not found, "timed assertions (check the mechanism; measure the time in bench/):\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    "import time\nt0 = time.monotonic()\nwork()\nassert time.monotonic() - t0 < 5\n",
    "import time\nt0 = time.perf_counter()\nwork()\nelapsed = time.perf_counter() - t0\nassert elapsed < 10\n",
    "import time\nt0 = time.monotonic()\nd = time.monotonic() - t0\nassert d <= LIMIT_S, d\n",
    "took = measure()\nassert took < 1.0\n",
    # an elapsed time kept in a dict of figures
    "import time\nt = time.monotonic()\nfigures['keys_s'] = time.monotonic() - t\nassert figures['keys_s'] < T / 2\n",
    # two readings of the clock, one of them taken from a file
    "import time\nshown_at = time.time()\nassert shown_at - end_t <= SHOWN_WITHIN_S\n",
    "import time\nstart = time.monotonic()\nwork()\nassert time.monotonic() < start + 5\n",
    "from time import monotonic\nt = monotonic()\nassert 2 * 3 > monotonic() - t\n",
    # in a loop, but a speed claim per item all the same
    "import time\nfor c in cases:\n    t0 = time.monotonic()\n    run(c)\n    assert time.monotonic() - t0 < 10\n",
    "import time\nfor c in cases:\n    t0 = time.monotonic()\n    run(c)\n    assert time.monotonic() < t0 + 10\n",
])
def test_the_lint_finds_a_timed_assertion(source: str) -> None:
    assert timed_assertions(source), source


@pytest.mark.parametrize("source", [
    # a wait's deadline, inside the loop that waits
    "import time\ndeadline = time.monotonic() + 30\nwhile not ready():\n"
    "    assert time.monotonic() < deadline, 'never ready'\n    time.sleep(0.1)\n",
    # durations the product measured, compared with what it should have measured
    "assert res.duration_s > 0\nassert job.elapsed_s == 62\n",
    "assert format_elapsed(95) == '1:35'\n",
])
def test_the_lint_allows_waits_and_durations_that_are_data(source: str) -> None:
    assert timed_assertions(source) == [], source
