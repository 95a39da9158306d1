"""The ``indkernel`` command line tool: solve, compare, figures, tables, benchmark, datasets.

Exit codes: 0 done (for ``solve``: the certified gap met the tolerance), 1 finished without
meeting it, 2 bad input (the message says what to fix).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np

from ._files import write_whole
from .solvers.registry import COMPARED, METHODS

SIMILARITIES = ("simpson", "tangent", "sigmoid", "linear", "gaussian")
#: The options each similarity takes (any other one given is refused, not ignored).
SIMILARITY_OPTIONS = {"simpson": (), "linear": (), "tangent": ("--gamma",), "gaussian": ("--gamma",),
                      "sigmoid": ("--a", "--r")}
#: Each command's examples (its --help shows its own; the tool's --help all of them).
EXAMPLES = {
    "figures": """  indkernel figures --quick                  the paper's two figures on the embedded digits (< 3 min)
  indkernel figures all --full --dataset usps    the full figures on USPS 3 vs 5 (needs INDKERNEL_DATA)""",
    "solve": """  indkernel solve                            the Simpson-kernel problem of the embedded digits 3 vs 5
  indkernel solve data.npz --similarity sigmoid --a 0.01 --r -1 --C 10 --rho 1 --alpha-out alpha.npy""",
    "compare": """  indkernel compare --methods pg apg accpm --plot compare.png""",
    "tables": """  indkernel tables --quick                   the paper's tables on small subsets (2 random splits)
  indkernel tables --splits 10               the paper's tables, mean ± sd over 10 splits, paired tests
  indkernel tables --datasets a1a-sig        rerun one data set's rows of the tables in --out
  indkernel tables --methods 'Indefinite SVM'    rerun one method's cells of the tables in --out
  indkernel tables --multiclass              ten-class USPS, 7291/2007 split (needs INDKERNEL_DATA)
  indkernel tables --ablation                the Simpson rows' ablations, 10 splits (needs INDKERNEL_DATA)
  indkernel tables --rules                   Indefinite SVM's rules for new points against each other and denoise""",
    "benchmark": """  indkernel benchmark --similarity S.npy --labels y.npy      every method, 20 random 80/20 splits
  indkernel benchmark --similarity S.npy --labels y.npy --quick --splits 3    a first look (small grids)
  indkernel benchmark --similarity S.npy --labels y.npy --methods 'Indefinite SVM' Denoise
  indkernel benchmark --list                 the methods, their estimators, grids and citations""",
    "datasets": """  indkernel datasets                         where the data directory is and what it holds""",
}
DATA_NOTE = """DATA is a .npz with arrays X (features, one row per sample) and y, or K (a precomputed n x n
similarity) and y; a .npy of features with --labels; or a text file in LIBSVM format. Without
DATA: scikit-learn's bundled digits 3 vs 5 (no download)."""
DATA_DIRECTORY_NOTE = """The data directory of the paper's data sets is --data-dir, else $INDKERNEL_DATA, else the
system's cache folder (~/.cache/indkernel on Linux)."""
CHECKS_NOTE = """Before any work solve and compare check their outputs (writable, not an input, not each other)
and the memory the similarity and its problem need (about 4 n x n float64 arrays), and refuse
with exit code 2 and the argument's name. Ctrl-C stops any method."""
EPILOG = "\n\n".join(["examples:\n" + "\n".join(EXAMPLES.values()), DATA_NOTE + "\n" + DATA_DIRECTORY_NOTE, CHECKS_NOTE])


def _epilog(command: str) -> str:
    """A command's own --help epilog: its examples and the notes that concern it."""
    notes = ([DATA_NOTE, CHECKS_NOTE] if command in ("solve", "compare") else [] if command == "benchmark"
             else [DATA_DIRECTORY_NOTE])
    return "\n\n".join([f"examples:\n{EXAMPLES[command]}", *notes])


def _load(args) -> tuple[np.ndarray, np.ndarray, str]:
    """``(K0, y, description)`` from DATA and the similarity options."""
    from . import datasets, kernels
    from ._validation import FIT_ARRAYS, check_memory

    if args.data is None:
        if args.labels is not None:
            raise ValueError("--labels goes with a .npy DATA file of features; without DATA the embedded digits are "
                             "solved (give DATA, or drop --labels)")
        X, y = datasets.load_digits_pair(3, 5)
        name = "digits 3 vs 5 (scikit-learn's bundled digits)"
    else:
        path = _input_file(args.data, "DATA")
        name = path.name
        if args.labels is not None and path.suffix != ".npy":
            raise ValueError(f"--labels is for a .npy DATA file of features only; {path.name} holds its own labels "
                             "(drop --labels)")
        if path.suffix == ".npz":
            _check_archive(path)
            with _reading(path, "DATA", "a .npz archive (np.savez)"), np.load(path) as archive:
                keys = sorted(archive.files)
                arrays = {key: archive[key] for key in keys if key in ("X", "K", "y")}
            if "y" not in arrays or not ({"X", "K"} & set(arrays)):
                raise ValueError(f"DATA {path} must hold y and either X (features) or K (a precomputed similarity); "
                                 f"it holds {keys or 'no array'}")
            y = arrays["y"]
            if "K" in arrays:
                options = {"--similarity": args.similarity, **_similarity_options(args)}
                given = [option for option, value in options.items() if value is not None]
                if given:
                    raise ValueError(f"{', '.join(given)}: DATA {path.name} holds a precomputed similarity K, which "
                                     "these options would not change; drop them, or give features X instead of K")
                return arrays["K"], y, f"{name} (precomputed similarity)"
            X = arrays["X"]
        elif path.suffix == ".npy":
            if args.labels is None:
                raise ValueError("a .npy DATA file holds features only: pass --labels FILE (.npy or one label a line)")
            with _reading(path, "DATA", "a .npy array of numbers (np.save)"):
                X = np.load(path)
            labels = _input_file(args.labels, "--labels")
            with _reading(labels, "--labels", "a .npy array or a text file with one label a line"):
                y = np.load(labels) if labels.suffix == ".npy" else np.loadtxt(labels, dtype=str, ndmin=1)
        else:
            X, y = datasets.load_libsvm(path)
    if len(y) != len(X):
        source = "--labels" if args.labels is not None else f"DATA {name}"
        raise ValueError(f"{source} has {len(y)} labels for the {len(X)} points of DATA {name}; give one label per point")
    similarity = args.similarity or "simpson"
    unused = [option for option, value in _similarity_options(args).items()
              if value is not None and option not in SIMILARITY_OPTIONS[similarity]]
    if unused:
        raise ValueError(f"{', '.join(unused)}: not a parameter of the {similarity} similarity (its parameters: "
                         f"{', '.join(SIMILARITY_OPTIONS[similarity]) or 'none'}); drop it or choose the similarity "
                         "with --similarity")
    defaults = {"--gamma": 0.05, "--a": 0.01, "--r": 0.0}
    values = {option: defaults[option] if value is None else value for option, value in _similarity_options(args).items()}
    parameters = {option.lstrip("-"): values[option] for option in SIMILARITY_OPTIONS[similarity]}
    function = getattr(kernels, "tangent_distance" if similarity == "tangent" else similarity)
    check_memory(len(X), f"the {similarity} similarity of {len(X)} points and its problem", FIT_ARRAYS,
                 "give fewer points or free memory")
    described = ", ".join(f"{k} = {v:g}" for k, v in parameters.items())
    try:
        K0 = function(X, **parameters)
    except ValueError as error:  # the default (Simpson, for binary images) on ordinary features, say
        raise ValueError(f"the {similarity} similarity failed on DATA's features: {error}. Choose the similarity "
                         f"for these data with --similarity ({', '.join(SIMILARITIES)}; simpson is for binary images, "
                         "sigmoid or gaussian for ordinary features)") from error
    return K0, y, f"{name}, {similarity} similarity" + (f" ({described})" if described else "")


def _similarity_options(args) -> dict[str, float | None]:
    """The similarity's options as given on the command line (None: not given)."""
    return {"--gamma": args.gamma, "--a": args.a, "--r": args.r}


def _check_archive(path: Path) -> None:
    """A ValueError unless ``path`` is a zip archive (what np.savez writes), saying what it is instead
    (before numpy reads it: numpy would suggest unpickling a file that is no archive)."""
    with open(path, "rb") as file:
        head = file.read(6)
    if zipfile.is_zipfile(path):
        return
    if not head:
        raise ValueError(f"DATA {path} is empty; give a .npz archive written by np.savez (X or K, and y)")
    if head == b"\x93NUMPY":
        raise ValueError(f"DATA {path} is a .npy array (np.save), not a .npz archive: name it .npy and pass --labels, "
                         "or save X (or K) and y together with np.savez")
    raise ValueError(f"DATA {path} is not a .npz archive (np.savez writes a zip of arrays X or K, and y); "
                     "for a LIBSVM-format text file give it another suffix")


def _input_file(name: str, what: str) -> Path:
    """An existing regular file, else a ValueError that says what it is instead."""
    path = Path(name)
    if path.is_dir():
        raise ValueError(f"{what} {path} is a directory; give a file")
    if path.exists() and not path.is_file():
        raise ValueError(f"{what} {path} is not a regular file (a device, a pipe or a socket); give a file")
    if not path.is_file():
        raise ValueError(f"{what} {path} does not exist; give a .npz (X or K, and y), a .npy with --labels, "
                         "or a LIBSVM-format text file")
    return path


@contextlib.contextmanager
def _reading(path: Path, what: str, expected: str):
    """Turn the errors of a file that is empty, truncated or not of its kind into one ValueError."""
    try:
        yield
    except (OSError, EOFError, zipfile.BadZipFile, ValueError, KeyError) as exc:
        raise ValueError(f"{what} {path} cannot be read as {expected} (empty, truncated or another format): "
                         f"{exc}") from exc


def _output_file(name: str | None, what: str, args, taken: dict[Path, str] | None = None,
                 formats: dict[str, str] | None = None) -> Path | None:
    """Check before any work that ``name`` can be written: its folder exists and is writable, it is
    no folder, no input file (DATA, --labels; hard links included) and no other output (``taken``:
    path -> option, to which it is added), no existing file unless ``--force``, and its suffix one
    of ``formats`` (suffix -> description) if given."""
    if name is None:
        return None
    path = Path(name)
    if path.is_dir():
        raise ValueError(f"{what} {path} is a directory; give a file name")
    if not path.parent.is_dir():
        raise ValueError(f"{what} {path}: the folder {path.parent} does not exist; create it first")
    if not _writable(path.parent) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{what} {path} cannot be written (no permission, or a read-only or special file "
                         "system); give a writable place")
    inputs = {"DATA": getattr(args, "data", None), "--labels": getattr(args, "labels", None)}
    for option, given in inputs.items():
        if given is not None and Path(given).exists() and path.exists() and os.path.samefile(path, given):
            raise ValueError(f"{what} {path} is the input file {option}; writing it would destroy the data: "
                             "give another name")
    if path.exists() and not getattr(args, "force", False):
        raise ValueError(f"{what} {path} exists; pass --force to replace it, or give another name")
    if formats is not None and path.suffix.lstrip(".").lower() not in formats:
        raise ValueError(f"{what} {path}: unknown format {path.suffix!r}; give one of "
                         f"{', '.join('.' + suffix for suffix in sorted(formats))}")
    taken = {} if taken is None else taken
    if path.resolve() in taken:
        raise ValueError(f"{what} and {taken[path.resolve()]} name the same file {path}; give two names")
    taken[path.resolve()] = what
    return path


def _output_folder(name: str, what: str, args=None, outputs=()) -> Path:
    """Check before any work that the folder ``name`` can take the files ``outputs``: it is no file,
    it holds none of them unless ``--force``, and it is writable if it exists."""
    path = Path(name)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} {path} is an existing file; give a folder (it is created if missing)")
    existing = [output for output in outputs if (path / output).exists()]
    if existing and not getattr(args, "force", False):
        raise ValueError(f"{what} {path} holds {', '.join(existing)}; pass --force to replace them, or give another "
                         f"{what}")
    if path.exists() and not _writable(path):
        raise ValueError(f"{what} {path} cannot be written (no permission, or a read-only or special file system); "
                         "give a writable folder")
    return path


def _writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder``, by creating one and removing it: ``os.access``
    says yes to root everywhere, also on /sys and read-only mounts, where the write fails after the work."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".indkernel-probe-"):
            return True
    except OSError:
        return False


def _problem(args):
    from .core.svm_problem import SVMProblem

    K0, y, description = _load(args)
    problem = SVMProblem(K0, y, C=args.C, rho=args.rho, class_weight=args.class_weight)  # validates first
    values = problem.oracle.spectrum[0]  # the oracle's decomposition of K0, reused by the solver
    _say(args, f"{description}: n = {problem.n}, eigenvalues in [{values[0]:.3g}, {values[-1]:.3g}]")
    return problem


def _say(args, text: str) -> None:
    if not args.quiet:
        print(text, file=sys.stderr)


def _solve(args) -> int:
    from .solvers.registry import solve

    taken: dict[Path, str] = {}
    alpha_out = _output_file(args.alpha_out, "--alpha-out", args, taken)
    history_out = _output_file(args.history_out, "--history-out", args, taken)
    problem = _problem(args)
    _say(args, f"solving eq:kern_learn with C = {args.C:g}, rho = {args.rho:g} by {args.method} ...")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the status line below says whether it converged
        result = solve(problem, args.method, tol=1e-6 if args.tol is None else args.tol, max_iter=args.max_iter, time_limit=args.time_limit,
                       verbose=not args.quiet)
    print(result)
    if alpha_out:
        write_whole(alpha_out, lambda file: np.save(file, result.alpha))  # np.save on a name would append .npy
        _say(args, f"alpha written to {alpha_out} (.npy format)")
    if history_out:
        write_whole(history_out, lambda file: result.history.to_csv(file, index=False))
        _say(args, f"history written to {history_out}")
    return 0 if result.status == "optimal" else 1


def _compare(args) -> int:
    from matplotlib.backend_bases import FigureCanvasBase

    from .solvers.registry import ComparisonInterrupted, compare, plot_comparison

    plot = _output_file(args.plot, "--plot", args, formats=FigureCanvasBase.get_supported_filetypes())
    problem = _problem(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        limit = {} if args.time_limit is None else dict(time_limit=args.time_limit)  # else compare's default
        try:
            tol = {} if args.tol is None else dict(tol=args.tol)  # else compare's default
            table = compare(problem, methods=args.methods, max_iter=args.max_iter, verbose=not args.quiet, **tol,
                            **limit)
        except ComparisonInterrupted as interrupted:  # what finished, not a traceback
            print(interrupted.table.shown().to_string(index=False))
            print("indkernel compare: interrupted (Ctrl-C); the table holds the methods that finished", file=sys.stderr)
            return 130
    print(table.shown().to_string(index=False))  # the bounds with the digits that show the gap
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        axes = plot_comparison(table)
        kind = plot.suffix.lstrip(".").lower()
        write_whole(plot, lambda file: axes[0].figure.savefig(file, dpi=120, format=kind))
        plt.close(axes[0].figure)
        _say(args, f"plot written to {plot}")
    return 0


def _figures(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from .reproduction.reproduce import outputs, reproduce

    mode = "full" if args.full else "quick"
    csvs = outputs(args.which, mode, args.dataset, Path(args.out))
    out = _output_folder(args.out, "--out", args, [path.name for csv in csvs.values()
                                                  for path in (csv, csv.with_suffix(".png"))])
    try:
        written = reproduce(args.which, mode=mode, dataset=args.dataset, out=out, data_dir=args.data_dir,
                            quiet=args.quiet)
    except KeyboardInterrupt:  # what finished, not a traceback
        kept = [csv.name for csv in csvs.values() if csv.exists()]
        print("indkernel figures: interrupted (Ctrl-C); " + (
            f"{', '.join(kept)} in {out} keep the runs that finished (draw a PNG from a CSV with "
            "indkernel.reproduction.reproduce.redraw)" if kept else "no run had finished: nothing written"),
            file=sys.stderr)
        return 130
    for name, path in written.items():
        print(f"{name}: {path} (and {path.with_suffix('.csv').name})")
    return 0


def _tables(args) -> int:
    import joblib

    from .cluster import joblib_backend

    try:
        with joblib_backend(args.backend, scheduler=args.scheduler, n_workers=joblib.effective_n_jobs(args.n_jobs)):
            return _run_tables(args)
    except KeyboardInterrupt:  # what finished, not a traceback (as figures and compare)
        print(f"indkernel tables: interrupted (Ctrl-C); the splits that finished are kept in {args.out} as part files: "
              "the same command resumes from them", file=sys.stderr)
        return 130
    except Exception as error:
        # dask.distributed's KilledWorker (a task that kept killing its workers): only once it is imported
        if not isinstance(error, getattr(sys.modules.get("distributed"), "KilledWorker", ())):
            raise
        print(f"indkernel tables: error: the Dask workers died running a task, more often than the scheduler "
              f"retries ({error}); check the workers' memory limit and logs", file=sys.stderr)
        return 1


def _run_tables(args) -> int:
    from .reproduction import ablation, experiments, rule_comparison, usps_multiclass

    if args.multiclass + args.ablation + args.rules > 1:
        raise ValueError("--multiclass, --ablation and --rules are different runs; pass one of them")
    if args.datasets is not None and (args.multiclass or args.ablation):
        raise ValueError("--datasets reruns rows of the paper's tables; it takes no --multiclass or --ablation")
    if args.methods is not None and (args.multiclass or args.ablation or args.rules):
        raise ValueError("--methods reruns cells of the paper's tables; it takes no --multiclass, --ablation or --rules")
    if args.multiclass and args.digits:
        raise ValueError("--multiclass runs on USPS's standard split; it takes no --digits")
    # the finished tables there are replaced only with --force; --datasets and --methods update them
    run = (rule_comparison if args.rules else ablation if args.ablation else usps_multiclass if args.multiclass
           else None if args.datasets is not None or args.methods is not None else experiments)
    out = _output_folder(args.out, "--out", args, () if run is None else run.OUTPUTS)
    if args.rules:
        splits = experiments.SPLITS["quick" if args.quick else "full"] if args.splits is None else args.splits
        result = rule_comparison.run(out, splits=splits, datasets=args.datasets, quick=args.quick, digits=args.digits,
                                     data_dir=args.data_dir, n_jobs=args.n_jobs, quiet=args.quiet)
    elif args.ablation:
        result = ablation.write_ablation(out, quick=args.quick, digits=args.digits, n_jobs=args.n_jobs,
                                         data_dir=args.data_dir, quiet=args.quiet, splits=args.splits)
    elif args.multiclass:
        result = usps_multiclass.write(out, quick=args.quick, n_train=args.n_train, data_dir=args.data_dir,
                                       n_jobs=args.n_jobs, verbose=not args.quiet,
                                       similarities=tuple(args.similarities), splits=args.splits)
    else:
        result = experiments.write_tables(out, quick=args.quick, digits=args.digits, n_jobs=args.n_jobs,
                                          data_dir=args.data_dir, quiet=args.quiet, splits=args.splits,
                                          datasets=args.datasets, methods=args.methods)
    print(result["markdown"])
    return 0


def _benchmark(args) -> int:
    from .estimators.registry import methods_markdown
    from .reproduction.benchmark import OUTPUTS, benchmark

    if args.list:
        print(methods_markdown())
        return 0
    missing = [option for option in ("--similarity", "--labels") if getattr(args, option[2:]) is None]
    if missing:
        raise ValueError(f"{' and '.join(missing)}: required (the n x n similarity matrix and its n labels); "
                         "--list shows the methods")
    path = _input_file(args.similarity, "--similarity")
    with _reading(path, "--similarity", "a .npy array (np.save) or a text matrix"):
        K = np.load(path, allow_pickle=False) if path.suffix == ".npy" else np.loadtxt(path, ndmin=2)
    labels = _input_file(args.labels, "--labels")
    with _reading(labels, "--labels", "a .npy array or a text file with one label a line"):
        y = np.load(labels, allow_pickle=False) if labels.suffix == ".npy" else np.loadtxt(labels, dtype=str, ndmin=1)
    out = _output_folder(args.out, "--out", args, OUTPUTS)
    try:
        result = benchmark(K, y, methods=args.methods, splits=args.splits, folds=args.folds, test_size=args.test_size,
                           quick=args.quick, out=out, n_jobs=args.n_jobs, seed=args.seed, quiet=args.quiet)
    except KeyboardInterrupt:  # what finished, not a traceback (as tables)
        print(f"indkernel benchmark: interrupted (Ctrl-C); the fits that finished are kept in {out / 'parts'}: the "
              "same command resumes from them", file=sys.stderr)
        return 130
    print(result.markdown)
    print(f"\n{', '.join(OUTPUTS)} in {out}")
    return 0


def _datasets(args) -> int:
    from .datasets import SOURCES, data_directory, data_status

    folder = data_directory(args.data_dir)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"the data directory {folder} is a file, not a folder; point --data-dir (or $INDKERNEL_DATA) "
                         "at a folder")
    print(f"data directory: {folder} (--data-dir, else $INDKERNEL_DATA, else the system's cache folder)")
    status = data_status(args.data_dir)
    for row in status.itertuples():
        state = "ok" if row.checksum_ok else ("WRONG CHECKSUM" if row.present else "missing")
        print(f"  {row.file:28s} {state}")
    missing = status[~status.checksum_ok]
    if len(missing):
        print("missing files are downloaded on first use when the network allows; otherwise put them in the "
              "data directory. Sources:")
        for row in missing.itertuples():
            source = SOURCES[row.file]
            converted = "" if source.convert is None else \
                f" (put {source.published_name} there as published: it is converted on first use)"
            print(f"  {row.file}: {row.source}{converted}")
    print("always available: scikit-learn's bundled digits (indkernel.datasets.load_digits_pair)")
    return 0


def _positive(text: str) -> float:
    """An argparse type: a positive finite number (checked before any work)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return value


def _penalty(text: str) -> float:
    """An argparse type for ρ: a positive number or ``inf`` (the clipped kernel)."""
    if text.strip().lower() in ("inf", "+inf", "infinity"):
        return float("inf")
    try:
        return _positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive number or inf (the clipped kernel (K0)_+), "
                                         f"got {text!r}") from None


def _iteration_cap(text: str) -> int:
    """An argparse type for --max-iter: a positive integer, or -1 for no limit."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1 (no limit), got {text!r}") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1 (no limit), got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="indkernel", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Support vector machines with indefinite kernels (Luss & d'Aspremont), with certified "
                    "duality gaps: solve problems, compare methods, reproduce the paper's figures and tables.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bars or messages")
    common.add_argument("--data-dir", default=None, help="folder of the paper's data sets")

    problem = argparse.ArgumentParser(add_help=False, parents=[common])
    problem.add_argument("data", nargs="?", metavar="DATA", help="features or a similarity (see below); "
                         "default: the embedded digits 3 vs 5")
    problem.add_argument("--labels", help="labels for a .npy DATA file (.npy, or one label a line)")
    problem.add_argument("--similarity", choices=SIMILARITIES, default=None,
                         help="similarity computed from features (default simpson; refused with a precomputed K)")
    problem.add_argument("--gamma", type=float, default=None,
                         help="width of the tangent / gaussian similarity (default 0.05)")
    problem.add_argument("--a", type=float, default=None, help="slope a of the sigmoid tanh(a<x, y> + r) (default 0.01)")
    problem.add_argument("--r", type=float, default=None, help="offset r of the sigmoid (default 0)")
    problem.add_argument("--C", type=_positive, default=10.0, help="misclassification penalty (default 10)")
    problem.add_argument("--rho", type=_penalty, default=1.0, help="penalty on ||K - K0||_F^2 (default 1; inf: the clipped kernel (K0)_+)")
    problem.add_argument("--class-weight", choices=("balanced", "authors"), default=None,
                         help="weight classes: balanced as scikit-learn (n / (2 n_c)), authors as the authors' code (C for the positive class, C n+/n- for the other)")
    problem.add_argument("--tol", type=_positive, default=None,
                         help="certified gap to reach, relative to the scale |l(alpha)| + max(u'K*u, u'|K0|u)/2 of the "
                              "objective (default 1e-6 for solve, 1e-4 for compare: the tol every method reaches there)")
    problem.add_argument("--max-iter", type=_iteration_cap, default=None,
                         help="iteration cap (default: the method's; -1: no limit)")
    problem.add_argument("--force", action="store_true", help="replace output files that exist")
    problem.add_argument("--time-limit", type=_positive, default=None, metavar="SECONDS",
                         help="stop each method after this many seconds, its setup included (the eigendecomposition "
                              "of K0 cannot be interrupted: a run whose setup alone took longer stops after it); "
                              "default: none for solve; for compare each method's measured cap, "
                              "indkernel.solvers.registry.COMPARE_TIME_LIMITS (the default methods together under a "
                              "minute)")

    solve = commands.add_parser("solve", parents=[problem], help="solve one problem and print its certified bounds",
                                description="Solve eq:kern_learn and print lower bound, certified upper bound "
                                            "and gap. Exit code 0 when the gap met --tol, 1 otherwise.",
                                epilog=_epilog("solve"), formatter_class=argparse.RawDescriptionHelpFormatter)
    solve.add_argument("--method", choices=list(METHODS), default="newton", metavar="METHOD",
                       help=f"the method ({', '.join(METHODS)}; default newton, the fastest; pg and accpm are the "
                            "paper's; sdp for small n only)")
    solve.add_argument("--alpha-out", help="write the solution alpha here (.npy)")
    solve.add_argument("--history-out", help="write the history (iteration, time, lower, upper, gap, scale) here (.csv)")
    solve.set_defaults(run=_solve)

    compare = commands.add_parser("compare", parents=[problem], help="run several methods on one problem",
                                  description="Run several methods on the same problem; print a table and "
                                              "optionally plot the certified gaps.",
                                  epilog=_epilog("compare"), formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("--methods", nargs="+", default=list(COMPARED), choices=list(METHODS), metavar="METHOD",
                         help=f"the methods to run, in order (any of {', '.join(METHODS)}; default "
                              f"{' '.join(COMPARED)})")
    compare.add_argument("--plot", help="write the gap-versus-iteration/time plot here (.png)")
    compare.set_defaults(run=_compare)

    figures = commands.add_parser("figures", parents=[common], help="reproduce the paper's convergence and "
                                  "timing figures (CSV and PNG)",
                                  description="fig:convergence_figures and fig:time_figures: compute the long "
                                              "tables, save them as CSV and draw the PNGs into --out.",
                                  epilog=_epilog("figures"), formatter_class=argparse.RawDescriptionHelpFormatter)
    figures.add_argument("which", nargs="?", choices=("convergence", "timing", "all"), default="all",
                         help="which figure: convergence, timing or all (default)")
    size = figures.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small subsets, few runs (default; minutes)")
    size.add_argument("--full", action="store_true", help="the paper's sizes and 10 runs (an hour or more)")
    figures.add_argument("--dataset", choices=("digits", "usps"), default="digits",
                         help="digits: embedded (default); usps: USPS 3 vs 5 from the data directory")
    figures.add_argument("--out", default="indkernel-figures", help="output folder (default ./indkernel-figures)")
    figures.add_argument("--force", action="store_true", help="replace the figures' CSV and PNG files that exist in --out")
    figures.set_defaults(run=_figures)

    tables = commands.add_parser("tables", parents=[common], help="reproduce the paper's three tables",
                                 description="table:data_stats, table:gen_performance and "
                                             "table:gen_performance_perturbSVM with the paper's protocol.",
                                 epilog=_epilog("tables"), formatter_class=argparse.RawDescriptionHelpFormatter)
    tables.add_argument("--quick", action="store_true", help="subsets of 120 points, small grids")
    tables.add_argument("--digits", action="store_true", help="the embedded digits instead of the paper's data")
    tables.add_argument("--multiclass", action="store_true",
                        help="instead: ten-class USPS on the standard 7291/2007 split, tangent distance and Simpson "
                             "(both similarities: under an hour on 2 cores, peak 8 GB; --quick: 300/200 images)")
    tables.add_argument("--ablation", action="store_true",
                        help="instead: the Simpson rows with one choice changed at a time (test rule, ρ grid, "
                             "binarization threshold, class weights, loss), Indefinite SVM against denoise over --splits")
    tables.add_argument("--rules", action="store_true",
                        help="instead: Indefinite SVM's rules for new points (raw, consistent, transductive, and two "
                             "variants of the consistent map), each cross-validated with itself, against denoise "
                             "over --splits; each (data set, split) is kept in --out, so a stopped run resumes")
    tables.add_argument("--n-train", type=int, default=None,
                        help="with --multiclass: a random subset of this many training images")
    tables.add_argument("--similarities", nargs="+", choices=("TD", "SS"), default=["TD", "SS"],
                        help="with --multiclass: tangent distance (TD) and/or Simpson (SS)")
    tables.add_argument("--splits", type=int, default=None,
                        help="repeat the whole protocol over this many random splits: mean ± sd and paired tests "
                             "(default 10; --quick 2; with --multiclass and --n-train: random training subsets)")
    tables.add_argument("--datasets", nargs="+", default=None, metavar="NAME",
                        help="rerun only these data sets' rows (e.g. a1a-sig USPS-3-5-linear), keeping the other "
                             "rows of the tables already in --out (same mode and --splits)")
    tables.add_argument("--methods", nargs="+", default=None, metavar="NAME",
                        help="rerun only these methods' cells of table:gen_performance (e.g. --methods 'Indefinite "
                             "SVM'), keeping the other cells of the tables already in --out (same mode and --splits)")
    tables.add_argument("--n-jobs", type=int, default=2,
                        help="parallel jobs (default 2): the splits, or with one split the cross-validation fits")
    tables.add_argument("--backend", choices=("loky", "dask"), default="loky",
                        help="where the parallel jobs run: local processes (loky, default) or a Dask cluster "
                             "(pip install 'indkernel[dask]'), the same rows either way")
    tables.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="with --backend dask: a running scheduler (tcp://host:8786); without it, a local "
                             "cluster of --n-jobs workers")
    tables.add_argument("--out", default="indkernel-tables", help="output folder (default ./indkernel-tables)")
    tables.add_argument("--force", action="store_true",
                        help="replace the finished tables (CSV and markdown) in --out. Not needed to resume a "
                             "stopped --rules or --multiclass run from its part files in --out (reused either way: "
                             "delete them to recompute), nor for --datasets and --methods, which update the tables")
    tables.set_defaults(run=_tables)

    from .estimators.registry import METHODS as CLASSIFIERS
    from .reproduction.benchmark import FOLDS, SPLITS, TEST_SIZE

    bench = commands.add_parser("benchmark", parents=[common], help="every method of the field on your similarity "
                                "matrix, Chen et al.'s protocol",
                                description="Run the registry's methods on a precomputed similarity matrix under Chen "
                                            "et al.'s protocol: random stratified splits, parameters by inner "
                                            "cross-validation, one test per split; print and write one table (test "
                                            "error mean ± sd, the best marked, paired t-tests against it). Each "
                                            "split is kept in --out as it finishes: a stopped run resumes.",
                                epilog=_epilog("benchmark"), formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_argument("--list", action="store_true", help="print the registry's methods (estimator, grid, "
                       "citation) and exit")
    bench.add_argument("--similarity", metavar="FILE",
                       help="the n x n similarity matrix (.npy, or a text matrix one row a line)")
    bench.add_argument("--labels", metavar="FILE", help="n labels (.npy, or one label a line)")
    bench.add_argument("--splits", type=int, default=SPLITS, help=f"random train/test splits (default {SPLITS})")
    bench.add_argument("--test-size", type=float, default=TEST_SIZE,
                       help=f"the held-out fraction of each split (default {TEST_SIZE})")
    bench.add_argument("--folds", type=int, default=FOLDS,
                       help=f"folds of the inner cross-validation (default {FOLDS})")
    bench.add_argument("--methods", nargs="+", default=None, metavar="NAME", choices=list(CLASSIFIERS),
                       help="the methods to run (default all but Flip, which is the Krein SVM): "
                            + ", ".join(repr(name) for name in CLASSIFIERS))
    bench.add_argument("--quick", action="store_true", help="each method's small grid (a first look)")
    bench.add_argument("--seed", type=int, default=0, help="the first split's random seed (default 0)")
    bench.add_argument("--n-jobs", type=int, default=None, help="parallel fits of the cross-validation (default 1)")
    bench.add_argument("--out", default="indkernel-benchmark",
                       help="output folder: part files and the tables (default ./indkernel-benchmark)")
    bench.add_argument("--force", action="store_true", help="replace the finished tables in --out (the part files "
                       "are reused either way: delete them to recompute)")
    bench.set_defaults(run=_benchmark)

    data = commands.add_parser("datasets", parents=[common], help="where the data directory is and what it holds",
                               description="Print the data directory and, for each of the paper's data files, "
                                           "whether it is there with the published checksum, and where a missing "
                                           "one is published (missing files download on first use when online).",
                               epilog=_epilog("datasets"), formatter_class=argparse.RawDescriptionHelpFormatter)
    data.set_defaults(run=_datasets)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError, MemoryError) as exc:  # OSError: a file that cannot be read or written
        print(f"indkernel {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
