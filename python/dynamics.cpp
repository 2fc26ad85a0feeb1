// Inverse dynamics, the joint-space inertia matrix, the ABA, and the quantities derived from them.
#include <string>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

py::array_t<double> rnea_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike a, ForceDict f_ext,
                            const std::string& frame) {
  warn_if_constrained(m, "rnea");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), aa = v_arg(m, a, "a");
  const ReferenceFrame rf = frame_arg(frame);
  const std::vector<Force> f = forces_arg(m, f_ext, rf, &qa);
  return call({&qa, &va, &aa}, [&] {
    if (f.empty()) return vec_out(plucker::rnea(m.model(), m.data(), qa, va, aa));
    return vec_out(plucker::rnea(m.model(), m.data(), qa, va, aa, f, rf));
  });
}

py::array_t<double> aba_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, ForceDict f_ext,
                           const std::string& frame) {
  warn_if_constrained(m, "aba");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const ReferenceFrame rf = frame_arg(frame);
  const std::vector<Force> f = forces_arg(m, f_ext, rf, &qa);
  return call({&qa, &va, &ta}, [&] {
    if (f.empty()) return vec_out(plucker::aba(m.model(), m.data(), qa, va, ta));
    return vec_out(plucker::aba(m.model(), m.data(), qa, va, ta, f, rf));
  });
}

}  // namespace

void bind_dynamics(py::module_& mod) {
  mod.def("rnea", &rnea_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("f_ext") = py::none(),
          py::arg("frame") = "world",
          (std::string("Inverse dynamics tau = ID(q, v, a) (recursive Newton-Euler), gravity included.\n") + f_ext_doc)
              .c_str());
  mod.def("aba", &aba_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f_ext") = py::none(),
          py::arg("frame") = "world",
          (std::string("Forward dynamics qdd = FD(q, v, tau) (articulated-body algorithm). Raises\n"
                       "plucker.SingularError naming the joint when the dynamics are undefined.\n") +
           f_ext_doc)
              .c_str());
  mod.def(
      "crba",
      [](PyModel& m, ArrayLike q) {
        warn_if_constrained(m, "crba");
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return mat_out(plucker::crba(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"), "Joint-space inertia matrix M(q), (nv, nv), full symmetric.");
  mod.def(
      "nonlinear_effects",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        warn_if_constrained(m, "nonlinear_effects");
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
        return call({&qa, &va}, [&] { return vec_out(plucker::nonlinear_effects(m.model(), m.data(), qa, va)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"),
      "C(q, v) = rnea(q, v, 0): Coriolis, centrifugal and gravity terms.");
  mod.def(
      "gravity_torques",
      [](PyModel& m, ArrayLike q) {
        warn_if_constrained(m, "gravity_torques");
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return vec_out(plucker::gravity_torques(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"), "g(q) = rnea(q, 0, 0).");
  mod.def(
      "kinetic_energy",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
        return call({&qa, &va}, [&] { return plucker::kinetic_energy(m.model(), m.data(), qa, va); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), "1/2 v^T M(q) v (float).");
  mod.def(
      "potential_energy",
      [](PyModel& m, ArrayLike q) {
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return plucker::potential_energy(m.model(), m.data(), qa); });
      },
      py::arg("model"), py::arg("q"), "-sum m_i g . c_i in the model's gravity (float; zero at the world origin).");
}

}  // namespace plucker_py
