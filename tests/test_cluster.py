"""Grids and tables on a real distributed engine: a dask.distributed LocalCluster of 2 workers
gives the same rows as joblib's local processes, bit for bit (the seeds are the same)."""

import numpy as np
import pandas as pd
import pytest
from dask.distributed import LocalCluster
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from indkernel import IndefiniteSVC
from indkernel.cli import main
from indkernel.cluster import joblib_backend
from indkernel.datasets import load_digits_pair
from indkernel.kernels import simpson
from indkernel.reproduction.experiments import write_tables

TABLES = ("gen_performance.csv", "data_stats.csv", "gen_performance_perturbSVM.csv", "paired_comparison.csv")


@pytest.fixture(scope="module")
def scheduler():
    """The address of a running cluster, as a user's would be."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow  # a whole (quick) tables run, twice: an experiment
def test_the_tables_on_a_dask_cluster_are_the_local_tables(tmp_path, scheduler):
    """``indkernel tables --backend dask --scheduler ADDRESS``: every row as the local run's but the
    timings."""
    write_tables(tmp_path / "local", quick=True, digits=True, quiet=True, splits=2)
    assert main(["tables", "--quick", "--digits", "--splits", "2", "--quiet", "--backend", "dask",
                 "--scheduler", scheduler, "--out", str(tmp_path / "dask")]) == 0
    for name in TABLES:
        local, remote = (pd.read_csv(tmp_path / where / name) for where in ("local", "dask"))
        timing = [c for c in local.columns if c == "seconds"]
        pd.testing.assert_frame_equal(local.drop(columns=timing), remote.drop(columns=timing), check_exact=True)


@pytest.mark.slow
def test_a_grid_search_on_a_local_dask_cluster_is_the_local_grid_search():
    """``GridSearchCV(IndefiniteSVC(), ...)`` with its clones pickled to the workers of a
    LocalCluster that :func:`joblib_backend` starts: the same ``cv_results_`` scores."""
    X, y = load_digits_pair(3, 5)
    K = simpson(X[:120])
    grid = {"C": [0.1, 10.0], "rho": [1.0, 100.0]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    local = GridSearchCV(IndefiniteSVC(), grid, cv=cv, n_jobs=2).fit(K, y[:120])
    with joblib_backend("dask", n_workers=2):
        remote = GridSearchCV(IndefiniteSVC(), grid, cv=cv, n_jobs=2).fit(K, y[:120])
    for key in ("mean_test_score", "split0_test_score", "split1_test_score", "split2_test_score"):
        np.testing.assert_array_equal(local.cv_results_[key], remote.cv_results_[key])
    assert local.best_params_ == remote.best_params_


def test_a_scheduler_without_the_dask_backend_is_refused_before_any_work(tmp_path, capsys):
    assert main(["tables", "--quick", "--digits", "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path)]) == 2
    assert "--backend dask" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    with pytest.raises(ValueError, match="backend must be one of"):
        with joblib_backend("ray"):
            pass


def test_an_unreachable_scheduler_is_named_quickly(capsys):
    """Nothing listens on port 9 here: an OSError naming the address within the timeout, and in the
    command line a sentence and exit 2, not a traceback after 30 s."""
    import time

    start = time.perf_counter()
    with pytest.raises(OSError, match=r"cannot reach the Dask scheduler tcp://127\.0\.0\.1:9 within 1 s"):
        with joblib_backend("dask", scheduler="tcp://127.0.0.1:9", timeout=1):
            pass
    assert time.perf_counter() - start < 15
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        with joblib_backend("dask", scheduler="tcp://127.0.0.1:9", timeout=0):
            pass


def test_a_local_cluster_leaves_the_environment_as_found():
    import os

    before = dict(os.environ)
    with joblib_backend("dask", n_workers=1):
        pass
    assert dict(os.environ) == before


@pytest.mark.slow  # the default 10 s to reach the scheduler
def test_the_command_line_names_an_unreachable_scheduler(tmp_path, capsys):
    assert main(["tables", "--quick", "--digits", "--quiet", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9",
                 "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in error and "Traceback" not in error
    assert not any(tmp_path.iterdir())


DYING_WORKERS = """
import os, sys
import dask
import joblib
from distributed import KilledWorker
from indkernel.cluster import joblib_backend

if __name__ == "__main__":
    dask.config.set({"distributed.scheduler.allowed-failures": 1})
    with joblib_backend("dask", n_workers=2):  # one worker: joblib would run the tasks here
        try:
            joblib.Parallel(n_jobs=2)(joblib.delayed(os._exit)(1) for _ in range(2))
        except KilledWorker as error:
            print("KilledWorker:", error)
            sys.exit(0)
    sys.exit("no error")
"""


@pytest.mark.slow  # a LocalCluster whose workers die and restart: about 20 s
def test_workers_that_keep_dying_end_the_call_with_an_error(tmp_path):
    """A task that kills its worker every time (killed twice, dask's allowed failures 1): joblib's Dask
    backend left ``Parallel`` waiting for ever; through :func:`joblib_backend` the call raises
    ``KilledWorker`` (run in a child process with a deadline, so a hang fails the test)."""
    import subprocess
    import sys

    script = tmp_path / "dying.py"
    script.write_text(DYING_WORKERS)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "KilledWorker:" in done.stdout


def test_the_command_line_says_when_the_workers_keep_dying(tmp_path, capsys, monkeypatch):
    """``indkernel tables`` ends with a sentence and exit 1 where a task killed its workers too often."""
    from types import SimpleNamespace

    from distributed import KilledWorker

    from indkernel import cli

    def dying(args):
        raise KilledWorker("batch_of_one_split", SimpleNamespace(address="tcp://127.0.0.1:1"), allowed_failures=3)

    monkeypatch.setattr(cli, "_run_tables", dying)
    assert main(["tables", "--quick", "--digits", "--quiet", "--out", str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert "the Dask workers died running a task" in error and "Traceback" not in error
