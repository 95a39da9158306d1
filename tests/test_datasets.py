"""Loaders against the shared data folder (checksums, shapes, label counts) and the download path
against local sources. The data tests skip only when no data directory is configured (CI sets
INDKERNEL_DATA, so they always run there)."""

import hashlib
import io
import os
from pathlib import Path

import numpy as np
import pytest
from problems import NEEDS_DATA

from indkernel import datasets
from indkernel.datasets import (
    SOURCES,
    DataUnavailableError,
    Source,
    data_status,
    fetch,
    load_a1a,
    load_diabetes,
    load_digits_pair,
    load_german,
    load_libsvm,
    load_usps,
)

configured = pytest.mark.skipif(not os.environ.get("INDKERNEL_DATA"),
                                reason=NEEDS_DATA)


@configured
def test_every_file_is_present_with_its_published_checksum():
    status = data_status()
    assert status.present.all() and status.checksum_ok.all(), status


@configured
@pytest.mark.parametrize("pair, counts", [((3, 5), {3: 824, 5: 716}), ((4, 6), {4: 852, 6: 834})])
def test_usps_pairs_over_all_9298_images(pair, counts):
    X, y = load_usps(pair)
    assert X.shape == (sum(counts.values()), 256) and 0.0 <= X.min() and X.max() <= 1.0
    assert {d: int(np.sum(y == d)) for d in pair} == counts
    X_all, y_all = load_usps(None)
    assert X_all.shape == (9298, 256) and np.array_equal(np.bincount(y_all), datasets.USPS_LABEL_COUNTS)


@configured
def test_usps_standard_split():
    """The ten-class benchmark's 7291/2007 split, with the published label counts of each part."""
    X_train, y_train = load_usps(None, split="train")
    X_test, y_test = load_usps(None, split="test")
    assert X_train.shape == (7291, 256) and X_test.shape == (2007, 256)
    assert np.bincount(y_train).tolist() == [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
    assert np.bincount(y_test).tolist() == [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
    X_all, _ = load_usps(None)
    np.testing.assert_array_equal(np.vstack([X_train, X_test]), X_all)
    assert load_usps((3, 5), split="test")[0].shape == (166 + 160, 256)
    with pytest.raises(ValueError, match="split must be 'train'"):
        load_usps(None, split="validation")


@configured
def test_a_tampered_usps_is_refused(tmp_path):
    """The converted usps.npz is checked by its content: every pixel set to 0.123 is caught."""
    with np.load(datasets.data_directory() / "usps.npz") as data:
        arrays = {key: data[key] for key in data.files}
    arrays["X"] = np.full_like(arrays["X"], 0.123)
    np.savez_compressed(tmp_path / "usps.npz", **arrays)
    status = data_status(tmp_path).set_index("file")
    assert status.loc["usps.npz", "present"] and not status.loc["usps.npz", "checksum_ok"]
    with pytest.raises(ValueError, match="different or corrupted copy"):
        load_usps((3, 5), tmp_path, download=False)


@configured
@pytest.mark.parametrize("loader, shape, counts", [
    (load_diabetes, (768, 8), {0: 500, 1: 268}),
    (load_german, (1000, 24), {1: 700, 2: 300}),
    (load_a1a, (1605, 123), {-1: 1210, 1: 395}),
])
def test_uci_sets(loader, shape, counts):
    X, y = loader()
    assert X.shape == shape and np.all(np.isfinite(X))
    assert {label: int(np.sum(y == label)) for label in counts} == counts


def test_digits_pair_is_embedded():
    X, y = load_digits_pair(4, 6)
    assert X.shape[1] == 64 and set(np.unique(y)) == {4, 6} and X.max() <= 1.0


def test_libsvm_format(tmp_path):
    path = tmp_path / "tiny"
    path.write_text("+1 1:0.5 3:2 \n-1 2:1\n")
    X, y = load_libsvm(path, n_features=4)
    np.testing.assert_array_equal(X, [[0.5, 0, 2, 0], [0, 1, 0, 0]])
    np.testing.assert_array_equal(y, [1, -1])


@pytest.fixture
def web(tmp_path):
    """A local HTTP server of the folder ``tmp_path/web``: ``(folder, base URL)``."""
    import functools
    import http.server
    import threading

    folder = tmp_path / "web"
    folder.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _serve(monkeypatch, name, content: bytes, web, convert=None, download_sha=None):
    """Point SOURCES[name] at the local web server's file holding ``content``."""
    folder, base = web
    (folder / "published").write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()
    monkeypatch.setitem(SOURCES, name, Source(f"{base}/published", sha256=digest if convert is None else "x" * 64,
                                              download_sha256=download_sha, convert=convert))
    return digest


def test_download_into_the_cache_checks_the_sha256(monkeypatch, tmp_path, web):
    content = b"1,1,1,1,1,1,1,1,1\n" * 3
    _serve(monkeypatch, "pima-indians-diabetes.csv", content, web)
    cache = tmp_path / "cache"
    path = fetch("pima-indians-diabetes.csv", cache)
    assert path == cache / "pima-indians-diabetes.csv" and path.read_bytes() == content
    X, y = load_diabetes(cache)
    assert X.shape == (3, 8)


def test_a_download_with_the_wrong_checksum_is_not_saved(monkeypatch, tmp_path, web):
    monkeypatch.setattr(datasets, "DOWNLOAD_RETRIES", 0)  # pooch retries a mismatch too, waiting before each
    _serve(monkeypatch, "a1a", b"+1 1:1\n", web)
    monkeypatch.setitem(SOURCES, "a1a", Source(SOURCES["a1a"].url, sha256="0" * 64))
    with pytest.raises(ValueError, match="does not have the sha256 of the published file .*0000.*it was not saved"):
        fetch("a1a", tmp_path / "cache")
    assert not any((tmp_path / "cache").iterdir())  # nothing kept, no temporary file left


def test_without_network_the_error_says_which_file_to_put_where(monkeypatch, tmp_path, web):
    monkeypatch.setattr(datasets, "DOWNLOAD_RETRIES", 0)  # pooch's waits before each retry
    monkeypatch.setitem(SOURCES, "german.data-numeric", Source(f"{web[1]}/nowhere", sha256="0" * 64))
    with pytest.raises(DataUnavailableError, match=f"german.data-numeric is not in {tmp_path}.*Put german.data-numeric"):
        load_german(tmp_path)
    with pytest.raises(DataUnavailableError, match="downloads are off"):
        load_german(tmp_path, download=False)


def test_a_corrupted_copy_is_reported(tmp_path):
    (tmp_path / "a1a").write_text("+1 1:1\n")
    with pytest.raises(ValueError, match="a different or corrupted copy"):
        load_a1a(tmp_path)


def test_usps_download_is_converted_from_the_published_h5(monkeypatch, tmp_path, web):
    """The published USPS is an HDF5 file (train/test groups); the loader converts it to usps.npz
    with train rows first, as the shared copy."""
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(0)
    raw = io.BytesIO()
    with h5py.File(raw, "w") as h5:
        for split, n in (("train", 5), ("test", 3)):
            h5.create_dataset(f"{split}/data", data=rng.random((n, 256)).astype(np.float32))
            h5.create_dataset(f"{split}/target", data=np.array([3, 5, 4, 6, 3][:n], dtype=np.int32))
    content = raw.getvalue()
    _serve(monkeypatch, "usps.npz", content, web, convert=datasets._usps_from_h5,
           download_sha=hashlib.sha256(content).hexdigest())
    X, y = load_usps((3, 5), tmp_path / "cache")
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == ["usps.npz"]  # the .h5 not kept
    with np.load(tmp_path / "cache" / "usps.npz") as data:
        assert list(data["split"]) == ["train"] * 5 + ["test"] * 3
    np.testing.assert_array_equal(y, [3, 5, 3, 3, 5])
    assert X.shape == (5, 256)


def test_a_published_usps_h5_put_by_hand_is_converted_without_a_download(monkeypatch, tmp_path):
    """Without a network the missing-file message names the file as published (usps.h5), and that
    file put in the data directory as it is is converted on first use; a wrong copy is refused."""
    h5py = pytest.importorskip("h5py")
    with pytest.raises(DataUnavailableError, match=r"Put the published usps.h5 \(sha256 .*\) in that folder as it is: "
                       "it is converted to usps.npz on first use"):
        load_usps((3, 5), tmp_path, download=False)
    raw = io.BytesIO()
    with h5py.File(raw, "w") as h5:
        for split, n in (("train", 4), ("test", 2)):
            h5.create_dataset(f"{split}/data", data=np.full((n, 256), 0.5, dtype=np.float32))
            h5.create_dataset(f"{split}/target", data=np.array([3, 5, 3, 5][:n], dtype=np.int32))
    content = raw.getvalue()
    (tmp_path / "usps.h5").write_bytes(content)
    with pytest.raises(ValueError, match="does not have the sha256 of the published usps.h5"):
        load_usps((3, 5), tmp_path, download=False)
    source = SOURCES["usps.npz"]
    monkeypatch.setitem(SOURCES, "usps.npz", Source(source.url, sha256="x" * 64, convert=source.convert,
                                                      download_sha256=hashlib.sha256(content).hexdigest()))
    X, y = load_usps((3, 5), tmp_path, download=False)
    assert X.shape == (6, 256) and (tmp_path / "usps.npz").is_file()


@pytest.mark.parametrize("call, message", [
    (lambda: load_usps((3, 3)), "must differ"),
    (lambda: load_usps((3, 12)), "digits must be 0-9"),
    (lambda: fetch("mnist"), "unknown data file"),
    (lambda: load_libsvm(Path("/nonexistent/file")), "no LIBSVM-format file"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        call()
