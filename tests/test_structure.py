"""The code stays small and layered: no import cycle inside fedlib, no function longer than 60 lines."""
import ast
import re
from pathlib import Path

import script_module

FEDLIB = Path(__file__).resolve().parent.parent / "fedlib"


def _module_name(path: Path) -> str:
    parts = path.relative_to(FEDLIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """fedlib modules that `path` imports anywhere (also inside functions)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            mod = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module)
            if not mod or not mod.startswith("fedlib"):
                continue
            for alias in node.names:  # `from . import engine` imports the module fedlib.engine
                sub = f"{mod}.{alias.name}"
                out.add(sub if (FEDLIB.parent / (sub.replace(".", "/") + ".py")).exists()
                        or (FEDLIB.parent / sub.replace(".", "/")).is_dir() else mod)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("fedlib")}
    return out - {name}


def test_fedlib_has_no_import_cycle():
    graph = {_module_name(p): _imports(p) for p in FEDLIB.rglob("*.py")}
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in graph:
        if module not in state:
            visit(module, [module])


def test_no_function_is_longer_than_60_lines():
    long = [f"{p.relative_to(FEDLIB.parent)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for p in FEDLIB.rglob("*.py") for n in ast.walk(ast.parse(p.read_text()))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60]
    assert not long, long


def test_a_method_in_the_algorithms_package_registers_itself_and_others_do_not():
    # before: adding a method needed two edits in fedlib/algorithms/__init__.py
    from fedlib.algorithms import REGISTRY, Algorithm

    probe = type("Probe", (Algorithm,), {"name": "probe_method", "__module__": "fedlib.algorithms.probe"})
    try:
        assert REGISTRY["probe_method"] is probe
        outside = type("Outside", (Algorithm,), {"name": "outside_method", "__module__": "tests.somewhere"})
        assert "outside_method" not in REGISTRY and outside.name == "outside_method"
    finally:
        REGISTRY.pop("probe_method", None)


def test_generic_modules_know_no_paper():
    """Only the papers' packages and the CLI import fedlib.papers: the engine, the sweep, the claims ledger and the
    rest know no paper (a paper's numbers, plans, tables and claims live in fedlib/papers/<paper>). The CLI reads the
    papers through their registry and accounting only: it imported FedLog's `paper_config` for `fedlib run` and a
    grid's "paper" fields; now the paper that declares the command line's client setting registers it."""
    allowed = {"fedlib.__main__"}
    knows = {_module_name(p): sorted(m for m in _imports(p) if m.startswith("fedlib.papers"))
             for p in FEDLIB.rglob("*.py") if "papers" not in p.relative_to(FEDLIB).parts}
    assert not {m: i for m, i in knows.items() if i and m not in allowed}
    generic = {"fedlib.papers", "fedlib.papers.registry", "fedlib.papers.accounting"}
    assert set(knows["fedlib.__main__"]) <= generic, set(knows["fedlib.__main__"]) - generic


def test_the_generic_modules_name_no_paper_and_plots_no_method():
    """knobs, plots, stats (its table_rows), the command line and its spec hold none of the workbook's knowledge: no
    paper's name, table, figure, equation, theorem or notebook. Before, knobs.py listed notebook 02's datasets, parts
    and Table 1's rows; plots.py kept FedLog's and FedCR's colours and every method's family; `fedlib list` named
    FedCR's and FedRD's models; `fedlib run`'s help FedLog's tables. The papers register them now (`knobs.register`,
    `Paper.looks`, `models.FAMILIES`, `Paper.client_setting`), and plots names no method at all."""
    from fedlib import algorithms

    words = re.compile(r"\b(FedLog|FedCR|FedRD|FedProf)\b|\bTable [0-9A-Z]|\bFig\. ?[0-9]|\bnotebook \d\d|\bEq\. ?\d"
                       r"|\bThm\. ?\d")
    for name in ("knobs", "plots", "stats", "__main__", "cli_spec"):
        found = sorted({m.group(0) for m in words.finditer((FEDLIB / f"{name}.py").read_text())})
        assert not found, f"fedlib/{name}.py names {found}"
    plots = (FEDLIB / "plots.py").read_text()
    named = [m for m in algorithms.REGISTRY if re.search(rf"[\"']{m}[\"']", plots)]
    assert not named, f"plots.py names methods: {named}"


def test_a_papers_looks_are_registered_with_it_and_a_clash_is_refused():
    """How a method's curves look comes from the papers that draw it (`Paper.looks` -> plots.LOOKS): FedLog's own
    methods thick and on top, FedCR's too, the baselines' families by line style; a method given two looks by two
    papers is refused when the second registers, not drawn one way in one figure and another in the next."""
    import pytest

    from fedlib import plots
    from fedlib.papers import Paper, register, registry

    styles = plots.method_styles({"a": "fedavg", "b": "fedlog", "c": "fedrep", "d": "fedcr", "e": "fedproto"})
    assert styles["b"] == dict(color="#d62728", ls="-", lw=2.4, zorder=5) and styles["d"]["lw"] == 2.4
    assert (styles["a"]["ls"], styles["c"]["ls"], styles["e"]["ls"]) == ("-", "-.", ":")
    assert styles["a"]["color"] != styles["c"]["color"] and styles["a"]["lw"] == 1.3
    with pytest.raises(ValueError, match="fedlog"):
        register(Paper("ToyLooks", (), looks={"fedlog": dict(ls=":")}))
    assert "ToyLooks" not in registry.PAPERS


def test_no_paper_code_at_the_top_level_and_no_paper_figure_or_file_writing_in_plots():
    """A paper's analysis and figures live in its package: the top-level modules that held them are gone, and
    plots.py draws only what several papers share (no figure of one paper, no file written: `outputs` writes)."""
    gone = {"tables", "analysis", "synthetic", "convergence", "representations"}
    assert not gone & {p.stem for p in FEDLIB.glob("*.py")}
    plots = (FEDLIB / "plots.py").read_text()
    for word in ("savefig", "write_text", "open(", "to_csv", "Fig. ", "Thm. ", "Table 1", "Eq. "):
        assert word not in plots.replace('"savefig.dpi"', ""), word
    users = {}
    for path in FEDLIB.rglob("*.py"):
        for name in re.findall(r"\bplots\.([a-z]\w*)\(", path.read_text()):
            users.setdefault(name, set()).add(path.relative_to(FEDLIB).parts[:2])
    one_paper = {n for n, where in users.items() if n not in ("caption", "style", "mean_band", "count", "log_x",
                                                               "add_looks")  # the papers' registry calls it
                 and len({w[1] for w in where if w[0] == "papers"}) == 1 and all(w[0] == "papers" for w in where)}
    assert not one_paper, f"figures drawn for one paper only belong in its package: {one_paper}"


def test_a_paper_package_has_the_roles_and_its_notebook_reads_draws_and_says():
    """Every paper's package has the roles' modules; every notebook defines nothing and stays short (at most 30 code
    lines: the architecture review's bound; its claims one call) and names what it reads in words, never a one-letter
    alias (notebook 01 had `E`, 05 `s`): what is not reading, drawing or saying lives in its paper's package."""
    import re

    for paper in ("fedlog", "fedcr", "fedrd", "fedprof"):
        package = FEDLIB / "papers" / paper
        roles = {p.stem for p in package.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
        assert roles >= {"reported", "protocol", "plans", "figures", "analysis"}, (paper, roles)
    assert (FEDLIB / "papers" / "fedprof" / "claims.py").exists() and (FEDLIB / "papers" / "fedrd" / "claims.py").exists()
    assert len(THIN_NOTEBOOKS) == 8
    for name in THIN_NOTEBOOKS:
        notebook = FEDLIB.parent / "notebooks" / f"{name}.py"
        code = [line for line in notebook.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]
        statements = ast.parse(notebook.read_text()).body
        assert len(code) <= 100 and not any(re.search(r"\bdef\b|\blambda\b", line) for line in code), name
        tree = ast.parse(notebook.read_text())
        assert not any(isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)) for n in ast.walk(tree)), name
        assert len(statements) <= 30, (name, len(statements))  # statements: a call wrapped over lines counts once
        short = [t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for target in n.targets
                 for t in ast.walk(target) if isinstance(t, ast.Name) and len(t.id) == 1 and t.id != "_"]
        assert not short, (name, short)


THIN_NOTEBOOKS = sorted(p.stem for p in (FEDLIB.parent / "notebooks").glob("[0-9]*.py"))  # every notebook


def test_the_command_that_computes_a_run_set_is_built_in_one_module():
    """Issue 70: 11 hand-typed `scripts/paper_runs.py SET ...` strings named run sets by text. A command is now built
    by `fedlib/papers/part.py` alone (Part.command, commands_for: the sets that hold the runs missing); no other
    string in the package or the notebooks names a set after the script."""
    import io
    import tokenize

    from fedlib.papers import RUN_SETS

    names = "|".join(sorted(RUN_SETS, key=len, reverse=True))
    named = re.compile(rf"scripts/paper_runs\.py +(\{{|({names})\b)")  # a set's name, or a value put in its place
    found = []
    ROOT = FEDLIB.parent
    for path in [*sorted((ROOT / "fedlib").rglob("*.py")), *sorted((ROOT / "notebooks").glob("[0-9]*.py"))]:
        if path == ROOT / "fedlib" / "papers" / "part.py":
            continue
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and named.search(tok.string):
                found.append(f"{path.relative_to(ROOT)}:{tok.start[0]}")
    assert not found, f"a run set's command typed outside fedlib/papers/part.py: {found}"


PAPER_OF = {"01": "fedlog", "02": "fedlog", "03": "fedlog", "04": "fedlog", "05": "fedlog", "06": "fedcr",
            "07": "fedrd", "08": "fedprof"}
STILL_PASSED: set[str] = set()  # every notebook reads its paper through its modules


def test_no_notebook_hands_its_paper_package_back_to_it_and_no_function_takes_it():
    """Issue 70: notebooks passed their own paper's package to its functions (29 times), so that the paper's modules
    did not import what they read. FedLog's table1.py and FedCR's and FedRD's parts now import their role modules; no
    call in a notebook passes its paper's package, and no function of FedCR's or FedRD's takes it as `paper` (a
    parameter `fedrd` there is the method's runs)."""
    passed = {}
    for nb in sorted((FEDLIB.parent / "notebooks").glob("[0-9]*.py")):
        own = PAPER_OF[nb.name[:2]]
        calls = [n for n in ast.walk(ast.parse(nb.read_text())) if isinstance(n, ast.Call)]
        n = sum(isinstance(a, ast.Name) and a.id == own for c in calls for a in [*c.args, *(k.value for k in c.keywords)])
        if n:
            passed[nb.name[:2]] = n
    assert set(passed) == STILL_PASSED, passed
    for package in ("fedlog", "fedcr", "fedrd", "fedprof"):  # (FedLog's markers() took the table's markers as `paper`)
        for path in sorted((FEDLIB / "papers" / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
                    assert "paper" not in names, f"{path.name}:{node.lineno} {node.name} takes its package"


ON_PARTS = {"fedprof", "fedrd", "fedcr", "fedlog"}  # papers whose notebook parts are `part.Part` values (issue 70)


def test_a_paper_on_parts_declares_each_part_once_with_typed_profiles_and_its_notebook_reads_only_through_them():
    """Issue 70: a notebook part is one typed value (`fedlib.papers.part.Part`) in its paper's plans: its runs at
    each profile, its run set (RUN_SETS is derived from the parts: the packed ones, the same objects), its command
    and its reading. Profiles are frozen dataclasses, not dict literals read by string keys; a notebook with runs
    reads them only through its parts (no `sweep.Runs` of its own). Its package has the six roles and only them.
    FedLog's five notebooks (NOTEBOOKS) were the last: notebook 02 read one sweep of its own over a plan's Configs."""
    import dataclasses
    import importlib

    from fedlib.papers import PARTS, RUN_SETS, part

    for paper in ("fedlog", "fedcr", "fedrd", "fedprof"):
        plans = importlib.import_module(f"fedlib.papers.{paper}.plans")
        on_parts = isinstance(getattr(plans, "PARTS", None), tuple) and all(isinstance(p, part.Part) for p in plans.PARTS)
        assert on_parts == (paper in ON_PARTS), f"{paper}: on parts {on_parts}; update ON_PARTS"
        if not on_parts:
            continue
        assert plans.RUN_SETS == [p for p in plans.PARTS if p.packed]
        assert all(RUN_SETS[p.name] is p for p in plans.RUN_SETS) and all(PARTS[p.name] is p for p in plans.PARTS)
        assert all(dataclasses.is_dataclass(v) and v.__dataclass_params__.frozen for p in plans.PARTS
                   for v in p.profiles.values()), paper
        for path in sorted((FEDLIB / "papers" / paper).rglob("*.py")):
            text = path.read_text()
            assert not re.search(r"\b[Sp]\[\"", text) and "RunSet" not in text, path.name
        notebooks = getattr(plans, "NOTEBOOKS", None) or (plans.NOTEBOOK,)
        assert {p.notebook for p in plans.PARTS} == set(notebooks)
        for name in notebooks:
            notebook = next((FEDLIB.parent / "notebooks").glob(f"{name}.py")).read_text()
            assert "sweep.Runs" not in notebook and "papers.settings" not in notebook, name
            if any(p.build is not None for p in plans.PARTS if p.notebook == name):  # it has runs: read through parts
                assert re.search(r"(papers|part)\.read(_notebook)?\(profile|\.read\(profile\)", notebook), name
        roles = {"__init__", "reported", "protocol", "plans", "analysis", "figures", "claims"}  # and only them, each a
        home = FEDLIB / "papers" / paper  # module or a folder
        assert {f.stem for f in home.glob("*.py")} | {d.name for d in home.iterdir() if (d / "__init__.py").exists()} \
            == roles, paper
        found = [f"{path.name}:{i}" for path in sorted((FEDLIB / "papers" / paper).rglob("*.py"))
                 for i, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"\b[Sp]\[\"", line)]
        assert not found, f"string-key lookups into a profile or plan dict: {found}"  # 201 before the issue


def test_every_claim_a_notebook_saved_names_an_existing_part():
    """Issue 70: each claims row names the notebook part it reads or computes (its `part` column), one of
    `fedlib.papers.PARTS`, so no claim or coverage line is found by matching its table's name. Before, 36 rows named
    none (the parts computed in their notebook: Fig. 1, Thm. 7, notebook 04's, Thm. 4, FedCR's Fig. 2, FedRD's toy,
    the cross-checks, and the parts no run set packs). The ledgers a notebook has not rewritten since the column was
    renamed (`run_set`, before 2026-11-29) are listed and shrink: they named only the packed parts."""
    from fedlib.claims import ledger
    from fedlib.papers import PARTS

    unnamed, old = [], []
    for path in sorted((FEDLIB.parent / "figures" / "claims").glob("*.csv")):
        header = path.read_text().splitlines()[0].split(",")
        if "part" not in header:
            old.append(path.name)
            continue
        unnamed += [f"{path.name}: {r['where']}" for r in ledger.read(path) if r["part"] not in PARTS]
    assert not unnamed, unnamed
    assert set(old) <= NOT_REWRITTEN, sorted(set(old) - NOT_REWRITTEN)


NOT_REWRITTEN: set[str] = set()  # the ledgers written before the part column: none since 2026-11-29 (the paper
# profile's redrawn, the quick profile's rerun; a file listed here must be rewritten by its notebook, never edited)


def test_no_paper_module_finds_a_run_set_by_its_name():
    """Issue 70: FedCR's parts found the run set of Ditto's second reading, and FedRD's the ladder's, by matching
    their names in RUN_SETS (`next(s for s in RUN_SETS if s.name == "...")`); each is now a named value of its
    plans, which the parts import."""
    found = []
    for path in sorted((FEDLIB / "papers").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "name" \
                    and any(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in node.comparators):
                found.append(f"{path.relative_to(FEDLIB)}:{node.lineno}")
    assert not found, found


def test_claims_judge_what_analysis_makes_and_never_draw_write_or_get_judged_by_analysis():
    """A paper's claims module judges numbers; it draws and writes nothing (no figures, outputs or plots: FedLog's
    claims saved Table 1's ranking and named methods through plots, FedRD's read its runs through figures). A paper's
    analysis makes numbers and never imports its paper's claims."""
    for claims in sorted((FEDLIB / "papers").glob("*/claims.py")):
        paper = _module_name(claims).rsplit(".", 1)[0]
        drawn = {m for m in _imports(claims) if m in (f"{paper}.figures", "fedlib.outputs", "fedlib.plots")}
        assert not drawn, f"{_module_name(claims)} imports {sorted(drawn)}"
    for paper in sorted(p for p in (FEDLIB / "papers").iterdir() if (p / "claims.py").exists()):
        analysis = [paper / "analysis.py"] if (paper / "analysis.py").exists() else sorted((paper / "analysis").glob("*.py"))
        for path in analysis:
            assert _module_name(paper / "claims.py") not in _imports(path), f"{_module_name(path)} imports its claims"


def test_the_architecture_page_names_every_method_file_and_analysis_module_and_none_that_is_gone():
    """docs/architecture.md described modules that no longer existed and left out FedPAC's file; it names every
    method file and every FedLog analysis module as they are, and no `name.py` that is not there."""
    page = (FEDLIB.parent / "docs" / "architecture.md").read_text()
    methods = {p.name for p in (FEDLIB / "algorithms").glob("*.py") if p.stem not in ("__init__", "base")}
    assert not {m for m in methods if f"`{m}`" not in page}, "method files the page does not name"
    named = set(re.findall(r"`(\w+\.py)`", page))
    here = {p.name for p in FEDLIB.rglob("*.py")} | {p.name for p in (FEDLIB.parent / "scripts").glob("*.py")}
    assert named <= here, f"files the page names that are not there: {sorted(named - here)}"
    analysis = {p.stem for p in (FEDLIB / "papers" / "fedlog" / "analysis").glob("*.py") if p.stem != "__init__"}
    assert all(f"`{m}`" in page for m in analysis), "FedLog analysis modules the page does not name"


def test_a_toy_paper_registers_itself_and_is_found_in_every_listing(monkeypatch, capsys):
    """Papers were listed by hand in five places (the package imports, the claims' known papers, PARTS, RUN_SETS,
    the quotes' texts and modules). Each registers itself now (`papers.registry.register`); a toy paper with one run
    set is found in every listing, and a second paper of the same name is refused."""
    import pytest

    from fedlib.claims.ledger import KNOWN_PAPERS
    from fedlib.papers import PARTS, RUN_SETS, Paper, part, quotes, register, registry

    toy_set = part.Part("toy_table", "99_toy", {"paper": (0,)}, lambda s, seeds: {}, where=("Table 1",))
    toy = Paper("ToyPaper", (toy_set,), text="999_toy.txt", quotes=lambda: ["a toy's own words"], first_notebook=9)
    register(toy)
    try:
        assert "ToyPaper" in KNOWN_PAPERS and PARTS["toy_table"] is toy_set and list(RUN_SETS)[-1] == "toy_table"
        assert quotes.paper_files()["ToyPaper"] == "999_toy.txt"
        assert ("ToyPaper", "a toy's own words") in quotes.code_quotes()
        script = script_module.load("paper_runs")
        assert "toy_table" in script.sets_listed()
        with pytest.raises(ValueError, match="registered already"):
            register(Paper("ToyPaper", ()))
    finally:
        registry.unregister("ToyPaper")
    assert "ToyPaper" not in KNOWN_PAPERS and "toy_table" not in PARTS and "toy_table" not in RUN_SETS


ROW_FIELD_LOOKUPS = 59  # 2026-12-07 (285 before notebook 04's typed values; then TableRow 266, Thm. 4 227, Fig. 3 right 187, Fig. 1 168, DP's Release and FedCR's View 151, the ablations' rows 127, FedCR's cross-check settings 111, the regime's counts 99, small typed results 86, plots.Curve 68); the architecture issue's goal is under 60 (typed values in place of row dicts)


def test_string_subscripts_in_the_papers_analysis_figures_and_claims_do_not_grow():
    """The numbers travel from analysis to claims as dicts read by string keys (`row["accuracy_mean"]`); the goal is
    typed values. This counts every subscript by a string constant in each paper's analysis, figures and claims
    (not of an upper-case table such as QUOTES or TABLE1) and holds the count at or under its last value: a change
    that adds such lookups fails here, one that removes them lowers ROW_FIELD_LOOKUPS in the same commit."""
    papers = FEDLIB / "papers"
    files = [p for p in papers.glob("*/*.py") if p.stem in ("analysis", "figures", "claims")]
    files += list(papers.glob("*/analysis/*.py"))
    count = 0
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                base = node.value
                name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
                count += not name.isupper()
    assert count <= ROW_FIELD_LOOKUPS, f"{count} string lookups (at most {ROW_FIELD_LOOKUPS}): use typed values"


def _calls(tree) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _dotted(node) -> str:
    return f"{_dotted(node.value)}.{node.attr}" if isinstance(node, ast.Attribute) else \
        node.id if isinstance(node, ast.Name) else ""


def test_a_notebook_reads_once_and_ends_with_its_papers_record_of_the_reads():
    """A notebook read its parts three ways (`papers.read`, `Part.read`, a paper's own reader) and ended in ten
    record functions of ten signatures, fed what the notebook had computed. Now every notebook reads its parts once
    (`papers.read_notebook(profile, NOTEBOOK)`) and its last statement is `ledger = <paper>.claims.record(reads)`
    (FedLog's 02 and 04 were the last to move, on 2026-12-07)."""
    moved = []
    for name in THIN_NOTEBOOKS:
        tree = ast.parse((FEDLIB.parent / "notebooks" / f"{name}.py").read_text())
        last = tree.body[-1]
        ends = isinstance(last, ast.Assign) and isinstance(last.value, ast.Call) \
            and re.fullmatch(r"\w+\.claims\.record", _dotted(last.value.func)) is not None \
            and [_dotted(a) for a in last.value.args] == ["reads"] and not last.value.keywords
        reads_once = {_dotted(c.func) for c in _calls(tree) if _dotted(c.func).startswith("papers.read")} \
            == {"papers.read_notebook"}  # in stages where a part depends on another's numbers (FedCR's Table 2)
        if ends and reads_once:
            moved.append(name)
    assert set(moved) == set(THIN_NOTEBOOKS), f"not on record(reads): {set(THIN_NOTEBOOKS) - set(moved)}"


def test_no_notebook_hands_a_figures_value_to_its_claims():
    """Notebooks 07 and 02 handed what figure functions returned (07: dpc points, d' rows, depth accuracies, the
    toy's gaps; 02: Table 1's summary rows and Table A.1's runs) to their claims, so a verdict depended on drawing
    code; now each paper's analysis makes them, and its figures and claims both read that."""
    handing = set()
    for name in THIN_NOTEBOOKS:
        tree = ast.parse((FEDLIB.parent / "notebooks" / f"{name}.py").read_text())
        drawn = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                 and ".figures." in f".{_dotted(n.value.func)}" for target in n.targets for t in ast.walk(target)
                 if isinstance(t, ast.Name)}
        for call in _calls(tree):
            if ".claims." in f".{_dotted(call.func)}":
                used = {n.id for a in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(a)
                        if isinstance(n, ast.Name)}
                if used & drawn:
                    handing.add(name)
    assert not handing, f"notebooks handing figures' values to claims: {handing}"


_TOY_ENTRY = '''
import importlib.abc, importlib.machinery, json, sys

class AddEntry(importlib.abc.MetaPathFinder):  # "FedNew" declared once, in protocol.TABLE1_METHODS, as it loads
    def find_spec(self, name, path, target=None):
        if name != "fedlib.papers.fedlog.protocol":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            module.TABLE1_METHODS["FedNew"] = ("fedavg", {"weighted": False})
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, AddEntry())
from fedlib.papers import RUN_SETS, accounting, fedlog

sets = {name: [lab for lab, _ in RUN_SETS[name].runs([0])] for name in
        ("table1", "table1_augmented", "table1_fashion_mnist", "table1_fashion_mnist_plain")}
status = accounting.set_status(shipped=lambda cfg: False, costs={})
profiles = {p: [d for d, e in S.table1.items() if "FedNew" in e.methods] for p, S in fedlog.TABLE1_PROFILES.items()}
print(json.dumps({"sets": sets, "n": {k: status[k]["n"] for k in sets}, "profiles": profiles,
                  "order": fedlog.AUGMENTED_ORDER}))
'''


def test_a_table1_entry_declared_once_is_in_every_listing():
    """A Table 1 entry is declared once (`protocol.TABLE1_METHODS`); before, one left out of the hand-kept
    AUGMENTED_ORDER made `table1_augmented.runs()` raise "'FedNew' is not in list", and with it paper_runs.py,
    `fedlib claims` (`accounting.set_status`) and the missing-run notes. A toy entry added as protocol.py loads (a
    fresh interpreter: every listing is built at import) is in every Table 1 run set, in the order of computation
    derived from the declarations (the verdicts' rows first, then the others as declared), counted by the claims
    page, and in the profiles that run every entry. Slow
    (tests/slow_tests.txt): a fresh interpreter imports the workbook, about 7 s; it stays in the test command."""
    import json
    import subprocess
    import sys

    from fedlib.papers.fedlog.plans import VERDICT_ROWS

    done = subprocess.run([sys.executable, "-c", _TOY_ENTRY], capture_output=True, text=True, cwd=FEDLIB.parent,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # the order of computation derives from the declarations (AUGMENTED_ORDER was kept by hand): the new entry is in
    # it, after the verdicts' rows and Table 1's other entries, before the entries beyond Table 1
    assert got["order"][:len(VERDICT_ROWS)] == list(VERDICT_ROWS)
    assert got["order"].index("FedNew") == got["order"].index("FedBabu") + 1
    for name, labels in got["sets"].items():
        assert any(lab.startswith("FedNew") for lab in labels), (name, labels)
        if name != "table1":  # the sets computed in AUGMENTED_ORDER
            ordered = [lab for lab in dict.fromkeys(labels) if lab in got["order"]]  # (the plain set's FedDBE with
            assert [lab for lab in got["order"] if lab in labels] == ordered, (name, labels)  # augmentation after)
    assert got["n"] == {name: len(labels) * 10 if name.startswith("table1_augmented") or name == "table1" else
                        len(labels) * 5 for name, labels in got["sets"].items()}
    assert got["profiles"]["paper"] == ["mnist", "fashion_mnist", "cifar10", "cifar100"]
    assert got["profiles"]["quick"] == ["mnist"]


def test_the_command_lines_client_setting_is_declared_by_one_paper():
    """`fedlib run` and a grid's "paper" fields start from the workbook's own paper's client setting (FedLog's
    `paper_config`), which that paper declares when it registers; the CLI no longer imports it by name. A second
    paper declaring one is refused, by name, when the setting is asked for."""
    import pytest

    from fedlib.papers import fedlog, registry
    from fedlib.papers.registry import Paper, register

    setting, datasets = registry.client_setting()
    assert setting is fedlog.paper_config and {"mnist", "cifar10"} <= set(datasets)
    register(Paper("ToyClient", (), client_setting=lambda dataset, method, **fields: None))
    try:
        with pytest.raises(RuntimeError, match="2 registered papers declare .*FedLog, ToyClient"):
            registry.client_setting()
    finally:
        registry.unregister("ToyClient")
    assert registry.client_setting()[0] is fedlog.paper_config


def test_every_part_plans_the_same_runs_whatever_data_are_here(monkeypatch):
    """Plans are pure (issue 94, point 4): a build takes its typed profile and plans what it declares; which datasets
    are here is decided where a part is read (`part.read`: `Read.absent`). Before, FedCR's Table 2, 3, 9, Fig. 2
    and part G builds and FedRD's Table I and III builds asked `experiments.data_here` and planned other runs on a
    machine with other files. Every part at every profile, with the question answered yes, no, or refused."""
    from fedlib import experiments as ex
    from fedlib.papers import PARTS

    def plans() -> dict:
        return {(name, at): {k: [getattr(c, "key", lambda: repr(c))() for c in cfgs] for k, cfgs in
                             p.plan(at).items()} for name, p in PARTS.items() for at in p.profiles}

    monkeypatch.setattr(ex, "data_here", lambda d: True)
    every = plans()
    monkeypatch.setattr(ex, "data_here", lambda d: False)
    assert plans() == every

    def asked(d):
        raise AssertionError(f"a build asked whether {d} is here")

    monkeypatch.setattr(ex, "data_here", asked)
    monkeypatch.setattr(ex, "dataset_available", asked)
    assert plans() == every


def test_a_build_hands_its_typed_profile_on_never_its_name():
    """Builders take the typed profile, never its name (issue 94, point 4): FedCR's and FedRD's builds passed
    `profile.name` to their Config builders (`run`, `notebook_run`), which looked the Profile up again by name, and
    FedRD's chose its colour data's samples per class by the name "paper"; they hand the Profile on now
    (`Profile.rgb_dpc`)."""
    found = [f"{path.relative_to(FEDLIB)}:{node.lineno}" for path in sorted((FEDLIB / "papers").glob("*/plans.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Name)
             and node.value.id in ("profile", "at", "settings", "S")]
    assert not found, found
