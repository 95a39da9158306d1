"""Where joblib runs the work of a grid or a table: local processes, or a Dask cluster.

Everything parallel in indkernel goes through joblib (``GridSearchCV``'s folds, the tables'
splits), so one context decides where it runs::

    from indkernel.cluster import joblib_backend

    with joblib_backend("dask", scheduler="tcp://10.0.0.5:8786"):   # or no scheduler: a LocalCluster
        search.fit(K, y)

``indkernel tables --backend dask [--scheduler ADDRESS]`` does the same for the tables.
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
def joblib_backend(backend: str = "loky", *, scheduler: str | None = None, n_workers: int = 2) -> Iterator[None]:
    """Run the joblib work inside the block on ``backend``.

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
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as error:
        raise ImportError("the dask backend needs dask.distributed: pip install 'indkernel[dask]'") from error
    with ExitStack() as stack:
        if scheduler is None:
            threads = str(max(1, (os.cpu_count() or 1) // n_workers))
            scheduler = stack.enter_context(LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                env=dict.fromkeys(THREAD_VARIABLES, threads)))
        stack.enter_context(Client(scheduler))
        stack.enter_context(joblib.parallel_config(backend="dask"))
        yield
