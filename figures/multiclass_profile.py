"""Where a ten-class fit spends its time
======================================

The ten-class benchmark of the results page (USPS, 2000 random training images, tangent distance with
γ = 0.03, C = 10, ρ = 100, tol = 1e-3: the parameters cross-validation chose) in one process:
the fit times of ``SpectrumSVC("denoise")`` and of ``IndefiniteSVC`` one-vs-rest and one-vs-one,
side by side in each of ``--repeats`` rounds, with their ratios to denoise and test errors, and
the ratio against a denoise whose eigendecomposition is numpy's syevd rather than scipy's syevr; a
profile of the one-vs-rest fit (Hessian–vector products, oracle calls, the secular equation);
and, on three one-vs-rest problems, Newton's iterations and seconds from three starting points:
the paper's C/2, zero, and libsvm's solution on K0 (a warm start, its own time printed).

    INDKERNEL_DATA=<data directory> python figures/multiclass_profile.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
import warnings

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from starting_points import libsvm_start  # figures/ is on the path when a script here runs

from indkernel import IndefiniteSVC, SpectrumSVC, SVMProblem, solve
from indkernel.reproduction import usps_multiclass

N_TRAIN, GAMMA, C, RHO, TOL = 2000, 0.03, 10.0, 100.0, 1e-3


def main(repeats: int = 3) -> None:
    warnings.simplefilter("ignore", ConvergenceWarning)
    data = usps_multiclass.load(("TD",), n_train=N_TRAIN, verbose=False)
    full = data.matrices["TD"][f"gamma={GAMMA:g}"]()
    K, y = np.ascontiguousarray(full[:N_TRAIN, :N_TRAIN]), data.y_train
    fits = {"denoise": SpectrumSVC("denoise", C=C), "ovr": IndefiniteSVC(C=C, rho=RHO, tol=TOL, multi_class="ovr"),
            "ovo": IndefiniteSVC(C=C, rho=RHO, tol=TOL)}
    for round_ in range(1, repeats + 1):
        seconds = {}
        for name, estimator in fits.items():
            start = time.perf_counter()
            estimator.fit(K, y)
            seconds[name] = time.perf_counter() - start
            error = 100 * np.mean(estimator.predict(full[N_TRAIN:, :N_TRAIN]) != data.y_test)
            certified = "" if name == "denoise" else f", certified: {bool(np.all(estimator.status_ == 'optimal'))}"
            print(f"round {round_}: {name} fit {seconds[name]:.2f} s, test error {error:.2f} %{certified}")
        print(f"round {round_}: ovr / denoise {seconds['ovr'] / seconds['denoise']:.2f}x, "
              f"ovo / denoise {seconds['ovo'] / seconds['denoise']:.2f}x", flush=True)
        # denoise's one eigendecomposition is scipy's (LAPACK's syevr), as every single one in
        # indkernel; numpy's (syevd) is faster at this size: the ratio against a denoise using it
        eigh = {}
        for name, routine in (("scipy", scipy.linalg.eigh), ("numpy", np.linalg.eigh)):
            start = time.perf_counter()
            routine(K)
            eigh[name] = time.perf_counter() - start
        faster = seconds["denoise"] - eigh["scipy"] + eigh["numpy"]
        print(f"round {round_}: eigendecomposition of K, scipy (syevr) {eigh['scipy']:.2f} s, numpy (syevd) "
              f"{eigh['numpy']:.2f} s; denoise with numpy's would take {faster:.2f} s: "
              f"ovo / that {seconds['ovo'] / faster:.2f}x", flush=True)
    profile = cProfile.Profile()
    profile.runcall(IndefiniteSVC(C=C, rho=RHO, tol=TOL).fit, K, y)
    pstats.Stats(profile).sort_stats("cumulative").print_stats(r"\(matvec\)|proxy.py.*\(__call__\)|_secular_roots|"
                                                               r"_compiled_run|_iteration|spectrum", 8)
    for label in (3, 0, 8):
        signs = np.where(y == label, 1.0, -1.0)
        problem = SVMProblem(K, signs, C=C, rho=RHO)
        problem.oracle.prepare()
        start = time.perf_counter()
        warm = libsvm_start(K, signs, C)
        libsvm_seconds = time.perf_counter() - start
        for start_name, alpha0 in (("C/2", None), ("zero", np.zeros(N_TRAIN)), ("libsvm", warm)):
            start = time.perf_counter()
            result = solve(problem, "newton", tol=TOL, alpha0=alpha0)
            extra = f" (+{libsvm_seconds:.3f} s libsvm)" if start_name == "libsvm" else ""
            print(f"class {label} against the rest, start {start_name}: {result.iterations} iterations, "
                  f"{time.perf_counter() - start:.2f} s{extra}, {result.status}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the three fits, side by side")
    main(parser.parse_args().repeats)
