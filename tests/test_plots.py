"""Every figure function, drawn from small synthetic inputs: each axis is labelled and each legend lists every
series it draws."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fedlib import outputs, plots  # noqa: E402
from fedlib.papers import fedlog
from fedlib.papers.fedlog import figures as fedlog_figures  # noqa: E402
from fedlib.papers.fedrd import figures as fedrd_figures  # noqa: E402
from fedlib.papers.fedcr import figures as fedcr_figures  # noqa: E402
from fedlib.papers.fedprof import figures as fedprof_figures  # noqa: E402


def _labelled(ax) -> bool:
    return bool(ax.get_xlabel().strip()) and bool(ax.get_ylabel().strip())


def _legend_texts(legend) -> list[str]:
    return [t.get_text() for t in legend.get_texts()]


def test_accuracy_vs_bits_labels_every_axis_and_lists_every_method_and_the_threshold():
    rng = np.random.default_rng(0)
    methods = {**fedlog.TABLE1_METHODS, **fedlog.EXTRA_METHODS}
    curves = {lab: plots.Curve(m, 90 + rng.random((2, 10)) * 10, bits=np.cumsum(np.full(10, 1e6)))
              for lab, (m, _) in methods.items()}
    fig = fedlog_figures.accuracy_vs_bits(curves, 0.97, "synthetic")
    plots.caption(fig, "smoke", 2, 10)
    assert all(_labelled(ax) for ax in fig.axes)
    texts = _legend_texts(fig.legends[0])
    assert set(curves) <= set(texts) and "threshold 97%" in texts
    assert all(ax.get_legend() is None for ax in fig.axes)  # one legend beside the panels, none over the data
    assert "cumulative" in fig.axes[0].get_xlabel() and fig.axes[2].get_ylim() == (90, 100)
    styles = plots.method_styles({lab: m for lab, (m, _) in methods.items()})
    assert len({s["color"] for s in styles.values()}) == len(styles)  # no two methods share a colour
    assert styles["FedLog"]["zorder"] != styles["FedLog-C"]["zorder"] and styles["FedLog-C"]["ls"] == "--"
    assert any("smoke profile · 2 seeds · 10 rounds" in t.get_text() for t in fig.texts)


def test_dp_accuracy_tells_the_accountants_apart_and_marks_thin_budgets():
    line, panel = fedlog_figures.DpLine, fedlog_figures.DpPanel
    series = {"central DP, Thm. 7": line([1, 5, 20, 50], [0.5, 0.7, 0.8, 0.9], [0.01] * 4, 2, "tab:red", "-", "o"),
              "central DP, RDP accountant": line([1, 5, 20, 50], [0.6, 0.8, 0.85, 0.9], [0.01] * 4, 2, "tab:red", "--",
                                                 "^"),
              "local DP, Thm. 7": line([1, 50], [0.2, 0.8], [0.0, 0.0], 1, "tab:blue", "-", "o")}
    fig = fedlog_figures.dp_accuracy({"mnist": panel(0.95, series)}, "synthetic")
    ax = fig.axes[0]
    assert _labelled(ax) and "ε" in ax.get_xlabel()
    texts = _legend_texts(ax.get_legend())
    assert "no DP" in texts and "central DP, Thm. 7" in texts and "central DP, RDP accountant" in texts
    assert "local DP, Thm. 7 (1 seed, 2 budgets)" in texts
    handles = ax.get_legend().legend_handles
    styles = {t: h.get_linestyle() for t, h in zip(texts, handles) if hasattr(h, "get_linestyle")}
    assert styles["central DP, Thm. 7"] != styles["central DP, RDP accountant"]
    marked = fedlog_figures.dp_accuracy({"mnist": panel(0.95, series, {
        "central DP at the paper's noise per record (ε = 7.6)": (7.6, "tab:red")})}, "synthetic").axes[0]
    assert "central DP at the paper's noise per record (ε = 7.6)" in _legend_texts(marked.get_legend())
    assert any(list(line.get_xdata()) == [7.6, 7.6] for line in marked.get_lines())  # a vertical line at it


def test_fig3_rights_legends_reach_down_to_the_caption_line_with_no_band_between():
    line = fedlog_figures.DpLine([0.1, 1, 10, 50], [10, 50, 90, 97], [1] * 4, 5, "tab:red", "-", "o")
    labels = ["central DP, Thm. 7", "central DP, RDP accountant", "local DP, Thm. 7", "local DP, RDP accountant",
              "formal: DP-SGD (z=5.0, C=1.0) + local DP"]
    marks = {f"{mode} DP at the paper's noise per record (ε = 7.64)": (7.64, "b") for mode in ("central", "local")}
    panels = {name: fedlog_figures.DpPanel(97, {lab: line for lab in labels[:n]}, marks)
              for name, n in (("mnist", 5), ("fashion_mnist", 1))}  # legends as wide and as uneven as the figure's
    fig = fedlog_figures.dp_accuracy(panels, "synthetic")
    fig.canvas.draw()
    to_figure = fig.transFigure.inverted()
    lowest = min(to_figure.transform_bbox(ax.get_legend().get_window_extent()).y0 for ax in fig.axes)
    assert 0.02 < lowest * fig.get_figheight() < 0.25  # inches above the caption line (plots.caption hangs at 0)
    # the legends, wider than their panels, do not narrow them: each panel keeps most of its half of the figure
    assert all(ax.get_position().width > 0.35 for ax in fig.axes)
    saved = fig.get_tightbbox().transformed(fig.dpi_scale_trans)  # what savefig(bbox_inches="tight") keeps, in pixels
    for ax in fig.axes:  # every legend whole in it
        box = ax.get_legend().get_window_extent()
        assert saved.x0 - 1 <= box.x0 and box.x1 <= saved.x1 + 1 and saved.y0 - 1 <= box.y0
    for ax in fig.axes:  # and a legend starts below its panel's axis label
        label = to_figure.transform_bbox(ax.xaxis.label.get_window_extent())
        assert to_figure.transform_bbox(ax.get_legend().get_window_extent()).y1 < label.y0


def test_fig3_rights_legends_do_not_run_into_each_other():
    """The paper-profile figure's left legend ran over the right one's first entry: its formal DP-SGD series' label
    (with " (3 budgets)") made a column wider than half the panel (2026-12-02). Long labels then go on two lines."""
    line = fedlog_figures.DpLine([0.1, 1, 10, 50], [10, 50, 90, 97], [1] * 4, 5, "tab:red", "-", "o")
    sparse = line._replace(eps=[10, 20, 50], mean=[10, 11, 12], se=[1] * 3)
    marks = {f"{mode} DP at the paper's noise per record (ε = 7.64)": (7.64, "b") for mode in ("central", "local")}
    series = {lab: line for lab in ("central DP, Thm. 7", "central DP, RDP accountant", "local DP, Thm. 7",
                                    "local DP, RDP accountant")}
    panels = {"mnist": fedlog_figures.DpPanel(97, {**series, "formal: DP-SGD (z=5.0, C=1.0) + local DP": sparse},
                                              marks),
              "fashion_mnist": fedlog_figures.DpPanel(97, series, marks)}
    fig = fedlog_figures.dp_accuracy(panels, "synthetic")
    fig.canvas.draw()
    left, right = (ax.get_legend().get_window_extent() for ax in fig.axes)
    assert left.x1 <= right.x0
    assert any("formal: DP-SGD" in t and "\n" in t for t in _legend_texts(fig.axes[0].get_legend()))


def _snapshot(rng, local=False):
    from types import SimpleNamespace

    heads = [(rng.normal(size=(2, 2)), rng.normal(size=2)) for _ in range(2)]
    return SimpleNamespace(features=[rng.normal(size=(10, 2)) for _ in range(2)],
                           labels=[rng.integers(0, 2, 10) for _ in range(2)], heads=heads,
                           local_heads=heads if local else None)


def test_fig1_labels_every_panel_and_explains_its_marks():
    rng = np.random.default_rng(0)
    data = [(rng.normal(size=(20, 2)), rng.integers(0, 2, 20)) for _ in range(2)]
    panels = [(_snapshot(rng), "init", True), (_snapshot(rng), "FedLog", True),
              (_snapshot(rng, local=True), "LG-FedAvg", True), (_snapshot(rng), "FedProto", False)]
    from fedlib.papers.fedlog.analysis.synthetic import Accuracy

    acc = {m: Accuracy(rng.random((3, 5)), rng.random((3, 5))) for m in ("fedlog", "lg_fedavg", "fedproto")}
    fig = fedlog_figures.fig1(data, 3.7, panels, acc, [1, 2, 3, 4, 5])
    drawn = [ax for ax in fig.axes if ax.axison]
    assert len(drawn) == 7 and all(_labelled(ax) for ax in drawn)
    assert [ax.get_xlabel() for ax in drawn[:5]] == ["x₁", "φ₁", "φ₁", "φ₁", "φ₁"]
    key = _legend_texts(fig.axes[7].get_legend())
    assert {"class 0", "class 1", "client 0", "client 1", "separator of the global head"} <= set(key)
    assert set(_legend_texts(drawn[5].get_legend())) == {"FedLog", "LG-FedAvg", "FedProto"}
    assert set(_legend_texts(drawn[6].get_legend())) == {"LG-FedAvg − FedLog", "FedProto − FedLog", "FedLog"}


def test_rounds_and_bits_has_integer_rounds_every_label_and_the_verdict():
    rng = np.random.default_rng(1)
    by = {d: {lab: plots.Curve(m, 80 + 10 * rng.random((3, 5)), bits=np.cumsum(np.full(5, 1e5)))
              for lab, m in (("FedLog", "fedlog"), ("FedProto", "fedproto"))} for d in ("mnist", "fashion_mnist")}
    fig = fedlog_figures.rounds_and_bits(by, "Fig. 2", verdict="converges faster: mnist no")
    assert all(_labelled(ax) for ax in fig.axes)
    assert all(set(_legend_texts(ax.get_legend())) == {"FedLog", "FedProto"} for ax in fig.axes)
    ticks = fig.axes[0].get_xticks()
    assert all(float(t).is_integer() for t in ticks)
    assert "converges faster: mnist no" in fig._suptitle.get_text()


def test_step_sizes_draws_the_bound_and_marks_the_diverged_run():
    rng = np.random.default_rng(2)
    from fedlib.papers.fedlog.analysis.convergence import Trace

    ok = Trace(loss_before=rng.random((4, 3)) + 1, loss_local=[], loss_after=rng.random((4, 3)) + 0.5,
               grad_norm=rng.random((4, 3)), smoothness=10 + rng.random((4, 3)), acc_mean=[])
    bad = Trace(loss_before=rng.random((2, 3)) + 1, loss_local=[], loss_after=rng.random((2, 3)) * 100,
                grad_norm=rng.random((2, 3)), smoothness=1000 + rng.random((2, 3)), acc_mean=[], diverged_round=2)
    fig = fedlog_figures.step_sizes({0.01: ok, 3.0: bad})
    assert all(_labelled(ax) for ax in fig.axes)
    assert "ζ = 3 (diverged in round 2)" in _legend_texts(fig.axes[0].get_legend())
    assert any(line.get_marker() == "x" for line in fig.axes[0].get_lines())
    bounds = sorted(round(line.get_ydata()[0], 6) for line in fig.axes[2].get_lines() if line.get_linestyle() == "--"
                    and len(line.get_ydata()) == 2)
    assert bounds == [round(2 / 3.0, 6), 200.0]
    assert "2/ζ, in its ζ's colour" in _legend_texts(fig.axes[2].get_legend())
    assert fig.axes[0].get_ylim() == (-1.05, 1.05)


def test_a_figure_without_its_caption_line_is_refused(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from fedlib import paths

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")
    fig, ax = plt.subplots()
    try:
        outputs.save_figure(fig, "bare")
        raise AssertionError("a figure without a caption was saved")
    except ValueError as err:
        assert "plots.caption" in str(err)
    plots.caption(fig, "quick", 2, 40)
    assert [p.name for p in outputs.save_figure(fig, "captioned")] == ["captioned.png", "captioned.pdf"]


def test_the_caption_line_is_hung_under_an_axis_label_that_reaches_below_the_figure(tmp_path, monkeypatch):
    """Notebook 03's dp_sigma (one panel, no tight_layout, a log axis) had its caption written over its x label: the
    label reaches below the figure's edge, where the caption hangs. Saved, the caption sits under every other text;
    a figure whose contents stay above the edge keeps its caption where `plots.caption` put it."""
    from fedlib import paths

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")
    with plt.rc_context():  # the notebooks' theme (larger text), undone after
        plots.style()
        _caption_and_label(tmp_path)


def _caption_and_label(tmp_path):
    fig, ax = plt.subplots(figsize=(5, 3.4))
    ax.loglog([0.1, 50], [6000, 20])
    ax.set(xlabel="privacy budget ε", ylabel="noise standard deviation σ")
    plots.caption(fig, "quick", "no runs", "k = 5 rounds", note="the noise each accountant calibrates")
    outputs.save_figure(fig, "hung")
    fig.canvas.draw()  # the labels where a draw puts them
    renderer = fig.canvas.get_renderer()
    caption = next(t for t in fig.texts if " profile · " in t.get_text())
    below = caption.get_window_extent(renderer)
    label = ax.xaxis.label.get_window_extent(renderer)
    assert label.y0 < 0  # the label reaches below the figure's edge (where the caption used to start)
    assert below.y1 <= label.y0  # and the caption is under it, not over it
    assert not any(below.overlaps(t.get_window_extent(renderer)) for t in ax.get_xticklabels() if t.get_text())
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3.4))
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="round", ylabel="accuracy (%)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))  # room kept for the caption: nothing drawn below the edge
    plots.caption(fig, "quick", 1, 2)
    outputs.save_figure(fig, "kept")
    assert next(t for t in fig.texts if " profile · " in t.get_text()).get_position()[1] == 0.0
    plt.close(fig)


def test_fedcrs_figures_label_every_axis_and_list_every_series():
    rng = np.random.default_rng(0)
    labels = {"FedAvg": "fedavg", "Ditto": "ditto", "FedCR": "fedcr", "FedCR-NA": "fedcr_na", "Local": "local"}
    panels = {name: {lab: plots.Curve(m, 50 + rng.random((2, 6)) * 40) for lab, m in labels.items()}
              for name in ("FashionMNIST n1", "MNIST n2")}
    fig = plots.accuracy_curves(panels, "synthetic")
    assert all(_labelled(ax) for ax in fig.axes) and set(_legend_texts(fig.legends[0])) == set(labels)
    styles = plots.method_styles(labels)
    assert len({s["color"] for s in styles.values()}) == len(styles)

    sweep = {"FashionMNIST": {"ours": ([0.0, 1e-4, 5e-3], [80.0, 82.0, 79.0], [0.5, 0.4, 0.6]),
                              "paper": ([1e-4, 5e-3], [93.0, 92.0], None)}}
    fig = plots.parameter_sweep(sweep, "beta", "synthetic")
    ax = fig.axes[0]
    assert _labelled(ax) and set(_legend_texts(ax.get_legend())) == {"ours", "paper"}
    assert "0" in [t.get_text() for t in ax.get_xticklabels()]  # beta = 0 is shown on the log axis, labelled

    scatter = {f"n{i}": (rng.normal(size=(30, 2)), np.repeat([0, 3, 7], 10), 0.25) for i in (1, 2, 3)}
    fig = fedcr_figures.feature_scatter(scatter, "synthetic")
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 3 and all(_labelled(ax) for ax in shown)
    assert all(set(_legend_texts(ax.get_legend())) == {"class 0", "class 3", "class 7"} for ax in shown)
    assert "silhouette by class 0.25" in shown[0].get_title()


def test_the_objective_inconsistency_toy_labels_its_axes_and_lists_every_method_and_marker():
    from fedlib.papers.fedrd.analysis import quadratic_toy
    centers = np.eye(3)[:, :2] * 2 - 0.5
    paths = {name: quadratic_toy(centers, [1, 5, 20], 0.01, 50, normalize=name == "FedNova").numpy()
             for name in ("FedAvg", "FedNova")}
    fig = fedrd_figures.objective_inconsistency(paths, {"FedAvg": paths["FedAvg"][-1]}, centers, "synthetic")
    assert all(_labelled(ax) for ax in fig.axes)
    left = set(_legend_texts(fig.axes[0].get_legend()))
    assert {"FedAvg", "FedNova", "clients' optima", "true minimiser", "FedAvg: fixed point (closed form)"} <= left
    assert set(_legend_texts(fig.axes[1].get_legend())) == {"FedAvg", "FedNova"}


def test_grouped_bars_name_every_category_and_series_and_an_uplink_axis_can_be_logarithmic():
    fig = fedprof_figures.grouped_bars({"FedAvg-RP": {"clean": 3.0, "blur": 2.9}, "FedProf": {"clean": 7.3, "blur": 0.0}},
                             "rounds taken part in", "t")
    ax = fig.axes[0]
    assert _labelled(ax) and _legend_texts(ax.get_legend()) == ["FedAvg-RP", "FedProf"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["clean", "blur"]
    assert len(ax.patches) == 4
    curves = {"p": {"A": plots.Curve("fedavg", np.ones((1, 3)), x=[0.1, 1.0, 10.0])}}
    fig = plots.accuracy_curves(curves, "t", xlabel="uplink (MB)", log=True)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_xlabel() == "uplink (MB)"
    assert _legend_texts(fig.legends[0]) == ["A"]


def test_a_redrawn_figure_gives_the_same_pdf_bytes(tmp_path, monkeypatch):
    """The PDF carried its creation time, so every regeneration changed every committed PDF."""
    import matplotlib.pyplot as plt

    from fedlib import paths

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0], label="a")
    plots.caption(fig, "quick", 1, 2)
    pdf = outputs.save_figure(fig, "same")[1]
    assert b"CreationDate" not in pdf.read_bytes()
    plt.close(fig)


def test_a_long_caption_makes_the_figure_taller_not_wider():
    # before, a one-panel figure's saved width grew to its caption's one long line (bbox_inches="tight")
    fig, ax = plt.subplots(figsize=(5.2, 4))
    ax.plot([0, 1], [0, 1], label="a")
    ax.set(xlabel="global round", ylabel="mean client accuracy (%)")
    renderer = fig.canvas.get_renderer()
    bare = fig.get_tightbbox(renderer)
    plots.caption(fig, "paper", 3, 250, note="a long note about the scale: " + "width 1024, V 512, " * 20)
    captioned = fig.get_tightbbox(renderer)
    assert captioned.width <= max(bare.width, fig.get_figwidth()) + 0.05  # inches
    assert captioned.height > bare.height + 0.2  # the note hangs under the panel, wrapped
    assert any(" profile · " in t.get_text() for t in fig.texts)
    plt.close(fig)
