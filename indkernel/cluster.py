"""Where joblib runs the work of a grid or a table: local processes, or a Dask cluster.

Everything parallel in indkernel goes through joblib (``GridSearchCV``'s folds, the tables'
splits), so one context decides where it runs::

    from indkernel.cluster import joblib_backend

    with joblib_backend("dask", scheduler="tcp://10.0.0.5:8786"):   # or no scheduler: a LocalCluster
        search.fit(K, y)

``indkernel tables --backend dask [--scheduler ADDRESS]`` does the same for the tables.

A script that starts a LocalCluster (``joblib_backend("dask")`` without a scheduler) must run its
work under ``if __name__ == "__main__":``: the cluster's worker processes import the script again
("Nanny failed to start" otherwise).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import joblib

BACKENDS = ("loky", "dask")
#: The thread counts joblib's local workers get (its inner_max_num_threads): a LocalCluster's
#: workers get the same, so a table is the same bit for bit on either backend.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@contextmanager
def joblib_backend(backend: str = "loky", *, scheduler: str | None = None, n_workers: int = 2,
                   timeout: float = 10.0) -> Iterator[None]:
    """Run the joblib work inside the block on ``backend``.

    The environment is left as found: the variables the cluster's start-up changes (a
    LocalCluster sets the workers' thread variables in this process too) are put back when the
    block ends.

    Parameters
    ----------
    backend : {"loky", "dask"}
        ``"loky"``: joblib's local processes (the default, nothing changes). ``"dask"``: a
        ``dask.distributed`` cluster (the optional extra ``pip install "indkernel[dask]"``).
    scheduler : str, optional
        With ``"dask"``, the address of a running scheduler (``tcp://host:8786``); without one, a
        ``LocalCluster`` of ``n_workers`` single-threaded processes is started for the block and
        closed after it, each worker with the thread limits of a joblib worker.
    n_workers : int
        The workers of that LocalCluster.
    timeout : float, default 10
        Seconds to reach the scheduler before an ``OSError`` naming it.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}")
    if backend == "loky":
        if scheduler is not None:
            raise ValueError("a scheduler address needs backend='dask' (--backend dask)")
        yield
        return
    if not isinstance(n_workers, int) or isinstance(n_workers, bool) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer; got {n_workers!r}")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as error:
        raise ImportError("the dask backend needs dask.distributed: pip install 'indkernel[dask]'") from error
    before = dict(os.environ)
    with ExitStack() as stack:
        if scheduler is None:
            threads = str(max(1, (os.cpu_count() or 1) // n_workers))
            scheduler = stack.enter_context(LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                env=dict.fromkeys(THREAD_VARIABLES, threads)))
        try:
            stack.enter_context(Client(scheduler, timeout=timeout))
        except OSError as error:
            raise OSError(f"cannot reach the Dask scheduler {scheduler} within {timeout:g} s ({error}); check the "
                          "address (--scheduler), or leave it out for a local cluster") from error
        stack.callback(_restore, before, _changed(before))
        stack.enter_context(joblib.parallel_config(backend=_dask_backend()))
        yield


def _dask_backend():
    """joblib's Dask backend, with a task whose future errs reported to ``Parallel``: one that kept
    killing its workers ends as ``KilledWorker`` there, which joblib's backend sets on its own future
    but never passes to the callback ``Parallel`` waits on (the call hung until Ctrl-C)."""
    from joblib._dask import DaskDistributedBackend

    class ReportingDaskBackend(DaskDistributedBackend):
        def submit(self, func, callback=None):
            future = super().submit(func, callback)

            def on_error(done):
                error = done.exception()
                if error is not None and callback is not None:
                    callback(error)  # Parallel's callback raises it: the task's outcome is that error

            future.add_done_callback(on_error)
            return future

    return ReportingDaskBackend()


def _changed(before: dict[str, str]) -> set[str]:
    """The environment variables that differ from ``before`` (the cluster's start-up set them)."""
    return {name for name in set(os.environ) | set(before) if os.environ.get(name) != before.get(name)}


def _restore(before: dict[str, str], names: set[str]) -> None:
    """Put the variables ``names`` back as they were ``before`` (removed if they were not set)."""
    for name in names:
        if name in before:
            os.environ[name] = before[name]
        else:
            os.environ.pop(name, None)
