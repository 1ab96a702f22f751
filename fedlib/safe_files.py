"""Writing, locking and publishing files without following a symbolic link.

A checkout is shared material: a commit can plant a symlink (`git add -f` takes one the ignore file lists) where
the workbook writes, locks or publishes, so that an ordinary command would write through it, outside the checkout,
or copy the file it points at into the book. Every file the workbook writes goes through `replace_text`,
`replace_bytes` or `replacing`: a file created afresh in the target's folder (O_EXCL | O_NOFOLLOW, a name no other
process uses, so two runs at once never share one) and renamed over the target, which replaces a symlink found
there and never writes through it. A lock cannot be renamed into place: `open_lock` refuses a symlink, naming it,
and so does `regular_file`, the check a publisher (the book) makes before it copies a file.
"""
from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from pathlib import Path

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafePath(OSError):
    """A path the workbook will not write, lock or publish through (a symbolic link)."""


def refuse_symlink(path: Path, doing: str = "write") -> None:
    path = Path(path)
    if path.is_symlink():
        raise UnsafePath(f"{path} is a symbolic link (to {os.readlink(path)}): the workbook does not {doing} through "
                         f"one; remove the link (rm '{path}', or git rm if it is tracked) and run the command again")


def regular_file(path: Path, doing: str = "publish") -> Path:
    """`path` itself, after checking that it is not a symbolic link (UnsafePath if it is)."""
    refuse_symlink(path, doing)
    return Path(path)


@contextmanager
def replacing(path: Path, mode: str = "w", **open_args):
    """A file object to write `path`'s new content into; on success it is renamed over `path`, on an error it is
    removed and `path` is left as it was. A symbolic link at `path` is replaced, not followed."""
    path = Path(path)
    tmp = path.with_name(f".tmp-{os.getpid()}-{secrets.token_hex(4)}-{path.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, mode, **open_args) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def replace_text(path: Path, text: str) -> None:
    with replacing(path, "w", encoding="utf-8") as f:
        f.write(text)


def replace_bytes(path: Path, data: bytes) -> None:
    with replacing(path, "wb") as f:
        f.write(data)


def open_lock(path: Path):
    """The lock file at `path` opened for writing (created if absent, never truncated, never through a link)."""
    path = Path(path)
    refuse_symlink(path, "lock")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | NOFOLLOW, 0o644)
    except OSError as err:
        if path.is_symlink():
            raise UnsafePath(f"{path} is a symbolic link: the workbook does not lock through one; remove it") from err
        raise
    return os.fdopen(fd, "w")
