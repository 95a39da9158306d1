"""Data sets of the experiments (section ``s:num-res``).

The embedded default is scikit-learn's bundled 8×8 digits (:func:`load_digits_pair`, no
download). The paper's sets (USPS, Pima diabetes, German credit, a1a) are read from a data
directory: the ``data_dir`` argument, else the environment variable ``INDKERNEL_DATA``, else the
operating system's cache folder for indkernel (``pooch.os_cache``: ``~/.cache/indkernel`` on
Linux). Each loader knows its file's public source and sha256 (:data:`SOURCES`, the registry); a
missing file is downloaded into that directory by pooch when the network allows (retries, a
progress bar, the checksum verified before the file is kept); otherwise the error says which file
to put where.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits, load_svmlight_file

from ._progress import tqdm


@dataclass(frozen=True)
class Source:
    """Where a data file comes from: ``url``, and the sha256 of the file as stored (``sha256``)
    and, when the download is converted (USPS), of the downloaded bytes (``download_sha256``)."""

    url: str
    sha256: str
    download_sha256: str | None = None
    convert: Callable[[bytes], bytes] | None = None

    @property
    def published_name(self) -> str:
        """The name of the file as published (the URL's last part: ``usps.h5`` for ``usps.npz``)."""
        return self.url.rsplit("/", 1)[-1]


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def _usps_from_h5(raw: bytes) -> bytes:
    """The Kaggle ``usps.h5`` layout (groups train/test with data, target) as ``usps.npz``:
    train rows first, then test rows, float32 values cast to float64."""
    try:
        import h5py
    except ImportError as exc:
        raise ImportError("converting the downloaded usps.h5 needs h5py: pip install h5py") from exc
    with h5py.File(io.BytesIO(raw), "r") as h5:
        parts = [(np.asarray(h5[s]["data"], dtype=np.float64), np.asarray(h5[s]["target"], dtype=np.int64), s)
                 for s in ("train", "test")]
    out = io.BytesIO()
    np.savez_compressed(out, X=np.vstack([p[0] for p in parts]), y=np.concatenate([p[1] for p in parts]),
                        split=np.concatenate([np.full(len(p[1]), p[2]) for p in parts]))
    return out.getvalue()


#: The paper's data files, as described in the README of the shared data folder.
SOURCES = {
    "usps.npz": Source(
        _github("niuers/Learning-From-Data-A-Short-Course", "879a698b960e5867f7c2b11f8938fa89c3d21839", "data/usps.h5"),
        sha256="f27896b2e386388155ef2a5b3992ae7d53fc939bf10f4b94dc5c36d0a2242dff",
        download_sha256="734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36", convert=_usps_from_h5),
    "a1a": Source(_github("gabgoh/svmc.jl", "71390980c7d8c02a39af1de06810535890a91c35", "data/a1a"),
                  sha256="eb54c45f1bdb51286f803dd092eb8202b44637a858fc6c4e533a2d64a0d94b4e"),
    "pima-indians-diabetes.csv": Source(
        _github("darenr/public_datasets", "030064b2845d0a3c44de8ad4aa14a488a6142c7b", "pima-indians-diabetes.data.csv"),
        sha256="6bfe5d0f379d17a0e0819b996407e3c09bf80febd4287f2ed212190dfff154af"),
    "german.data-numeric": Source(
        _github("KevinChittilapilly/Fairness-Research", "ae4db29780c3c2e71b4a95bb7dbc0a4e44fe2e14",
                "german.data-numeric.txt"),
        sha256="2752b044394958ab6dd193a0b56ca0f0b3a2d8bc7cb8c008e35a5e84bbec02f8"),
}


class DataUnavailableError(FileNotFoundError):
    """A data file is neither in the data directory nor downloadable here."""


def _pooch():
    """pooch, imported on first use: it imports ``tqdm.auto``, which in a notebook without
    ipywidgets warns "IProgress not found" (a warning about a widget nothing here shows: pooch's
    download bar falls back to text)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "IProgress not found")
        import pooch
    return pooch


def data_directory(data_dir=None) -> Path:
    """Where the paper's data sets live: ``data_dir``, else ``$INDKERNEL_DATA``, else the
    operating system's cache folder for indkernel (``~/.cache/indkernel`` on Linux)."""
    if data_dir is not None:
        return Path(data_dir)
    if os.environ.get("INDKERNEL_DATA"):
        return Path(os.environ["INDKERNEL_DATA"])
    return Path(_pooch().os_cache("indkernel"))


def sha256(path: Path) -> str:
    """The sha256 hex digest of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def fetch(name: str, data_dir=None, *, download: bool = True, timeout: float = 30.0) -> Path:
    """The path of data file ``name`` (a key of :data:`SOURCES`), checked against its sha256.

    A missing file is downloaded from its source into the data directory (``download=False``
    forbids it). Raises :class:`DataUnavailableError` saying which file to put where when it
    cannot be had, and ValueError when a present file has the wrong checksum.
    """
    if name not in SOURCES:
        raise ValueError(f"unknown data file {name!r}; the known ones are {sorted(SOURCES)}")
    source, folder = SOURCES[name], data_directory(data_dir)
    path = folder / name
    published = folder / source.published_name
    if not path.is_file():
        if source.convert is not None and published.is_file():  # the published file, put there by hand
            raw = published.read_bytes()
            if hashlib.sha256(raw).hexdigest() != source.download_sha256:
                raise ValueError(f"{published} does not have the sha256 of the published {published.name} "
                                 f"({source.download_sha256}): a different or corrupted copy; replace it with the "
                                 f"file published at {source.url}")
        elif not download:
            raise DataUnavailableError(_missing(name, folder, "downloads are off (download=False)"))
        else:
            raw = _download(source, folder, name, timeout)
        if source.convert is None:
            return path  # pooch checked its sha256 before keeping it
        converted = path.with_name(path.name + ".part")
        converted.write_bytes(source.convert(raw))
        converted.replace(path)  # whole or not at all
        return path  # a converted file is checked by its content, not its compressed bytes
    digest = sha256(path)
    if digest != source.sha256 and not (source.convert and _usps_content_ok(path)):
        raise ValueError(f"{path} has sha256 {digest}, expected {source.sha256}: a different or corrupted copy; "
                         "delete it to download it again, or replace it with the published file")
    return path


#: Retries of a failed download (pooch waits a little longer before each).
DOWNLOAD_RETRIES = 2


def registry() -> dict[str, str]:
    """The checksums of the files as published, by name (pooch's registry)."""
    return {name: f"sha256:{source.download_sha256 or source.sha256}" for name, source in SOURCES.items()}


def _download(source: Source, folder: Path, name: str, timeout: float) -> bytes:
    """The bytes at ``source.url``, fetched by pooch and checked against :func:`registry`; a file that
    needs no conversion is kept as ``folder/name``, one that does in a temporary folder only."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        pooch = _pooch()
        fetcher = pooch.create(path=scratch if source.convert else folder, base_url="", registry=registry(),
                               urls={name: source.url}, retry_if_failed=DOWNLOAD_RETRIES)
        # ours (a text bar in notebooks too); a total, since pooch tests the bar for truth, and sets it
        bar = tqdm(total=1, unit="B", unit_scale=True, desc=f"downloading {name}")
        try:
            kept = fetcher.fetch(name, downloader=pooch.HTTPDownloader(timeout=timeout, progressbar=bar))
        except OSError as exc:  # requests' errors are OSErrors (an unsupported URL scheme too)
            raise DataUnavailableError(_missing(name, folder, f"the download from {source.url} failed: {exc}")) from exc
        except ValueError as exc:
            if "hash" not in str(exc):
                raise
            # pooch's checksum mismatch: it deleted the file
            raise ValueError(f"the file downloaded from {source.url} does not have the sha256 of the published file "
                             f"({exc}); it was not saved") from exc
        finally:
            bar.close()
        return Path(kept).read_bytes()


def _usps_content_ok(path: Path) -> bool:
    """A converted USPS file is valid when its arrays are the published ones: the sha256 of the
    bytes of X (float64) then y (int64) is :data:`USPS_CONTENT_SHA256` (the compressed bytes of the
    file depend on the zlib build, its content does not)."""
    try:
        with np.load(path) as data:
            X, y = data["X"], data["y"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return False
    if X.dtype != np.float64 or y.dtype != np.int64 or X.shape != (9298, 256):
        return False
    digest = hashlib.sha256(np.ascontiguousarray(X).tobytes())
    digest.update(np.ascontiguousarray(y).tobytes())
    return digest.hexdigest() == USPS_CONTENT_SHA256


#: sha256 of ``X.tobytes() + y.tobytes()`` of the published ``usps.npz`` (data/README.md).
USPS_CONTENT_SHA256 = "5c9e7c6fcfaef26f82d9eff34225422e1b319986c2f22fbe428ace97c483abb8"


#: Images per digit 0-9 in all of USPS (7291 train + 2007 test).
USPS_LABEL_COUNTS = np.array([1553, 1269, 929, 824, 852, 716, 834, 792, 708, 821])


def _missing(name: str, folder: Path, why: str) -> str:
    source = SOURCES[name]
    if source.convert is None:
        what = f"Put {name} (sha256 {source.sha256}, published at {source.url}) in that folder"
    else:
        what = (f"Put the published {source.published_name} (sha256 {source.download_sha256}, from {source.url}) in "
                f"that folder as it is: it is converted to {name} on first use (needs h5py)")
    return f"{name} is not in {folder} and {why}. {what}, or point INDKERNEL_DATA (or data_dir=) at a folder that holds it"


def data_status(data_dir=None) -> pd.DataFrame:
    """One row per data file: whether it is in the data directory and matches its checksum."""
    folder = data_directory(data_dir)
    rows = []
    for name, source in SOURCES.items():
        path = folder / name
        present = path.is_file()
        valid = present and (sha256(path) == source.sha256 or (source.convert is not None and _usps_content_ok(path)))
        rows.append(dict(file=name, present=present, checksum_ok=valid, path=str(path), source=source.url))
    return pd.DataFrame(rows)


def load_digits_pair(first: int = 3, second: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Two digits of scikit-learn's bundled digits (no download): ``(X, y)``.

    ``X`` is (n, 64) with intensities scaled to [0, 1]; ``y`` holds the digit labels.
    """
    _check_pair((first, second))
    X, y = load_digits(return_X_y=True)
    keep = (y == first) | (y == second)
    return X[keep] / 16.0, y[keep]


def _check_pair(pair) -> None:
    if len(pair) != 2:
        raise ValueError(f"pair must be two digits, e.g. (3, 5); got {pair!r}")
    for digit in pair:
        if digit not in range(10):
            raise ValueError(f"digits must be 0-9; got {digit!r}")
    if pair[0] == pair[1]:
        raise ValueError(f"the two digits must differ; got {pair[0]} twice")


def load_usps(pair=(3, 5), data_dir=None, *, split: str | None = None,
              download: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """USPS handwritten digits (Hull 1994), all 9298 images (7291 train + 2007 test): ``(X, y)``.
    The file is checked against the published arrays before it is used.

    ``pair=(3, 5)`` keeps those two digits (1540 images; (4, 6): 1686), ``pair=None`` all ten.
    ``split="train"`` or ``"test"`` keeps the standard training (7291) or test (2007) images only
    (the ten-class benchmark's split); None, both. ``X`` is (n, 256), 16×16 images with
    intensities in [0, 1]; ``y`` the digits.
    """
    if not (pair is None or isinstance(pair, (tuple, list, np.ndarray))):
        raise TypeError(f"pair must be two digits such as (3, 5), or None for all ten; got {pair!r}")
    if pair is not None:
        _check_pair(pair)
    if split not in (None, "train", "test"):
        raise ValueError(f"split must be 'train' (7291 images), 'test' (2007) or None (all 9298); got {split!r}")
    with np.load(fetch("usps.npz", data_dir, download=download)) as data:
        keep = np.ones(len(data["y"]), bool) if split is None else data["split"] == split
        X, y = data["X"][keep], data["y"][keep]
    if pair is None:
        return X, y
    keep = np.isin(y, pair)
    return X[keep], y[keep]


def load_diabetes(data_dir=None, *, download: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Pima Indians diabetes (UCI): ``X`` (768, 8) raw clinical measurements, ``y`` 0/1 outcome."""
    table = np.loadtxt(fetch("pima-indians-diabetes.csv", data_dir, download=download), delimiter=",")
    return table[:, :8], table[:, 8].astype(int)


def load_german(data_dir=None, *, download: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """German credit, numeric version (UCI Statlog): ``X`` (1000, 24) integers, ``y`` 1 (good) / 2 (bad)."""
    table = np.loadtxt(fetch("german.data-numeric", data_dir, download=download))
    return table[:, :24], table[:, 24].astype(int)


def load_a1a(data_dir=None, *, download: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Adult a1a (LIBSVM's preprocessing of UCI Adult): ``X`` (1605, 123) binary, ``y`` ±1."""
    return load_libsvm(fetch("a1a", data_dir, download=download), n_features=123)


def load_libsvm(path, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Any file in LIBSVM's sparse text format (``label index:value ...``), as dense ``(X, y)``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no LIBSVM-format file at {path}")
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features)
    except (ValueError, OverflowError, UnicodeDecodeError) as exc:
        detail = str(exc) if len(str(exc)) <= 120 else str(exc)[:100] + "…"  # a row of a CSV can be long
        raise ValueError(f"{path} is not a valid LIBSVM-format file ('label index:value ...' per line): {detail}. A "
                         "matrix in another text format (CSV) can be saved as .npz: numpy.savez(name, K=K, y=y) for a "
                         "similarity, or X=X and y=y for features") from exc
    if X.shape[0] * X.shape[1] > MAX_DENSE_ENTRIES:
        raise ValueError(f"{path} has feature indices up to {X.shape[1]}: a dense {X.shape[0]} x {X.shape[1]} matrix "
                         f"exceeds {MAX_DENSE_ENTRIES:.0e} entries; renumber the features from 1")
    return X.toarray(), y.astype(int) if np.all(y == np.round(y)) else y


#: Largest dense matrix (entries) that ``load_libsvm`` builds: 8 GB of float64.
MAX_DENSE_ENTRIES = 10**9


#: The loaders by data set name (``indkernel.datasets.LOADERS["german"]()``).
LOADERS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {"digits": load_digits_pair, "usps": load_usps, "diabetes": load_diabetes, "german": load_german,
           "a1a": load_a1a}
