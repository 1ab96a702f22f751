"""A local step that a GPU can replay as a graph (issue 71, section 1): it reads no tensor's value on the host (one
graph, no break, under torch._dynamo with autograd traced) and works on buffers that stay where they are, with the
same shapes, from step to step and from round to round (so a captured graph's addresses stay valid)."""
import pytest
import torch

from fedlib import engine
from fedlib import experiments as ex
from fedlib.papers import fedlog
from fedlib.messages import Ledger
from fedlib.rounds import run_round

pytestmark = pytest.mark.skipif(not ex.dataset_available("mnist"), reason="MNIST is fetched by the test command")


def _steps(monkeypatch, method: str, rounds: int = 2, explain: bool = False, **overrides):
    """Runs `rounds` rounds of `method` in FedLog's MNIST setting at a tiny size and records, at every local step,
    the addresses and shapes of what the step reads and writes; with `explain`, the first step is also traced."""
    cfg = fedlog.paper_config("mnist", method, n_clients=4, train_fraction=0.01, rounds=rounds, local_epochs=1,
                              seed=0, **overrides)
    seen, traced, last = [], [], {}
    real_loss, real_update = engine.step_loss, engine.step_update

    def step_loss(group, params, data, ids, ok, on, rows, augment, loss_fn):
        last["loss"] = (group, params, data, ids, ok, on, rows, augment, loss_fn)
        return real_loss(group, params, data, ids, ok, on, rows, augment, loss_fn)

    def step_update(loss, opt_params, optimizers, clip_norm, fast, active):
        state = [t for opt, _ in optimizers for t in engine._optimizer_tensors(opt)]
        seen.append({"params": [(v.data_ptr(), tuple(v.shape)) for v in opt_params.values()],
                     "state": [(t.data_ptr(), tuple(t.shape)) for t in state],
                     "batch": tuple(last["loss"][3].shape)})
        real_update(loss, opt_params, optimizers, clip_norm, fast, active)
        if explain and not traced:  # after the real step (a traced step runs too: one step more than the run's)
            def whole_step(ids, ok):
                group, params, data, _, _, on, rows, augment, loss_fn = last["loss"]
                *_, step = real_loss(group, params, data, ids, ok, on, rows, augment, loss_fn)
                real_update(step, opt_params, optimizers, clip_norm, fast, active)
                return step.detach()
            torch._dynamo.reset()
            with torch._dynamo.config.patch(trace_autograd_ops=True):
                traced.append(torch._dynamo.explain(whole_step)(last["loss"][3], last["loss"][4]))

    monkeypatch.setattr(engine, "step_loss", step_loss)
    monkeypatch.setattr(engine, "step_update", step_update)
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    for rnd in range(1, rounds + 1):
        seen.append({"round": rnd})
        run_round(alg, rnd, ledger)
    return seen, traced


@pytest.mark.parametrize("method", ["fedavg", "fedlog"])
def test_a_whole_local_step_is_one_graph_with_no_break(monkeypatch, method):
    _, traced = _steps(monkeypatch, method, rounds=1, explain=True)
    assert traced and traced[0].graph_break_count == 0, [str(b.reason) for b in traced[0].break_reasons]
    assert traced[0].graph_count == 1


@pytest.mark.parametrize("method", ["fedavg", "fedlog"])
def test_every_step_of_every_round_reads_and_writes_the_same_buffers_with_the_same_shapes(monkeypatch, method):
    seen, _ = _steps(monkeypatch, method, rounds=2)
    steps = [s for s in seen if "round" not in s]
    assert len(steps) > 4
    first = steps[0]
    moved = [(i, k, j) for i, s in enumerate(steps) for k in first for j, (a, b) in
             enumerate(zip(s[k] if k != "batch" else [s[k]], first[k] if k != "batch" else [first[k]])) if a != b]
    assert not moved, f"{len(moved)} (step, what, which) differ from the first step's, e.g. {moved[:6]}"
