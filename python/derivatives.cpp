// Analytical derivatives of inverse and forward dynamics, one state and batched.
#include <string>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

py::tuple rnea_derivatives_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike a, ForceDict f_ext,
                              const std::string& frame) {
  warn_if_constrained(m, "rnea_derivatives");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), aa = v_arg(m, a, "a");
  const ReferenceFrame rf = frame_arg(frame);
  const std::vector<Force> f = forces_arg(m, f_ext, rf);
  return call({&qa, &va, &aa}, [&] {
    plucker::Data& data = m.data();
    plucker::rnea_derivatives(m.model(), data, qa, va, aa, f, rf);
    return py::make_tuple(mat_out(data.dtau_dq), mat_out(data.dtau_dv));
  });
}

py::tuple aba_derivatives_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, ForceDict f_ext,
                             const std::string& frame) {
  warn_if_constrained(m, "aba_derivatives");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const ReferenceFrame rf = frame_arg(frame);
  const std::vector<Force> f = forces_arg(m, f_ext, rf);
  return call({&qa, &va, &ta}, [&] {
    plucker::Data& data = m.data();
    plucker::aba_derivatives(m.model(), data, qa, va, ta, f, rf);
    return py::make_tuple(mat_out(data.dqdd_dq), mat_out(data.dqdd_dv), mat_out(data.Minv));
  });
}

/// A (B, nv, nv) array whose blocks are column-major: its memory is the nv x (nv B) matrix of
/// the C++ batch API, block b holding state b's matrix (no copy, no transposition).
py::array_t<double> square_blocks(py::ssize_t B, py::ssize_t nv) {
  const auto d = static_cast<py::ssize_t>(sizeof(double));
  return py::array_t<double>({B, nv, nv}, {nv * nv * d, d, nv * d});
}
Eigen::Map<MatX> blocks_map(py::array_t<double>& a, py::ssize_t B, py::ssize_t nv) {
  return {a.mutable_data(), static_cast<Eigen::Index>(nv), static_cast<Eigen::Index>(nv * B)};
}

/// rnea_derivatives_batch (inverse = true) or aba_derivatives_batch.
py::tuple derivatives_batch_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike x, int threads, bool inverse) {
  warn_if_constrained(m, inverse ? "rnea_derivatives_batch" : "aba_derivatives_batch");
  const Model& model = m.model();
  const std::string nq = "nq = " + std::to_string(model.nq()), nv_text = "nv = " + std::to_string(model.nv());
  const Array Q = batch_arg(q, "Q", model.nq(), nq);
  const py::ssize_t B = Q.shape(0), nv = model.nv();
  const Array V = batch_arg(v, "V", nv, nv_text, B);
  const Array X = batch_arg(x, inverse ? "A" : "TAU", nv, nv_text, B);
  threads_arg(threads);
  py::array_t<double> d_q = square_blocks(B, nv), d_v = square_blocks(B, nv);
  py::array_t<double> d_x = inverse ? py::array_t<double>() : square_blocks(B, nv);
  const Running running(m, inverse ? "rnea_derivatives_batch" : "aba_derivatives_batch");
  {
    py::gil_scoped_release release;
    plucker::BatchWorkspace workspace(model, threads);
    if (inverse)
      plucker::rnea_derivatives_batch(model, workspace, states_map(Q), states_map(V), states_map(X),
                                      blocks_map(d_q, B, nv), blocks_map(d_v, B, nv));
    else
      plucker::aba_derivatives_batch(model, workspace, states_map(Q), states_map(V), states_map(X),
                                     blocks_map(d_q, B, nv), blocks_map(d_v, B, nv), blocks_map(d_x, B, nv));
  }
  if (inverse) return py::make_tuple(d_q, d_v);
  return py::make_tuple(d_q, d_v, d_x);
}

}  // namespace

void bind_derivatives(py::module_& mod) {
  mod.def("rnea_derivatives", &rnea_derivatives_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"),
          py::arg("f_ext") = py::none(), py::arg("frame") = "world",
          (std::string("(dtau_dq, dtau_dv), each (nv, nv): the derivatives of tau = rnea(q, v, a) (d tau / d a\n"
                       "is crba(q)). Column k of dtau_dq is the derivative along integrate(q, e_k t) at t = 0\n"
                       "(the tangent space: nv columns; for free-flyer and spherical joints the Lie-group\n"
                       "derivative along the body's own axes, Pinocchio's convention). Analytical, O(N d)\n"
                       "for tree depth d.\n") +
           f_ext_doc)
              .c_str());
  mod.def("aba_derivatives", &aba_derivatives_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
          py::arg("f_ext") = py::none(), py::arg("frame") = "world",
          (std::string("(dqdd_dq, dqdd_dv, dqdd_dtau), each (nv, nv): the derivatives of qdd = aba(q, v, tau),\n"
                       "dqdd_dtau = M^-1 (tangent-space convention as for rnea_derivatives). Raises\n"
                       "plucker.SingularError naming the joint when the dynamics are undefined.\n") +
           f_ext_doc)
              .c_str());
  mod.def(
      "rnea_derivatives_batch",
      [](PyModel& m, ArrayLike Q, ArrayLike V, ArrayLike A, int threads) {
        return derivatives_batch_py(m, Q, V, A, threads, true);
      },
      py::arg("model"), py::arg("Q"), py::arg("V"), py::arg("A"), py::arg("threads") = 0,
      "rnea_derivatives over B states: Q (B, nq), V and A (B, nv) -> (dtau_dq, dtau_dv), each\n"
      "(B, nv, nv). Runs on `threads` threads (0: one per hardware thread) without the GIL, in\n"
      "groups of states in SIMD lanes (8 with AVX-512, 4 with AVX, else 2; equal to the single\n"
      "calls up to rounding); every state is validated first (ValueError naming the state and\n"
      "joint).");
  mod.def(
      "aba_derivatives_batch",
      [](PyModel& m, ArrayLike Q, ArrayLike V, ArrayLike TAU, int threads) {
        return derivatives_batch_py(m, Q, V, TAU, threads, false);
      },
      py::arg("model"), py::arg("Q"), py::arg("V"), py::arg("TAU"), py::arg("threads") = 0,
      "aba_derivatives over B states: Q (B, nq), V and TAU (B, nv) -> (dqdd_dq, dqdd_dv,\n"
      "dqdd_dtau), each (B, nv, nv). See rnea_derivatives_batch.");
}

}  // namespace plucker_py
