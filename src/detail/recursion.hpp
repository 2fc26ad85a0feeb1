// Pieces shared by the O(N) recursions (rnea.cpp, aba.cpp), and their entry points without
// argument checks, for callers that validated once up front (batch.cpp).
#pragma once

#include "checks.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker::detail {

/// Where the external forces of a call are given, if any (a template parameter, so the
/// recursions without external forces carry no test for them).
enum class ForceInput { None, World, Local };

/// Start of pass 1: v_0 = 0, a_0 = -g (the fictitious base acceleration of paper 000),
/// 0_X_0 = 1 when world-frame forces must be mapped to the bodies, and sin/cos of q.
template <ForceInput F>
inline void begin_outward_pass(const Model& model, Data& data, const double* q) {
  data.v[0].setZero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());
  if constexpr (F == ForceInput::World) data.X_base[0] = Transform();
  evaluate_sincos(data, q);
}

/// f -= f^x_i, the external force on body i in body coordinates (Eq. 7). World-frame forces
/// are moved to the body by i_X_0 = i_X_p p_X_0, which is kept in data.X_base.
template <ForceInput F>
inline void subtract_external_force(Data& data, int i, int p, const Force* f_ext, Force& f) {
  if constexpr (F == ForceInput::World) {
    data.X_base[i] = data.X_up[i] * data.X_base[p];
    f -= data.X_base[i].apply(f_ext[i]);
  } else if constexpr (F == ForceInput::Local) {
    f -= f_ext[i];
  }
}

// Unchecked entry points: q, v, a/tau point to nq / nv finite values, quaternions unit,
// data made for model. Results in data.tau, data.qdd, data.M as for the checked functions.
void rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a);
void aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau);
void crba_unchecked(const Model& model, Data& data, const double* q, Triangle triangle);

}  // namespace plucker::detail
