"""LEAF loaders on small json files written here, and the models that go with them."""
import json

import numpy as np
import pytest
import torch

from fedlib import experiments as ex
from fedlib import leaf
from fedlib.data import DatasetNotFound


def write_leaf(folder, split, users):
    (folder / split).mkdir(parents=True, exist_ok=True)
    blob = {"users": list(users), "num_samples": [len(d["y"]) for d in users.values()], "user_data": users}
    (folder / split / f"{split}_0.json").write_text(json.dumps(blob))


def tweet(user, text):
    return ["1", "Mon Apr 06 2009", "NO_QUERY", user, text]


@pytest.fixture
def sent140(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    root = tmp_path / "leaf" / "sent140"
    rng = np.random.default_rng(0)
    train, test = {}, {}
    for u in range(21):
        n = 2 if u == 0 else 6  # user 0 has 3 samples in all: fewer than 5, dropped
        words = ["happy", "great"] if u % 2 else ["sad", "awful"]
        texts = [f"so {rng.choice(words)} today {u}" for _ in range(n + 1)]
        ys = [4 if u % 2 else 0] * (n + 1)
        train[f"u{u}"] = {"x": [tweet(f"u{u}", t) for t in texts[:n]], "y": ys[:n]}
        test[f"u{u}"] = {"x": [tweet(f"u{u}", texts[n])], "y": ys[n:]}
    write_leaf(root, "train", train)
    write_leaf(root, "test", test)
    return root


def test_sent140_drops_small_clients_and_holds_out_a_tenth_for_validation(sent140):
    fed = leaf.load_leaf("sent140", seed=0)
    assert "u0" not in fed.users
    assert fed.n_clients == 18 and fed.validation.n_clients == 2  # 20 usable users, 10% held out
    assert fed.train.counts.tolist() == [6] * 18 and fed.validation.counts.tolist() == [7, 7]
    assert set(fed.train.y.unique().tolist()) == {0, 1}  # raw label 4 is positive
    assert fed.train.x.dtype == torch.long and fed.train.x.shape[-1] == leaf.MAX_LEN
    other = leaf.load_leaf("sent140", seed=1)
    assert other.users != fed.users  # the validation clients depend on the seed


def test_tokens_of_the_training_clients_get_ids_the_rest_are_unknown():
    vocab = leaf.build_vocabulary(["good good movie", "bad movie"], size=2)
    assert set(vocab) == {"good", "movie"} and min(vocab.values()) == 2
    ids = leaf.encode(["Good, BAD movie!"], vocab, max_len=5)[0].tolist()
    assert ids == [vocab["good"], leaf.UNKNOWN, vocab["movie"], leaf.PAD, leaf.PAD]


def test_missing_leaf_files_say_where_to_put_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    with pytest.raises(DatasetNotFound, match="preprocess.sh"):
        leaf.load_leaf("celeba")
    with pytest.raises(ValueError, match="unknown LEAF dataset"):
        leaf.load_leaf("femnist")


def test_fedlog_trains_a_transformer_on_sent140(sent140):
    cfg = ex.Config(method="fedlog", dataset="sent140", n_clients=0, rounds=3, local_epochs=5, batch_size=4, lr=3e-3)
    res = ex.run(cfg, cache=False, progress=False)
    assert res["rounds"]["train_loss"][-1] < res["rounds"]["train_loss"][0]
    assert res["rounds"]["acc_mean"][-1] >= 0.9  # the sentiment words separate the two classes perfectly


def test_celeba_images_and_a_mobilenet_body(tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    root = tmp_path / "celeba" / "data"  # LEAF's own layout
    (root / "raw" / "img_align_celeba").mkdir(parents=True)
    train, test = {}, {}
    for u in range(3):
        names = []
        for i in range(3):
            name = f"{u:03d}{i:03d}.jpg"
            Image.fromarray(np.full((30, 25, 3), 40 * u + 10 * i, dtype=np.uint8)).save(
                root / "raw" / "img_align_celeba" / name)
            names.append(name)
        train[f"celeb{u}"] = {"x": names[:2], "y": [u % 2, 1]}
        test[f"celeb{u}"] = {"x": names[2:], "y": [0]}
    write_leaf(root, "train", train)
    write_leaf(root, "test", test)
    fed = leaf.load_leaf("celeba")
    assert fed.train.x.shape == (3, 2, 3, leaf.IMAGE_SIZE, leaf.IMAGE_SIZE)
    assert float(fed.train.x.min()) >= -1 and float(fed.train.x.max()) <= 1
    assert fed.train.x[1, 0].mean() > fed.train.x[0, 0].mean()  # brighter image, larger values
    cfg = ex.Config(method="fedlog_c", dataset="celeba", n_clients=0, rounds=1, local_epochs=1, batch_size=2)
    res = ex.run(cfg, cache=False, progress=False)
    assert res["rounds"]["up_bits"] == [3 * (2 * 1281 + 1) * 32]  # T (2 x 1281) and n_c per client, no body


def test_dataset_available_reports_missing_files_instead_of_failing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    assert ex.dataset_available("sent140") is False
    assert "sent140: files missing" in capsys.readouterr().out
    write_leaf(tmp_path / "leaf" / "sent140", "train", {"u": {"x": [tweet("u", "hi")], "y": [0]}})
    write_leaf(tmp_path / "leaf" / "sent140", "test", {"u": {"x": [tweet("u", "hi")], "y": [0]}})
    assert ex.dataset_available("sent140") is True
