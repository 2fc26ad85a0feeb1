// What every algorithm shares: the check that a Data belongs to the model (and, in debug
// builds, is not in use by another call), each algorithm family's scratch in its Data slot,
// sin/cos of q, and the external-force input of the recursions.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "model/joint_kernels.hpp"
#include "plucker/algorithms/data.hpp"
#include "plucker/errors.hpp"
#include "plucker/model/jsim_pattern.hpp"
#include "spatial/sincos.hpp"

namespace plucker::detail {

/// The slot of each algorithm family's scratch in Data::workspaces.
enum class Slot : int {
  Crba,
  Aba,
  Factorisation,
  Innovations,
  ConjugateGradient,
  Minv,
  Composite,
  Kinematics,
  Loops,
  Singularity,
  Derivatives,
  OperationalSpace,
  ConstrainedDerivatives,
  Global,
  Contact,
  GlobalSparse,  ///< global_sparse and cfa (global_kernels.hpp)
  Dca,           ///< forward_dynamics_dca (dca.cpp)
  DcaLoops,      ///< constrained_forward_dynamics by the DCA (dca.cpp, its loop handles)
  DcaGears,      ///< its mimic relations (constrained_dca.cpp)
  Last = DcaGears
};
static_assert(static_cast<int>(Slot::Last) < kWorkspaceSlots);

/// The scratch of family W (a struct with `static constexpr Slot slot` and a constructor from the
/// model), made on the first call that needs it.
template <class W>
struct WorkspaceOf : Workspace {
  std::unique_ptr<Workspace> clone() const override { return std::make_unique<W>(static_cast<const W&>(*this)); }
};
template <class W>
W& workspace(const Model& model, Data& data) {
  std::unique_ptr<Workspace>& slot = data.workspaces[static_cast<int>(W::slot)];
  if (!slot) slot = std::make_unique<W>(model);
  return static_cast<W&>(*slot);
}

/// The scratch of family W if a call has made it, else nullptr (for const access).
template <class W>
const W* find_workspace(const Data& data) {
  return static_cast<const W*>(data.workspaces.get(static_cast<int>(W::slot)));
}

/// A result vector or matrix of Data, sized on first use.
template <class V>
inline V& sized(V& x, Eigen::Index n) {
  if (x.size() != n) x.setZero(n);
  return x;
}
template <class M>
inline M& sized(M& x, Eigen::Index rows, Eigen::Index cols) {
  if (x.rows() != rows || x.cols() != cols) x.setZero(rows, cols);
  return x;
}

/// Throws InvalidArgument unless data was made for model.
void check_data(const Model& model, const Data& data, const char* fn);

/// The use of a Data by one call, from the argument checks to the return: checks that the
/// Data was made for the model and, in debug builds, that no other call is using it (one Data
/// per thread is the rule; two threads sharing one gave wrong answers silently).
class DataUse {
 public:
  DataUse(const Model& model, const Data& data, const char* fn) {
    check_data(model, data, fn);
#ifndef NDEBUG
    static thread_local const char this_thread = 0;
    counter_ = &data.in_use;
    const void* expected = nullptr;
    if (counter_->owner().load(std::memory_order_acquire) != &this_thread &&
        !counter_->owner().compare_exchange_strong(expected, &this_thread, std::memory_order_acquire))
      throw InvalidArgument(std::string(fn) +
                            ": this Data is being used by another thread at the same time; use one Data per thread");
    ++counter_->depth();
#endif
  }
  ~DataUse() {
#ifndef NDEBUG
    if (--counter_->depth() == 0) counter_->owner().store(nullptr, std::memory_order_release);
#endif
  }
  DataUse(const DataUse&) = delete;
  DataUse& operator=(const DataUse&) = delete;

 private:
#ifndef NDEBUG
  const UseCounter* counter_ = nullptr;
#endif
};

/// Runs the argument checks `checks`, prefixing the message of an InvalidArgument with the
/// function's name ("rnea: q has size 5, expected nq = 7").
template <class Checks>
inline void check_arguments(const char* fn, const Checks& checks) {
  try {
    checks();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(fn) + ": " + e.what());
  }
}

/// Throws InvalidArgument unless f_ext has one finite force per body.
void check_forces(const Model& model, ExternalForces f_ext, const char* fn);

/// The checks of an entry point that takes a state: q a configuration, v and x (an
/// acceleration or a torque, named x_name) tangent vectors, and f_ext when given; errors name fn.
inline void check_state(const Model& model, const char* fn, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& x, const char* x_name,
                        ExternalForces f_ext = {}) {
  check_arguments(fn, [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
    model.check_tangent(x, x_name);
  });
  if (!f_ext.empty()) check_forces(model, f_ext, fn);
}

/// sin and cos of every coordinate of q into data (spatial/sincos.hpp).
inline void evaluate_sincos(Data& data, const double* q) {
  sincos_batch(q, data.sin_q.data(), data.cos_q.data(), data.nq);
}
/// Joint i's coordinates with their sines and cosines (after evaluate_sincos).
inline ops::JointQ<double> joint_q(const Model& model, const Data& data, const double* q, int i) {
  const int iq = model.idx_q(i);
  return {q + iq, data.sin_q.data() + iq, data.cos_q.data() + iq};
}

/// Relative size below which a joint's pivot counts as zero (DEVELOPERS.md, "Singularity").
inline constexpr double kSingularPivot = 1e-12;
/// Absolute floor of a pivot: the smallest normal double. Below it the pivot's inverse
/// overflows (a body of denormal mass) whatever its size relative to M_kk.
inline constexpr double kSmallestPivot = std::numeric_limits<double>::min();
/// The one singularity criterion (DEVELOPERS.md, "Singularity"): a pivot is accepted when it
/// exceeds kSingularPivot times its reference entry (M_kk, or a column's largest entry) and is
/// a normal number. NaN is refused.
inline bool pivot_accepted(double pivot, double reference) {
  return pivot > kSingularPivot * reference && pivot >= kSmallestPivot;
}

/// Where the external forces of a call are given, if any (a template parameter, so the
/// recursions without external forces carry no test for them).
enum class ForceInput { None, World, Local, LocalWorldAligned };

/// f -= f^x_i, the external force on body i in body coordinates (Eq. 7). World-frame forces
/// are moved to the body by i_X_0 = i_X_p p_X_0, kept in data.X_base; world-aligned ones (about
/// the body origin already) are only rotated into the body's axes.
template <ForceInput F>
PLUCKER_HOT inline void subtract_external_force(Data& data, int i, int p, const Force* f_ext, Force& f) {
  if constexpr (F == ForceInput::World) {
    data.X_base[i] = data.X_up[i] * data.X_base[p];
    f -= ops::apply(data.X_base[i], f_ext[i]);
  } else if constexpr (F == ForceInput::Local) {
    f -= f_ext[i];
  } else if constexpr (F == ForceInput::LocalWorldAligned) {
    data.X_base[i] = data.X_up[i] * data.X_base[p];
    f -= ops::apply(Transform(data.X_base[i].E, Vec3::Zero()), f_ext[i]);
  }
}

/// Throws NumericalError naming the first body (in the order of pass 1) whose velocity,
/// acceleration or force is not finite, or else the first non-finite entry of `result`: called
/// when a result of finite inputs is not finite (the state overflows double precision).
[[noreturn]] void throw_non_finite(const Model& model, const Data& data, const VecX& result, const char* fn,
                                   const char* result_name);
/// The check of every result: its entries' sum is finite unless one is inf or NaN (or the sum
/// overflows, which the slow path tells apart).
inline void check_finite_result(const Model& model, const Data& data, const VecX& result, const char* fn,
                                const char* result_name) {
  double sum = 0.0;
  for (Eigen::Index k = 0; k < result.size(); ++k) sum += result[k];
  if (!std::isfinite(sum) && !result.allFinite()) throw_non_finite(model, data, result, fn, result_name);
}

// Unchecked entry points, for callers that validated once up front (batch.cpp): q, v, a/tau
// point to nq / nv finite values, quaternions unit, data made for model. Results in data.tau,
// data.qdd, data.M as for the checked functions.
void rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a);
void aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau);
void crba_unchecked(const Model& model, Data& data, const double* q, Triangle triangle);
/// As above with the external forces f_ext (checked by check_forces; none when empty) in `frame`.
void rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a,
                    ExternalForces f_ext, ReferenceFrame frame);
void aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                   ExternalForces f_ext, ReferenceFrame frame);
/// data.tau = C(q, v) - J^T f_ext: rnea with qdd = 0.
void bias_forces_unchecked(const Model& model, Data& data, const double* q, const double* v, ExternalForces f_ext,
                           ReferenceFrame frame);

}  // namespace plucker::detail
