"""Helpers for the reproducible studies of studies/ (issue #22): pure Python on top of plucker.

    import plucker, plucker_studies
    m = plucker.build_humanoid()
    c = plucker_studies.jsim_condition(m, plucker.neutral(m), length_scale=1.0)
    c.cond, c.eigenvalues[0], c.eigenvectors[:, -1]        # ascending eigenvalues, columns
    plucker_studies.joint_shares(m, c.eigenvectors[:, -1])  # which joints the stiffest mode moves

Units. A revolute coordinate is an angle (its JSIM entries are kg m^2), a translational one a
length (entries in kg, or kg m for the couplings), so the condition number of a JSIM with both
kinds depends on the unit of length. `length_scale` L measures every translational velocity in
units of L per second: v_lin = L u, so the matrix whose condition number is taken is
S M S with S = diag(L on translational DoF, 1 elsewhere); every entry is then in kg m^2.
L = 1 is the SI matrix as plucker.crba returns it. `scaling="jacobi"` takes instead the
condition number of D^-1/2 M D^-1/2 (D = diag M), which no diagonal change of units alters.
"""
import math
from typing import NamedTuple

import numpy as np

import plucker

# The velocity components of each joint kind that are translations (metres per second); every
# other component is an angular rate. A helical joint's coordinate is an angle; a general joint's
# columns are treated as rotations (documented: its units are its own).
_TRANSLATIONAL = {
    "free_flyer": (3, 4, 5),  # v = [omega; v] (DEVELOPERS.md)
    "planar": (0, 1),  # v = [vx, vy, omega]
    "prismatic": (0,),
    "prismatic_x": (0,),
    "prismatic_y": (0,),
    "prismatic_z": (0,),
    "cylindrical": (1,),  # v = [rotation rate, translation rate]
}


class JsimCondition(NamedTuple):
    cond: float  # lambda_max / lambda_min of the (scaled) JSIM; inf when numerically singular
    eigenvalues: np.ndarray  # ascending
    eigenvectors: np.ndarray  # unit columns, eigenvectors[:, k] belongs to eigenvalues[k]
    matrix: np.ndarray  # the matrix they belong to (S M S, or the Jacobi-scaled M)


def translational_dofs(model):
    """Indices (into v) of the velocity components that are translations."""
    out = []
    for name in model.joint_names:
        kind = model.joint_kind(name)
        start = model.joint_v_index(name)
        out.extend(start + k for k in _TRANSLATIONAL.get(kind, ()))
    return np.array(sorted(out), dtype=int)


def unit_scaling(model, length_scale):
    """The diagonal of S: length_scale on translational DoF, 1 on rotational ones."""
    L = float(length_scale)
    if not math.isfinite(L) or L <= 0.0:
        raise ValueError(f"plucker_studies: length_scale = {length_scale!r} must be finite and > 0 (metres)")
    s = np.ones(model.nv)
    s[translational_dofs(model)] = L
    return s


def _check_matrix(M, who):
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"{who}: the matrix must be square and non-empty, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{who}: the matrix has non-finite entries")
    asym = np.max(np.abs(M - M.T))
    if asym > 1e-10 * max(np.max(np.abs(M)), np.finfo(float).tiny):
        raise ValueError(f"{who}: the matrix is not symmetric (max |M - M^T| = {asym:.3g})")
    return 0.5 * (M + M.T)


def spd_condition(M, who="plucker_studies.spd_condition"):
    """(cond, eigenvalues ascending, eigenvectors) of a symmetric positive semi-definite matrix.

    cond = lambda_max / lambda_min, the 2-norm condition number. It is inf when lambda_min is at
    or below n * eps * lambda_max: the matrix is singular to double precision (a massless moving
    body, or a mode whose inertia is lost to rounding), and its smallest eigenvalue is noise."""
    M = _check_matrix(M, who)
    w, V = np.linalg.eigh(M)
    if w[-1] <= 0.0:
        raise ValueError(f"{who}: the matrix has no positive eigenvalue (largest {w[-1]:.3g})")
    if w[0] < -1e-8 * w[-1]:
        raise ValueError(f"{who}: the matrix is indefinite (eigenvalues {w[0]:.3g} .. {w[-1]:.3g}), not an inertia matrix")
    floor = M.shape[0] * np.finfo(float).eps * w[-1]
    cond = math.inf if w[0] <= floor else float(w[-1] / w[0])
    return cond, w, V


def jsim_condition(model, q, length_scale=1.0, scaling="units"):
    """Condition number and eigen-decomposition of the joint-space inertia matrix M(q).

    scaling="units": of S M S, S = diag(length_scale on translational DoF, 1 elsewhere) (see the
    module docstring; length_scale = 1 is plucker.crba's matrix in SI units). A model with no
    translational DoF gives M itself for every length_scale.
    scaling="jacobi": of D^-1/2 M D^-1/2, D = diag M (length_scale unused): the same for every
    choice of units, and within a factor n of the best diagonal scaling (van der Sluis).
    Returns JsimCondition(cond, eigenvalues ascending, eigenvectors as columns, matrix)."""
    if not isinstance(model, plucker.Model):
        raise TypeError(f"plucker_studies.jsim_condition: expected a plucker.Model, got {type(model).__name__}")
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (model.nq,):
        raise ValueError(f"plucker_studies.jsim_condition: q has shape {q.shape}, the model needs ({model.nq},)")
    M = plucker.crba(model, q)
    if scaling == "units":
        s = unit_scaling(model, length_scale)
        A = M * s[:, None] * s[None, :]
    elif scaling == "jacobi":
        d = np.diag(M)
        if np.any(d <= 0.0):
            labels = dof_labels(model)
            bad = [labels[i] for i in np.flatnonzero(d <= 0.0)]
            raise ValueError(f"plucker_studies.jsim_condition: zero inertia on the diagonal at {bad}; "
                             "Jacobi scaling needs every DoF to move some mass")
        r = 1.0 / np.sqrt(d)
        A = M * r[:, None] * r[None, :]
    else:
        raise ValueError(f"plucker_studies.jsim_condition: unknown scaling {scaling!r} (valid: 'units', 'jacobi')")
    cond, w, V = spd_condition(A, "plucker_studies.jsim_condition")
    return JsimCondition(cond, w, V, A)


def dof_labels(model):
    """A label per velocity component: the joint name, with the component for multi-DoF joints
    (free_flyer: wx wy wz vx vy vz; planar: vx vy w)."""
    components = {"free_flyer": ("wx", "wy", "wz", "vx", "vy", "vz"), "planar": ("vx", "vy", "w"),
                  "cylindrical": ("rot", "trans"), "spherical": ("wx", "wy", "wz")}
    labels = [None] * model.nv
    for name in model.joint_names:
        start, n = model.joint_v_index(name), model.joint_nv(name)
        comp = components.get(model.joint_kind(name))
        for k in range(n):
            labels[start + k] = name if n == 1 else f"{name}.{comp[k] if comp and k < len(comp) else k}"
    return labels


def joint_shares(model, vector):
    """Share of a mode's squared norm per joint ({joint name: share}, shares sum to 1), joints in
    model order. For a free-flyer the share is split into '<name>.rot' and '<name>.trans'."""
    x = np.asarray(vector, dtype=np.float64)
    if x.shape != (model.nv,):
        raise ValueError(f"plucker_studies.joint_shares: vector has shape {x.shape}, the model needs ({model.nv},)")
    total = float(x @ x)
    if not total > 0.0:
        raise ValueError("plucker_studies.joint_shares: zero vector")
    out = {}
    for name in model.joint_names:
        start, n = model.joint_v_index(name), model.joint_nv(name)
        if n == 0:
            continue
        part = x[start:start + n] ** 2 / total
        if model.joint_kind(name) == "free_flyer":
            out[name + ".rot"] = float(part[:3].sum())
            out[name + ".trans"] = float(part[3:].sum())
        else:
            out[name] = float(part.sum())
    return out


def fit_power_law(x, y):
    """Least-squares fit of log y = log c + p log x. Returns (p, c, r2) (r2 of the log fit)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"plucker_studies.fit_power_law: need two 1-D arrays of equal length >= 2, got {x.shape}, {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0) or not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
        raise ValueError("plucker_studies.fit_power_law: x and y must be finite and > 0")
    lx, ly = np.log(x), np.log(y)
    A = np.vstack([lx, np.ones_like(lx)]).T
    (p, logc), *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - (p * lx + logc)
    ss = float(np.sum((ly - ly.mean()) ** 2))
    r2 = 1.0 - float(resid @ resid) / ss if ss > 0 else 1.0
    return float(p), float(math.exp(logc)), r2


def _free_flyer_root(model, who):
    names = model.joint_names
    if not names or model.joint_kind(names[0]) != "free_flyer" or model.joint_v_index(names[0]) != 0:
        raise ValueError(f"{who}: the model has no free-flyer root joint (load it with floating_base=True)")
    return names[0]


def characteristic_length(model, q):
    """Radius of gyration of the whole system about the floating base's origin at q:
    sqrt(trace(I_O) / (3 m)), I_O the composite rotational inertia about the base origin (the
    base block of M) and m the total mass. With length_scale = this value the translational and
    rotational diagonal blocks of the base have equal mean entries."""
    _free_flyer_root(model, "plucker_studies.characteristic_length")
    M = plucker.crba(model, np.asarray(q, dtype=np.float64))
    mass = np.trace(M[3:6, 3:6]) / 3.0
    return float(math.sqrt(np.trace(M[0:3, 0:3]) / (3.0 * mass)))


def free_base_joint_inertia(model, q):
    """The inertia the joints feel when the floating base is free: the Schur complement
    M_jj - M_jb M_bb^-1 M_bj of the base block (b = the root free-flyer's 6 DoF, j = the rest).
    Its inverse is the joint block of M^-1, so it is what forward dynamics sees for the joints;
    with revolute joints only it carries no unit of length."""
    _free_flyer_root(model, "plucker_studies.free_base_joint_inertia")
    M = plucker.crba(model, np.asarray(q, dtype=np.float64))
    if model.nv == 6:
        raise ValueError("plucker_studies.free_base_joint_inertia: the model has no joint besides its floating base")
    Mbb, Mjb, Mjj = M[:6, :6], M[6:, :6], M[6:, 6:]
    S = Mjj - Mjb @ np.linalg.solve(Mbb, Mjb.T)
    return 0.5 * (S + S.T)
