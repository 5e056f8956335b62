"""A cluster's link state (ntui.core.remote.link): up, slow past a request's own wait, down until answered, back for
a while, and the words the banner, the status line and the Logs tab's rows say of each."""

from __future__ import annotations

from ntui.core.remote.link import BACK, DOWN, ROW_DOWN, ROW_SLOW, SLOW, UP, LinkBoard, LinkWatch


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_request_past_its_own_wait_makes_the_link_slow_until_it_ends() -> None:
    clock = _Clock()
    link = LinkWatch("beta", monotonic=clock, slow_s=4.0)
    token = link.begin(wait=5.0)  # a follow that may wait 5 s on the cluster
    clock.t += 8.0
    assert link.view().state == UP  # within its own wait and the slack
    clock.t += 2.0
    view = link.view()
    assert (view.state, view.seconds) == (SLOW, 5)
    assert link.row_status() == ROW_SLOW and link.status() == "link slow"
    assert "has not answered for 5 s" in link.banner()
    link.end(token)
    link.answered()
    assert link.view().state == UP and link.banner() == "" and link.row_status() is None


def test_down_until_answered_then_back_for_a_while_then_up() -> None:
    clock = _Clock()
    link = LinkWatch("beta", monotonic=clock, back_s=10.0)
    link.dropped("the connection dropped (ssh: Broken pipe)")
    clock.t += 3.0
    link.dropped("the connection dropped (ssh: Connection refused)")  # still the same drop
    clock.t += 2.0
    view = link.view()
    assert (view.state, view.seconds, link.drops) == (DOWN, 5, 1)
    assert link.banner() == ("⚠ beta: link down for 5 s, reconnecting with backoff  ·  the connection dropped "
                             "(ssh: Connection refused)")
    assert link.row_status() == ROW_DOWN and link.status() == "link down"
    token = link.begin()
    clock.t += 30.0  # a request in flight while down: still down, not slow
    assert link.view().state == DOWN
    link.end(token)
    link.answered()
    assert (link.view().state, link.view().seconds) == (BACK, 35)
    assert link.banner() == "" and link.row_status() is None and link.status() == "reconnected"
    clock.t += 10.0
    assert link.view().state == UP and link.banner() == "" and link.status() is None


def test_a_refused_login_is_said_with_what_to_run() -> None:
    link = LinkWatch("perlmutter", monotonic=_Clock())
    link.dropped("the key or certificate expired; to renew it here: sshproxy -u alice", login=True)
    assert link.banner().startswith("⚠ perlmutter: cannot log in")
    assert "sshproxy -u alice" in link.banner()


def test_the_board_keeps_one_link_per_cluster() -> None:
    board = LinkBoard()
    assert board.of("a") is board.of("a") and board.of("a") is not board.of("b")
