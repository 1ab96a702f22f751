"""What the command line's parsers need to know, kept as data (fedlib/cli_spec.json) so that `fedlib --help`,
`fedlib run --help`, `fedlib list`'s parser and a mistyped flag answer without importing torch (about 2 s here):
every Config field (its name, default, kind and help), the methods fedlib defines with their options, the models,
the datasets and where their files are. `python -m fedlib.cli_spec` writes the file from the code; tests/test_cli.py fails while the
file and the code differ."""
from __future__ import annotations

import json
from pathlib import Path

SPEC_FILE = Path(__file__).with_name("cli_spec.json")


def build() -> dict:
    """The spec from the code itself (imports torch and every method)."""
    from dataclasses import MISSING, fields

    from . import algorithms, config

    said = config.field_help()
    out = []
    for f in fields(config.Config):
        default = {} if f.default_factory is dict else (f.default if f.default is not MISSING else None)
        kind = "json" if f.default_factory is dict else type(default).__name__
        out.append({"name": f.name, "default": default, "kind": kind, "help": said.get(f.name, "")})
    from . import data, leaf, models

    ours = {n: c for n, c in sorted(algorithms.REGISTRY.items()) if c.__module__.startswith("fedlib.")}
    files = {}
    for name in config.DATASETS:
        if name in data._IDX_SOURCES:
            files[name] = {"any": [f"{name}.npz", f"{data._IDX_SOURCES[name]['folder']}/train-images-idx3-ubyte*"]}
        elif name in data._CIFAR_FILES:
            folder, wanted = data._CIFAR_FILES[name]
            files[name] = {"all": [f"{folder}/{f}" for f in wanted]}
        elif name in leaf.LEAF_DATASETS:  # leaf.find_leaf_root's places: a train/ and a test/ folder
            files[name] = {"dirs": [f"leaf/{name}", f"{name}/data", name]}
        else:
            files[name] = {"always": True}
    return {"fields": out, "methods": list(ours), "datasets": list(config.DATASETS),
            "models": list(models.MODELS), "model_families": models.FAMILIES,
            "method_options": {n: ", ".join(f"{k}={v!r}" for k, v in c.defaults.items()) or "no options"
                               for n, c in ours.items()},
            "full_participation_only": [n for n, c in ours.items() if not c.supports_partial],
            "data_files": files}


def files_present(spec: dict, name: str, root: Path) -> bool:
    """Whether a dataset's files are in the data folder `root` (as `data.files_present` and `leaf.files_present`
    say, without importing them)."""
    rule = spec["data_files"][name]
    if rule.get("always"):
        return True
    if "any" in rule:
        return any(any(root.glob(pattern)) for pattern in rule["any"])
    if "all" in rule:
        return all((root / f).exists() for f in rule["all"])
    return any((root / d / "train").is_dir() and (root / d / "test").is_dir() for d in rule["dirs"])


def load() -> dict:
    """The spec as written (no torch)."""
    return json.loads(SPEC_FILE.read_text())


def text(spec: dict) -> str:
    return json.dumps(spec, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    from .safe_files import replace_text

    replace_text(SPEC_FILE, text(build()))
    print(f"wrote {SPEC_FILE}")
