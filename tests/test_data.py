import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from fedlib import data


@pytest.mark.parametrize("name", ["mnist", "fashion_mnist"])
def test_offline_datasets_are_verified(name):
    ds = data.load_dataset(name)
    assert ds.train_x.shape == (60000, 1, 28, 28) and ds.test_x.shape == (10000, 1, 28, 28)
    assert torch.bincount(ds.train_y).tolist() == data.EXPECTED[name]["train_counts"]
    arrays = dict(np.load(data.data_dir() / f"{name}.npz"))
    assert data.array_checksum(arrays) == data.VERIFIED_CHECKSUMS[name]
    assert abs(float(ds.train_x.mean())) < 0.05  # normalised


def test_verify_rejects_wrong_label_counts():
    arrays = {"x_train": np.zeros((60000, 28, 28), np.uint8), "y_train": np.zeros(60000, np.uint8),
              "x_test": np.zeros((10000, 28, 28), np.uint8), "y_test": np.zeros(10000, np.uint8)}
    with pytest.raises(ValueError, match="label counts"):
        data.verify("mnist", arrays)


def _labels(n_per_class, classes=10):
    return torch.arange(classes).repeat_interleave(n_per_class)


def test_pathological_partition_gives_k_distinct_balanced_classes():
    g = torch.Generator().manual_seed(3)
    ytr, yte = _labels(30), _labels(100)
    tr, te, classes_of = data.pathological(ytr, yte, 50, 2, 10, g)
    assert all(len(set(c)) == 2 for c in classes_of)
    holders = torch.bincount(torch.tensor(classes_of).flatten(), minlength=10)
    assert holders.tolist() == [10] * 10
    all_tr = torch.cat(tr)
    assert len(all_tr) == len(ytr) and len(torch.unique(all_tr)) == len(ytr)  # disjoint, covers everything
    assert len(torch.cat(te)) == len(yte)
    for parts, y in ((tr, ytr), (te, yte)):
        for p, cs in zip(parts, classes_of):
            assert set(y[p].tolist()) == set(cs)
    assert sorted({len(p) for p in tr}) == [6] and sorted({len(p) for p in te}) == [20]


def test_pathological_draws_differ_between_seeds():
    draw = lambda s: data.pathological(_labels(30), _labels(30), 50, 2, 10, torch.Generator().manual_seed(s))[2]  # noqa: E731
    assert draw(0) != draw(1)


def test_impossible_partitions_say_what_to_do():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(data.PartitionError, match="classes_per_client"):
        data.pathological(_labels(5), _labels(5), 4, 11, 10, g)
    with pytest.raises(data.PartitionError, match="fewer clients"):
        data.pathological(_labels(2), _labels(50), 50, 2, 10, g)
    with pytest.raises(data.PartitionError, match="alpha"):
        data.dirichlet(_labels(5), _labels(5), 4, 0.0, 10, g)
    with pytest.raises(data.PartitionError, match="unknown partition"):
        data.make_federation(data.make_circle(), "shards", 2, 0)


def test_dirichlet_and_iid_are_disjoint_covers():
    g = torch.Generator().manual_seed(1)
    ytr, yte = _labels(50), _labels(20)
    for tr, te, _ in (data.dirichlet(ytr, yte, 8, 0.5, 10, g), data.iid(ytr, yte, 8, 10, g)):
        assert sorted(torch.cat(tr).tolist()) == list(range(len(ytr)))
        assert sorted(torch.cat(te).tolist()) == list(range(len(yte)))


def test_dirichlet_client_gives_equal_clients_whose_classes_follow_their_own_prior():
    g = torch.Generator().manual_seed(2)
    ytr, yte = _labels(200), _labels(50)  # 2000 / 500 samples of 10 classes
    tr, te, classes_of = data.dirichlet_client(ytr, yte, 10, 0.1, 10, g)
    assert [len(p) for p in tr] == [200] * 10 and [len(p) for p in te] == [50] * 10
    everyone = torch.cat(tr)
    assert len(torch.unique(everyone)) == len(everyone)  # no sample given twice
    top_share = [float(torch.bincount(ytr[p], minlength=10).max()) / len(p) for p in tr]
    assert sum(s > 0.5 for s in top_share) >= 5  # Dir(0.1): most clients dominated by one class
    for p_tr, p_te in zip(tr, te):  # the test set follows the client's own prior: its main class is the same
        assert int(torch.bincount(ytr[p_tr], minlength=10).argmax()) == int(torch.bincount(yte[p_te], minlength=10).argmax())
    with pytest.raises(data.PartitionError, match="alpha"):
        data.dirichlet_client(ytr, yte, 10, 0.0, 10, g)


def test_mnist_paper_federation():
    fed = data.make_federation(data.load_dataset("mnist"), "pathological", 50, seed=0, train_fraction=0.05)
    assert int(fed.train.counts.sum()) == 3000 and int(fed.test.counts.sum()) == 10000
    assert 50 <= int(fed.train.counts.min()) and int(fed.train.counts.max()) <= 70
    valid = fed.train.valid()
    for c in range(50):
        assert set(fed.train.y[c][valid[c]].tolist()) == set(fed.classes_of[c])


def _write_cifar(root, name, n_train, n_test, classes):
    if name == "cifar10":
        base, key = root / "cifar-10-batches-py", b"labels"
        files = [(f"data_batch_{i}", n_train) for i in range(1, 6)] + [("test_batch", n_test)]
    else:
        base, key = root / "cifar-100-python", b"fine_labels"
        files = [("train", n_train), ("test", n_test)]
    base.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for fname, n in files:
        with open(base / fname, "wb") as f:
            pickle.dump({b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                         key: rng.integers(0, classes, n).tolist()}, f)


@pytest.mark.parametrize("name,classes,train_total", [("cifar10", 10, 5 * 12), ("cifar100", 100, 12)])
def test_cifar_loaders_read_the_python_pickles(tmp_path, name, classes, train_total):
    _write_cifar(tmp_path, name, 12, 7, classes)
    ds = data.load_dataset(name, root=tmp_path)
    assert ds.train_x.shape == (train_total, 3, 32, 32) and ds.test_x.shape == (7, 3, 32, 32)
    assert ds.num_classes == classes and int(ds.train_y.max()) < classes


def test_missing_dataset_says_where_to_put_files(tmp_path):
    with pytest.raises(data.DatasetNotFound, match="cifar-10-batches-py"):
        data.load_dataset("cifar10", root=tmp_path)
    with pytest.raises(ValueError, match="unknown dataset"):
        data.load_dataset("imagenet", root=tmp_path)


def test_circle_data_and_clients():
    ds = data.make_circle(80, 500, seed=2)
    assert ds.train_x.shape == (80, 2) and ds.train_x.abs().max() <= 5
    assert torch.equal(ds.train_y, (ds.train_x.norm(dim=1) > 26 / 7).long())
    fed = data.circle_federation(seed=2)
    assert fed.train.counts.tolist() == [40, 40]
    assert fed.train.x[0, :, 0].max() <= fed.train.x[1, :, 0].min()  # split by sorted x1


def test_in_place_normalisation_gives_the_out_of_place_numbers():
    pixels = np.random.default_rng(0).integers(0, 256, size=(64, 3, 8, 8), dtype=np.uint8)
    for mean, std in ((0.1307, 0.3081), (torch.tensor([0.49, 0.48, 0.45]).view(1, 3, 1, 1),
                                         torch.tensor([0.25, 0.24, 0.26]).view(1, 3, 1, 1))):
        expected = (torch.from_numpy(pixels).float() / 255.0 - mean) / std
        assert torch.equal(data.normalise(pixels, mean, std), expected)


def test_datasets_are_normalised_into_a_mapped_file_with_the_same_numbers(tmp_path):
    pixels = np.random.default_rng(1).integers(0, 256, size=(100, 3, 5, 5), dtype=np.uint8)
    mean, std = torch.tensor([0.49, 0.48, 0.45]).view(1, 3, 1, 1), torch.tensor([0.25, 0.24, 0.26]).view(1, 3, 1, 1)
    mapped = data.normalise_to_file(pixels, mean, std, tmp_path, rows=7)  # blocks that do not divide the rows
    if Path("/proc/self/maps").exists():  # file-backed (a deleted file): pages are read only when a sample is used
        ptr = mapped.untyped_storage().data_ptr()
        spans = [line.split() for line in Path("/proc/self/maps").read_text().splitlines()]
        owner = next(sp for sp in spans if int(sp[0].split("-")[0], 16) <= ptr < int(sp[0].split("-")[1], 16))
        assert owner[-1] == "(deleted)", owner
    assert torch.equal(mapped, data.normalise(pixels.copy(), mean, std))
    assert list(tmp_path.iterdir()) == []  # the file has no name to leave behind
    scalar = data.normalise_to_file(pixels[:, :1], 0.1307, 0.3081, tmp_path / "missing")  # falls back to the temp dir
    assert torch.equal(scalar, data.normalise(pixels[:, :1].copy(), 0.1307, 0.3081))
    assert data.normalise_to_file(pixels[:0], mean, std, tmp_path).shape == (0, 3, 5, 5)  # an empty file maps nothing


def test_released_pages_leave_the_numbers_and_free_the_memory(tmp_path):
    pixels = np.random.default_rng(2).integers(0, 256, size=(2000, 1, 28, 28), dtype=np.uint8)
    mapped = data.normalise_to_file(pixels, 0.1307, 0.3081, tmp_path)
    expected = data.normalise(pixels.copy(), 0.1307, 0.3081)

    def resident_kb():  # of this mapping, from the kernel's own accounting
        ptr, lines = mapped.untyped_storage().data_ptr(), Path("/proc/self/smaps").read_text().splitlines()
        for i, line in enumerate(lines):
            lo, hi = (int(v, 16) for v in line.split()[0].split("-")) if "-" in line.split()[0] else (0, 0)
            if lo <= ptr < hi:
                return next(int(x.split()[1]) for x in lines[i + 1:] if x.startswith("Rss:"))
        raise AssertionError("mapping not found")

    assert torch.equal(mapped, expected)  # every page read
    if Path("/proc/self/smaps").exists():
        assert resident_kb() > 5000
        data.release_pages(mapped, expected)  # an ordinary tensor is left alone
        assert resident_kb() < 100
    assert torch.equal(mapped, expected)  # read back from the file


class _Payload:
    """Pickles to a call of os.system that only touches a marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


def test_a_cifar_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path):
    _write_cifar(tmp_path, "cifar100", 12, 7, 100)
    marker = tmp_path / "ran"
    with open(tmp_path / "cifar-100-python" / "train", "wb") as f:
        pickle.dump({b"data": _Payload(marker), b"fine_labels": [0]}, f)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        data.load_dataset("cifar100", root=tmp_path)
    assert not marker.exists()


def test_an_mnist_pickle_is_checked_against_its_hash_before_it_is_unpickled(tmp_path, monkeypatch):
    import gzip

    marker = tmp_path / "ran"
    with gzip.open(tmp_path / "mnist.pkl.gz", "wb") as f:
        pickle.dump(_Payload(marker), f)
    monkeypatch.setattr(data, "_fetch_mnist_pickle", lambda pkl: False)  # no registry copy either
    assert data._mnist_registry(tmp_path) is None
    assert not marker.exists()
    assert (tmp_path / "mnist.pkl.gz.damaged").exists()  # set aside, not deleted


def test_a_copy_with_altered_labels_is_refused_and_set_aside_not_cached_as_the_dataset(tmp_path, capsys):
    """Before: labels shuffled within the training set (the counts kept) got a note, and the run's 16.5% was cached
    under the key of a real MNIST run."""
    arrays = dict(np.load(data.data_dir() / "mnist.npz"))
    arrays["y_train"] = np.random.default_rng(0).permutation(arrays["y_train"])
    with pytest.raises(ValueError, match="label counts match: its pixels or labels were altered"):
        data.verify("mnist", arrays)
    cache = tmp_path / "mnist.npz"
    np.savez(cache, **arrays)
    assert data._read_verified(cache, "mnist") is None  # never served: set aside, named
    assert not cache.exists() and (tmp_path / "mnist.npz.damaged").exists()
    assert "mnist.npz is damaged or altered" in capsys.readouterr().err
