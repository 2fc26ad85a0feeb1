// Data: the O(N) state made up front, the per-algorithm scratch copied slot by slot, and the
// checks every entry point shares.
#include "plucker/algorithms/data.hpp"

#include "algorithms/workspace.hpp"
#include "base/text.hpp"

namespace plucker {

Data::Data(const Model& model) : nbodies(model.nbodies()), nq(model.nq()), nv(model.nv()) {
  const std::size_t n = static_cast<std::size_t>(nbodies);
  X_up.resize(n);
  v.resize(n);
  a.resize(n);
  f.resize(n);
  sin_q = VecX::Zero(nq);
  cos_q = VecX::Zero(nq);
  tau = VecX::Zero(nv);
  qdd = VecX::Zero(nv);
  loops.nc = model.num_constraints();
}

namespace detail {

WorkspaceSlots::WorkspaceSlots(const WorkspaceSlots& other) {
  for (std::size_t k = 0; k < slots_.size(); ++k)
    if (other.slots_[k]) slots_[k] = other.slots_[k]->clone();
}

WorkspaceSlots& WorkspaceSlots::operator=(const WorkspaceSlots& other) {
  if (this != &other) *this = WorkspaceSlots(other);
  return *this;
}

void check_data(const Model& model, const Data& data, const char* fn) {
  if (data.nbodies != model.nbodies() || data.nq != model.nq() || data.nv != model.nv())
    throw InvalidArgument(std::string(fn) + ": Data was made for a different model (nbodies " +
                          std::to_string(data.nbodies) + " vs " + std::to_string(model.nbodies()) + ")");
}

void check_forces(const Model& model, ExternalForces f_ext, const char* fn) {
  if (static_cast<int>(f_ext.size()) != model.nbodies())
    throw InvalidArgument(std::string(fn) + ": f_ext has " + std::to_string(f_ext.size()) +
                          " entries, expected nbodies = " + std::to_string(model.nbodies()));
  for (int i = 0; i < model.nbodies(); ++i)
    if (!f_ext[i].angular.allFinite() || !f_ext[i].linear.allFinite())
      throw InvalidArgument(std::string(fn) + ": f_ext is not finite on body '" + model.body_name(i) + "'");
}

void throw_non_finite(const Model& model, const Data& data, const VecX& result, const char* fn,
                      const char* result_name) {
  auto finite = [](const auto& x) { return x.angular.allFinite() && x.linear.allFinite(); };
  const std::string tail =
      ": the state is outside the range of double precision (velocities, accelerations or forces too large)";
  for (int i = 1; i < model.nbodies(); ++i) {
    const char* what = !finite(data.v[i])   ? "velocity"
                       : !finite(data.a[i]) ? "acceleration"
                       : !finite(data.f[i]) ? "force"
                                            : nullptr;
    if (what)
      throw NumericalError(std::string(fn) + ": the " + what + " of body '" + model.body_name(i) + "' (joint '" +
                           model.joint_name(i) + "') is not finite" + tail);
  }
  for (int k = 0; k < result.size(); ++k)
    if (!std::isfinite(result[k]))
      throw NumericalError(std::string(fn) + ": " + result_name + "[" + std::to_string(k) + "] (joint '" +
                           model.joint_name(model.joint_of_v(k)) + "') is not finite (" + text::number(result[k]) +
                           ")" + tail);
  throw NumericalError(std::string(fn) + ": " + result_name + " is not finite" + tail);
}

}  // namespace detail
}  // namespace plucker
