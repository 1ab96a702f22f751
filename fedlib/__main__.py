"""Command line:

    python -m fedlib run --method fedavg --dataset mnist --rounds 10 --n-clients 20
        # learns: about 20% mean client accuracy after round 1, about 87% after round 10 (under a minute on a CPU)
    python -m fedlib run --method fedlog --dataset mnist --rounds 10 --n-clients 20 --option dp=central --option epsilon=5
    python -m fedlib sweep --grid grid.json --methods my_method.py --against fedavg --out runs.csv   # your own method
    python -m fedlib list
    python -m fedlib claims          # every notebook's verdicts into figures/claims.csv and .md
    python -m fedlib check           # do shipped runs still match what the code computes?
    python -m fedlib sweep --grid grid.json [--backend ray --address auto]
    python -m fedlib fetch-data [mnist fashion_mnist]

Errors are one line that says what to do; `--debug` shows the traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields


def fetch_data(names: list[str]) -> int:
    from . import data, leaf

    status = 0
    for name in names:
        if name not in data.DATASETS + leaf.LEAF_DATASETS:
            raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(data.DATASETS + leaf.LEAF_DATASETS)}")
        try:
            if name in leaf.LEAF_DATASETS:
                print(f"{name}: LEAF files found in {leaf.find_leaf_root(name)}")
                continue
            ds = data.load_dataset(name)
            print(f"{name}: {len(ds.train_y)} train / {len(ds.test_y)} test samples in {data.data_dir()}")
        except data.DatasetNotFound as err:
            if name == "fashion_mnist" and shutil.which("apt-get"):
                # a fresh Debian machine has no package lists; `apt-get download` needs them. Said before it runs:
                # it changes the machine's package lists and may take a minute
                print(f"{name}: not found; running `apt-get update -qq` (Debian's package lists, which `apt-get "
                      f"download dataset-fashion-mnist` needs), then trying again", flush=True)
                if subprocess.run(["apt-get", "update", "-qq"], capture_output=True).returncode != 0:
                    print(f"{name}: `apt-get update` failed (run it as root, or fetch the files by hand)",
                          file=sys.stderr)
                try:
                    data.load_dataset(name)
                    print(f"{name}: fetched after apt-get update")
                    continue
                except data.DatasetNotFound:
                    pass
            print(f"{name}: {err}", file=sys.stderr)
            status = 1
    return status


def parse_option(text: str) -> tuple[str, object]:
    """`key=value`: the value as JSON (numbers, true/false, null, lists) or else the plain string."""
    if "=" not in text:
        raise ValueError(f"--option needs key=value, got {text!r} (e.g. --option dp=local --option epsilon=2)")
    key, raw = text.split("=", 1)
    try:
        return key.strip(), json.loads(raw)
    except json.JSONDecodeError:
        return key.strip(), raw


def _config_arguments(r: argparse.ArgumentParser, spec: dict) -> None:
    """One option per Config field (`cli_spec`: no torch); none given means: the paper setting of the dataset (else
    Config's default)."""
    kinds = {"int": int, "float": float, "str": str}
    for f in spec["fields"]:
        if f["name"] in ("options", "method", "dataset"):
            continue
        default, flag = f["default"], "--" + f["name"].replace("_", "-")
        what = f["help"].replace("%", "%%")
        if f["kind"] == "bool":
            r.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                           help=f"{what} (default: {default})")
        elif f["kind"] == "json":  # e.g. corruption: JSON, '{"blur": 0.2}'
            r.add_argument(flag, type=json.loads, default=None, metavar="JSON", help=f"{what} (default: {{}})")
        else:
            r.add_argument(flag, type=kinds[f["kind"]], default=None, metavar=f["kind"].upper(),
                           help=f"{what} (default: the dataset's paper setting, else {default})")


def _one_of(choices: list[str], what: str):
    """An argparse type that takes one of `choices` and refuses anything else with the nearest as "did you mean"."""
    def check(value: str) -> str:
        if value in choices:
            return value
        import difflib

        near = difflib.get_close_matches(value, choices, n=1)
        raise argparse.ArgumentTypeError(f"unknown {what} {value!r}" + (f"; did you mean {near[0]!r}?" if near else
                                         f"; choose one of {', '.join(choices)}"))
    return check


RUN_HELP = "run one experiment (cached) and print its last-round metrics"


def build_parser(command: str | None = "run") -> argparse.ArgumentParser:
    """The command line's parser, built without importing torch: `run`'s options (one per Config field, the methods,
    the datasets) come from fedlib/cli_spec.json (`cli_spec`), and are built only when `command` is "run" (the
    default)."""
    parser = Parser(prog="fedlib", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    f = sub.add_parser("fetch-data", help="load (and cache) the offline-capable datasets")
    f.add_argument("names", nargs="*", default=["mnist", "fashion_mnist"])
    sub.add_parser("list", help="methods with their options, datasets (and whether their files are here), profiles")
    cl = sub.add_parser("claims", help="collect every notebook's claims into figures/claims.csv and figures/claims.md")
    cl.add_argument("--rejudge", action="store_true", help="first rewrite every notebook's ledger under the current "
                    "decision rule from the numbers it stores (after a change of the rule)")
    sub.add_parser("book", help="build the book (Jupyter Book: the notebooks with their outputs, the claims, the docs) into build/book/")
    ch = sub.add_parser("check", help="re-run the first rounds of shipped runs (archive/) and compare")
    ch.add_argument("--rounds", type=int, default=2,
                    help="how many first rounds of each shipped run to replay and compare (default 2)")
    ch.add_argument("--per-file", type=int, default=None, help="replay the first N runs (by key) of every archive "
                    "file instead of the default sample (every set and every method at least once, cheapest first)")
    ch.add_argument("--all", action="store_true", help="replay every shipped run (hours: before a set is shipped, "
                    "in a background slot)")
    ch.add_argument("--set", dest="sets", action="append", default=None, metavar="SET",
                    help="only the shipped runs of this run set (archive/SET_paper.jsonl.gz); repeat or give a comma "
                         "list. With --all: replay a set whole before it is shipped")
    ch.add_argument("--record", action="store_true", help="append the result, a row per set, to archive/checks.csv "
                    "(when, which runs, how many replayed and stale, the code and processor that replayed them)")
    ch.add_argument("--workers", type=int, default=None, help="processes replaying runs, each on one thread "
                    "(default: the machine's cores; the notebooks are regenerated beside them)")
    ch.add_argument("--notebooks", default="01,04", help="cheap notebooks regenerated into build/check/ and compared "
                                                        "with figures/ ('' for none)")
    if command == "run":
        _run_parser(sub)
    else:  # listed with its one line; `fedlib run --help` builds the rest
        sub.add_parser("run", help=RUN_HELP)
    sw = sub.add_parser("sweep", help="run a grid of experiments (cached) locally or on Ray")
    sw.add_argument("--grid", required=True, help='JSON file: a list of configs or {"base": {...}, "grid": {...}}')
    sw.add_argument("--backend", choices=["auto", "pool", "local", "ray"], default=None,
                    help="default: $FEDLIB_SWEEP_BACKEND or auto (one worker process per core on a CPU)")
    sw.add_argument("--address", default=None, help="an existing Ray cluster (default: start a local one)")
    sw.add_argument("--out", default=None, metavar="FILE.csv",
                    help="write one row per run: its settings, final and best accuracy, megabytes sent, seconds")
    sw.add_argument("--methods", action="append", default=[], metavar="FILE.py",
                    help="a file (or module) defining methods of your own, run as the built-ins are (repeatable; a "
                         "grid may name them too, under \"methods\")")
    sw.add_argument("--against", default=None, metavar="METHOD",
                    help="compare every grid cell with this method's cell of the same settings, seed by seed (paired "
                         "t, as the claims): printed, and with --out written beside it as FILE.summary.csv")
    sw.add_argument("--threads", type=int, default=None,
                    help="torch threads per Ray task (default 1, as every cached CPU run computes: the shipped "
                         "numbers are one thread's; more threads sum in another order)")
    for name, action in sub.choices.items():  # each subcommand's --help opens with what it does
        action.description = action.description or next(a.help for a in sub._choices_actions if a.dest == name)
    return parser


def _run_parser(sub) -> None:
    from . import cli_spec

    spec = cli_spec.load()
    own = sorted(sys.modules["fedlib.algorithms"].REGISTRY) if "fedlib.algorithms" in sys.modules else []  # --methods
    methods, datasets = sorted(set(spec["methods"]) | set(own)), spec["datasets"]
    r = sub.add_parser("run", help=RUN_HELP,
                       epilog=f"methods: {', '.join(methods)}. datasets: {', '.join(datasets)} (a dataset with a "
                              f"paper setting starts from it: the client setting a registered paper declares). `python -m fedlib "
                              f"list` shows every method's options.")
    r.add_argument("--method", default="fedlog", type=_one_of(methods, "method"), metavar="METHOD",
                   help=f"one of {', '.join(methods)} (default: fedlog)")
    r.add_argument("--dataset", default="mnist", type=_one_of(datasets, "dataset"), metavar="DATASET",
                   help=f"one of {', '.join(datasets)} (default: mnist)")
    r.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a method option; the value is JSON or a plain string (e.g. dp=local, epsilon=2)")
    r.add_argument("--methods", action="append", default=[], metavar="FILE.py",
                   help="a file (or module) defining methods of your own (docs/adding_a_method.md), run as the "
                        "built-ins are")
    r.add_argument("--no-paper-setting", action="store_true",
                   help="start from Config's defaults instead of the dataset's paper setting")
    _config_arguments(r, spec)


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors name the nearest flag or subcommand ("did you mean --rounds?"), as method and
    dataset names already do."""

    def error(self, message):
        import difflib
        import re

        bad = re.search(r"unrecognized arguments: (\S+)", message)
        if bad and bad.group(1).startswith("-"):
            flags = [o for p in _parsers(self) for a in p._actions for o in a.option_strings]
            near = difflib.get_close_matches(bad.group(1).split("=")[0], flags, n=1)
            message += f"; did you mean {near[0]}?" if near else ""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            names = re.findall(r"'([^']*)'", choice.group(2)) or [c.strip() for c in choice.group(2).split(",")]
            near = difflib.get_close_matches(choice.group(1), names, n=1)
            message += f"; did you mean {near[0]!r}?" if near else ""
        super().error(message)


def _parsers(parser) -> list:
    """`parser` and every subcommand's parser under it."""
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _parsers(sub)
    return out


def run_config(args):
    """The Config of `fedlib run`: the dataset's paper setting with the method's options there (the client setting a
    registered paper declares; unless --no-paper-setting), then every option given on the command line."""
    from .config import Config
    from .papers import registry

    given = {f.name: getattr(args, f.name) for f in fields(Config)
             if f.name not in ("options", "method", "dataset") and getattr(args, f.name, None) is not None}
    opts = dict(parse_option(o) for o in args.option)
    setting, datasets = registry.client_setting()  # the workbook's own paper's (it declares it when it registers)
    if getattr(args, "no_paper_setting", False) or args.dataset not in datasets:
        return Config(method=args.method, dataset=args.dataset, options=opts, **given)
    return setting(args.dataset, args.method, options=opts, **given)


def list_everything() -> None:
    """Methods with their options, models, datasets (and whether their files are here), profiles: from
    fedlib/cli_spec.json (`cli_spec`), without importing torch; a method of your own (--methods) is listed too."""
    from . import cli_spec, paths

    spec = cli_spec.load()
    options, full = dict(spec["method_options"]), set(spec["full_participation_only"])
    if "fedlib.algorithms" in sys.modules:  # --methods loaded some
        for name, cls in sys.modules["fedlib.algorithms"].REGISTRY.items():
            if name not in options:
                options[name] = ", ".join(f"{k}={v!r}" for k, v in cls.defaults.items()) or "no options"
                full |= set() if cls.supports_partial else {name}
    print("methods (options and defaults):")
    for name in sorted(options):
        print(f"  {name:11s} {options[name]}{'  [full participation only]' if name in full else ''}")
    print("models (Config.model; 'auto' picks the dataset's default):")
    print("  " + ", ".join(spec["models"]))
    print("  and families: " + spec["model_families"])
    root = paths.data_dir()
    print(f"datasets (files in {root}):")
    for name in spec["datasets"]:
        here = cli_spec.files_present(spec, name, root)
        print(f"  {name:13s} {'here' if here else 'missing: python -m fedlib fetch-data ' + name + ' says where'}")
    print("profiles (notebooks, FEDLIB_PROFILE): smoke (seconds, writes build/smoke/), quick (writes build/quick/; "
          "FEDLIB_WRITE_COMMITTED=1: figures/), "
          f"paper (the paper's settings, meant for a GPU); valid: {', '.join(paths.PROFILES)}")


def sweep_command(args) -> int:
    from .papers import registry
    from .sweep import GridError, expand_grid, run_sweep

    try:
        with open(args.grid) as f:
            spec = json.load(f)
    except json.JSONDecodeError as err:
        raise GridError(f"{args.grid} is not JSON: {err.msg} at line {err.lineno}, column {err.colno}") from None
    except UnicodeDecodeError:
        raise GridError(f"{args.grid} is not text (JSON)") from None
    except (ValueError, RecursionError) as err:  # an integer of thousands of digits, nesting beyond Python's limit
        raise GridError(f"{args.grid} cannot be read as a grid ({str(err).splitlines()[0][:120]})") from None
    if isinstance(spec, dict) and "methods" in spec:  # the grid's own methods, named relative to the grid file
        from pathlib import Path

        from .algorithms import load_methods

        named = spec.pop("methods")
        if not isinstance(named, list) or not all(isinstance(m, str) for m in named):
            raise GridError(f"{args.grid}: \"methods\" is a list of .py files or module names")
        for m in named:
            load_methods(m, base=Path(args.grid).resolve().parent)
    try:
        configs = expand_grid(spec, paper_config=registry.client_setting()[0])
    except (GridError, TypeError, ValueError) as err:
        raise GridError(f"{args.grid}: {err}") from None
    if args.against is not None and args.against not in {c.method for c in configs}:
        raise GridError(f"--against {args.against}: the grid runs no such method ({', '.join(sorted({c.method for c in configs}))})")
    if args.out:
        _writable_table(args.out)  # before hours of runs, not after
    report = run_sweep(configs, backend=args.backend, address=args.address, threads=args.threads)
    rows = sweep_rows(configs, report)
    print(_summary(rows))
    if args.against is not None or len({c.seed for c in configs}) > 1:  # a comparison over seeds: the summary too
        from .compare import summary

        cells = summary(configs, report.results, args.against)
        print("\nper grid cell, over its seeds" + (f" (paired against {args.against})" if args.against else "") + ":")
        print(_summary(cells))
    rescued = report.rescued(configs)
    print(f"{len(configs)} runs: {report.cached} from the cache, {report.computed - len(rescued)} computed and "
          f"cached, {len(rescued)} computed but not cached, {len(report.failures)} failed")
    for path in rescued:
        print(f"NOT CACHED (the results folder could not be written; kept in {path}: free some space, copy it into "
              f"the results folder or run the sweep again)", file=sys.stderr)
    for cfg, err in report.failures:
        print(f"FAILED {cfg.label()}: {err.strip().splitlines()[-1]}", file=sys.stderr)
    if args.out:
        _write_table(args.out, rows)
        print(f"one row per run: {args.out}")
        if args.against is not None or len({c.seed for c in configs}) > 1:
            _write_table(summary_path(args.out), cells)
            print(f"one row per grid cell: {summary_path(args.out)}")
    return 1 if report.failures or rescued else 0



def sweep_rows(configs, report) -> list[dict]:
    """One row per run of a sweep: its settings (the method and what the grid varied), its final and best mean
    client accuracy, the megabytes sent up and down in all, and its seconds; a failed run has its status and no
    numbers."""
    from dataclasses import asdict

    from .result import MB, Result

    varied = [k for k in asdict(configs[0]) if len({json.dumps(asdict(c)[k], sort_keys=True) for c in configs}) > 1
              and k not in ("seed",)]
    failed = {id(c) for c, _ in report.failures}
    rows = []
    for cfg, res in zip(configs, report.results):
        row = {"run": cfg.method, **{k: json.dumps(getattr(cfg, k), sort_keys=True) if isinstance(getattr(cfg, k),
                                     (dict, list)) else getattr(cfg, k) for k in varied if k != "method"},
               "seed": cfg.seed}
        if res is None:
            rows.append({**row, "status": "failed" if id(cfg) in failed else "missing"})
            continue
        r = Result(res)
        rows.append({**row, "status": "ok", "final_acc": round(r.final(), 4), "best_acc": round(r.best(), 4),
                     "up_mb": round(float(r.bits_up.sum()) / MB, 3), "down_mb": round(float(r.bits_down.sum()) / MB, 3),
                     "seconds": round(float(res.get("wall_s", 0.0)), 1)})
    return rows


def _summary(rows: list[dict]) -> str:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    shown = [[str(r.get(c, "")) for c in cols] for r in rows[:40]]
    widths = [max(len(c), *(len(line[i]) for line in shown)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths)) for line in shown]
    if len(rows) > 40:
        lines.append(f"... and {len(rows) - 40} more rows (--out FILE.csv writes them all)")
    return "\n".join(lines)


def summary_path(out: str) -> str:
    """Where `sweep --out FILE.csv` writes its per-cell summary: FILE.summary.csv."""
    return out[:-len(".csv")] + ".summary.csv" if out.endswith(".csv") else out + ".summary.csv"


def _writable_table(path: str) -> None:
    from pathlib import Path

    folder = Path(path).resolve().parent
    if Path(path).is_dir():
        raise ValueError(f"--out {path}: a folder; give a file name in it, e.g. {Path(path) / 'runs.csv'}")
    if not folder.is_dir():
        raise ValueError(f"--out {path}: the folder {folder} does not exist")
    if not Path(path).name.endswith(".csv"):
        raise ValueError(f"--out {path}: give a .csv file name")
    if not os.access(folder, os.W_OK) or (Path(path).exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"--out {path}: cannot be written here (no write permission); choose another place")


def _write_table(path: str, rows: list[dict]) -> None:
    import csv
    import io

    from .safe_files import replace_text

    cols = list(dict.fromkeys(k for r in rows for k in r))
    buffer = io.StringIO()
    w = csv.DictWriter(buffer, fieldnames=cols)
    w.writeheader()
    w.writerows(rows)
    replace_text(path, buffer.getvalue())


def claims_command(args) -> int:
    """`fedlib claims`: every notebook's ledger collected into figures/claims.csv and the claims pages."""
    from . import claims, papers  # noqa: F401  (papers: the names a row may give, `claims.ledger.KNOWN_PAPERS`)

    try:
        if getattr(args, "rejudge", False):
            print(f"{claims.rejudge()} verdicts changed under the current rule (numbers unchanged)")
        from .paths import active_profile, committed_figures_dir

        quick = active_profile() == "quick"  # its page: this run's ledgers, the committed ones for the rest
        rows = claims.collect(fill_from=committed_figures_dir() / "claims" if quick else None)
    except claims.ClaimsError as err:
        print(f"fedlib claims: {err}; nothing was written", file=sys.stderr)
        return 2
    from .papers.accounting import set_status

    try:
        written = claims.write_collected(rows, sets=set_status())  # what of each run set archive/ holds
    except OSError as err:
        import errno

        full = "the disk is full; free some space" if err.errno == errno.ENOSPC else (err.strerror or str(err))
        print(f"fedlib claims: could not write {err.filename or 'the claims page'} ({full}); the files already "
              f"there are left as they were; run it again", file=sys.stderr)
        return 1
    counts = {v: sum(r["verdict"] == v for r in rows) for v in sorted({r["verdict"] for r in rows})}
    print(f"{len(rows)} claims in {written[0]}: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return 0


def _register_the_papers() -> None:
    """Import the papers, which register the knobs their notebooks read (`knobs.register`)."""
    from . import papers  # noqa: F401


def check_command(args) -> int:
    """`fedlib check`: replay shipped runs (a sample, the first N of each set, or all; of some sets with --set) and
    regenerate the cheap notebooks, beside each other; with --record, a row per set in archive/checks.csv."""
    from . import freshness

    which = ("every shipped run" if args.all else f"{args.per_file} shipped run(s) of every archive file"
             if args.per_file else "a sample of the shipped runs (every set and every method at least once)")
    if args.sets:
        which += f" of {', '.join(args.sets)}"
    print(f"fedlib check: replaying the first {args.rounds} round(s) of {which}, and regenerating notebooks "
          f"{args.notebooks or '(none)'} (Ctrl-C stops it)", flush=True)
    from concurrent.futures import ThreadPoolExecutor

    preloaded = freshness.preload_tcmalloc(os.environ)
    if preloaded:
        print(f"fedlib check: its processes preload tcmalloc ({preloaded}; LD_PRELOAD= keeps glibc's malloc)",
              flush=True)
    notes, tally, start = [], {}, freshness.started()
    with ThreadPoolExecutor(1) as beside:  # the notebooks run as processes of their own, beside the replays
        regenerated = beside.submit(freshness.regenerate, [n for n in args.notebooks.split(",") if n])
        replays = freshness.check(args.rounds, args.per_file, notes, every=args.all,
                                  workers=args.workers or os.cpu_count() or 1, sets=args.sets, tally=tally)
        stale = regenerated.result() + replays
    if args.record:
        kind = "every" if args.all else f"first-{args.per_file}" if args.per_file else "sample"
        where = freshness.record(tally, kind, args.rounds, start)
        print(f"fedlib check: recorded in {where} ({len(tally)} set(s))", flush=True)
    for line in stale + notes:
        print(line, file=sys.stderr)
    print(f"{len(stale)} stale" if stale else "fresh: the regenerated tables and the replayed runs match what is "
                                            "committed")
    return 1 if stale else 0


def dispatch(args) -> int:
    if args.cmd == "fetch-data":
        return fetch_data(args.names)
    if args.cmd == "list":
        list_everything()
        return 0
    if args.cmd == "book":
        from . import book

        from .papers.accounting import parts_shipped

        try:
            index = book.build(parts=parts_shipped())
        except book.BookError as err:
            print(f"fedlib book: {err}", file=sys.stderr)
            return 1
        print(f"the book: {index} (open it in a browser, or publish the folder as it is; it works offline)")
        return 0
    if args.cmd == "claims":
        return claims_command(args)
    if args.cmd == "sweep":
        return sweep_command(args)
    if args.cmd == "check":
        return check_command(args)
    from . import cache
    from .experiments import run

    cfg = run_config(args)
    cached = cache.is_cached(cfg)
    res = run(cfg)
    print(json.dumps(printed_metrics(res), indent=1))
    print(where_it_came_from(cfg, res, cached), file=sys.stderr)
    return 0


def where_it_came_from(cfg, res, cached: bool) -> str:
    """`run`'s last line: read from the cache, computed and cached, kept in the rescue folder, or read from archive/
    where it was shipped from a machine of another device type (`archive.find_run`)."""
    from . import cache, engine

    where = getattr(res, "saved_to", None)
    if getattr(res, "waited", False):
        return f"computed by another job; read from the cache: {where or cache.path(cfg)}"
    if cached and where is None:
        return (f"from archive/: the run shipped from a {res['device']} machine (this config's run on this "
                f"{engine.resolve_device(cfg.device).type} is not there)")
    where = where or cache.path(cfg)
    said = "from the cache" if cached else "computed and cached" if where == cache.path(cfg) else \
        "computed; the cache could not be written, so the result is kept in"
    return f"{said}: {where}"


def printed_metrics(res: dict) -> dict:
    """What `run` prints: the last round's metrics, and with a final fine-tune the metrics after it, both labelled
    (the number after the fine-tune is the one a paper that fine-tunes reports)."""
    out = {"last_round": {k: v[-1] for k, v in res["rounds"].items() if k not in ("participants", "report")}}
    if "final" in res:
        out["after_final_finetune"] = {k: v for k, v in res["final"].items() if k != "client_acc"}
    return out


MAX_CHECK_ROUNDS = 50  # `fedlib check --rounds`: beyond this the replay is a recomputation (a run has 100-300 rounds)


def _check_arguments(args) -> None:
    """`fedlib check`'s arguments: at least one round and one run per file, notebooks that exist."""
    from .paths import project_root

    if args.rounds < 1:
        raise ValueError(f"--rounds {args.rounds}: replay at least 1 round (a check of 0 rounds compares nothing)")
    if args.rounds > MAX_CHECK_ROUNDS:
        raise ValueError(f"--rounds {args.rounds}: the check replays a run's first rounds, at most {MAX_CHECK_ROUNDS} "
                         f"(more replays most of a run: hours for each run replayed); "
                         f"recompute a whole set with scripts/paper_runs.py instead")
    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise ValueError(f"--workers {args.workers}: at least 1 process replays the runs")
    if args.per_file is not None and args.per_file < 1:
        raise ValueError(f"--per-file {args.per_file}: replay at least 1 run per archive file")
    if args.per_file is not None and getattr(args, "all", False):
        raise ValueError("--per-file and --all: choose one (--all replays every shipped run)")
    if getattr(args, "sets", None) is not None:
        from .freshness import archive_files

        args.sets = [s.strip() for given in args.sets for s in given.split(",") if s.strip()]
        if not args.sets:
            raise ValueError("--set: name at least one run set")
        archive_files(args.sets)  # an unknown set: its error, with the sets shipped
    have = sorted(p.name.split("_")[0] for p in (project_root() / "notebooks").glob("[0-9]*.ipynb"))
    for number in [n for n in args.notebooks.split(",") if n]:
        if number.zfill(2) not in have:
            raise ValueError(f"--notebooks {number}: no such notebook; there are {', '.join(have)}")


def own_methods(tokens: list[str]) -> list[str]:
    """The values of every `--methods X` / `--methods=X` in `tokens`: loaded before the parser is built, so that
    `run --method NAME` knows their names."""
    out = []
    for i, t in enumerate(tokens):
        if t == "--methods" and i + 1 < len(tokens):
            out.append(tokens[i + 1])
        elif t.startswith("--methods="):
            out.append(t.split("=", 1)[1])
    return out


def main(argv=None) -> int:
    tokens = sys.argv[1:] if argv is None else list(argv)
    if own := own_methods(tokens):
        from .algorithms import load_methods

        try:
            for spec in own:
                load_methods(spec)
        except ValueError as err:
            print(f"fedlib: error: {err}", file=sys.stderr)
            return 2
    args = build_parser("run" if "run" in tokens else None).parse_args(argv)
    if args.cmd == "sweep" and args.threads is not None and args.threads < 1:
        print("fedlib: error: --threads must be an integer >= 1", file=sys.stderr)
        return 2
    from . import knobs

    try:  # every FEDLIB_* variable (a notebook's too: the papers register theirs) and the check's arguments, before any work
        knobs.check(load=_register_the_papers)
        if args.cmd == "check":
            _check_arguments(args)
    except (knobs.KnobError, ValueError) as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    try:
        return dispatch(args)
    except KeyboardInterrupt:
        print("fedlib: interrupted; finished runs stay cached", file=sys.stderr)
        return 130
    except Exception as err:  # one line that says what to do; --debug for the traceback
        if args.debug:
            raise
        print(f"fedlib: error: {type(err).__name__}: {str(err).strip().splitlines()[0] if str(err) else ''}",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
