"""Checks at the boundary: every public entry point validates here before any work starts.

Each error names the argument and says how to fix it.
"""

from __future__ import annotations

from numbers import Real
from pathlib import Path

import numpy as np
import psutil

#: Relative tolerance under which a similarity matrix counts as symmetric.
SYMMETRY_TOL = 1e-10


def as_float_array(value, name: str) -> np.ndarray:
    """``value`` as a float64 array, or a TypeError naming ``name``."""
    raw = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if raw.dtype.kind in "cSUV" or (raw.dtype.kind == "O" and any(isinstance(v, (str, bytes, complex)) for v in raw.flat)):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {raw.dtype} "
                        "(convert strings with float(...); for complex data take the real part explicitly)")
    try:
        array = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers; got {type(value).__name__}") from exc
    return array


def check_finite(array: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0]
        where = f" at index {tuple(int(i) for i in bad)}" if array.ndim else ""
        raise ValueError(f"{name} contains NaN or inf{where}; remove or impute those entries first")


def check_kernel(K0, *, symmetrize: bool = False, name: str = "K0") -> np.ndarray:
    """A finite, square, symmetric float64 copy of the similarity matrix ``K0``.

    Asymmetry beyond ``SYMMETRY_TOL`` (relative to the largest entry) is an error unless
    ``symmetrize=True``; the returned matrix is always ``(K0 + K0.T) / 2``. A read-only, exactly
    symmetric float64 ``K0`` (a matrix this function returned and a problem froze, which the
    one-vs-rest problems of an estimator share) is returned as it is, not copied. At most two
    n×n arrays beside K0 are alive at once.
    """
    shape = np.shape(K0)
    if len(shape) == 2 and shape[0] == shape[1]:  # before any copy
        check_memory(shape[0], f"a problem on the {shape[0]}×{shape[0]} {name}", PROBLEM_ARRAYS,
                     "use fewer points or free memory")
    K = as_float_array(K0, name)
    check_square(K.shape, name)
    check_finite(K, name)
    asymmetry = check_symmetric(K, name, symmetry_advice(name, symmetrize))
    if asymmetry == 0.0 and not K.flags.writeable:
        return K
    symmetric = K + K.T
    symmetric *= 0.5  # exactly symmetric, whatever round-off the caller's matrix had
    return symmetric


def check_square(shape: tuple, name: str) -> None:
    """A ValueError unless ``shape`` is that of a square similarity matrix of two samples or more."""
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square (n, n) similarity matrix; got shape {tuple(shape)}")
    if shape[0] < 2:
        raise ValueError(f"{name} must be at least 2x2 (two samples, one of each class); got {tuple(shape)}")


def symmetry_advice(name: str, symmetrize: bool) -> str | None:
    """What :func:`check_symmetric` tells the caller of a problem (None: it symmetrizes)."""
    return None if symmetrize else (f"symmetrize it first, ({name} + {name}.T) / 2 (the problem classes also take "
                                    "symmetrize=True)")


def check_asymmetry(asymmetry: float, largest: float, name: str, advice: str | None) -> None:
    """A ValueError naming ``name`` and giving ``advice`` when the largest ``|K - Kᵀ|`` exceeds
    ``SYMMETRY_TOL`` relative to the largest ``|K|`` (none when ``advice`` is None)."""
    if advice is not None and asymmetry > SYMMETRY_TOL * largest:  # relative at every scale
        raise ValueError(f"{name} is not symmetric (max |{name} - {name}.T| = {asymmetry:.3g}, max |{name}| = "
                         f"{largest:.3g}); {advice}")


def largest_magnitude(A, xp=np) -> float:
    """``max |A|`` of a non-empty array of namespace ``xp``, as two passes (``|A|`` would be one more
    array of A's size)."""
    return max(float(xp.max(A)), -float(xp.min(A)))


def check_symmetric(K: np.ndarray, name: str, advice: str | None) -> float:
    """The largest ``|K - Kᵀ|`` of the square float array K; a ValueError naming ``name`` and
    giving ``advice`` when it exceeds ``SYMMETRY_TOL`` relative to the largest entry (none when
    ``advice`` is None: the caller symmetrizes)."""
    difference = K - K.T
    asymmetry = float(np.max(np.abs(difference, out=difference)))
    del difference
    check_asymmetry(asymmetry, largest_magnitude(K), name, advice)
    return asymmetry


#: Largest ``n·max|K0|`` (so squared eigenvalues stay finite) and largest term of the objective
#: (``ρ‖K0‖²_F``, ``‖u‖²‖K0‖``, ``‖u‖⁴/(16ρ)``) that the problems accept; float64 ends at 1.8e308.
MAX_KERNEL_SCALE = 1e150
MAX_TERM = 1e250


def safe_norm(v: np.ndarray) -> float:
    """``‖v‖₂`` without overflow in the squares (``inf`` only when the norm itself is)."""
    largest = float(np.max(np.abs(v), initial=0.0))
    return 0.0 if largest == 0 else largest * float(np.sqrt(np.sum((v / largest) ** 2)))


def check_scale(K0: np.ndarray, box_norm: float, rho: float, *, kernel: str = "K0", box: str = "C",
                penalty: str = "rho") -> None:
    """Refuse data whose objective would overflow, naming what to rescale (before any work).

    ``box_norm`` bounds ``‖u(α)‖`` over the feasible set. The problem is scale-covariant: with
    ``K0 -> sK0``, ``C -> C/s`` and ``ρ -> ρ/s³`` the optimal value becomes ``p*/s`` with the same α·s.
    """
    kernel_scale = largest_magnitude(K0) * K0.shape[0]  # bounds ‖K0‖₂ and ‖K0‖_F
    uu, sigma = box_norm * box_norm, 1.0 / (4.0 * rho)
    if kernel_scale > MAX_KERNEL_SCALE:
        raise ValueError(f"{kernel} is too large for float64: n·max|{kernel}| = {kernel_scale:.3g} > {MAX_KERNEL_SCALE:g} "
                         f"(its squared eigenvalues overflow); divide {kernel} by a constant s (and {box} by s, "
                         f"{penalty} by s³ for the same solution up to scale)")
    terms = {f"{penalty}·‖{kernel}‖²_F": rho * kernel_scale * kernel_scale if rho < np.inf else 0.0,  # ∞: dropped
             f"‖u‖²/(4{penalty}) with u bounded by {box}": sigma * uu * max(1.0, uu),
             f"‖u‖²·‖{kernel}‖ with u bounded by {box}": uu * kernel_scale}
    for what, value in terms.items():
        if not value <= MAX_TERM:
            raise ValueError(f"the objective overflows float64: {what} reaches {value:.3g} > {MAX_TERM:g}; "
                             f"rescale {kernel}, {box} or {penalty} (smaller {box}, larger {penalty}, or {kernel} "
                             "divided by a constant)")


def check_binary_labels(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Map any two label values to ±1.

    Returns ``(y_pm, classes)`` where ``classes`` are the two original values, sorted, and
    ``y_pm[i] = +1`` exactly when ``y[i] == classes[1]`` (scikit-learn's convention).
    """
    labels = np.asarray(y)
    if labels.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels; got shape {labels.shape} (use y.ravel())")
    if labels.shape[0] != n:
        raise ValueError(f"y has {labels.shape[0]} labels but K0 is {n}x{n}; give one label per row of K0")
    if labels.dtype.kind == "f":
        check_finite(labels, "y")
    if labels.dtype.kind == "O" and any(v is None for v in labels):
        raise ValueError(f"y holds None at index {[v is None for v in labels].index(True)}; every sample needs a label")
    try:
        classes = np.unique(labels)
    except TypeError as exc:
        kinds = sorted({type(v).__name__ for v in labels})
        raise TypeError(f"y must hold labels of one kind (all numbers or all strings); got {kinds}") from exc
    if classes.size != 2:
        raise ValueError(
            f"y must contain exactly two classes; found {classes.size}: {classes[:5].tolist()}"
            + (" (a one-class problem needs a one-class model)" if classes.size == 1 else
               " (for more classes, train one-vs-rest problems)")
        )
    return np.where(labels == classes[1], 1.0, -1.0), classes


def check_positive_scalar(value, name: str, meaning: str) -> float:
    """A finite float > 0, else an error that says what ``name`` means."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.number)):
        raise TypeError(f"{name} must be a positive real number ({meaning}); got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number ({meaning}); got {value!r}")
    return value


def check_rho(value, meaning: str) -> float:
    """The penalty ρ: a float > 0, or ``inf`` for the limit ``K* = (K0)_+`` (``ss:interpretation``)."""
    if isinstance(value, (Real, np.number)) and not isinstance(value, bool) and float(value) == np.inf:
        return np.inf
    try:
        return check_positive_scalar(value, "rho", meaning)
    except ValueError as exc:
        raise ValueError(f"{exc}; pass rho=np.inf for the limit K* = (K0)_+ (the clipped kernel)") from None


def penalty_vector(C, y_pm: np.ndarray, classes: np.ndarray, class_weight=None) -> np.ndarray:
    """Per-sample misclassification penalties ``C_i > 0`` (the box ``0 <= alpha <= C``).

    ``C`` is a scalar or a length-n vector. ``class_weight`` multiplies it per class:
    ``None``; ``"balanced"`` as scikit-learn (``n / (2 n_c)``); ``"authors"`` as the authors'
    reference code (``C`` for the positive class, ``C * n_pos / n_neg`` for the negative one); or
    a dict ``{label: weight}``.
    """
    return per_sample_penalty(C, y_pm.shape[0]) * _class_weights(class_weight, y_pm, classes)


def per_sample_penalty(C, n: int, meaning: str = "the SVM misclassification penalty") -> np.ndarray:
    """``C`` (a positive scalar or a positive length-n vector) as a length-n vector."""
    if np.ndim(C) == 0:
        return np.full(n, check_positive_scalar(C, "C", meaning))
    C_vec = as_float_array(C, "C")
    if C_vec.shape != (n,):
        raise ValueError(f"C must be a scalar or a vector of length n={n}; got shape {C_vec.shape}")
    check_finite(C_vec, "C")
    if np.any(C_vec <= 0):
        raise ValueError(f"C must be > 0 for every sample; C[{int(np.argmin(C_vec))}] = {C_vec.min():.3g}")
    return C_vec


def check_nonnegative_scalar(value, name: str, meaning: str) -> float:
    """A finite float >= 0, else an error that says what ``name`` means."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.number)):
        raise TypeError(f"{name} must be a nonnegative real number ({meaning}); got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0 ({meaning}); got {value!r}")
    return value


def check_nu(nu) -> float:
    """ν in (0, 1], the one-class SVM's bound on the fraction of outliers."""
    nu = check_positive_scalar(nu, "nu", "the one-class SVM's fraction of outliers, in (0, 1]")
    if nu > 1:
        raise ValueError(f"nu must be in (0, 1] (a fraction of the training points); got {nu!r}")
    return nu


def _class_weights(class_weight, y_pm: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return sample_class_weights(class_weight, (y_pm > 0).astype(int), classes)


#: The named class weightings: scikit-learn's, and the authors' reference code's.
CLASS_WEIGHT_RULES = ("balanced", "authors")


def sample_class_weights(class_weight, index: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The weight of each sample's class; ``index[i]`` is the position of sample i's label in
    ``classes``. ``"balanced"`` is scikit-learn's ``n / (k n_c)`` for k classes; ``"authors"`` gives
    class c the weight ``n_last / n_c`` (``n_last``: the size of ``classes[-1]``): for two classes
    the authors' reference code (C for the positive class, ``C * n_pos / n_neg`` for the negative
    one), and the same ratio in every pair of classes."""
    if class_weight is None:
        return np.ones(index.shape[0])
    if isinstance(class_weight, str):
        if class_weight not in CLASS_WEIGHT_RULES:
            raise ValueError(f"class_weight must be None, 'balanced' (scikit-learn's), 'authors' (the authors' code) or "
                             f"a dict {{label: weight}}; got {class_weight!r}")
        counts = np.bincount(index, minlength=len(classes)).astype(float)
        if class_weight == "balanced":
            return index.shape[0] / (len(classes) * counts[index])
        return counts[-1] / counts[index]
    if isinstance(class_weight, dict):
        unknown = set(class_weight) - set(classes.tolist())
        if unknown:
            raise ValueError(f"class_weight has labels {sorted(unknown, key=str)} not in y; the classes are {classes.tolist()}")
        values = [class_weight.get(c, 1.0) for c in classes]
        if not all(isinstance(v, (Real, np.number)) and not isinstance(v, bool) for v in values):
            raise TypeError(f"class_weight values must be positive numbers; got {class_weight!r}")
        weights = np.array(values, dtype=float)
        if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
            raise ValueError(f"class_weight values must be positive finite numbers; got {class_weight!r}")
        return weights[index]
    raise TypeError(f"class_weight must be None, 'balanced', 'authors' or a dict {{label: weight}}; "
                    f"got {type(class_weight).__name__}")


def check_vector(x, n: int, name: str) -> np.ndarray:
    """A finite float64 vector of length ``n``."""
    v = as_float_array(x, name)
    if v.shape != (n,):
        raise ValueError(f"{name} must be a vector of length n={n}; got shape {v.shape}")
    check_finite(v, name)
    return v


def check_two_samples(n_samples: int, estimator: str) -> None:
    if n_samples < 2:
        raise ValueError(f"{estimator} needs at least two training samples; got one sample")


#: n×n float64 arrays alive at the peak of a fit: K0, its validated copy, the eigenvectors V0 of the
#: rank-one oracle, and either LAPACK's copy of K0 during the one eigendecomposition or, during a
#: projected Newton step, the eigenvectors W of the update and the divided-difference block (at
#: most n²/4 numbers) of :meth:`IndefiniteProblem.hessian`.
FIT_ARRAYS = 5


#: The cgroup (v2, or v1's memory controller) whose limit a container sets.
CGROUP_V2, CGROUP_V1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/memory")


def available_memory() -> int:
    """Bytes this process can still allocate: the least of the machine's available memory
    (psutil), the room under a container's cgroup limit, and the room under the process's
    address-space limit (``ulimit -v``)."""
    limits = [room for room in (_cgroup_room(), _address_space_room()) if room is not None]
    return min([int(psutil.virtual_memory().available), *limits])


def _cgroup_room() -> int | None:
    """The cgroup's limit minus its usage (v2: memory.max and memory.current; v1: the memory
    controller's limit_in_bytes and usage_in_bytes); None without a limit."""
    for limit_file, usage_file in ((CGROUP_V2 / "memory.max", CGROUP_V2 / "memory.current"),
                                   (CGROUP_V1 / "memory.limit_in_bytes", CGROUP_V1 / "memory.usage_in_bytes")):
        try:
            limit, usage = limit_file.read_text().strip(), int(usage_file.read_text().strip())
        except (OSError, ValueError):
            continue
        if limit == "max" or not limit.isdigit() or int(limit) >= 2**60:  # no limit (v1 writes a huge number)
            continue
        return max(int(limit) - usage, 0)
    return None


def _address_space_room() -> int | None:
    """``RLIMIT_AS`` minus the address space in use (Unix), None without a limit."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    return max(soft - psutil.Process().memory_info().vms, 0)


#: n×n float64 arrays a problem type allocates beside the caller's K0 at its peak: the validated
#: copy and the symmetry check's difference, then the eigenvectors V0 and LAPACK's copy of K0.
PROBLEM_ARRAYS = 4


#: Needs up to this many bytes are not checked: asking for the available memory costs about 0.15 ms
#: (psutil and the cgroup's files), a few percent of a small fit, twice a fit, and a process that
#: cannot allocate 16 MiB fails at its next step anyway.
UNCHECKED_BYTES = 16 * 2**20


def check_memory(n: int, what: str, arrays: int = FIT_ARRAYS, fix: str = "train on fewer points or free memory") -> None:
    """Refuse, before any allocation, ``what`` (say "IndefiniteSVC on n=9 training points"), whose
    ``arrays`` n×n float64 arrays at its peak will not fit in the available memory: a MemoryError
    with the size, the need, what is available and ``fix`` (needs up to ``UNCHECKED_BYTES`` pass unasked)."""
    needed = arrays * 8 * n * n
    if needed <= UNCHECKED_BYTES:
        return
    available = available_memory()
    if needed > available:
        raise MemoryError(f"{what} needs about {needed / 2**30:.1f} GiB ({arrays} {n}×{n} float64 arrays at its "
                          f"peak), but {available / 2**30:.1f} GiB are available; {fix}")
