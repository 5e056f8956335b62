"""General mechanisms of the progress reader, round t (issue [progress-real]): an actor-critic's training loss, a
run's total said as "N max iterations", and an evaluation's lines with their own iteration counter. Every line here
is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import declared_total
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- an actor-critic's losses


def test_the_actor_s_loss_is_the_training_loss_beside_the_critic_s() -> None:
    """DeepSpeed-Chat step3_rlhf_finetuning/main.py, print_rank_0(f'epoch: {epoch}|step: {step}|ppo_ep: {ppo_ep+1}|
    act_loss: {actor_loss_sum/inner_iter}|cri_loss: {critic_loss_sum/inner_iter}|unsuper_loss: {unsup_loss_sum/
    inner_iter}'): the actor (the policy trained) has the run's loss, not the critic nor the unsupervised term."""
    point = parse_line("epoch: 0|step: 41|ppo_ep: 1|act_loss: -0.031250|cri_loss: 0.271484|unsuper_loss: 0.0")
    assert point is not None and point.step == 41
    assert training_loss(point.metrics) == ("act_loss", -0.03125)
    assert training_loss({"actor_loss": 0.12, "critic_loss": 0.4}) == ("actor_loss", 0.12)
    # without a critic's loss beside it, "act" is no actor (an activation's term beside others): no loss chosen
    assert training_loss({"act_loss": 0.2, "rec_loss": 0.5}) is None


def test_the_ppo_run_shows_the_actor_s_last_loss(tmp_path: Path) -> None:
    """The step-3 loop's lines in turn, each after its "average reward score" line: the series' loss is the
    actor's of the last step."""
    lines = ["***** Beginning of Epoch 1/1, Total Generation Batches 300 *****"]
    for step in range(5):
        lines += [f"epoch: 0|step: {step}|ppo_ep: 1|act_loss: {0.1 * step:.6f}|cri_loss: 0.350000|unsuper_loss: 0.0",
                  "average reward score: 1.25", "-" * 40]
    series, _ = _read(tmp_path, lines)
    assert training_loss(series.metrics) == ("act_loss", 0.4)


# ---------------------------------------------------------------- "N max iterations"


def test_transunet_s_max_iterations_sentence_is_the_run_s_total() -> None:
    """TransUNet trainer.py, logging.info("{} iterations per epoch. {} max iterations ".format(len(trainloader),
    max_iterations)): the second number is the run's iterations."""
    assert declared_total("36 iterations per epoch. 10800 max iterations ") == 10800
    assert declared_total("[09:14:02.117] 36 iterations per epoch. 10800 max iterations") == 10800


# ---------------------------------------------------------------- an evaluation's lines with their own counter


def _transunet_style(epochs: int) -> list[str]:
    """A TransUNet-style loop's lines: 'epoch : e, iteration : i, train loss : x, train loss_ce: ...' on the global
    counter, and every second epoch the validation's 'epoch : e, iteration : j, val loss : ...' on its own."""
    lines = ["[10:00:00.001] 20 iterations per epoch. 400 max iterations "]
    for epoch in range(epochs):
        for it in range(epoch * 20 + 5, epoch * 20 + 21, 5):
            lines.append(f"[10:00:01.000] epoch : {epoch}, iteration : {it}, train loss : {0.9 - it / 1000:.6f}, "
                         f"train loss_ce: 0.500000, train loss_dice: 0.400000, train dice : 0.600000")
        if epoch % 2 == 1:
            lines += [f"[10:00:02.000] epoch : {epoch}, iteration : {j}, val loss : 0.700000, val loss_ce: 0.410000, "
                      f"val loss_dice: 0.290000, val dice : 0.710000" for j in (2, 4)]
    return lines


def test_an_evaluation_line_whose_first_loss_is_the_evaluation_s_is_no_step() -> None:
    """The validation's line names its loss terms after its own "val loss": the terms are the evaluation's."""
    assert parse_line("epoch : 3, iteration : 4, val loss : 0.700000, val loss_ce: 0.410000, val loss_dice: 0.290000, "
                      "val dice : 0.710000") is None
    point = parse_line("epoch : 3, iteration : 80, train loss : 0.820000, train loss_ce: 0.500000, train loss_dice: "
                       "0.400000, train dice : 0.600000")
    assert point is not None and point.step == 80


def test_the_validation_s_own_counter_is_no_restart(tmp_path: Path) -> None:
    """The run read through its validations: no restart, the last training iteration of the stated total."""
    series, words = _read(tmp_path, _transunet_style(4))
    assert series.restarts == []
    assert series.samples[-1].step == 80
    assert training_loss(series.metrics) == ("train_loss", 0.82)
    assert "of 400" in words


# ---------------------------------------------------------------- the dev set's loss; an epoch's iter that counts on


def test_the_dev_set_s_loss_line_is_no_training_step() -> None:
    """The SQuAD baselines' qa_model.py, logging.info("Epoch %d, Iter %d, dev loss: %f" % (epoch, global_step,
    dev_loss)): the dev set's loss at that step, not a training point with its loss."""
    assert parse_line("INFO:root:Epoch 2, Iter 1500, dev loss: 4.871200") is None
    point = parse_line("INFO:root:Epoch 2, Iter 1500, val loss: 4.871200")  # (as before: any evaluation's word)
    assert point is None or "loss" not in point.metrics


def _squad_style(first: int, last: int, per_epoch: int) -> list[str]:
    """The same loop's 'epoch %d, iter %d, loss %.5f, smoothed loss %.5f, grad norm %.5f, param norm %.5f, batch
    time %.3f' of its global_step (epochs from 1), with a dev-loss line every 100 iterations."""
    lines = ["INFO:root:Beginning training loop..."]
    for it in range(first, last + 1):
        epoch = 1 + (it - 1) // per_epoch
        lines.append(f"INFO:root:epoch {epoch}, iter {it}, loss {4 + it / 10000:.5f}, smoothed loss 4.20000, grad "
                     f"norm 3.10000, param norm 40.00000, batch time 0.812")
        if it % 100 == 0:
            lines.append(f"INFO:root:Epoch {epoch}, Iter {it}, dev loss: 4.500000")
    return lines


def test_an_epoch_s_iter_that_counts_on_past_the_epoch_is_the_run_s_step(tmp_path: Path) -> None:
    """The loop's iter goes on from one epoch to the next (2900, 2901 of epoch 2 after 2899 of epoch 1): it counts
    the run's iterations, not the epoch's batches. The run reads in those steps, with no restart."""
    series, words = _read(tmp_path, _squad_style(2801, 3050, 2900))
    assert series.restarts == []
    assert series.samples[-1].step == 3050
    assert training_loss(series.metrics) == ("loss", 4.305)
    assert words.startswith("step 3,050")
    # (icefall-style "Epoch 3, batch 450, ..." lines whose batch starts again each epoch stay counted in epochs)
    lines = [f"Epoch {e}, batch {b}, loss[loss=0.5] tot_loss[loss=0.4]" for e in (1, 2, 3) for b in (0, 50, 100)]
    series, _ = _read(tmp_path, lines)
    assert series.samples[-1].step == 3
