"""The results store: sweep rows on disk as Parquet, content-addressed, crash-safe and resumable.

Layout of a store folder ``DIR`` (``--out``)::

    DIR/v<hfcsim version>/parts/<scenario_hash>-s<first seed>-<last seed>.parquet   one finished batch
    DIR/v<hfcsim version>/results.parquet    the last sweep's table (all its parts, de-duplicated)
    DIR/v<hfcsim version>/summary.csv        its summary (hfcsim.sweep.summarize, every metric)

Crash safety: a part is written to a temporary file in the same folder, flushed and fsync'ed, then
renamed onto its final name with ``os.replace`` (atomic on POSIX), and the folder is fsync'ed. A
kill -9 at any moment therefore leaves whole parts and perhaps a stray ``.*.tmp`` file, never a torn
part. A part's name says what it holds -- one resolved scenario (its hash) and a contiguous range of
seeds -- so on start the store knows which (scenario_hash, seed) runs are done without reading them.
Reading de-duplicates on (scenario_hash, seed, flow), so a batch stored twice (two sweeps writing into
one folder at once) is harmless.

Results of another hfcsim version live in their own ``v<version>`` folder and are never read with
this version's; ``other_versions_notice`` says so in one line.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hfcsim.errors import ScenarioError, type_name

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Store"]

PART = re.compile(r"^(?P<hash>[0-9a-f]{16})-s(?P<first>[0-9]+)-(?P<last>[0-9]+)\.parquet$")
SWEPT_META = b"hfcsim.swept"  # Parquet schema metadata: JSON list of the part's swept columns
KEY = ["scenario_hash", "seed", "flow"]


def _version() -> str:
    from hfcsim._version import version

    return version()


class StoredPoint(Protocol):
    """What the store reads of a sweep's grid point (``hfcsim.sweep.Point``)."""

    @property
    def index(self) -> int: ...

    @property
    def hash(self) -> str: ...

    @property
    def values(self) -> Mapping[str, Any]: ...


class StoredSweep(Protocol):
    """What the store reads of a sweep (``hfcsim.sweep.SweepSpec``): its grid points, its swept keys and
    its seeds. The sweep stands on the store and the store imports nothing of it: the two import in one
    direction only."""

    @property
    def keys(self) -> Sequence[str]: ...

    @property
    def points(self) -> Sequence[StoredPoint]: ...

    @property
    def seeds(self) -> range: ...


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Store:
    """The results of one hfcsim version in ``root/v<version>/``."""

    def __init__(self, root: str | os.PathLike[str], version: str | None = None) -> None:
        self.root = Path(root)
        self.version = version or _version()
        self.dir = self.root / f"v{self.version}"
        self.parts = self.dir / "parts"

    def other_versions(self) -> list[str]:
        """Versions (without the "v") of the other version folders in the root."""
        if not self.root.is_dir():
            return []
        return sorted(p.name[1:] for p in self.root.iterdir()
                      if p.is_dir() and p.name.startswith("v") and p.name != self.dir.name)

    def other_versions_notice(self) -> str | None:
        others = self.other_versions()
        if not others:
            return None
        listed = ", ".join(f"v{v}" for v in others)
        return (f"{self.root} also holds results of other hfcsim versions ({listed}); they are not mixed in: "
                f"this run reads and writes only {self.dir}")

    def _part_names(self) -> list[tuple[Path, str, int, int]]:
        if not self.parts.is_dir():
            return []
        out = []
        for path in self.parts.iterdir():
            m = PART.match(path.name)
            if m:  # stray temporary files (".<name>.<id>.tmp") of a killed writer are ignored
                out.append((path, m["hash"], int(m["first"]), int(m["last"])))
        return sorted(out, key=lambda t: t[0].name)

    def stored(self) -> dict[str, set[int]]:
        """{scenario_hash: seeds already stored}, from the part names alone."""
        done: dict[str, set[int]] = {}
        for _, h, first, last in self._part_names():
            done.setdefault(h, set()).update(range(first, last + 1))
        return done

    def write_part(self, scenario_hash: str, seeds: Sequence[int], rows: list[dict[str, Any]],
                   swept: Sequence[str] = ()) -> Path:
        """Write one finished batch (contiguous ``seeds`` of one scenario) atomically; return its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        seeds = list(seeds)
        if not seeds or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
            raise ValueError(f"a part holds a contiguous, non-empty range of seeds, not {seeds}")
        if not rows:  # every run has at least one flow: an empty batch would mark its seeds done
            raise ValueError(f"a part needs the rows of its runs; none given for seeds {seeds[0]}..{seeds[-1]}")
        self.parts.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rows)
        table = table.replace_schema_metadata({SWEPT_META: json.dumps(list(swept)).encode()})
        final = self.parts / f"{scenario_hash}-s{seeds[0]}-{seeds[-1]}.parquet"
        _atomic(final, lambda f: pq.write_table(table, f))
        return final

    def read(self, spec: StoredSweep) -> pd.DataFrame:
        """The sweep's table: its runs from every part, de-duplicated, sorted by (grid point, seed, flow).

        The swept columns are taken from ``spec`` (a part may have been written by another sweep of the
        same scenario, with other swept keys).
        """
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        hashes = {p.hash for p in spec.points}
        tables = []
        for path, h, _, _ in self._part_names():
            if h not in hashes:
                continue
            table = pq.read_table(path)
            meta = (table.schema.metadata or {}).get(SWEPT_META, b"[]")
            swept = [c for c in json.loads(meta) if c in table.column_names]
            tables.append(table.drop_columns(swept).replace_schema_metadata(None))
        points = pd.DataFrame({"_point": [p.index for p in spec.points],
                               "scenario_hash": [p.hash for p in spec.points],
                               **{k: [p.values[k] for p in spec.points] for k in spec.keys}})
        if not tables:
            return pd.DataFrame(columns=[*spec.keys, "seed", "flow", "scenario_hash", "hfcsim_version"])
        rows = pa.concat_tables(tables, promote_options="permissive").to_pandas()
        seeds = spec.seeds
        rows = rows[(rows["seed"] >= seeds.start) & (rows["seed"] < seeds.stop)]
        rows = rows.sort_values(KEY, kind="stable").drop_duplicates(KEY, keep="first")
        frame = points.merge(rows, on="scenario_hash", how="inner", sort=False)
        frame = frame.sort_values(["_point", "seed", "flow"], kind="stable").drop(columns="_point")
        metrics = [c for c in rows.columns if c not in ("seed", "scenario_hash", "hfcsim_version")]
        return frame[[*spec.keys, "seed", *metrics, "scenario_hash", "hfcsim_version"]].reset_index(drop=True)

    def write_results(self, frame: pd.DataFrame, summary: pd.DataFrame | None = None) -> None:
        """``results.parquet`` (and ``summary.csv``), each written atomically."""
        self.dir.mkdir(parents=True, exist_ok=True)
        _atomic(self.dir / "results.parquet", lambda f: frame.to_parquet(f, index=False))
        if summary is not None:
            _atomic(self.dir / "summary.csv", lambda f: f.write(summary.to_csv(index=False).encode()))


def _atomic(path: Path, write: Any) -> None:
    """Write ``path`` whole or not at all: ``write(file)`` into a hidden temporary file beside it, fsync,
    rename over ``path``, fsync the folder. A kill at any moment leaves the old file or the new one
    (and at worst a stray ``.tmp``, which readers ignore)."""
    with atomic_path(path) as temp:
        with open(temp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], hold: HeldRenames | None = None) -> Iterator[Path]:
    """A new, empty hidden temporary file beside ``path`` (made at once, so an unwritable place fails
    before any work), for the caller to fill; renamed onto ``path`` when the block ends normally and
    removed when it ends by any exception, KeyboardInterrupt included. ``path`` therefore holds its old
    content or the whole new one, never a part; a kill -9 may leave a stray ``.*.tmp``. A symbolic link
    is followed; a device or pipe (``/dev/null``, a FIFO) is handed over itself, to be written in place.
    With ``hold``, the rename waits for ``hold.commit()`` (the command's last act, ``hfcsim.cli.main``).

    Raises OSError (``IsADirectoryError`` for a folder) naming ``path`` if it cannot be written there.
    """
    name = os.fspath(path)
    path = check_name(path)
    if path.is_symlink():  # write where the link points, as open() would, keeping the link
        path = path.resolve()
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    # The folder first: the temporary file's own error would name the hidden file, not ``path``
    # (issue 36, defect 9: a missing folder was a raw FileNotFoundError naming ".cap.pcapng.123.tmp").
    check_folder_of(path, name)
    if path.exists() and not path.is_file():
        # A device or a pipe (/dev/null, /dev/stdout, a FIFO): written in place, as open() would; it
        # must never be renamed over (that would put a plain file where /dev/null was).
        yield path
        return
    if path.exists() and not os.access(path, os.W_OK):  # open(path, "w") would refuse; so does the rename
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    temp = _named(lambda: _new_temp(path), name)
    try:
        if path.exists():  # the new file keeps the old one's permissions, as open(path, "w") would
            os.chmod(temp, stat.S_IMODE(path.stat().st_mode))
        yield temp
        if hold is not None:
            hold.add(temp, path)
            return
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    with contextlib.suppress(OSError):  # durability of the rename; not every file system can fsync a folder
        _fsync_dir(path.parent)


class HeldRenames:
    """Finished temporary files (``atomic_path(..., hold=self)``) whose renames onto their paths wait for
    ``commit``, so that a command can put its files in place as its very last act, after a final check
    for Ctrl-C (``hfcsim.cli.main``), and take them back with ``undo`` if Ctrl-C comes during the renames.
    ``discard`` removes the temporary files still held and the backups ``commit`` kept for ``undo``."""

    def __init__(self) -> None:
        self._held: list[tuple[Path, Path]] = []
        # (path, backup of its old content or None, whether it existed) per rename done by commit.
        self._done: list[tuple[Path, Path | None, bool]] = []

    def add(self, temp: Path, path: Path) -> None:
        self._held.append((temp, path))

    def commit(self) -> None:
        """Rename every held file onto its path, keeping a hard link to the file it replaces (where the
        file system makes one) for ``undo``; then fsync the folders. Raises OSError naming the path."""
        while self._held:
            temp, path = self._held[0]
            existed = path.exists()
            backup = None
            if existed:
                backup = path.with_name(f".{path.name[:200]}.{os.getpid()}.{secrets.token_hex(4)}.old.tmp")
                try:
                    os.link(path, backup)
                except OSError:
                    backup = None
            # Counted as done before the rename: a KeyboardInterrupt raised just after it (at the next
            # bytecode) must still find it to undo.
            self._done.append((path, backup, existed))
            try:
                os.replace(temp, path)
            except OSError:
                self._done.pop()
                if backup is not None:
                    with contextlib.suppress(OSError):
                        backup.unlink()
                raise
            self._held.pop(0)
        for folder in {path.parent for path, _, _ in self._done}:
            with contextlib.suppress(OSError):
                _fsync_dir(folder)

    def undo(self) -> None:
        """Take back what ``commit`` did: each path gets its old file again, or goes if it was new (a
        replaced file without a backup keeps the new content)."""
        while self._done:
            path, backup, existed = self._done.pop()
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, path)
                elif not existed:
                    path.unlink()

    def discard(self) -> None:
        """Remove the temporary files still held and the backups of renames no longer to be undone."""
        for temp, _ in self._held:
            with contextlib.suppress(OSError):
                temp.unlink()
        for _, backup, _ in self._done:
            if backup is not None:
                with contextlib.suppress(OSError):
                    backup.unlink()
        self._held, self._done = [], []


def check_name(path: str | os.PathLike[str], folder: bool = False) -> Path:
    """``path`` as a Path, if the file system can take its name: OSError (EINVAL) for a NUL character,
    (ENAMETOOLONG) for a last component longer than its folder allows (255 bytes on most), checked up
    front because the temporary file beside it has a shorter name and would only fail at the rename.
    An empty name (or one of spaces) is refused, and unless ``folder``, a name that ends in a folder's
    part (``cap.pcapng/``, ``x/.``, ``..``): Path drops a trailing slash, so ``cap.pcapng/`` was written
    as the file ``cap.pcapng`` and ``""`` meant the current folder (issue 36, defect 7)."""
    text = os.fsdecode(os.fspath(path))
    if "\0" in text:
        raise OSError(errno.EINVAL, "the name holds a NUL character", text.replace("\0", "\\0"))
    problem = name_problem(text, folder)
    if problem is not None:
        raise (IsADirectoryError(errno.EISDIR, problem, text) if text.strip()
               else FileNotFoundError(errno.ENOENT, problem, text))
    path = Path(text)
    try:
        limit = os.pathconf(path.parent if path.parent.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    if len(os.fsencode(path.name)) > limit:
        raise OSError(errno.ENAMETOOLONG, f"name longer than {limit} bytes", str(path))
    return path


def check_path(name: str, path: Any) -> str | os.PathLike[str]:
    """``path`` if it is a path (a str or an os.PathLike such as pathlib.Path), else one line naming
    ``name`` and the type it got."""
    if isinstance(path, (str, os.PathLike)):
        return path
    raise ScenarioError(f"{name} = {path!r}: must be a file path, a str or a pathlib.Path (got {type_name(path)})")


def output_folder(name: str, out: Any) -> Path:
    """``out``, the folder a Python function writes into, as a Path: refused (OSError naming it) when empty,
    which Path would make the current folder (issue 36, defect 7); a ScenarioError naming ``name`` and the
    type when it is no path."""
    return check_name(check_path(name, out), folder=True)


def name_problem(text: str, folder: bool = False) -> str | None:
    """What is wrong with ``text`` as the name of a file (or, with ``folder``, of a folder) to write,
    in a few words, or None. The rule of every output path: ``hfcsim run --trace/--pcap``, ``hfcsim
    emulate --pcap``, the ``--out`` folders and their Python functions."""
    if not text.strip():
        return "an empty folder name" if folder else "an empty file name"
    if folder:
        return None
    last = (text.replace(os.altsep, os.sep) if os.altsep else text).rsplit(os.sep, 1)[-1]
    if last == "":
        return f"names a folder, not a file (it ends in {os.sep!r})"
    if last in (".", ".."):
        return f"names a folder, not a file (its last part is {last!r})"
    return None


def check_output_file(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path if a file can be made there: its name (``check_name``), not a folder, its
    folder there and writable (a hidden file made there and removed). Raises OSError naming ``path``.
    For a file another program writes (``hfcsim emulate --pcap``: the emulator opens it)."""
    name = os.fsdecode(os.fspath(path))
    path = check_name(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    target = path.resolve() if path.is_symlink() else path
    check_folder_of(target, name)
    if not target.exists():  # a file can be made there: made and removed (a read-only folder fails here)
        _named(lambda: _new_temp(target), name).unlink()
    elif not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
    return path


def check_folder_of(path: Path, name: str | None = None) -> None:
    """OSError naming ``name`` (default ``path``) unless ``path``'s folder exists and is a folder."""
    parent = path.parent
    if parent.is_dir():
        return
    shown = name if name is not None else str(path)
    if parent.exists() or any(p.exists() and not p.is_dir() for p in parent.parents):
        raise NotADirectoryError(errno.ENOTDIR, f"{parent} is not a folder", shown)
    raise FileNotFoundError(errno.ENOENT, f"no folder {parent}", shown)


def _named(make: Any, name: str) -> Any:
    """``make()``, its OSError naming ``name`` instead of the hidden temporary file it made."""
    try:
        return make()
    except OSError as e:
        raise type(e)(e.errno, e.strerror or str(e), name) from None


def _new_temp(path: Path) -> Path:
    """Create a new empty ``.<name>.<pid>.<random>.tmp`` beside ``path``, with the permissions a plain
    ``open(path, "w")`` would give (0666 less the umask; mkstemp's 0600 would survive the rename)."""
    while True:
        temp = path.with_name(f".{path.name[:200]}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return temp
        except FileExistsError:
            continue


def prepare_dir(path: str | os.PathLike[str]) -> Path:
    """Make the folder ``path`` (and its parents) and check that a file can be made in it; return it.

    Raises OSError naming the path: ``NotADirectoryError`` / ``FileExistsError`` when it or a parent is a
    file, ``PermissionError`` when read-only, ``OSError(ENOSPC)`` when the disk is full, ...
    """
    name = os.fsdecode(os.fspath(path))
    path = check_name(path, folder=True)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a folder", str(path))
    path.mkdir(parents=True, exist_ok=True)
    probe = _named(lambda: _new_temp(path / "hfcsim-probe"), name)
    try:
        with open(probe, "wb") as f:
            f.write(b"probe")  # a full disk refuses even this (on close); no fsync, it would slow every start
    except OSError as e:
        raise type(e)(e.errno, e.strerror or str(e), name) from None
    finally:
        probe.unlink()
    return path


def os_reason(e: OSError) -> str:
    """An OSError in a few words: its strerror (e.g. "No space left on device"), without the path."""
    if e.strerror and "(os error" not in e.strerror:
        return " ".join(e.strerror.split())
    if e.errno:  # the engine's (Rust's) messages end in "(os error N)": the system's words instead
        return os.strerror(e.errno)
    return " ".join(str(e).split()) or type(e).__name__
