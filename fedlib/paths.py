"""Where data, cached results and figures live: `$FEDLIB_DATA`, `$FEDLIB_RESULTS`, `$FEDLIB_FIGURES`, or the
folders `data/`, `results/`, `figures/` of the checkout (found from this package, so notebooks that run in
notebooks/ write to the same place as scripts run from the top).

The smoke profile never writes figures/ or results/: whoever starts it (papermill's `-p profile smoke`, which
the notebook passes to `use_profile`, or `FEDLIB_PROFILE=smoke`), its figures and results go under
`build/smoke/`, unless FEDLIB_FIGURES / FEDLIB_RESULTS name another folder than the checkout's own.

The quick profile writes its figures, tables and claims under `build/quick/figures/`: the committed figures/ are
what `FEDLIB_PROFILE=paper ./run_all.sh` redraws from archive/ and what a maintainer's `./run_all.sh --commit` wrote
(FEDLIB_WRITE_COMMITTED=1), so that the README's first command leaves `git status` clean on any machine (a quick
number may move by a fraction of a point on another processor kind).

A notebook run by hand (JupyterLab, with no FEDLIB_PROFILE) gets its parameters cell's default, LAB: the quick
profile's settings, its figures and claims under `build/lab/` (results are shared with every other run).
"""
from __future__ import annotations

import os
from pathlib import Path

PROFILES = ("smoke", "quick", "paper")
LAB = "lab"  # a notebook's default when run by hand: quick's settings, its figures under build/lab/
COMMITTED = "FEDLIB_WRITE_COMMITTED"  # "1": the quick profile writes the committed figures/ (./run_all.sh --commit)
_active: str | None = None
_lab = False


def project_root() -> Path:
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def use_profile(profile: str) -> str:
    """Every notebook calls this with its `profile` parameter first: it is checked, and decides where output goes;
    returns the profile whose settings to use (LAB runs quick's, writing under build/lab/)."""
    global _active, _lab
    _lab = profile == LAB
    if _lab:
        profile = "quick"
        print(f"run by hand: the quick profile's settings, figures and claims under {project_root() / 'build' / LAB}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r} (papermill -p profile ... "
                         f"or FEDLIB_PROFILE)")
    _active = profile
    from . import provenance

    provenance.forget()  # a notebook's tables list the code of the runs it reads from here on
    return profile


def active_profile() -> str | None:
    return _active or os.environ.get("FEDLIB_PROFILE") or None


def _dir(env: str, default: str) -> Path:
    own = project_root() / default
    explicit = Path(os.environ[env]) if os.environ.get(env) else None
    if active_profile() == "smoke" and (explicit is None or explicit.resolve() == own.resolve()):
        return project_root() / "build" / "smoke" / default
    if default == "figures" and explicit is None:
        if _lab:
            return project_root() / "build" / LAB / default
        if active_profile() == "quick" and os.environ.get(COMMITTED) != "1":
            return project_root() / "build" / "quick" / default
    return explicit or own


def committed_figures_dir() -> Path:
    """The checkout's figures/ (or FEDLIB_FIGURES), whatever the profile: the ledgers a quick run's claims page fills
    in from, for the notebooks it did not run."""
    return Path(os.environ["FEDLIB_FIGURES"]) if os.environ.get("FEDLIB_FIGURES") else project_root() / "figures"


def portable(text: str) -> str:
    """`text` with this machine's folders named as a reader of the committed outputs can follow: the checkout as
    nothing (data/cifar-10-batches-py), a data folder elsewhere as $FEDLIB_DATA. What a notebook prints goes
    through it, so that no committed output holds the absolute path of the machine that ran it."""
    data = os.environ.get("FEDLIB_DATA")
    if data:
        text = text.replace(str(Path(data).resolve()), "$FEDLIB_DATA").replace(str(Path(data)), "$FEDLIB_DATA")
    root = str(project_root().resolve())
    return text.replace(root + os.sep, "").replace(root, ".")


def data_dir() -> Path:
    return Path(os.environ["FEDLIB_DATA"]) if os.environ.get("FEDLIB_DATA") else project_root() / "data"


def results_dir() -> Path:
    return _dir("FEDLIB_RESULTS", "results")


def figures_dir() -> Path:
    return _dir("FEDLIB_FIGURES", "figures")
