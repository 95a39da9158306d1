"""Arrays of any namespace of the Python array API standard (NumPy, torch, CuPy, ...): an array of
another namespace than NumPy's is worked on where it lives (:mod:`indkernel.core.device_oracle`), a
torch or CuPy array on a GPU there, whatever scikit-learn's ``array_api_dispatch`` says (that
setting also asks for ``SCIPY_ARRAY_API=1`` before scipy is imported, which the device route does
not need); lists and NumPy arrays are NumPy's.

``array-api-compat`` (the ``gpu`` extra) is imported only when such an array arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from .._validation import check_asymmetry, check_kernel, check_memory, check_square, largest_magnitude, symmetry_advice


def foreign_namespace(*arrays) -> ModuleType | None:
    """The array API namespace of ``arrays`` (array-api-compat's wrapper) when they are arrays of
    a namespace other than NumPy's, else None (NumPy arrays, lists, scalars, other objects).

    Raises
    ------
    ImportError
        If an array is of another namespace and array-api-compat is missing.
    """
    candidates = [a for a in arrays if a is not None and not isinstance(a, (np.ndarray, np.generic, list, tuple,
                                                                                  int, float))]
    if not candidates or not all(hasattr(a, "__array_namespace__") or _is_known_array(a) for a in candidates):
        return None
    try:
        import array_api_compat
    except ImportError as error:
        raise ImportError("solving on an array of another namespace than NumPy's needs array-api-compat: pip install "
                          "'indkernel[gpu]' (or pass a NumPy array)") from error
    xp = array_api_compat.array_namespace(*candidates)
    return None if array_api_compat.is_numpy_namespace(xp) else xp


def _is_known_array(a) -> bool:
    """A torch tensor or CuPy array (their namespaces are array-api-compat's wrappers)."""
    module = type(a).__module__
    return module.startswith("torch") or module.startswith("cupy")


def to_numpy(x, *, copy: bool = False) -> np.ndarray:
    """A NumPy array of an array of any namespace, from any device: a view where the array is in
    the host's memory already (unless ``copy``), else a copy."""
    if isinstance(x, np.ndarray):
        return x.copy() if copy else x
    import array_api_compat

    if array_api_compat.is_cupy_array(x):
        return x.get()
    if array_api_compat.is_torch_array(x):
        on_host = x.device.type == "cpu"
        array = x.detach().cpu().numpy()
    else:  # array-api-strict and other arrays in the host's memory
        on_host, array = True, np.from_dlpack(x)
    return array.copy() if copy and on_host else array


def device_of(x):
    """The device of an array of any namespace."""
    import array_api_compat

    return array_api_compat.device(x)


@dataclass(frozen=True)
class CheckedOnDevice:
    """A similarity :func:`checked_kernel` has validated on its device: its read-only host copy and
    its device array. Problems take it as K0 without checking or copying it again (an estimator's
    problems on one training similarity)."""

    host: np.ndarray
    device: Any

    @property
    def shape(self) -> tuple[int, ...]:
        """The matrix's shape, (n, n)."""
        return self.host.shape

    def rows(self, rows: np.ndarray) -> CheckedOnDevice:
        """The block on ``rows`` (a principal block of a symmetric matrix: symmetric, so still checked)."""
        host = self.host[np.ix_(rows, rows)]
        host.setflags(write=False)
        import array_api_compat

        xp = array_api_compat.array_namespace(self.device)
        taken = xp.asarray(rows, device=device_of(self.device))
        return CheckedOnDevice(host, xp.take(xp.take(self.device, taken, axis=0), taken, axis=1))


def checked_kernel(K0, *, symmetrize: bool = False, name: str = "K0") -> tuple[np.ndarray, Any]:
    """``(K0 validated, its array on the device or None)``: :func:`indkernel._validation.check_kernel`
    for NumPy input; an array of another namespace (:func:`foreign_namespace`) is checked where it
    lives (square, real, finite, symmetric: the same errors, no n×n work on the host), symmetrized
    there if it is not exactly, and copied once to a read-only NumPy array for the host's part of
    the problem. The device array is the caller's when it is exactly symmetric float64 (used as it
    is: not to be changed while the problem is in use). A :class:`CheckedOnDevice` is returned as
    it is."""
    if isinstance(K0, CheckedOnDevice):
        return K0.host, K0.device
    xp = foreign_namespace(K0)
    if xp is None:
        return check_kernel(K0, symmetrize=symmetrize, name=name), None
    shape = tuple(K0.shape)
    check_square(shape, name)
    check_memory(shape[0], f"a problem on the {shape[0]}×{shape[0]} {name} (its copy on the host)", 1,
                 "use fewer points or free memory")
    if not xp.isdtype(K0.dtype, ("real floating", "integral")):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {K0.dtype}")
    K = xp.astype(K0, xp.float64, copy=False)
    if not bool(xp.all(xp.isfinite(K))):
        raise ValueError(f"{name} contains NaN or inf; remove or impute those entries first")
    asymmetry = float(xp.max(xp.abs(K - K.T)))
    check_asymmetry(asymmetry, largest_magnitude(K, xp), name, symmetry_advice(name, symmetrize))
    if asymmetry > 0:
        K = (K + K.T) / 2  # exactly symmetric, as the host's check makes it
    host = to_numpy(K, copy=True)
    host.setflags(write=False)
    return host, K
