"""A notebook part: one figure or table of a paper, declared once in its paper's `plans`. Its runs at any profile
(`plan`), its paper-profile run set (`runs`: what scripts/paper_runs.py computes and packs, and what the claims page
counts as shipped), the command that computes what is missing (`command`) and its reading (`read`) all come from
that one value, so no list of runs is written twice and none is found by matching text.

    TABLE3 = Part("fedprof_table3", NOTEBOOK, PROFILES, table3_plan, label=..., where=("Table 3",))
    fig1, table3 = part.read(profile, FIG1, TABLE3)   # one sweep for both, so the workers stay busy
    table3[(0.1, "FedAvg")]                           # one Result per seed, or None while any seed is missing

A part whose runs no paper-profile run set declares (packed=False) is read the same way; a notebook reads through
`fedlib.papers.read`, which names missing runs with every declared set that holds them. A part its notebook computes
with no run of the engine has no `build`: its settings and the name its claims rows give. The commands that compute a
set are built here alone (`command`, `commands_for`; runset.py, which declared the sets apart, is gone)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .. import experiments as ex
from ..config import Config
from ..result import Result


@dataclass(frozen=True)
class Derived:
    """What a derived part computes from each of its Configs instead of a run of the engine (FedLog's Thm. 4 traces;
    FedCR's Fig. 2 views): `compute(cfg, settings)` (a module-level function: the worker processes compute the
    missing values, as they run runs) gives a JSON-able value of a Config at the part's settings (its Profile), kept as
    one file (`file(cfg, settings)`, by the Config's cache key) in the folder `folder` of the results cache, or
    shipped in archive/`folder`/ (`archive.cached_json`), and read back through `load`. Its part is read like any
    other (`read`): a value neither cached nor shipped is computed where the profile may compute (`may_compute`),
    else missing, and named so."""
    folder: str  # e.g. "convergence_trace_v2": a new version of the value is a new folder
    compute: Callable[[Config, Any], Any] = field(compare=False, repr=False)
    file: Callable[[Config, Any], str] = field(default=lambda cfg, settings: f"{cfg.key()}.json", compare=False,
                                               repr=False)
    load: Callable[[Any], Any] = field(default=lambda value: value, compare=False, repr=False)
    everywhere: bool = False  # computed in every profile, the paper's too (seconds of work: notebook 01's runs)


@dataclass(frozen=True)
class Study:
    """What a derived part computes that no Config describes (notebook 04's closed forms, central training and toy
    federations): its name and arguments, which name its cached value (`key`) as a Config's key names a run's. The
    arguments are what the value depends on: a setting that moves the numbers is among them."""
    name: str
    args: tuple = ()

    def key(self) -> str:
        import hashlib

        return hashlib.sha256(repr((self.name, self.args)).encode()).hexdigest()[:16]

    def label(self) -> str:
        return f"{self.name}{self.args}"


@dataclass(frozen=True)
class Part:
    name: str  # the run set's name for scripts/paper_runs.py, e.g. "fedprof_table3"
    notebook: str  # e.g. "08_fedprof_client_selection"
    profiles: Mapping[str, Any] = field(compare=False, repr=False)  # profile name -> the paper's Profile (its .seeds)
    build: Callable[[Any, Sequence[int]], dict] | None = field(compare=False, repr=False)  # (Profile, seeds) -> key
    # -> Configs; None: the notebook computes this part itself, with no run of the engine (a closed form, a toy, a
    # centrally trained network), so it has no runs to read, only its settings and its claims
    label: Callable[[Any], str] = field(default=str, compare=False, repr=False)  # a key as paper_runs.py lists it
    where: tuple[str, ...] = ()  # the paper's tables and figures it stands for, e.g. ("Table 3", "Fig. 5")
    deviations: str = ""  # what differs from the paper's protocol at the paper profile
    packed: bool = True  # False: no paper-profile run set declares its runs (scripts/paper_runs.py does not list it)
    archive: str = ""  # its file under archive/, without .jsonl.gz (default: NAME_paper)
    in_set: Callable[[Any], bool] = field(default=lambda key: True, compare=False, repr=False)  # the paper-profile
    # keys its run set holds (default all; the others, e.g. a dataset the set leaves out, no set declares)
    stage: Callable[[Any], Any] = field(default=lambda key: 0, compare=False, repr=False)  # the run set's order:
    # stage by stage (the keys of a stage in plan order, e.g. a ladder's cheap rungs first), each seed by seed
    order: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)  # the run set's keys sorted
    # by this before staging (default: plan order), where the set computes its keys in another order than the
    # notebook shows them (Table 1 at the stated protocol: the verdicts' own rows first)
    read_at: str = field(default="", compare=False)  # the profile its notebook reads it at, whatever the notebook's
    # own (FedRD's ladder: its shipped runs in every profile); default: the notebook's profile
    derive: Derived | None = field(default=None, compare=False, repr=False)  # a derived part: each Config's value is
    # `derive.compute(cfg)`, cached like a run, not a run of the engine (never in a run set: packed=False)

    def settings(self, profile: str):
        """The paper's Profile called `profile`; an unknown name is refused with the choices."""
        if profile not in self.profiles:
            raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(self.profiles)}")
        return self.profiles[profile]

    def plan(self, profile: str, seeds: Sequence[int] | None = None) -> dict:
        """Key -> one Config per seed, at `profile` (its seeds unless `seeds` are given)."""
        settings = self.settings(profile)
        if self.build is None:  # computed in the notebook: no run of the engine
            return {}
        return self.build(settings, list(settings.seeds if seeds is None else seeds))

    def configs(self, profile: str, seeds: Sequence[int] | None = None) -> list[Config]:
        return [c for cfgs in self.plan(profile, seeds).values() for c in cfgs]

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds the paper profile reads (scripts/paper_runs.py's default)."""
        return tuple(self.settings("paper").seeds)

    def runs(self, seeds: Sequence[int] | None = None, only: list[str] | None = None) -> list[tuple[str, Config]]:
        """(label, Config) of every paper-profile run of its set (`in_set`) for `seeds` (default: the paper
        profile's), stage by stage and in each seed by seed (a stopped job leaves whole seeds); `only` keeps those
        labels (an unknown one is refused, with the choices)."""
        plan = {k: cfgs for k, cfgs in self.plan("paper", seeds).items() if self.in_set(k)}
        if self.order is not None:
            plan = dict(sorted(plan.items(), key=lambda kv: self.order(kv[0])))
        stages: dict = {}
        for key in plan:
            stages.setdefault(self.stage(key), []).append(key)
        return pick(self.name, [(self.label(key), plan[key][i]) for keys in stages.values()
                                       for i in range(max(len(plan[k]) for k in keys)) for key in keys
                                       if i < len(plan[key])], only)  # a key with fewer seeds stops early

    @property
    def archive_file(self) -> str:
        return archive_file(self.name, self.archive)

    def command(self, seeds: Sequence[int] | None = None) -> str:
        """The command that computes the runs of `seeds` (a range: the notebooks' seeds are 0..n-1)."""
        return command(self.name, self.seeds if seeds is None else seeds)

    def at(self, profile: str, settings) -> Part:
        """This part with `settings` for `profile` (a notebook's knobs narrowing its profile: fewer seeds, datasets or
        rows); the same part otherwise (name, run set, command)."""
        from dataclasses import replace

        return replace(self, profiles={**self.profiles, profile: settings})

    def read(self, profile: str) -> Read:
        """This part's runs at `profile`, made or read in one sweep (`read` for several parts at once; its missing runs
        are named with this part's own command)."""
        return read(profile, self)[0]


@dataclass
class Read:
    """What a figure or claim function receives: a part's runs at one profile, key by key. In the paper profile
    nothing is computed unless FEDLIB_COMPUTE=1, so a key whose runs are neither cached nor shipped reads None."""
    part: Part
    profile: str
    plan: dict  # key -> one Config per seed
    results: Any = field(repr=False)  # the sweep that made or read them (`Runs`)
    commands: Callable[[list], str] = field(default=str, repr=False)  # missing Configs -> the commands computing them
    absent: tuple = ()  # the keys the part plans whose data are not here (`read` leaves them out of `plan`): read None

    @property
    def settings(self):
        """The paper's Profile this part was read at."""
        return self.part.settings(self.profile)

    def keys(self) -> list:
        return list(self.plan)

    def __getitem__(self, key) -> list[Result] | None:
        if key in self.absent:
            return None
        cfgs = self.plan[key]
        return self.results(cfgs) if self.results.has(cfgs) else None

    def there(self, key) -> list[Result]:
        """The Results of `key`'s seeds that are there (cached or shipped), in seed order: a part shipped in part."""
        if key in self.absent:
            return []
        return [self.results([c])[0] for c in self.plan[key] if self.results.has([c])]

    def by_seed(self, key) -> list[Result | None]:
        """`key`'s Results seed by seed in the plan's order, None for a seed neither cached nor shipped: a part
        shipped in part, read so that a comparison pairs the seeds both sides have (`aligned`)."""
        return [self.results([c])[0] if self.results.has([c]) else None for c in self.plan[key]]

    def whole(self) -> bool:
        """Whether every run of the part is there."""
        return self.results.has([c for cfgs in self.plan.values() for c in cfgs])

    def missing(self) -> list:
        """The keys with a seed that is neither cached nor shipped."""
        return [k for k, cfgs in self.plan.items() if not self.results.has(cfgs)]

    def each(self) -> dict:
        """Key -> Results, or None where any seed is missing."""
        return {k: self[k] for k in self.plan}

    def note(self, keys: list | None = None, what: str | None = None, drawn: str = "not drawn") -> str:
        """What a notebook says where it cannot draw the part (or `what`, its `keys`; `drawn`: "drawn in part" where
        it draws what is there): how much is missing and the command that computes it."""
        keys = list(self.plan) if keys is None else list(keys)
        what = what or ", ".join(self.part.where) or self.part.name
        missing = [k for k in keys if not self.results.has(self.plan[k])]
        absent = [c for k in missing for c in self.plan[k] if not self.results.has([c])]
        return (f"{what}: {drawn}, {len(missing)} of {len(keys)} of its settings have runs neither cached nor "
                f"shipped; compute them with {self.commands(absent)}")

    def all(self) -> dict | None:
        """Key -> Results when the whole part is there; otherwise None, having printed `note()`."""
        if not self.whole():
            print(self.note())
            return None
        return {k: self[k] for k in self.plan}


# The workbook's policy on computing: in the paper profile a notebook redraws what is cached or shipped in archive/
# and computes nothing unless FEDLIB_COMPUTE=1 (it was sweep.py's; the engine's sweep knows no profile).
class NotShipped(RuntimeError):
    """Paper-profile runs that are neither cached nor shipped, in a notebook that must not compute them itself."""


def may_compute(profile: str) -> bool:
    """Whether a notebook at `profile` computes what is missing: in every profile but the paper's, and there only
    with FEDLIB_COMPUTE=1 (the paper profile redraws what is cached or shipped in archive/)."""
    compute = os.environ.get("FEDLIB_COMPUTE", "0")
    if compute not in ("0", "1"):
        raise ValueError(f"FEDLIB_COMPUTE must be 0 or 1, got {compute!r}")
    return profile != "paper" or compute == "1"


def require_shipped(configs: list[Config], profile: str, driver: str, missing: list[Config] | None = None) -> None:
    """In the paper profile a notebook redraws what is cached or shipped in archive/ and never starts hours of
    computing on its own: with runs missing it stops here, listing them and the command that computes them
    (`driver`), unless FEDLIB_COMPUTE=1 asks it to compute them itself. Other profiles compute as usual. `missing`:
    the configs found neither cached nor shipped, where the caller has looked already."""
    if may_compute(profile):
        return
    missing = [c for c in configs if not ex.is_cached(c)] if missing is None else missing
    if missing:
        groups = missing_groups(missing)
        shown = "\n".join(f"  {line}" for line in groups[:12])
        more = f"\n  ... and {len(groups) - 12} more such lines" if len(groups) > 12 else ""
        raise NotShipped(f"{len(missing)} of {len(configs)} paper-profile runs are not cached or shipped:\n{shown}{more}\n"
                         f"compute them with {driver} (then --pack them into archive/), or set FEDLIB_COMPUTE=1 to "
                         f"compute them in this notebook")


def missing_groups(configs: list[Config]) -> list[str]:
    """Runs listed one line per setting (method with its options, dataset, partition, rounds) with their seeds, not
    one line per key: "fedavg mnist, pathological partition, 500 rounds: seeds 0-2"."""
    groups: dict[str, list[int]] = {}
    for c in configs:
        opts = ",".join(f"{k}={v}" for k, v in sorted(c.options.items()))
        what = f"{c.method}{'(' + opts + ')' if opts else ''} {c.dataset}, {c.partition} partition, {c.rounds} rounds"
        groups.setdefault(what, []).append(c.seed)
    return [f"{what}: seed{'s' * (len(seeds) > 1)} {_span(sorted(set(seeds)))}" for what, seeds in groups.items()]


def _span(seeds: list[int]) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


class Runs:
    """The sweep behind `read`: every run a notebook reads, made in one sweep so that the workers stay busy (duplicates by cache key run
    once); `runs(cfgs)` gives their Results. In the paper profile nothing is computed unless FEDLIB_COMPUTE=1:
    what is neither cached nor shipped is listed with `driver`, the command that computes it, and a part asks
    `runs.has(cfgs)` before it draws, so the notebook draws what is shipped and marks the rest missing."""

    def __init__(self, configs: list[Config], profile: str, driver, shipped_prefixes: bool = False):
        """`driver`: the command that computes missing runs, or a function of the missing runs that names it
        (`fedlib.papers.commands_for`: the run sets that hold them)."""
        keyed: dict[str, Config] = {}
        for c in configs:  # each Config's key computed once here, each run loaded once (before: 3 loads, and the
            keyed.setdefault(c.key(), c)  # missing runs' keys again for every run: 54,314 keys for 556 runs)
        from .. import cache

        found = {} if may_compute(profile) else {k: cache.load(c) for k, c in keyed.items()}
        absent = {k for k, result in found.items() if result is None}
        self.missing = [c for k, c in keyed.items() if k in absent]
        self.driver = driver(self.missing) if callable(driver) else driver
        try:
            require_shipped(list(keyed.values()), profile, self.driver, missing=self.missing)
        except NotShipped as err:
            print(f"not drawn from archive/ yet (parts that need them say so): {err}")
        todo = [k for k in keyed if k not in absent]
        if keyed:  # a read of derived parts alone (notebook 01's) has no run to count
            print(f"{len(keyed)} runs" + (f", {len(self.missing)} of them missing" if self.missing else ""))
        from ..sweep import run_many

        results = run_many([keyed[k] for k in todo], shipped_prefixes=shipped_prefixes,
                           loaded=[found[k] for k in todo] if found else None)
        self._done = dict(zip(todo, results))

    def has(self, cfgs: list[Config]) -> bool:
        return all(c.key() in self._done for c in cfgs)

    def __call__(self, cfgs: list[Config]) -> list[Result]:
        absent = [c for c in cfgs if c.key() not in self._done]
        if absent:
            raise NotShipped(f"{len(absent)} runs asked for are not cached or shipped (first: {absent[0].label()}); "
                             f"compute them with {self.driver}")
        return [self._done[c.key()] for c in cfgs]



def read(profile: str, *parts: Part, sets=None, shipped_prefixes: bool = False) -> tuple[Read, ...]:
    """The runs of `parts` at `profile` in one sweep (duplicates by cache key run once), one Read per part. Missing
    runs are named with the commands of the run sets among `sets` that hold them (`fedlib.papers.read` passes every
    declared set, as a run two sets share may be shipped in either; default: the packed ones of `parts`)."""
    if not parts:  # nothing to read (e.g. no dataset of the notebook's is here)
        return ()
    sets = [p for p in parts if p.packed] if sets is None else list(sets)

    def commands(p: Part):  # missing Configs -> the commands computing them (the notebook's own where none declares)
        return lambda missing: commands_for(missing, sets, undeclared(p.notebook))

    plans, absent = zip(*(_present(p, profile, sets) for p in parts))
    every = [c for p, plan in zip(parts, plans) if p.derive is None for cfgs in plan.values() for c in cfgs]
    results = Runs(every, profile, commands(parts[0]), shipped_prefixes=shipped_prefixes)
    return tuple(Read(p, profile, plan, results if p.derive is None else Values(p, plan, profile), commands(p), gone)
                 for p, plan, gone in zip(parts, plans, absent))  # each names its own missing runs


def _present(p: Part, profile: str, sets) -> tuple[dict, tuple]:
    """`p`'s plan at `profile` split where it is read (plans are pure: a build never asks which data are here): the
    keys to read, and those whose data are not here (`Read.absent`), unless, at the paper profile, a declared run set
    (of `sets`) holds every run of the key: its shipped runs are read, and the missing ones named with their command,
    on any machine."""
    from ..experiments import data_here

    def here(cfgs) -> bool:
        return all(data_here(d) for d in {getattr(c, "dataset", None) for c in cfgs} - {None})

    plan = p.plan(profile)
    keep = {k: cfgs for k, cfgs in plan.items() if here(cfgs)}
    if profile == "paper" and len(keep) < len(plan):
        held = frozenset().union(*(set_keys(s) for s in sets))
        keep = {k: cfgs for k, cfgs in plan.items() if k in keep or all(c.key() in held for c in cfgs)}
    return keep, tuple(k for k in plan if k not in keep)


_SET_KEYS: dict[tuple, tuple] = {}  # a set's identity -> (the set, kept so that its ids stay its own; its runs' keys)


def set_keys(s: Part) -> frozenset:
    """The cache keys of every run of the run set `s` at its seeds, once a process: what `commands_for` matches
    missing runs against and `read` keeps a key whose data are not here by (all the sets: 0.6 s)."""
    import warnings

    which = (id(s), id(s.build), id(s.profiles), id(s.in_set))
    if which not in _SET_KEYS:
        with warnings.catch_warnings():  # (a setting's ignored field is said where its runs are built for a run)
            warnings.simplefilter("ignore")
            _SET_KEYS[which] = (s, frozenset(cfg.key() for _, cfg in s.runs()))
    return _SET_KEYS[which][1]


class Values:
    """The `results` of a derived part's Read (`Derived`), as `Runs` is a run part's: each Config's value from the
    results cache or archive/, else computed (in the worker processes, `sweep.call_many`) and cached where the profile
    may compute (`compute`: whatever the profile, as a script that makes them does), else missing."""

    def __init__(self, p: Part, plan: dict, profile: str, compute: bool | None = None):
        from .. import archive, cache, sweep
        from ..paths import results_dir

        derive, settings = p.derive, p.settings(profile)
        self._file = lambda cfg: derive.file(cfg, settings)  # noqa: E731
        found = {self._file(c): (c, archive.cached_json(derive.folder, self._file(c)))
                 for cfgs in plan.values() for c in cfgs}
        if derive.everywhere:  # seconds of work: kept with the code's fingerprint, and served only to the same code
            found = {name: (c, current(value)) for name, (c, value) in found.items()}
        todo = [(name, c) for name, (c, value) in found.items() if value is None]
        if todo and (derive.everywhere or may_compute(profile) if compute is None else compute):
            for (name, c), value in zip(todo, sweep.call_many(derive.compute, [(c, settings) for _, c in todo])):
                cache.write_atomic(results_dir() / derive.folder / name, stamped(value) if derive.everywhere else value)
                found[name] = (c, value)
        self._values = {name: derive.load(value) for name, (_, value) in found.items() if value is not None}

    def has(self, cfgs: list[Config]) -> bool:
        return all(self._file(c) in self._values for c in cfgs)

    def __call__(self, cfgs: list[Config]) -> list:
        absent = [c for c in cfgs if self._file(c) not in self._values]
        if absent:
            raise NotShipped(f"{len(absent)} values asked for are not cached or shipped (first: {absent[0].label()})")
        return [self._values[self._file(c)] for c in cfgs]


def stamped(value) -> dict:
    """A derived value of a part computed in every profile (`Derived.everywhere`), as its cache keeps it: with the
    fingerprint of the numeric code that made it (`provenance.fingerprint`)."""
    from .. import provenance

    return {"fingerprint": provenance.fingerprint(), "value": value}


def current(kept):
    """The value a cache file of `stamped` holds if today's numeric code made it, else None (computed again: an edited
    analysis is never served its old numbers, as an edited method never is its old runs)."""
    from .. import provenance

    fresh = isinstance(kept, dict) and kept.keys() == {"fingerprint", "value"} \
        and kept["fingerprint"] == provenance.fingerprint()
    return kept["value"] if fresh else None


@dataclass(frozen=True)
class Reads:
    """One notebook's parts read at its profile (`fedlib.papers.read_notebook`, the one way a notebook reads): what
    its figures draw and what its paper's `claims.record(reads)` judges. `reads[part]` (a Part or its name) is that
    part's Read; a part the notebook did not read is refused, with the parts it did."""
    profile: str
    notebook: str
    by_part: Mapping[str, Read]

    def __getitem__(self, part: Part | str) -> Read:
        name = part if isinstance(part, str) else part.name
        if name not in self.by_part:
            raise KeyError(f"notebook {self.notebook} read no part {name!r}; it read {', '.join(self.by_part)}")
        return self.by_part[name]

    def __contains__(self, part: Part | str) -> bool:
        return (part if isinstance(part, str) else part.name) in self.by_part

    def __or__(self, other: Reads) -> Reads:
        """These reads and `other`'s, of the same notebook and profile (a notebook that reads in stages: FedCR's
        Table 2 at the Ditto lambda chosen from its first reads); a part read twice is `other`'s."""
        if (other.profile, other.notebook) != (self.profile, self.notebook):
            raise ValueError(f"reads of {other.notebook} at {other.profile} cannot join those of {self.notebook} at "
                             f"{self.profile}")
        return Reads(self.profile, self.notebook, {**self.by_part, **other.by_part})


def first_whole(*reads: Read) -> Read | None:
    """The first of `reads` whose part is there whole (a paper's readings, its protocol's first); None if none is."""
    return next((r for r in reads if r.whole()), None)


# The command that computes a run set, and the sets that hold a notebook's missing runs: built here alone (a test
# finds the script's name typed nowhere else in the package).
def pick(name: str, runs: list, only: list[str] | None) -> list:
    """The (label, Config) of `runs` whose labels are in `only` (all without it); an unknown label is refused with
    the choices of the set `name`."""
    labels = {lab for lab, _ in runs}
    unknown = set(only or ()) - labels
    if unknown:
        raise ValueError(f"unknown label(s) {sorted(unknown)} in {name}; choose from {', '.join(sorted(labels))}")
    return [(lab, cfg) for lab, cfg in runs if not only or lab in only]


def archive_file(name: str, archive: str = "") -> str:
    """A set's file under archive/: `archive` (default NAME_paper) with .jsonl.gz."""
    return f"{archive or name + '_paper'}.jsonl.gz"


def command(name: str, seeds) -> str:
    """The command that computes the runs of the set `name` for `seeds` (a range: the notebooks' seeds are 0..n-1)."""
    seeds = sorted(seeds)
    return f"{SCRIPT} {name} --seeds {seeds[0]}-{seeds[-1]}"


SCRIPT = "scripts/paper_runs.py"  # every command that computes a run set is built here (Part.command, commands_for)
UNDECLARED = "FEDLIB_COMPUTE=1 FEDLIB_PROFILE=paper ./run_all.sh NN (no run set declares them)"


def undeclared(notebook: str) -> str:
    """The command that computes a notebook's paper-profile runs that no run set declares."""
    return UNDECLARED.replace(" NN ", f" {notebook[:2]} ")


def commands_for(configs: list, sets, undeclared: str) -> str:
    """The commands that compute `configs`: the fewest sets of `sets` that hold them, each the one holding most of
    those left (a run two sets share, as the non-private runs of the DP sets and Table 1, is named once), their
    commands `; ` between them, and `undeclared` for those no set holds (a part whose paper-size runs no set declares).
    Sets are matched by the runs' cache keys, never by name."""
    left = {c.key() for c in configs}
    if not left:  # nothing missing (every quick run, most redraws): no set's runs are built
        return undeclared
    holds = [(s, set_keys(s)) for s in sets]
    named = []
    while left:
        best, keys = max(holds, key=lambda h: len(h[1] & left), default=(None, set()))
        if not keys & left:
            break
        named.append(best.command())
        left -= keys
    return "; ".join(named + ([undeclared] if left else []))


def aligned(*sides: list) -> tuple[list, ...]:
    """Per-seed lists (None where a seed is not there) cut to the seeds every side has, in the same order: a claim
    over a set shipped in part compares the seeds it can pair (with fewer than 3 it reads "indicative (k seeds)")."""
    keep = [i for i in range(min(map(len, sides), default=0)) if all(side[i] is not None for side in sides)]
    return tuple([side[i] for i in keep] for side in sides)


def cost_text(name: str, costs: dict) -> str:
    """A set's measured cost in words (how it was come by: its `basis` and `source`), or that it was not measured."""
    c = costs.get(name)
    if c is None:
        return "cost not measured yet (`scripts/cost_table.py`)"
    at_least = "more than " if c["bound"] == ">" else ""
    own = c["source"] == name
    if c["basis"] == "runs":
        how = "measured from its finished runs" if own else f"derived from {c['source']}'s finished runs"
    else:
        how = "measured" if own else "derived from a measured bound" if c["bound"] == ">" else \
              f"derived from {c['source']}'s timed rounds"
    return (f"{at_least}{c['core_hours']:g} core-hours for all its runs (one thread, {how} {c['measured']}, "
            f"docs/measurements.md)")
