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


# ============================================================================ balance
# Velocity gains and the simple planar model of balancing (issue #22; Featherstone, RSS 2015 and
# IJRR 35(14) 2016, "Quantitative measures of a robot's physical ability to balance"; ISRR 2015
# and IJRR 2017, "A simple model of balancing in the plane and a simple preview balance
# controller"). docs/studies/balance.md states which formula comes from where and which parts
# could not be checked against the papers' text.
#
# The model convention: the robot's first joint(s) model the contact with the ground and are
# passive. One revolute joint whose axis passes through the contact point is a point foot in the
# plane (the motion is in the plane normal to the axis); up to three revolute joints with axes
# through one point (massless links between them) are a point contact in 3-D. Every other joint
# may be actuated.

_REVOLUTE = ("revolute", "revolute_x", "revolute_y", "revolute_z")


def _check_model_q(model, q, who):
    if not isinstance(model, plucker.Model):
        raise TypeError(f"{who}: expected a plucker.Model, got {type(model).__name__}")
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (model.nq,):
        raise ValueError(f"{who}: q has shape {q.shape}, the model needs ({model.nq},)")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{who}: q has non-finite entries")
    return q


def contact_dofs(model, contact_joints=None, who="plucker_studies.contact_dofs"):
    """Velocity indices of the passive contact joints: the first joint by default, or the named
    joints, which must be the model's first joints (v indices 0..k-1), revolute, and hang from the
    fixed base in a chain (the first from the base, each next one from the previous one)."""
    names = model.joint_names
    if contact_joints is None:
        if not names:
            raise ValueError(f"{who}: the model has no joint")
        contact_joints = [names[0]]
    if isinstance(contact_joints, str):
        contact_joints = [contact_joints]
    contact_joints = list(contact_joints)
    if not 1 <= len(contact_joints) <= 3:
        raise ValueError(f"{who}: need 1 to 3 contact joints, got {len(contact_joints)}")
    parents = model.parents
    for k, name in enumerate(contact_joints):
        if name not in names:
            raise ValueError(f"{who}: no joint named {name!r} (joints: {names})")
        kind = model.joint_kind(name)
        if kind not in _REVOLUTE:
            raise ValueError(f"{who}: contact joint {name!r} is {kind}; a point contact is modelled by revolute joints")
        if model.joint_v_index(name) != k:
            raise ValueError(f"{who}: contact joint {name!r} must be joint number {k + 1} of the model "
                             f"(v index {k}), it has v index {model.joint_v_index(name)}")
        body = model.body_index(_joint_body(model, name))
        if parents[body] != (0 if k == 0 else body - 1):
            raise ValueError(f"{who}: contact joint {name!r} must hang from "
                             f"{'the fixed base' if k == 0 else repr(contact_joints[k - 1])}")
    return np.arange(len(contact_joints))


def _joint_body(model, joint_name):
    """Name of the body a joint moves (the joints and bodies share an order)."""
    return model.body_names[model.joint_names.index(joint_name) + 1]


def _world_axis_and_point(model, q, joint_name):
    """Unit axis n (world) of a revolute joint and the point p of its axis closest to the world
    origin, from the joint's column [n; v0] of its body's world-frame Jacobian: v0, the velocity of
    the body point at the world origin, is n x (0 - p) = p x n, so p = n x v0."""
    body = _joint_body(model, joint_name)
    J = plucker.body_jacobian(model, q, body, frame="world")
    col = J[:, model.joint_v_index(joint_name)]
    n, v0 = col[:3], col[3:]
    return n, np.cross(n, v0)


def up_direction(model):
    """Unit vector opposite to the model's gravity."""
    g = np.asarray(model.gravity, dtype=np.float64)
    ng = float(np.linalg.norm(g))
    if not ng > 0.0:
        raise ValueError("plucker_studies: the model has zero gravity; balance needs gravity")
    return -g / ng


def horizontal_directions(model, q, contact_joints=None):
    """Rows: the horizontal unit directions in which the COM velocity is measured.

    One revolute contact joint (a point foot in the plane): one row, u = n x up for the joint's
    world axis n, so a positive rotation of the contact joint moves an upright robot's COM along +u. Two or three contact joints (a point contact in 3-D): an orthonormal basis (e1, e2)
    of the horizontal plane with e1 x e2 = up (e1 from world x, or world y if x is vertical)."""
    q = _check_model_q(model, q, "plucker_studies.horizontal_directions")
    dofs = contact_dofs(model, contact_joints, "plucker_studies.horizontal_directions")
    up = up_direction(model)
    names = model.joint_names
    if dofs.size == 1:
        n, _ = _world_axis_and_point(model, q, names[0])
        u = np.cross(n, up)
        nu = float(np.linalg.norm(u))
        if nu < 1e-9:
            raise ValueError(f"plucker_studies: contact joint {names[0]!r} has a vertical axis; "
                             "a planar point foot needs a horizontal axis")
        if abs(float(n @ up)) > 1e-9:
            raise ValueError(f"plucker_studies: contact joint {names[0]!r} axis is not horizontal "
                             f"(n . up = {float(n @ up):.3g}); the planar balance model needs a horizontal axis")
        return (u / nu)[None, :]
    e1 = np.array([1.0, 0.0, 0.0])
    if abs(float(e1 @ up)) > 0.9:
        e1 = np.array([0.0, 1.0, 0.0])
    e1 = e1 - (e1 @ up) * up
    e1 /= np.linalg.norm(e1)
    return np.vstack([e1, np.cross(up, e1)])


def contact_point(model, q, contact_joints=None):
    """World position of the contact point: on the first contact joint's axis (for a 3-D point
    contact, where the axes meet), the point of that axis closest to the world origin."""
    q = _check_model_q(model, q, "plucker_studies.contact_point")
    contact_dofs(model, contact_joints, "plucker_studies.contact_point")
    _, p = _world_axis_and_point(model, q, model.joint_names[0])
    return p


def _actuated_dofs(model, joints, passive, who):
    if isinstance(joints, str):
        joints = [joints]
    joints = list(joints)
    if not joints:
        raise ValueError(f"{who}: no actuated joint given")
    out = []
    for name in joints:
        if name not in model.joint_names:
            raise ValueError(f"{who}: no joint named {name!r} (joints: {model.joint_names})")
        start, nv = model.joint_v_index(name), model.joint_nv(name)
        if nv == 0:
            raise ValueError(f"{who}: joint {name!r} is fixed; it cannot be actuated")
        idx = list(range(start, start + nv))
        if set(idx) & set(passive.tolist()):
            raise ValueError(f"{who}: joint {name!r} is a contact joint (passive); it cannot be the actuated joint")
        if set(idx) & set(out):
            raise ValueError(f"{who}: joint {name!r} given twice")
        out.extend(idx)
    return np.array(out, dtype=int)


def velocity_gain_matrix(model, q, actuated_joints, others="locked", contact_joints=None, radius=0.0,
                         reference="contact"):
    """Velocity gains of a robot balancing on a point contact (Featherstone 2015/2016).

    Starting from any motion, an impulse at the actuated joints (and none at the passive contact
    joints) changes the joint velocities by dqd; the velocity gain G maps the change of the
    actuated joints' velocities to the change of the horizontal velocity of the centre of mass:
    d(c_h dot) = G d(qd_A). Returns G, shape (k, n_A): k = 1 for a planar point foot (direction
    horizontal_directions), 2 for a point contact in 3-D; n_A = the actuated joints' DoF.

    others="locked": every joint that is neither a contact joint nor listed is held still (a stiff
    servo, or its velocity unchanged), so the impulse moves only the contact and listed joints:
        G = J_A - J_P H_PP^-1 H_PA     (H = plucker.crba, J = horizontal rows of the COM Jacobian)
    which is also the coefficient of qd_A in  c_h dot = J_P H_PP^-1 L + G qd_A (+ the other joints'
    terms), L = H_P. qd the contact joints' momentum.
    others="free": the other joints get no impulse either (they are passive or torque-free for the
    instant): with W = plucker.minv, dqd = W[:, A] iota, so G = J W[:, A] (W_AA)^-1.
    The two agree when the contact and listed joints are all the model's joints.

    radius=r > 0: a rolling contact. The contact joints' axes then pass through the centre C of a
    rolling foot of radius r (a wheel in the plane, a ball in 3-D: the body of the last contact
    joint), which rolls on the horizontal ground without slipping; the contact point P = C - r up
    moves as the foot rolls. H is replaced by rolling_inertia's H_r and J by the horizontal rows of
    the COM velocity relative to P (reference="contact": what gravity's moment about the contact
    depends on) or of the absolute COM velocity (reference="ground"). radius=0 is the point
    contact (both references agree)."""
    who = "plucker_studies.velocity_gain_matrix"
    q = _check_model_q(model, q, who)
    P = contact_dofs(model, contact_joints, who)
    A = _actuated_dofs(model, actuated_joints, P, who)
    D = horizontal_directions(model, q, contact_joints)
    J = D @ plucker.center_of_mass_jacobian(model, q)
    if reference not in ("contact", "ground"):
        raise ValueError(f"{who}: reference = {reference!r}; valid: 'contact', 'ground'")
    r = _check_radius(radius, who)
    if r > 0.0:
        H, R = rolling_inertia(model, q, r, contact_joints)
        if reference == "ground":
            J = J + D @ R  # the whole robot also translates with the foot's centre
        if others == "locked":
            HPP, HPA = H[np.ix_(P, P)], H[np.ix_(P, A)]
            return J[:, A] - J[:, P] @ np.linalg.solve(HPP, HPA)
        if others == "free":
            W = np.linalg.inv(H)
            return J @ W[:, A] @ np.linalg.inv(W[np.ix_(A, A)])
        raise ValueError(f"{who}: others = {others!r}; valid: 'locked', 'free'")
    if others == "locked":
        H = plucker.crba(model, q)
        HPP, HPA = H[np.ix_(P, P)], H[np.ix_(P, A)]
        return J[:, A] - J[:, P] @ np.linalg.solve(HPP, HPA)
    if others == "free":
        W = plucker.minv(model, q)
        return J @ W[:, A] @ np.linalg.inv(W[np.ix_(A, A)])
    raise ValueError(f"{who}: others = {others!r}; valid: 'locked', 'free'")


def velocity_gain(model, q, actuated_joint, others="locked", radius=0.0, reference="contact"):
    """The velocity gain of one 1-DoF actuated joint of a planar robot on a point foot (the
    model's first joint, revolute about a horizontal axis through the contact point): the change
    in the COM's horizontal velocity per unit change in the joint's velocity caused by an impulse
    at that joint (metres per radian for a revolute joint). See velocity_gain_matrix."""
    G = velocity_gain_matrix(model, q, [actuated_joint], others=others, radius=radius, reference=reference)
    if G.shape != (1, 1):
        raise ValueError(f"plucker_studies.velocity_gain: need a planar point foot and a 1-DoF joint, "
                         f"got a gain of shape {G.shape}; use velocity_gain_matrix")
    return float(G[0, 0])


def _check_radius(radius, who):
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: radius = {radius!r} must be a number (metres)") from None
    if not (math.isfinite(r) and r >= 0.0):
        raise ValueError(f"{who}: radius = {radius!r} must be finite and >= 0 (metres; 0 = a point contact)")
    return r


def rolling_inertia(model, q, radius, contact_joints=None):
    """(H_r, R) for a robot on a rolling foot of radius r: the contact joints' axes pass through the
    foot's centre C, and the foot rolls on the horizontal ground without slipping, so the contact
    point P = C - r up has zero velocity and C moves with  v_C = omega x (C - P) = r omega x up,
    omega the foot's angular velocity (world). v_C = R qd, R (3 x nv) nonzero in the contact
    columns only: R[:, j] = r n_j x up for contact joint j of world axis n_j.

    Every body moves as in the model (rotations about C) plus the translation v_C, so the kinetic
    energy is  1/2 qd' H qd + m v_C . (J_c qd) + 1/2 m |v_C|^2  (J_c = COM Jacobian, m = total
    mass), and the robot's inertia matrix for the rolling contact is
        H_r = H + m (R' J_c + J_c' R) + m R' R.
    In the plane (one contact joint): H_r[0, 0] = H11 + 2 m r J_1 + m r^2 (the parallel-axis
    theorem about P when J_1 = the COM height above C) and H_r[0, j] = H1j + m r J_j.
    An instant's impulse response of the rolling robot is that of the model with H_r."""
    who = "plucker_studies.rolling_inertia"
    q = _check_model_q(model, q, who)
    P = contact_dofs(model, contact_joints, who)
    r = _check_radius(radius, who)
    up = up_direction(model)
    names = model.joint_names
    R = np.zeros((3, model.nv))
    for k in P:
        n, _ = _world_axis_and_point(model, q, names[int(k)])
        R[:, k] = r * np.cross(n, up)
    Jc = plucker.center_of_mass_jacobian(model, q)
    m = float(model.total_mass)
    H = plucker.crba(model, q)
    return H + m * (R.T @ Jc + Jc.T @ R) + m * R.T @ R, R


def _sinc_like(z):
    """S(z) = sin(sqrt z)/sqrt z (z > 0), sinh(sqrt -z)/sqrt -z (z < 0), and
    F(z) = (1 - S(z))/z, both entire in z; series below |z| = 1e-3."""
    z = np.asarray(z, dtype=np.float64)
    S = np.empty_like(z)
    F = np.empty_like(z)
    small = np.abs(z) < 1e-3
    zs = z[small]
    S[small] = 1 - zs / 6 + zs ** 2 / 120 - zs ** 3 / 5040
    F[small] = 1 / 6 - zs / 120 + zs ** 2 / 5040 - zs ** 3 / 362880
    pos = (~small) & (z > 0)
    neg = (~small) & (z < 0)
    w = np.sqrt(z[pos])
    S[pos] = np.sin(w) / w
    w = np.sqrt(-z[neg])
    S[neg] = np.sinh(w) / w
    big = ~small
    F[big] = (1 - S[big]) / z[big]
    return S, F


def gravity_stiffness(model, q, step=1e-6):
    """K_g = d(plucker.gravity_torques)/dq = the Hessian of the potential energy (nq = nv joints),
    by central differences (truncation error ~ step^2)."""
    q = _check_model_q(model, q, "plucker_studies.gravity_stiffness")
    if model.nq != model.nv:
        raise ValueError("plucker_studies.gravity_stiffness: joints with nq != nv (quaternions) are not supported")
    K = np.empty((model.nv, model.nv))
    for j in range(model.nv):
        dq = np.zeros(model.nv)
        dq[j] = step
        K[:, j] = (plucker.gravity_torques(model, q + dq) - plucker.gravity_torques(model, q - dq)) / (2 * step)
    return 0.5 * (K + K.T)


def compliant_contact_gain(model, q, actuated_joints, stiffness, window, contact_joints=None):
    """Velocity gain of a robot standing on a compliant support area, over a time window T.

    The contact joints (as for velocity_gain_matrix) are held by the support's rotational
    stiffness K_c (N m/rad; a scalar k means k I, or an n_P x n_P symmetric matrix): a foot on a
    compliant line or area whose distributed normal stiffness resists its tilting (for N points of
    stiffness k_p at distances s_i from the pivot, k = k_p sum s_i^2; for a line of width w and
    stiffness kappa per unit length about its centre, k = kappa w^3 / 12). The robot is at rest
    in equilibrium at q (the support carries the static moment); from t = 0 the actuated joints
    move at a constant velocity dqd_A, every other non-contact joint is held (locked). The gain is
    the horizontal COM displacement per actuated-joint displacement over the window, i.e. the mean
    COM velocity over [0, T] per unit joint velocity, for the linearised dynamics:

        H_PP qdd_P + H_PA qdd_A + (K_c + K_g,PP) q_P + K_g,PA q_A = 0,     K_g = gravity_stiffness,

    solved in the modes of K = K_c + K_g,PP  (K phi_i = lambda_i H_PP phi_i, Phi' H_PP Phi = I):
    an impulse at t = 0 gives dqd_P(0+) = -H_PP^-1 H_PA dqd_A (no impulse from a spring), after
    which the ramp q_A = dqd_A t forces the modes, and with z_i = lambda_i T^2

        G(K_c, T) = J_A + J_P Phi [diag S(z) Phi' (-H_PA) + T^2 diag F(z) Phi' (-K_g,PA)]

    (S(z) = sin(sqrt z)/sqrt z, F(z) = (1 - S)/z; for z < 0 the sines are sinhs). Limits:
    T -> 0 or K_c -> 0 with T -> 0: the point-contact gain J_A - J_P H_PP^-1 H_PA (a spring gives
    no impulse); K_c -> infinity: J_A (the foot locked to the ground: the robot is a fixed-base
    robot); K_c = 0 in the plane: S(-T^2/Tc^2) times the point-contact gain (the point-contact
    robot topples during the window). Returns G, shape (k, n_A) with k as in velocity_gain_matrix."""
    who = "plucker_studies.compliant_contact_gain"
    q = _check_model_q(model, q, who)
    P = contact_dofs(model, contact_joints, who)
    A = _actuated_dofs(model, actuated_joints, P, who)
    try:
        T = float(window)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: window = {window!r} must be a number (seconds)") from None
    if not (math.isfinite(T) and T > 0.0):
        raise ValueError(f"{who}: window = {window!r} must be finite and > 0 (seconds)")
    Kc = np.asarray(stiffness, dtype=np.float64)
    if Kc.ndim == 0:
        Kc = float(Kc) * np.eye(P.size)
    if Kc.shape != (P.size, P.size):
        raise ValueError(f"{who}: stiffness has shape {Kc.shape}; give a scalar or a ({P.size}, {P.size}) matrix "
                         "(one row per contact joint)")
    if not np.all(np.isfinite(Kc)) or not np.allclose(Kc, Kc.T, rtol=1e-12, atol=0.0):
        raise ValueError(f"{who}: stiffness must be finite and symmetric")
    if np.min(np.linalg.eigvalsh(Kc)) < -1e-12 * max(1.0, float(np.max(np.abs(Kc)))):
        raise ValueError(f"{who}: stiffness must be positive semi-definite (a support cannot push the robot over)")
    D = horizontal_directions(model, q, contact_joints)
    J = D @ plucker.center_of_mass_jacobian(model, q)
    H = plucker.crba(model, q)
    Kg = gravity_stiffness(model, q)
    HPP, HPA = H[np.ix_(P, P)], H[np.ix_(P, A)]
    L = np.linalg.cholesky(HPP)
    Li = np.linalg.inv(L)
    lam, U = np.linalg.eigh(Li @ (Kc + Kg[np.ix_(P, P)]) @ Li.T)
    Phi = Li.T @ U
    S, F = _sinc_like(lam * T * T)
    JP = J[:, P] @ Phi
    return J[:, A] + JP @ (S[:, None] * (Phi.T @ -HPA)) + T * T * JP @ (F[:, None] * (Phi.T @ -Kg[np.ix_(P, A)]))


class PlanarBalanceModel(NamedTuple):
    mass: float  # total mass m (kg)
    gravity: float  # |g| (m/s^2)
    x: float  # COM horizontal offset from the contact point along horizontal_directions (m)
    height: float  # COM height above the contact point (m)
    H11: float  # the contact joint's inertia, = moment of inertia about the contact axis (kg m^2)
    Tc: float  # toppling time constant, Tc^2 = H11 / (m g height) (s)
    gains: dict  # {joint name: velocity gain G (locked others)} for every other 1-DoF joint
    L: float  # angular momentum about the contact point (the contact joint's momentum H_1. qd)
    xdot: float  # COM horizontal velocity


def planar_balance_model(model, q, v=None):
    """The parameters of the simple model of planar balancing at state (q, v):
        L dot = m g x                       (gravity's moment about the contact point)
        x dot = L / (m g Tc^2) + sum_j G_j qd_j
    both exact at every instant for a planar robot whose first joint is a passive revolute about a
    horizontal axis through the contact point; Tc and G_j vary with the configuration. Returns
    PlanarBalanceModel."""
    who = "plucker_studies.planar_balance_model"
    q = _check_model_q(model, q, who)
    if v is None:
        v = np.zeros(model.nv)
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (model.nv,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{who}: v must be finite with shape ({model.nv},), got {v.shape}")
    contact_dofs(model, None, who)  # checks the model has a point foot
    D = horizontal_directions(model, q)
    up = up_direction(model)
    m = float(model.total_mass)
    g = float(np.linalg.norm(model.gravity))
    r = plucker.center_of_mass(model, q) - contact_point(model, q)
    h = float(r @ up)
    if not h > 0.0:
        raise ValueError(f"{who}: the COM is not above the contact point (height {h:.3g} m)")
    H = plucker.crba(model, q)
    J = (D @ plucker.center_of_mass_jacobian(model, q))[0]
    H11 = float(H[0, 0])
    gains = {}
    for name in model.joint_names[1:]:
        if model.joint_nv(name) == 1:
            j = model.joint_v_index(name)
            gains[name] = float(J[j] - J[0] * H[0, j] / H11)
    return PlanarBalanceModel(m, g, float(D[0] @ r), h, H11, math.sqrt(H11 / (m * g * h)), gains,
                              float(H[0] @ v), float(J @ v))


# ------------------------------------------------------------------ models for the studies
def planar_chain_urdf(lengths, masses, coms=None, inertias=None, locked=None, name="planar_chain"):
    """URDF text of a planar n-link pendulum on a point foot, upright at q = 0, moving in the x-z
    plane: joint 1 ("contact", revolute about +y at the origin) is the foot, joint i ("joint{i}")
    sits at the top of link i-1; link i has length lengths[i], mass masses[i], its COM coms[i]
    above its joint (default l/2) and moment of inertia inertias[i] about its COM and the y axis
    (default a uniform rod, m l^2 / 12; at least 1e-6 m l^2, so a point mass is a tiny sphere;
    the inertia is the same about x and z, which planar motion never uses). Gravity is -z, so a positive joint angle leans toward +x.
    locked = {i: angle}: joint i (2..n) is welded at that angle (a fixed joint; the model then has
    one body and one DoF fewer): the chain with that joint held by an ideal stiff servo."""
    locked = {} if locked is None else {int(k): float(a) for k, a in locked.items()}
    lengths = [float(x) for x in lengths]
    masses = [float(x) for x in masses]
    n = len(lengths)
    if n < 1 or len(masses) != n:
        raise ValueError(f"plucker_studies.planar_chain_urdf: need as many masses as lengths (>= 1), got {len(lengths)} and {len(masses)}")
    coms = [0.5 * l for l in lengths] if coms is None else [float(c) for c in coms]
    inertias = [m * l * l / 12.0 for m, l in zip(masses, lengths)] if inertias is None else [float(i) for i in inertias]
    if len(coms) != n or len(inertias) != n:
        raise ValueError("plucker_studies.planar_chain_urdf: coms and inertias need one entry per link")
    for k in range(n):
        if not (lengths[k] > 0 and masses[k] > 0 and inertias[k] >= 0 and math.isfinite(coms[k])):
            raise ValueError(f"plucker_studies.planar_chain_urdf: link {k + 1} needs length > 0, mass > 0, "
                             f"inertia >= 0 (got {lengths[k]}, {masses[k]}, {inertias[k]})")
    out = ['<?xml version="1.0"?>', f'<robot name="{name}">', '<link name="ground"/>']
    for k in range(n):
        # A point mass still gets a small sphere's inertia (1e-6 m l^2) to be a valid rigid body.
        I = max(inertias[k], 1e-6 * masses[k] * lengths[k] ** 2)
        out.append(f'<link name="link{k + 1}"><inertial><origin xyz="0 0 {coms[k]!r}"/><mass value="{masses[k]!r}"/>'
                   f'<inertia ixx="{I!r}" ixy="0" ixz="0" iyy="{I!r}" iyz="0" izz="{I!r}"/></inertial></link>')
    for i in locked:
        if not 2 <= i <= n:
            raise ValueError(f"plucker_studies.planar_chain_urdf: locked joint {i} is not one of 2..{n}")
    for k in range(n):
        jname = "contact" if k == 0 else f"joint{k + 1}"
        parent = "ground" if k == 0 else f"link{k}"
        z = 0.0 if k == 0 else lengths[k - 1]
        if k + 1 in locked:
            out.append(f'<joint name="{jname}" type="fixed"><parent link="{parent}"/><child link="link{k + 1}"/>'
                       f'<origin xyz="0 0 {z!r}" rpy="0 {locked[k + 1]!r} 0"/></joint>')
            continue
        out.append(f'<joint name="{jname}" type="continuous"><parent link="{parent}"/><child link="link{k + 1}"/>'
                   f'<origin xyz="0 0 {z!r}"/><axis xyz="0 1 0"/></joint>')
    out.append("</robot>")
    return "\n".join(out)


def planar_chain(lengths, masses, coms=None, inertias=None, locked=None):
    """plucker.Model of planar_chain_urdf."""
    return plucker.Model.from_urdf_string(planar_chain_urdf(lengths, masses, coms, inertias, locked))


# ------------------------------------------------------------------ simulation
def rk4_rollout(model, q0, v0, torque, t_end, dt, record_every=1):
    """Integrate M qdd + C = tau with classical RK4 over plucker.aba (joints with nq = nv only).
    torque(t, q, v) -> tau (held over each step's four stages is not done: it is evaluated at each
    stage). Returns (t, Q, V) sampled every record_every steps."""
    if model.nq != model.nv:
        raise ValueError("plucker_studies.rk4_rollout: joints with nq != nv (quaternions) are not supported")
    if not (dt > 0 and t_end > 0):
        raise ValueError(f"plucker_studies.rk4_rollout: need dt > 0 and t_end > 0, got {dt}, {t_end}")
    q = np.array(q0, dtype=np.float64)
    v = np.array(v0, dtype=np.float64)
    steps = int(round(t_end / dt))

    def f(t, q, v):
        return v, plucker.aba(model, q, v, torque(t, q, v))

    T, Q, V = [0.0], [q.copy()], [v.copy()]
    t = 0.0
    for k in range(steps):
        k1q, k1v = f(t, q, v)
        k2q, k2v = f(t + 0.5 * dt, q + 0.5 * dt * k1q, v + 0.5 * dt * k1v)
        k3q, k3v = f(t + 0.5 * dt, q + 0.5 * dt * k2q, v + 0.5 * dt * k2v)
        k4q, k4v = f(t + dt, q + dt * k3q, v + dt * k3v)
        q = q + dt / 6.0 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        t = (k + 1) * dt
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise FloatingPointError(f"plucker_studies.rk4_rollout: the state diverged at t = {t:.6g} s")
        if (k + 1) % record_every == 0:
            T.append(t)
            Q.append(q.copy())
            V.append(v.copy())
    return np.array(T), np.array(Q), np.array(V)


def prescribed_rollout(accel, q0, v0, prescribed, qdd_command, t_end, dt):
    """Classical RK4 of a robot whose velocity indices `prescribed` follow the accelerations
    qdd_command(t) (a vector over those indices) exactly, every other joint torque-free. accel(q, v,
    tau) -> qdd is the forward dynamics (plucker.aba, or a plucker.Simulator's acceleration, which
    adds its contact forces); it is affine in tau, so the prescribed joints' torques come from one
    evaluation per prescribed index: tau_P solves A_PP tau_P = qdd_command - a0_P with a0 = accel(q,
    v, 0) and A[:, j] = accel(q, v, e_j) - a0. Joints with nq = nv only. Returns (t, Q, V)."""
    q = np.array(q0, dtype=np.float64)
    v = np.array(v0, dtype=np.float64)
    if q.shape != v.shape:
        raise ValueError("plucker_studies.prescribed_rollout: q0 and v0 need the same shape (nq = nv joints only)")
    P = np.asarray(prescribed, dtype=int)
    if not (dt > 0 and t_end > 0):
        raise ValueError(f"plucker_studies.prescribed_rollout: need dt > 0 and t_end > 0, got {dt}, {t_end}")
    nv = v.size

    def f(t, q, v):
        a0 = accel(q, v, np.zeros(nv))
        A = np.empty((nv, P.size))
        for k, j in enumerate(P):
            e = np.zeros(nv)
            e[j] = 1.0
            A[:, k] = accel(q, v, e) - a0
        tau = np.linalg.solve(A[P], np.asarray(qdd_command(t), dtype=np.float64) - a0[P])
        return v, a0 + A @ tau

    steps = int(round(t_end / dt))
    T, Q, V = [0.0], [q.copy()], [v.copy()]
    for k in range(steps):
        t = k * dt
        k1q, k1v = f(t, q, v)
        k2q, k2v = f(t + 0.5 * dt, q + 0.5 * dt * k1q, v + 0.5 * dt * k1v)
        k3q, k3v = f(t + 0.5 * dt, q + 0.5 * dt * k2q, v + 0.5 * dt * k2v)
        k4q, k4v = f(t + dt, q + dt * k3q, v + dt * k3v)
        q = q + dt / 6.0 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise FloatingPointError(f"plucker_studies.prescribed_rollout: the state diverged at t = {(k + 1) * dt:.6g} s")
        T.append((k + 1) * dt)
        Q.append(q.copy())
        V.append(v.copy())
    return np.array(T), np.array(Q), np.array(V)


# ------------------------------------------------------------------ planar balance control
def balanced_configuration(model, q, tol=1e-12, max_iter=50):
    """q with the contact joint's angle changed so that the COM is straight above the contact
    point (x = 0), the other joints as given: Newton on x(q1), dx/dq1 = COM height > 0."""
    q = _check_model_q(model, q, "plucker_studies.balanced_configuration").copy()
    for _ in range(max_iter):
        b = planar_balance_model(model, q)
        if abs(b.x) <= tol:
            return q
        q[0] -= b.x / b.height
    raise ArithmeticError(f"plucker_studies.balanced_configuration: no balanced configuration found near q (x = {b.x:.3g} m)")


class BalanceGains(NamedTuple):
    kdd: float  # on L ddot
    kd: float  # on L dot
    kL: float  # on L
    kq: float  # on q - q_command


def balance_gains(Tc, G, mass, gravity, p):
    """Gains of the four-term law  qdd = kdd L'' + kd L' + kL L + kq (q - q_c)  that place all four
    closed-loop poles of the simple model  L'' = L/Tc^2 + m g G qd  (qdd the input) at s = -p:
        kdd = -4p/(mgG), kd = -(6p^2 + p^4 Tc^2 + 1/Tc^2)/(mgG), kL = -4p^3/(mgG), kq = p^4 Tc^2.
    Derived here from the model (docs/studies/balance.md); the closed loop from q_c to q is then
    (1 - Tc s)(1 + Tc s) / (1 + s/p)^4."""
    for name, val in (("Tc", Tc), ("mass", mass), ("gravity", gravity), ("p", p)):
        if not (math.isfinite(val) and val > 0):
            raise ValueError(f"plucker_studies.balance_gains: {name} = {val!r} must be finite and > 0")
    if not (math.isfinite(G) and abs(G) > 1e-9):
        raise ValueError(f"plucker_studies.balance_gains: velocity gain G = {G!r}: a joint with zero gain cannot balance the robot")
    mgG = mass * gravity * G
    return BalanceGains(-4 * p / mgG, -(6 * p ** 2 + p ** 4 * Tc ** 2 + 1 / Tc ** 2) / mgG, -4 * p ** 3 / mgG, p ** 4 * Tc ** 2)


def reverse_time_lowpass(t, u, T):
    """The preview filter: y(t) = (1/T) int_t^inf exp(-(s-t)/T) u(s) ds on the grid t (u held at
    its last value after the grid's end), by the exact backward recursion for u linear between
    samples. A low-pass filter run backwards in time: y moves before u does."""
    t = np.asarray(t, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    if t.ndim != 1 or t.shape != u.shape or t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("plucker_studies.reverse_time_lowpass: t must be increasing and the same length as u (>= 2)")
    if not (math.isfinite(T) and T > 0):
        raise ValueError(f"plucker_studies.reverse_time_lowpass: T = {T!r} must be > 0")
    y = np.empty_like(u)
    y[-1] = u[-1]
    for k in range(u.size - 2, -1, -1):
        h = t[k + 1] - t[k]
        a = math.exp(-h / T)
        # exact for u linear on [t_k, t_k+1]: (1/T) int_0^h e^(-s/T) (u_k + (u_k+1 - u_k) s/h) ds
        y[k] = a * y[k + 1] + (1 - a) * u[k] + (u[k + 1] - u[k]) * ((1 - a) * T / h - a)
    return y


class PlanarBalanceController:
    """A planar robot on a point foot balanced by one actuated joint (Featherstone's simple model
    and four-term law, gains from balance_gains), the other actuated joints following their own
    commands. The actuated joints are acceleration-controlled: the torque that gives them the
    commanded accelerations with no torque at the foot comes from the full model (plucker.crba and
    plucker.nonlinear_effects; collocated partial feedback linearisation), so the balance joint
    behaves as the model's ideal acceleration source.

    command(t) -> (q_c, qd_c, qdd_c) for every velocity index (the foot's entries unused); the
    balance joint's q_c is the (possibly preview-filtered) command of the balance law; the other
    actuated joints track theirs with qdd = qdd_c + kp (q_c - q) + kv (qd_c - qd).
    compensate_others=True replaces the balance joint's position in the law by
    q + sum_j (G_j/G) q_j (j the other actuated joints, gains at the configuration given as
    q_nominal), so that their movements enter the model as known movements of the balance joint
    (the effect Featherstone's third number describes) instead of acting as disturbances.
    Tc and G are recomputed from the current configuration at every call when schedule=True,
    else held at their values at q_nominal.

    Model errors: everything the law computes (L, x, x dot, Tc, G, the torques) comes from `model`,
    which may differ from the robot it drives (a design from wrong masses). torque_model, if given,
    is used instead of `model` only to turn the commanded accelerations into torques: the ideal
    acceleration servo of a robot whose joint-level control knows its own dynamics, so that only
    the balance law's estimates are wrong. It must have the same joints as `model`."""

    def __init__(self, model, balance_joint, q_nominal, p, command, kp=400.0, kv=40.0, schedule=True,
                 compensate_others=True, torque_model=None):
        who = "plucker_studies.PlanarBalanceController"
        q_nominal = _check_model_q(model, q_nominal, who)
        contact_dofs(model, None, who)
        if balance_joint not in model.joint_names or model.joint_nv(balance_joint) != 1 or model.joint_v_index(balance_joint) == 0:
            raise ValueError(f"{who}: balance joint {balance_joint!r} must be a 1-DoF joint of the model other than the contact joint")
        if model.nq != model.nv:
            raise ValueError(f"{who}: planar robots with nq = nv only")
        self.model, self.b, self.p, self.command = model, model.joint_v_index(balance_joint), float(p), command
        self.kp, self.kv, self.schedule = float(kp), float(kv), bool(schedule)
        self.A = np.arange(1, model.nv)
        self.others = np.array([j for j in self.A if j != self.b], dtype=int)
        self.nominal = planar_balance_model(model, q_nominal)
        names = model.joint_names
        G = self.nominal.gains[balance_joint]
        self.ratio = np.zeros(model.nv)
        if compensate_others:
            for j in self.others:
                self.ratio[j] = self.nominal.gains[names[j]] / G
        self.balance_joint = balance_joint
        self.last_u = 0.0
        self.torque_model = model if torque_model is None else torque_model
        if not isinstance(self.torque_model, plucker.Model) or list(self.torque_model.joint_names) != list(names) \
                or self.torque_model.nv != model.nv:
            raise ValueError(f"{who}: torque_model must be a plucker.Model with the same joints as model")

    def signals(self, q, v):
        """(L, L dot, L ddot) from the state: L = H_1. v, L dot = m g x, L ddot = m g x dot."""
        b = planar_balance_model(self.model, q, v)
        return b, b.L, b.mass * b.gravity * b.x, b.mass * b.gravity * b.xdot

    def acceleration(self, t, q, v):
        """Commanded accelerations of the actuated joints (velocity-index vector, foot entry 0)."""
        b, L, Ld, Ldd = self.signals(q, v)
        src = b if self.schedule else self.nominal
        G = (b if self.schedule else self.nominal).gains[self.balance_joint]
        k = balance_gains(src.Tc, G, src.mass, src.gravity, self.p)
        qc, qdc, qddc = self.command(t)
        qdd = np.zeros(self.model.nv)
        qt = q[self.b] + self.ratio @ q
        qtc = qc[self.b] + self.ratio @ qc
        u = k.kdd * Ldd + k.kd * Ld + k.kL * L + k.kq * (qt - qtc)
        qdd[self.others] = qddc[self.others] + self.kp * (qc[self.others] - q[self.others]) + self.kv * (qdc[self.others] - v[self.others])
        # The law commands d^2/dt^2 of q_b + ratio . q; the balance joint supplies what the others do not.
        qdd[self.b] = u - self.ratio @ qdd
        return qdd

    def torque(self, t, q, v):
        """Joint torques (zero at the foot) giving the actuated joints acceleration(t, q, v)."""
        qdd = self.acceleration(t, q, v)
        H = plucker.crba(self.torque_model, q)
        C = plucker.nonlinear_effects(self.torque_model, q, v)
        P, A = np.array([0]), self.A
        qdd[P] = np.linalg.solve(H[np.ix_(P, P)], -C[P] - H[np.ix_(P, A)] @ qdd[A])
        tau = H @ qdd + C
        tau[0] = 0.0
        return tau


def point_impulse(model, q, body, point, impulse):
    """Velocity change (M^-1 J_p^T iota) from an impulse (world vector, N s) at a body-fixed point
    given in world coordinates at q: J_p = the linear rows of the world Jacobian moved to point."""
    q = _check_model_q(model, q, "plucker_studies.point_impulse")
    J = plucker.body_jacobian(model, q, body, frame="world")  # [omega; velocity of the point at the origin]
    p = np.asarray(point, dtype=np.float64)
    Jp = J[3:] - np.cross(p, J[:3].T).T  # v_p = v_O + omega x p = v_O - p x omega
    return np.linalg.solve(plucker.crba(model, q), Jp.T @ np.asarray(impulse, dtype=np.float64))


# ------------------------------------------------------------------ closed loops on a (possibly different) robot
def _check_torque_law(model, torque, q, v, t, who):
    q = _check_model_q(model, q, who)
    if model.nq != model.nv:
        raise ValueError(f"{who}: planar robots with nq = nv only")
    v = np.zeros(model.nv) if v is None else np.asarray(v, dtype=np.float64)
    if v.shape != (model.nv,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{who}: v must be finite with shape ({model.nv},), got {v.shape}")
    if not callable(torque):
        raise TypeError(f"{who}: torque must be a callable torque(t, q, v) -> tau")
    tau = np.asarray(torque(float(t), q, v), dtype=np.float64)
    if tau.shape != (model.nv,) or not np.all(np.isfinite(tau)):
        raise ValueError(f"{who}: torque(t, q, v) must return {model.nv} finite values, got shape {tau.shape}")
    return q, v


def closed_loop_matrix(model, torque, q, v=None, t=0.0, step=1e-6):
    """The state matrix A of the robot `model` (the plant, plucker.aba) under the torque law
    torque(t, q, v), linearised at (q, v) by central differences of step `step`: for the
    deviation z = (q, v) - (q0, v0), z dot = A z + (the drift at (q0, v0)). The law may be built on
    another model (a controller designed from wrong masses): only the plant is `model`. Its
    eigenvalues are the closed-loop poles at an equilibrium (closed_loop_equilibrium)."""
    who = "plucker_studies.closed_loop_matrix"
    q, v = _check_torque_law(model, torque, q, v, t, who)
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"{who}: step = {step!r} must be > 0")
    n = model.nv

    def f(z):
        return np.concatenate([z[n:], plucker.aba(model, z[:n], z[n:], torque(t, z[:n], z[n:]))])

    z0 = np.concatenate([q, v])
    return np.column_stack([(f(z0 + e) - f(z0 - e)) / (2 * step) for e in step * np.eye(2 * n)])


def closed_loop_equilibrium(model, torque, q_guess, t=0.0, tol=1e-11, max_iter=30, step=1e-7):
    """The configuration q where the robot `model` under torque(t, q, v) rests: the accelerations
    plucker.aba(model, q, 0, torque(t, q, 0)) are all zero (a static solve: Newton's method with a
    central-difference Jacobian, from q_guess). For a balancing robot on a point foot this puts the
    plant's COM over the foot and balances the controller's (possibly wrong) torques against the
    plant's gravity, which is where a simulation settles if the equilibrium is stable. Raises
    ArithmeticError if Newton does not converge."""
    who = "plucker_studies.closed_loop_equilibrium"
    q, _ = _check_torque_law(model, torque, q_guess, None, t, who)
    q = q.copy()
    n = model.nv
    zero = np.zeros(n)

    def acc(qq):
        return plucker.aba(model, qq, zero, torque(t, qq, zero))

    r = acc(q)
    for _ in range(max_iter):
        if np.max(np.abs(r)) <= tol:
            return q
        J = np.column_stack([(acc(q + e) - acc(q - e)) / (2 * step) for e in step * np.eye(n)])
        dq = np.linalg.solve(J, -r)
        lam = 1.0
        while True:  # backtracking: accept the first step that reduces the residual
            qn = q + lam * dq
            try:
                rn = acc(qn)
            except ValueError:
                rn = None
            if rn is not None and np.linalg.norm(rn) < np.linalg.norm(r):
                break
            lam *= 0.5
            if lam < 1e-6:
                raise ArithmeticError(f"{who}: Newton stalled at residual {np.max(np.abs(r)):.3g} rad/s^2")
        q, r = qn, rn
    if np.max(np.abs(r)) <= tol:
        return q
    raise ArithmeticError(f"{who}: no equilibrium found near q_guess (residual {np.max(np.abs(r)):.3g} rad/s^2)")
