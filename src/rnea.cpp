// Recursive Newton-Euler algorithm, link coordinates (paper 000 §3.1):
//   forward:  v_i = iX_p v_p + h_i qd_i                      (Eq. 3)
//             a_i = iX_p a_p + h_i qdd_i + v_i x h_i qd_i     (Eq. 4; c_J = 0, S constant in body frame)
//             f_i = I_i a_i + v_i x* I_i v_i - f^x_i          (Eq. 5, 7)
//   backward: tau_i = h_i^T f_i                               (Eq. 8)
//             f_p += pX_i* f_i                                (Eq. 7)
// Gravity enters as the fictitious base acceleration a_0 = -g.
//
// Pass 1 has a fast path for the most common joint (revolute about a body axis, parent not
// the base): no std::visit, X_J X_tree composed as a plane rotation of two rows of E_tree.
// Pass 2 reads tau_i = f_i[k] for the unit-axis joints from a table by variant index, also
// without a std::visit. The spatial products are written out below (4-lane vectors with
// AVX2, scalars otherwise). Instructions per rnea() on talos_full with a free-flyer root
// (callgrind): 27.2k -> 17.4k with -march=haswell, 37.4k -> 32.0k without -march.
#include "detail/recursion.hpp"
#include "plucker/algorithms/rnea.hpp"

namespace plucker {
namespace {

using detail::ForceInput;

// ---- Eqs. 3-7's spatial products, inline ----
// Eigen's 3x3 x 3-vector products remained out-of-line calls in the per-joint kernels
// (callgrind on talos_full), so the products are written out here. With AVX2 a 3-vector is
// held in the low three lanes of a 4-lane vector (GCC/Clang vector extension): E x is three
// lane broadcasts and multiply-adds, a x b four lane permutations. Lane 3 is a copy of lane
// 2 and is never read (a zero there made GCC emit a register vmovq, which valgrind 3.19
// cannot decode). Without AVX2 the 4-lane permutations are split into 2-lane pieces and cost
// more than they save (SSE2 build: 41.0k instructions per talos RNEA instead of 32.2k), so
// there the products are scalar code.
#if defined(__AVX2__)
using V3 = double __attribute__((vector_size(32)));
PLUCKER_HOT inline V3 load(const Vec3& x) { return V3{x[0], x[1], x[2], x[2]}; }
PLUCKER_HOT inline Vec3 store(const V3& v) { return Vec3(v[0], v[1], v[2]); }
template <int K>
PLUCKER_HOT inline V3 splat(const V3& x) {
  return __builtin_shufflevector(x, x, K, K, K, K);
}
/// a x b = a_yzx b_zxy - a_zxy b_yzx.
PLUCKER_HOT inline V3 cross(const V3& a, const V3& b) {
  return __builtin_shufflevector(a, a, 1, 2, 0, 3) * __builtin_shufflevector(b, b, 2, 0, 1, 3) -
         __builtin_shufflevector(a, a, 2, 0, 1, 3) * __builtin_shufflevector(b, b, 1, 2, 0, 3);
}
/// A 3x3 matrix by its columns: M x = c0 x0 + c1 x1 + c2 x2.
struct M3 {
  V3 c0, c1, c2;
  static M3 of(const Mat3& M) { return {load(M.col(0)), load(M.col(1)), load(M.col(2))}; }
  static M3 transpose_of(const Mat3& M) { return {load(M.row(0)), load(M.row(1)), load(M.row(2))}; }
  V3 operator*(const V3& x) const { return splat<0>(x) * c0 + splat<1>(x) * c1 + splat<2>(x) * c2; }
};

/// E x.
PLUCKER_HOT inline Vec3 rotate(const Mat3& E, const Vec3& x) { return store(M3::of(E) * load(x)); }
/// X m = (E w, E (u - r x w)) for m = (w, u).
PLUCKER_HOT inline Motion apply(const Transform& X, const Motion& m) {
  const M3 E = M3::of(X.E);
  const V3 w = load(m.angular);
  return Motion(store(E * w), store(E * (load(m.linear) - cross(load(X.r), w))));
}
/// out += X^T f = (E^T n + r x E^T f, E^T f) for f = (n, f).
PLUCKER_HOT inline void add_apply_inverse(const Transform& X, const Force& f, Force& out) {
  const M3 Et = M3::transpose_of(X.E);
  const V3 fl = Et * load(f.linear);
  out.angular += store(Et * load(f.angular) + cross(load(X.r), fl));
  out.linear += store(fl);
}
/// I a + v x* I v, with I m = (Ibar w + h x u, m u - h x w) for m = (w, u).
template <bool WithVelocity>
PLUCKER_HOT inline Force body_force(const RigidBodyInertia& I, const V3& aw, const V3& al, const V3& vw, const V3& vl) {
  const M3 Ib = M3::of(I.inertia_origin());
  const V3 h = load(I.first_moment());
  const double m = I.mass();
  V3 fa = Ib * aw + cross(h, al), fl = m * al - cross(h, aw);
  if constexpr (WithVelocity) {
    const V3 Iv_ang = Ib * vw + cross(h, vl), Iv_lin = m * vl - cross(h, vw);
    fa += cross(vw, Iv_ang) + cross(vl, Iv_lin);
    fl += cross(vw, Iv_lin);
  }
  return Force(store(fa), store(fl));
}
template <bool WithVelocity>
PLUCKER_HOT inline Force body_force(const RigidBodyInertia& I, const Motion& a, const Motion& v) {
  return body_force<WithVelocity>(I, load(a.angular), load(a.linear), load(v.angular), load(v.linear));
}

/// x with lanes i = (A+1) % 3 and j = (A+2) % 3 exchanged.
template <int A>
PLUCKER_HOT inline V3 swap_ij(const V3& x) {
  if constexpr (A == 0)
    return __builtin_shufflevector(x, x, 0, 2, 1, 3);
  else if constexpr (A == 1)
    return __builtin_shufflevector(x, x, 2, 1, 0, 3);
  else
    return __builtin_shufflevector(x, x, 1, 0, 2, 3);
}

/// Pass 1 for a revolute joint about body axis A whose parent is not the base, and f (Eq. 5):
/// X = X_J(q) X_tree, whose columns are those of E_tree with rows A+1, A+2 turned by the
/// plane rotation (r unchanged); v = X v_p + e_A qd (Eq. 3); a = X a_p + e_A qdd + v x e_A qd
/// (Eq. 4). All in registers: v and a go to Data and on into f without a reload.
template <int A, bool WithVelocity, bool WithAcceleration>
PLUCKER_HOT inline void revolute_step(const Transform& Xt, double s, double c, const Motion& vp, const Motion& ap,
                                      double qd, double qdd, const RigidBodyInertia& I, Transform& X, Motion& vi,
                                      Motion& ai, Force& fi) {
  constexpr int j = (A + 2) % 3;
  // With i, j = A+1, A+2 (mod 3): E row i = c E_tree row i + s E_tree row j, row j =
  // c E_tree row j - s E_tree row i, row A unchanged; lane by lane on the columns.
  V3 cv{c, c, c, c}, sv{s, s, s, s};
  cv[A] = 1.0;
  sv[A] = 0.0;
  sv[j] = -s;
  const V3 t0 = load(Xt.E.col(0)), t1 = load(Xt.E.col(1)), t2 = load(Xt.E.col(2));
  const M3 E{cv * t0 + sv * swap_ij<A>(t0), cv * t1 + sv * swap_ij<A>(t1), cv * t2 + sv * swap_ij<A>(t2)};
  X.E.col(0) = store(E.c0);
  X.E.col(1) = store(E.c1);
  X.E.col(2) = store(E.c2);
  X.r = Xt.r;
  const V3 r = load(Xt.r);
  V3 unit{0.0, 0.0, 0.0, 0.0};
  unit[A] = 1.0;
  const V3 apw = load(ap.angular);
  V3 aw = E * apw, al = E * (load(ap.linear) - cross(r, apw));
  V3 vw{}, vl{};
  if constexpr (WithVelocity) {
    const V3 vpw = load(vp.angular);
    vw = E * vpw + qd * unit;
    vl = E * (load(vp.linear) - cross(r, vpw));
    // x x (qd e_A) = (x_j qd at lane i, -x_i qd at lane j).
    V3 q_cross{qd, qd, qd, qd};
    q_cross[A] = 0.0;
    q_cross[j] = -qd;
    aw += swap_ij<A>(vw) * q_cross;
    al += swap_ij<A>(vl) * q_cross;
  }
  if constexpr (WithAcceleration) aw += qdd * unit;
  vi = Motion(store(vw), store(vl));
  ai = Motion(store(aw), store(al));
  fi = body_force<WithVelocity>(I, aw, al, vw, vl);  // Eq. 5
}
#else
/// E x.
PLUCKER_HOT inline Vec3 rotate(const Mat3& E, const Vec3& x) {
  return Vec3(E(0, 0) * x[0] + E(0, 1) * x[1] + E(0, 2) * x[2], E(1, 0) * x[0] + E(1, 1) * x[1] + E(1, 2) * x[2],
              E(2, 0) * x[0] + E(2, 1) * x[1] + E(2, 2) * x[2]);
}
/// E^T x.
PLUCKER_HOT inline Vec3 rotate_t(const Mat3& E, const Vec3& x) {
  return Vec3(E(0, 0) * x[0] + E(1, 0) * x[1] + E(2, 0) * x[2], E(0, 1) * x[0] + E(1, 1) * x[1] + E(2, 1) * x[2],
              E(0, 2) * x[0] + E(1, 2) * x[1] + E(2, 2) * x[2]);
}
/// a x b.
PLUCKER_HOT inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return Vec3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}
/// X m = (E w, E (u - r x w)) for m = (w, u).
PLUCKER_HOT inline Motion apply(const Transform& X, const Motion& m) {
  return Motion(rotate(X.E, m.angular), rotate(X.E, m.linear - cross(X.r, m.angular)));
}
/// out += X^T f = (E^T n + r x E^T f, E^T f) for f = (n, f).
PLUCKER_HOT inline void add_apply_inverse(const Transform& X, const Force& f, Force& out) {
  const Vec3 fl = rotate_t(X.E, f.linear);
  out.angular += rotate_t(X.E, f.angular) + cross(X.r, fl);
  out.linear += fl;
}
/// I a + v x* I v, with I m = (Ibar w + h x u, m u - h x w) for m = (w, u).
template <bool WithVelocity>
PLUCKER_HOT inline Force body_force(const RigidBodyInertia& I, const Motion& a, const Motion& v) {
  const Mat3& Ib = I.inertia_origin();
  const Vec3& h = I.first_moment();
  const double m = I.mass();
  Force f(rotate(Ib, a.angular) + cross(h, a.linear), m * a.linear - cross(h, a.angular));
  if constexpr (WithVelocity) {
    const Vec3 Iv_ang = rotate(Ib, v.angular) + cross(h, v.linear);
    const Vec3 Iv_lin = m * v.linear - cross(h, v.angular);
    f.angular += cross(v.angular, Iv_ang) + cross(v.linear, Iv_lin);
    f.linear += cross(v.angular, Iv_lin);
  }
  return f;
}
/// Pass 1 for a revolute joint about body axis A whose parent is not the base, and f (Eq. 5):
/// X = X_J(q) X_tree (a plane rotation mixes rows A+1, A+2 of E_tree; r unchanged), then
/// v = X v_p + e_A qd (Eq. 3) and a = X a_p + e_A qdd + v x e_A qd (Eq. 4).
template <int A, bool WithVelocity, bool WithAcceleration>
PLUCKER_HOT inline void revolute_step(const Transform& Xt, double s, double c, const Motion& vp, const Motion& ap,
                                      double qd, double qdd, const RigidBodyInertia& I, Transform& X, Motion& vi,
                                      Motion& ai, Force& fi) {
  X = JointRevoluteAxis<A>{}.compose_sc(s, c, Xt);
  Motion a = apply(X, ap);
  if constexpr (WithVelocity) {
    Motion v = apply(X, vp);
    v.angular[A] += qd;
    a.angular += detail::cross_unit<A>(v.angular, qd);
    a.linear += detail::cross_unit<A>(v.linear, qd);
    vi = v;
  } else {
    vi.setZero();
  }
  if constexpr (WithAcceleration) a.angular[A] += qdd;
  ai = a;
  fi = body_force<WithVelocity>(I, ai, vi);  // Eq. 5
}

#endif

template <bool WithVelocity, bool WithAcceleration, ForceInput F>
void rnea_impl(const Model& model, Data& data, const double* q, const double* v, const double* a,
               const Force* f_ext) {
  const int n = model.nbodies();
  detail::begin_outward_pass<F>(model, data, q);

  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    const int k = detail::kUnitAxisRow[model.joint(i).index()];
    if (p > 0 && k >= 0 && k < 3) {
      // Revolute about body axis k, parent not the base (Eqs. 3-5).
      const int iq = model.idx_q(i), iv = model.idx_v(i);
      const double s = data.sin_q[iq], c = data.cos_q[iq];
      const double qd = WithVelocity ? v[iv] : 0.0, qdd = WithAcceleration ? a[iv] : 0.0;
      if (k == 0)
        revolute_step<0, WithVelocity, WithAcceleration>(model.X_tree(i), s, c, data.v[p], data.a[p], qd, qdd,
                                                         model.inertia(i), data.X_up[i], data.v[i], data.a[i],
                                                         data.f[i]);
      else if (k == 1)
        revolute_step<1, WithVelocity, WithAcceleration>(model.X_tree(i), s, c, data.v[p], data.a[p], qd, qdd,
                                                         model.inertia(i), data.X_up[i], data.v[i], data.a[i],
                                                         data.f[i]);
      else
        revolute_step<2, WithVelocity, WithAcceleration>(model.X_tree(i), s, c, data.v[p], data.a[p], qd, qdd,
                                                         model.inertia(i), data.X_up[i], data.v[i], data.a[i],
                                                         data.f[i]);
    } else {
      // Any other joint, or a child of the base (Eqs. 3-5).
      detail::visit_joint(model.joint(i), [&](const auto& joint) {
        const Transform& X = data.X_up[i] = detail::joint_compose(joint, data, q, model.idx_q(i), model.X_tree(i));
        // Children of the base: v_0 = 0 and a_0 = -g (linear), so X v_0 vanishes and X a_0 = (0, E a_0).
        const bool on_base = p == 0;
        const Motion a_p = on_base ? Motion(Vec3::Zero(), rotate(X.E, data.a[0].linear)) : apply(X, data.a[p]);
        if constexpr (WithVelocity) {
          const double* qd = v + model.idx_v(i);
          if (on_base)
            data.v[i].setZero();
          else
            data.v[i] = apply(X, data.v[p]);
          detail::add_joint_motion(joint, data.v[i], qd);                    // Eq. 3
          data.a[i] = a_p + detail::velocity_product(joint, data.v[i], qd);  // Eq. 4, v x h qd
        } else {
          data.v[i].setZero();
          data.a[i] = a_p;
        }
        if constexpr (WithAcceleration) detail::add_joint_motion(joint, data.a[i], a + model.idx_v(i));  // Eq. 4, h qdd
      });
      data.f[i] = body_force<WithVelocity>(model.inertia(i), data.a[i], data.v[i]);  // Eq. 5
    }
    detail::subtract_external_force<F>(data, i, p, f_ext, data.f[i]);
  }

  for (int i = n - 1; i > 0; --i) {
    const Force& f = data.f[i];
    double* tau = data.tau.data() + model.idx_v(i);
    if (const int k = detail::kUnitAxisRow[model.joint(i).index()]; k >= 0)
      tau[0] = k < 3 ? f.angular[k] : f.linear[k - 3];  // Eq. 8, h_i = e_k
    else
      detail::visit_joint(model.joint(i), [&](const auto& joint) { joint.project(f, tau); });  // Eq. 8
    const int p = model.parent(i);
    if (p > 0) add_apply_inverse(data.X_up[i], f, data.f[p]);  // Eq. 7
  }
}

}  // namespace

void detail::rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  rnea_impl<true, true, ForceInput::None>(model, data, q, v, a, nullptr);
}

const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a) {
  detail::check_data(model, data, "rnea");
  model.check_configuration(q, "rnea: q");
  model.check_tangent(v, "rnea: v");
  model.check_tangent(a, "rnea: a");
  rnea_impl<true, true, ForceInput::None>(model, data, q.data(), v.data(), a.data(), nullptr);
  return data.tau;
}

const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a, ExternalForces f_ext, ReferenceFrame frame) {
  detail::check_data(model, data, "rnea");
  model.check_configuration(q, "rnea: q");
  model.check_tangent(v, "rnea: v");
  model.check_tangent(a, "rnea: a");
  detail::check_forces(model, f_ext, "rnea");
  if (frame == ReferenceFrame::World)
    rnea_impl<true, true, ForceInput::World>(model, data, q.data(), v.data(), a.data(), f_ext.data());
  else
    rnea_impl<true, true, ForceInput::Local>(model, data, q.data(), v.data(), a.data(), f_ext.data());
  return data.tau;
}

const VecX& nonlinear_effects(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& v) {
  detail::check_data(model, data, "nonlinear_effects");
  model.check_configuration(q, "nonlinear_effects: q");
  model.check_tangent(v, "nonlinear_effects: v");
  rnea_impl<true, false, ForceInput::None>(model, data, q.data(), v.data(), nullptr, nullptr);
  return data.tau;
}

const VecX& gravity_torques(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "gravity_torques");
  model.check_configuration(q, "gravity_torques: q");
  rnea_impl<false, false, ForceInput::None>(model, data, q.data(), nullptr, nullptr, nullptr);
  return data.tau;
}

}  // namespace plucker
