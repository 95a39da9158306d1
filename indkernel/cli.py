"""The ``indkernel`` command line tool."""

from __future__ import annotations

import argparse
import sys
import warnings

def _demo(args: argparse.Namespace) -> int:
    from .datasets import load_digits_pair
    from .kernels import simpson
    from .solve import solve
    from .svm_problem import SVMProblem

    X, y = load_digits_pair(3, 5)
    K0 = simpson(X)
    problem = SVMProblem(K0, y, C=args.C, rho=args.rho)  # validates before any work
    eigenvalues = problem.oracle.spectrum[0]
    print(f"digits 3 vs 5 (scikit-learn's bundled digits, binarized at 0.5): n = {len(y)}, "
          f"Simpson kernel eigenvalues in [{eigenvalues[0]:.2f}, {eigenvalues[-1]:.2f}]")
    print(f"solving eq:kern_learn with C = {args.C:g}, rho = {args.rho:g} by the projected gradient "
          f"method (alg:proj_grad), relative tolerance {args.tol:g} ...")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the status line below says whether it converged
        result = solve(problem, "pg", tol=args.tol, max_iter=args.max_iter)
    print(result)
    return 0 if result.status == "optimal" else 1

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="indkernel",
        description="Support vector machines with indefinite kernels (Luss & d'Aspremont), "
                    "with certified duality gaps.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="solve the Simpson-score problem of the bundled digits 3 vs 5 and print certified bounds",
        description="Build the Simpson-score kernel of scikit-learn's bundled digits 3 vs 5, solve the "
                    "indefinite SVM by projected gradient and print the lower bound, the certified upper "
                    "bound and the gap. Exit code 0 when the gap reached the tolerance, 1 otherwise.")
    demo.add_argument("--C", type=float, default=10.0, help="misclassification penalty (default 10)")
    demo.add_argument("--rho", type=float, default=1.0, help="penalty on ||K - K0||_F^2 (default 1)")
    demo.add_argument("--tol", type=float, default=1e-3, help="relative gap tolerance (default 1e-3)")
    demo.add_argument("--max-iter", type=int, default=2000, help="iteration cap (default 2000)")
    demo.set_defaults(run=_demo)
    return parser

def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError) as exc:
        print(f"indkernel {args.command}: error: {exc}", file=sys.stderr)
        return 2

if __name__ == "__main__":
    sys.exit(main())
