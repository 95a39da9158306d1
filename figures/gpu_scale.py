"""GPU scale: all of USPS and n = 20000 / 40000 on one GPU, against the CPU
===========================================================================

The device route (:mod:`indkernel.core.device_oracle`): K0 given as a torch array on a CUDA
device, the eigendecomposition, the oracle's O(n²) work and the certificate's products run there
in float64. For each case, one process:

- ``eigh``: the eigendecomposition of K0 alone (``torch.linalg.eigh`` on the device,
  ``scipy.linalg.eigh`` on the CPU);
- ``fit``: ``SVMProblem`` built from K0 and solved by ``newton`` to a relative gap of 1e-3,
  certified (its own eigendecomposition, the round-off check of it, the iterations, the
  certificate): what ``IndefiniteSVC(C=10, rho=1, tol=1e-3).fit`` costs;
- ``newton 1e-6``: then the same problem (its decomposition kept) solved to 1e-6;
- ``SpectrumSVC("denoise")``'s fit on the same route where n <= ``--denoise-up-to`` (its
  eigendecomposition and products there, libsvm on the host), for the ratio;
- the peak device memory of the eigendecomposition alone and of the fit and solves, in n×n
  float64 arrays (the caller's K0 included);
- on the CPU (NumPy, every core) the same where n <= ``--cpu-up-to``, the eigenvalues of both
  routes compared and their certified brackets checked to overlap.

Cases: ``usps`` (all 9298 images, Simpson, digit 0 against the rest, C = 10, ρ = 1, as the
results page's large-n row), ``usps-N`` (a random subset of N images), and a number n (a
sigmoid kernel ``tanh(XXᵀ/p - 1)`` on n Gaussian points in p = 64 dimensions, labels the sign of
a random linear function, C = 10, ρ = 1), built on the device.

    python figures/gpu_scale.py [--cases usps-2000 usps 20000 40000] [--cpu-up-to 2000] [--out gpu_scale.csv]
                                [--profile usps]

Writes the CSV next to this file (or ``--out``); ``--results`` puts its table into
docs/results.md without measuring. ``--namespace array-api-strict`` runs the device route on
array-api-strict's CPU arrays (a dry run without a GPU).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.linalg

from indkernel import SpectrumSVC, SVMProblem, solve
from indkernel.core.namespace import to_numpy
from indkernel.core.rank_one import compile_oracle
from indkernel.datasets import load_usps
from indkernel.kernels import simpson
from indkernel.reproduction.report import update_marked_block

HERE = Path(__file__).resolve().parent
C, RHO = 10.0, 1.0


class Device:
    """The namespace the device route runs on, its device, a clock that waits for it, and its peak memory."""

    def __init__(self, name: str):
        if name == "torch":
            import array_api_compat.torch
            import torch

            self.torch, self.xp = torch, array_api_compat.torch
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
            self.label = torch.cuda.get_device_name() if self.device == "cuda" else "torch CPU"
        else:
            import array_api_strict

            self.torch, self.xp, self.device, self.label = None, array_api_strict, None, "array-api-strict (CPU)"
        self.on_cuda = self.device == "cuda"

    def asarray(self, K: np.ndarray):
        return self.xp.asarray(K, device=self.device)

    def eigh(self, K):
        return self.xp.linalg.eigh(K)

    def sync(self) -> None:
        if self.on_cuda:
            self.torch.cuda.synchronize()

    def reset_peak(self) -> None:
        if self.on_cuda:
            self.torch.cuda.empty_cache()
            self.torch.cuda.reset_peak_memory_stats()

    def peak_bytes(self) -> float:
        return float(self.torch.cuda.max_memory_allocated()) if self.on_cuda else float("nan")


def usps_case(size: int | None, rng) -> tuple[np.ndarray, np.ndarray]:
    X, digits = load_usps(pair=None)
    if size is not None:
        pick = rng.choice(len(digits), size, replace=False)
        X, digits = X[pick], digits[pick]
    return simpson(X), np.where(digits == 0, 1.0, -1.0)


def sigmoid_case(n: int, rng, dimension: int = 64) -> tuple[np.ndarray, np.ndarray]:
    X = rng.standard_normal((n, dimension))
    y = np.where(X @ rng.standard_normal(dimension) > 0, 1.0, -1.0)
    K = X @ X.T
    K /= dimension
    K -= 1.0
    np.tanh(K, out=K)
    return K, y


def timed(function, sync=lambda: None):
    sync()
    start = time.perf_counter()
    value = function()
    sync()
    return value, time.perf_counter() - start


def run_route(route: str, K, y, device: Device | None, profile: bool = False, denoise: bool = False) -> dict:
    """eigh, the certified fit at 1e-3 and newton on to 1e-6 on one route (K a NumPy or device array)."""
    sync = device.sync if device is not None else (lambda: None)
    if device is not None:
        device.reset_peak()
        (values, vectors), eigh_seconds = timed(lambda: device.eigh(K), sync)
        values = to_numpy(values)
        del vectors  # (not held through the fit: the peak memory is the fit's)
    else:
        (values, _), eigh_seconds = timed(lambda: scipy.linalg.eigh(K), sync)
    row = {"route": route, "eigh_s": eigh_seconds}
    if device is not None:
        row["peak_eigh_n2"] = device.peak_bytes() / (8.0 * len(y) ** 2)
        device.reset_peak()
    phases = {}

    def fit():
        problem, phases["build_s"] = timed(lambda: SVMProblem(K, y, C, RHO), sync)
        phases["decomposition_s"] = timed(problem.oracle.prepare, sync)[1]  # (and the device's round-off check)
        result, phases["solve_s"] = timed(lambda: solve(problem, method="newton", tol=1e-3), sync)
        return problem, result

    if profile:  # where the device fit's time goes: the 25 most expensive calls, their callees included
        profiler = cProfile.Profile()
        (problem, result), fit_seconds = timed(lambda: profiler.runcall(fit), sync)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    else:
        (problem, result), fit_seconds = timed(fit, sync)
    row.update(phases)
    fine, fine_seconds = timed(lambda: solve(problem, method="newton", tol=1e-6, alpha0=result.alpha), sync)
    row.update(fit_s=fit_seconds, fit_status=str(result.status), fit_iterations=result.iterations,
               fit_relative_gap=result.relative_gap, newton6_s=fine_seconds, newton6_status=str(fine.status),
               newton6_iterations=fine.iterations, newton6_relative_gap=fine.relative_gap, lower=fine.lower, upper=fine.upper,
               fallbacks=getattr(problem.oracle, "fallbacks", 0))
    if device is not None:  # the fit's peak (the problem, its decomposition, the solves)
        row["peak_fit_n2"] = device.peak_bytes() / (8.0 * len(y) ** 2)
        row["measured_backward"] = problem.oracle.measured_backward
    if denoise:  # the baseline on the same route: its eigendecomposition there, libsvm on the host
        row["denoise_s"] = timed(lambda: SpectrumSVC("denoise", C=C).fit(K, y), sync)[1]
    row["_values"] = values
    return row


def markdown(table: pd.DataFrame) -> str:
    """The results page's table: one row per (case, route)."""

    def seconds(value) -> str:
        return "" if pd.isna(value) else f"{value:.2f}"

    def n2(value) -> str:
        return "" if pd.isna(value) else f"{value:.1f}"

    lines = ["| case | n | route | eigh (s) | fit, tol 1e-3 (s) | of which: checks + copy / decomposition / solve | "
             "iterations | newton to 1e-6 (s) | denoise fit (s) | peak device memory, eigh / fit (n² doubles) | measured |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in table.itertuples():
        phases = (" / ".join(seconds(getattr(row, name)) for name in ("build_s", "decomposition_s", "solve_s"))
                  if not pd.isna(getattr(row, "build_s", float("nan"))) else "")
        peaks = " / ".join(n2(getattr(row, name, float("nan"))) for name in ("peak_eigh_n2", "peak_fit_n2"))
        fine = f"{seconds(row.newton6_s)} ({row.newton6_status} at {row.newton6_relative_gap:.1e})"
        lines.append(f"| {row.case} | {row.n} | {row.route} | {seconds(row.eigh_s)} | {seconds(row.fit_s)} | {phases} | "
                     f"{row.fit_iterations} | {fine} | {seconds(getattr(row, 'denoise_s', float('nan')))} | "
                     f"{peaks if row.route != 'CPU (NumPy)' else ''} | "
                     f"{code if isinstance(code := getattr(row, 'code', None), str) else 'this version'} |")
    return "\n".join(lines)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["usps-2000", "usps", "20000", "40000"])
    parser.add_argument("--cpu-up-to", type=int, default=2000, help="run the CPU route for n up to this")
    parser.add_argument("--namespace", choices=["torch", "array-api-strict"], default="torch")
    parser.add_argument("--denoise-up-to", type=int, default=9298,
                        help="fit SpectrumSVC('denoise') on each route for n up to this (libsvm on the host)")
    parser.add_argument("--linalg", choices=["default", "cusolver", "magma"], default="default",
                        help="torch's library for the eigendecomposition on CUDA")
    parser.add_argument("--out", type=Path, default=HERE / "gpu_scale.csv")
    parser.add_argument("--profile", nargs="*", default=[], help="cases whose device fit is profiled (cProfile)")
    parser.add_argument("--results", action="store_true",
                        help="put the table of the CSV (--out) into docs/results.md, measuring nothing")
    args = parser.parse_args(argv)
    if args.results:
        table = pd.read_csv(args.out)
        update_marked_block(HERE.parent / "docs" / "results.md", "gpu-scale", markdown(table),
                            "python figures/gpu_scale.py --results")
        return table
    device = Device(args.namespace)
    if args.linalg != "default" and device.torch is not None:
        device.torch.backends.cuda.preferred_linalg_library(args.linalg)
    compile_oracle()  # numba's compilation of the host steps, once, before any clock
    device.eigh(device.asarray(np.eye(4)))  # the device's context and solver handles, before any clock
    rng = np.random.default_rng(0)
    rows = []
    for case in args.cases:
        if case == "usps" or case.startswith("usps-"):
            K, y = usps_case(None if case == "usps" else int(case[5:]), rng)
        else:
            K, y = sigmoid_case(int(case), rng)
        n = len(y)
        routes = []
        on_device = device.asarray(K)
        denoise = n <= args.denoise_up_to
        label = device.label if args.linalg == "default" else f"{device.label} ({args.linalg})"
        routes.append(run_route(label, on_device, y, device, case in args.profile, denoise))
        del on_device
        if n <= args.cpu_up_to:
            routes.append(run_route("CPU (NumPy)", K, y, None, denoise=denoise))
        for row in routes:
            row.update(case=case, n=n)
        if len(routes) == 2:
            gpu, cpu = routes
            scale = float(np.abs(cpu["_values"]).max())
            gpu["eigenvalue_difference"] = float(np.abs(gpu["_values"] - cpu["_values"]).max()) / scale
            gpu["brackets_overlap"] = bool(gpu["lower"] <= cpu["upper"] and cpu["lower"] <= gpu["upper"])
        for row in routes:
            row.pop("_values")
            print({key: (f"{value:.4g}" if isinstance(value, float) else value) for key, value in row.items()}, flush=True)
            rows.append(row)
        pd.DataFrame(rows).to_csv(args.out, index=False)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    main()
