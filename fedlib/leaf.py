"""LEAF datasets (Caldas et al., 2018) as natural federations: one client per celebrity (CelebA) or per
Twitter user (Sent140), read from LEAF's json files.

LEAF writes `{"users": [...], "num_samples": [...], "user_data": {user: {"x": [...], "y": [...]}}}` into
`data/<name>/data/train/*.json` and `.../test/*.json` (its `preprocess.sh`). We look for the train/ and test/
folders under `$FEDLIB_DATA/leaf/<name>/` or `$FEDLIB_DATA/<name>/data/`. CelebA's x are image file names in
`raw/img_align_celeba/` beside those folders (y: smiling or not); Sent140's x are LEAF's raw tweet rows
[id, date, query, user, text] (y: 0 negative, 1 or 4 positive).

Choices where the FedLog paper is brief: CelebA images are resized to 84 x 84 (LEAF's size) and normalised per
channel to [-1, 1]; Sent140 tweets are lower-cased word tokens, the `vocab_size` most frequent words of the
training clients get ids (0 padding, 1 unknown), and every tweet is cut or padded to `max_len` tokens. Sent140
drops clients with fewer than 5 samples and holds 10% of the clients out as the validation set
(`LeafFederation.validation`), as Section 4.3 says.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .data import ClientData, DatasetNotFound, Federation
from .paths import data_dir

LEAF_DATASETS = ("celeba", "sent140")
IMAGE_SIZE = 84
VOCAB_SIZE = 10_000  # words with ids; the Transformer's embedding has VOCAB_SIZE + 2 rows (padding, unknown)
MAX_LEN = 25
PAD, UNKNOWN = 0, 1


@dataclass
class LeafFederation(Federation):
    users: list[str] | None = None
    validation: ClientData | None = None  # Sent140: the held-out validation clients (train and test samples)


def find_leaf_root(name: str, root: Path | None = None) -> Path:
    root = root or data_dir()
    for cand in (root / "leaf" / name, root / name / "data", root / name):
        if (cand / "train").is_dir() and (cand / "test").is_dir():
            return cand
    raise DatasetNotFound(
        f"{name}: no LEAF json files found. Run LEAF's preprocessing (github.com/TalwalkarLab/leaf, "
        f"data/{name}/preprocess.sh) and put its train/ and test/ folders under {root / 'leaf' / name}/"
        + (" with the images in raw/img_align_celeba/" if name == "celeba" else ""))


def files_present(name: str, root: Path | None = None) -> bool:
    try:
        find_leaf_root(name, root)
        return True
    except DatasetNotFound:
        return False


def read_split(folder: Path) -> dict[str, dict]:
    """All users of one split: user -> {"x": [...], "y": [...]} (several json files are merged)."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise DatasetNotFound(f"no .json files in {folder}")
    users: dict[str, dict] = {}
    for f in files:
        blob = json.loads(f.read_text())
        for u in blob["users"]:
            d = blob["user_data"][u]
            into = users.setdefault(u, {"x": [], "y": []})
            into["x"] += d["x"]
            into["y"] += d["y"]
    return users


def tokenize(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def build_vocabulary(texts: list[str], size: int = VOCAB_SIZE) -> dict[str, int]:
    counts = Counter(w for t in texts for w in tokenize(t))
    return {w: i + 2 for i, (w, _) in enumerate(counts.most_common(size))}


def encode(texts: list[str], vocab: dict[str, int], max_len: int = MAX_LEN) -> torch.Tensor:
    out = torch.full((len(texts), max_len), PAD, dtype=torch.long)
    for i, t in enumerate(texts):
        ids = [vocab.get(w, UNKNOWN) for w in tokenize(t)][:max_len]
        out[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
    return out


def load_images(folder: Path, names: list[str], size: int = IMAGE_SIZE) -> torch.Tensor:
    from PIL import Image

    out = np.empty((len(names), 3, size, size), dtype=np.float32)
    for i, n in enumerate(names):
        path = folder / n
        if not path.exists():
            raise DatasetNotFound(f"celeba: image {path} is missing; put LEAF's raw/img_align_celeba/ beside train/")
        img = Image.open(path).convert("RGB").resize((size, size))
        out[i] = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 127.5 - 1.0
    return torch.from_numpy(out)


def _label(y) -> int:
    v = int(float(y))
    return 1 if v >= 1 else 0  # Sent140's raw labels are 0 and 4, LEAF's processed ones 0 and 1


def load_leaf(name: str, seed: int = 0, n_clients: int = 0, root: Path | None = None, min_samples: int = 5,
              validation_fraction: float = 0.1) -> LeafFederation:
    """A LEAF dataset, one client per user. `n_clients` > 0 keeps that many users at random (seeded)."""
    if name not in LEAF_DATASETS:
        raise ValueError(f"unknown LEAF dataset {name!r}; choose one of {', '.join(LEAF_DATASETS)}")
    base = find_leaf_root(name, root)
    train, test = read_split(base / "train"), read_split(base / "test")
    users = sorted(u for u in train if u in test)
    g = torch.Generator().manual_seed(seed)
    validation_users: list[str] = []
    if name == "sent140":
        users = [u for u in users if len(train[u]["y"]) + len(test[u]["y"]) >= min_samples]
        perm = torch.randperm(len(users), generator=g).tolist()
        n_val = int(round(validation_fraction * len(users)))
        validation_users = sorted(users[i] for i in perm[:n_val])
        users = sorted(users[i] for i in perm[n_val:])
    if n_clients:
        if n_clients > len(users):
            raise ValueError(f"{name}: asked for {n_clients} clients but the files hold {len(users)} usable users")
        users = sorted(users[i] for i in torch.randperm(len(users), generator=g)[:n_clients].tolist())
    if not users:
        raise ValueError(f"{name}: no user has both train and test samples (and >= {min_samples} samples)")

    if name == "celeba":
        images = base / "raw" / "img_align_celeba"
        to_x = lambda xs: load_images(images, xs)  # noqa: E731
    else:
        vocab = build_vocabulary([row[4] for u in users for row in train[u]["x"]])
        to_x = lambda xs: encode([row[4] for row in xs], vocab)  # noqa: E731

    def client_data(split: dict, names: list[str], both: dict | None = None) -> ClientData:
        xs, ys, parts, start = [], [], [], 0
        for u in names:
            rows_x, rows_y = list(split[u]["x"]), list(split[u]["y"])
            if both is not None:
                rows_x += both[u]["x"]
                rows_y += both[u]["y"]
            xs += rows_x
            ys += [_label(v) for v in rows_y]
            parts.append(torch.arange(start, start + len(rows_y)))
            start += len(rows_y)
        return ClientData.from_parts(to_x(xs), torch.tensor(ys, dtype=torch.long), parts)

    tr, te = client_data(train, users), client_data(test, users)
    val = client_data(train, validation_users, both=test) if validation_users else None
    classes_of = [sorted(set(tr.y[i, : int(tr.counts[i])].tolist())) for i in range(len(users))]
    vocab_size = VOCAB_SIZE + 2 if name == "sent140" else None  # ids 0 (padding) and 1 (unknown) come first
    return LeafFederation(tr, te, 2, classes_of, tuple(tr.x.shape[2:]), vocab_size=vocab_size, users=users,
                          validation=val)


__all__ = ["LEAF_DATASETS", "LeafFederation", "load_leaf", "find_leaf_root", "read_split", "tokenize",
           "build_vocabulary", "encode", "VOCAB_SIZE", "MAX_LEN", "IMAGE_SIZE"]
