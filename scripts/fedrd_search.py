"""The model-averaging baselines' hyperparameters for FedRD's protocol (spec 2.4): FedAvg, FedProx and FedNova
over lr x momentum x local epochs (fedrd.GRID), then FedProx's mu at its best, on seed 0 of
FashionMNIST at the quick scale; the best final accuracy wins. Writes figures/fedrd_search.csv and prints the
dict to freeze in fedrd.SEARCHED (tests/test_seed_protocols.py checks the two agree).

    python scripts/fedrd_search.py            # about 30 minutes on one CPU core (FEDLIB_SWEEP_BACKEND=ray: all cores)
"""
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib import paths, sweep  # noqa: E402
from fedlib.papers import fedrd

FIELDS = ("label", "lr", "momentum", "local_epochs", "mu")


def final(result) -> float:
    return round(100 * result["rounds"]["acc_mean"][-1], 2)


def search(dataset="fashion_mnist", profile="quick") -> list[dict]:
    rows = []
    for stage in range(2):
        prox_at = None
        if stage:
            best = max((r for r in rows if r["label"] == "FedProx"), key=lambda r: r["final_acc"])
            prox_at = {k: best[k] for k in ("lr", "momentum", "local_epochs")}
        configs = fedrd.search_configs(dataset, profile, prox_at=prox_at)
        results = sweep.run_many(list(configs.values()))
        seen = {tuple(r[k] for k in FIELDS) for r in rows}
        rows += [dict(zip(FIELDS, key), final_acc=final(res)) for key, res in zip(configs, results) if key not in seen]
    return rows


def chosen(rows: list[dict]) -> dict[str, dict]:
    """Per label, the fields of its best row (FedProx's mu included)."""
    out = {}
    for label in ("FedAvg", "FedProx", "FedNova"):
        best = max((r for r in rows if r["label"] == label), key=lambda r: r["final_acc"])
        out[label] = {k: best[k] for k in ("lr", "momentum", "local_epochs")}
        if label == "FedProx":
            out[label]["mu"] = best["mu"]
    return out


if __name__ == "__main__":
    rows = search()
    path = paths.project_root() / "figures" / "fedrd_search.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*FIELDS, "final_acc"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}\nFEDRD_SEARCHED = {chosen(rows)}")
