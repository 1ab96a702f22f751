"""Every environment knob (`FEDLIB_*`) and what it may be, checked before any work starts: a value outside its rule is
refused in one line that names the knob and says what it takes (`check`). The entry points call it first
(`python -m fedlib`, which `run_all.sh` calls first, and `scripts/paper_runs.py`; a notebook's settings); nothing here
loads data. The knobs of a notebook are registered by the paper that reads them (`register`), as methods and papers
register themselves: this module knows no paper."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

PROFILES = ("smoke", "quick", "paper")
MAX_SEEDS = 100  # more seeds than this is a typo (the papers use 3-10), and building their configs alone is costly


class KnobError(ValueError):
    """A FEDLIB_* variable set to a value its knob does not take."""


def _one_of(*choices):
    return (lambda v: v in choices), "one of " + ", ".join(choices)


def _int_in(lo, hi):
    return (lambda v: re.fullmatch(r"\d+", v) is not None and lo <= int(v) <= hi), f"a whole number from {lo} to {hi}"


def _number_at_least(lo):
    def ok(v):
        try:
            return float(v) >= lo and float(v) != float("inf")
        except ValueError:
            return False
    return ok, f"a number >= {lo}"


def names(value: str) -> list[str]:
    """A comma-separated knob's names, as the check reads them and every reader must (one parser): each stripped,
    empty ones dropped ("a, b" and " a" are the lists they look like)."""
    return [x.strip() for x in str(value).split(",") if x.strip()]


def names_from(choices, what):
    def ok(v):
        items = names(v)
        return bool(items) and set(items) <= set(choices)
    return ok, f"a comma-separated list of {what} ({', '.join(choices)})"


def _device(v):
    return re.fullmatch(r"cpu|cuda(:\d+)?", v) is not None


def _path(v):
    return bool(v.strip()) and "\0" not in v


def folder_problem(v: str) -> str | None:
    """Why `v` cannot be a folder fedlib uses (None if it can): it names a file, or a folder that cannot be made
    because a part of it is a file or its nearest existing folder cannot be written."""
    path = Path(v).expanduser()
    if path.exists():
        return None if path.is_dir() else "it is a file, not a folder"
    parent = path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"it cannot be created: {parent} is a file"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"it cannot be created: {parent} cannot be written"
    try:  # the permission bits do not say everything (root, a read-only or special file system): try, then take the
        path.mkdir(parents=True)  # folders made back out (a check makes nothing)
    except OSError as err:
        return f"it cannot be created ({err.strerror or err})"
    made = path
    while made != parent:
        made.rmdir()
        made = made.parent
    return None


def _folder(v):
    return _path(v) and folder_problem(v) is None


# knob -> (check of its text, what it takes); a knob whose check needs fedlib's tables builds it lazily
RULES = {
    "FEDLIB_PROFILE": _one_of(*PROFILES),
    "FEDLIB_SEEDS": _int_in(0, MAX_SEEDS),
    "FEDLIB_COMPUTE": _one_of("0", "1"),
    "FEDLIB_WRITE_COMMITTED": _one_of("0", "1"),
    "FEDLIB_PROGRESS": _one_of("0", "1", "terminal"),
    "FEDLIB_SHIPPED_PREFIXES": _one_of("0", "1"),
    "FEDLIB_CHECKPOINT_SECONDS": _number_at_least(0),
    "FEDLIB_WORKERS": _int_in(1, 1024),
    "FEDLIB_THREADS": _int_in(1, 1024),
    "FEDLIB_RAY_CPUS": _int_in(1, 100_000),
    "FEDLIB_SWEEP_BACKEND": _one_of("auto", "pool", "local", "ray"),
    "FEDLIB_DEVICE": (_device, "cpu, cuda or cuda:K"),
    "FEDLIB_RESULTS": (_folder, "a folder that exists or can be created"),
    "FEDLIB_DATA": (_folder, "a folder that exists or can be created"),
    "FEDLIB_FIGURES": (_folder, "a folder that exists or can be created"),
    "FEDLIB_RESCUE": (_folder, "a folder that exists or can be created"),
    "FEDLIB_RAY_ADDRESS": (_path, "auto or a Ray address, e.g. ray://host:10001"),
    "FEDLIB_PYTHON": (_path, "a Python interpreter's path"),
    "FEDLIB_AUTHORS_PATH": (_path, "a folder of the authors' code's dependencies"),
}


def register(name: str, rule: tuple) -> None:
    """Add a knob a notebook reads (its paper registers it): `rule` is (check of its text, what it takes), e.g.
    `names_from(choices, what)`. A knob fedlib's own rules hold is refused; registering the same rule again is not."""
    if name in _GENERIC or (name in RULES and RULES[name][1] != rule[1]):
        raise ValueError(f"{name} is a knob already ({RULES[name][1]})")
    RULES[name] = rule


_GENERIC = frozenset(RULES)


def check_one(name: str, value: str) -> None:
    """Refuse `value` for the knob `name` (KnobError naming both and what the knob takes)."""
    if name in RULES:
        ok, text = RULES[name]
    else:
        known = sorted(RULES)
        near = [k for k in known if _close(k, name)]
        raise KnobError(f"{name}: fedlib has no such setting" + (f"; did you mean {near[0]}?" if near else
                                                                   f" (its settings: {', '.join(known)})"))
    if not ok(value):
        why = folder_problem(value) if ok is _folder and _path(value) else None
        raise KnobError(f"{name}={value!r}: must be {text}" + (f" ({why})" if why else ""))


def _close(a: str, b: str) -> bool:
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def check(env=None, load=None) -> None:
    """Every FEDLIB_* variable set in `env` (default the process's) against its knob's rule; the first bad one is
    refused (KnobError). An empty value counts as unset. `load`: called once where a knob set is not registered yet,
    to register the knobs the notebooks read (the command line imports the papers then, and only then)."""
    env = os.environ if env is None else env
    set_ = sorted(k for k in env if k.startswith("FEDLIB_") and env[k] != "")
    if load is not None and any(k not in RULES for k in set_):
        load()
    for name in set_:
        check_one(name, env[name])


def check_or_exit(env=None) -> None:
    """`check` for a command line: one line on stderr and exit status 2."""
    try:
        check(env)
    except KnobError as err:
        print(f"fedlib: {err}", file=sys.stderr)
        raise SystemExit(2) from None
