// The batched functions: many states per call, on several threads, without the GIL. While one
// runs, its model is marked in use (Running): the model's mutators raise instead of changing it
// under the running call. Every state is validated by the C++ call before any computation
// (errors name the state and the joint).
#include <string>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

/// rnea_batch (inverse = true) or aba_batch: (B, nq), (B, nv), (B, nv) -> (B, nv).
py::array_t<double> dynamics_batch_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike x, int threads, bool inverse) {
  warn_if_constrained(m, inverse ? "rnea_batch" : "aba_batch");
  const Model& model = m.model();
  const std::string nq = "nq = " + std::to_string(model.nq()), nv = "nv = " + std::to_string(model.nv());
  const Array Q = batch_arg(q, "Q", model.nq(), nq);
  const py::ssize_t B = Q.shape(0);
  const Array V = batch_arg(v, "V", model.nv(), nv, B);
  const Array X = batch_arg(x, inverse ? "A" : "TAU", model.nv(), nv, B);
  threads_arg(threads);
  py::array_t<double> out({B, static_cast<py::ssize_t>(model.nv())});
  Eigen::Map<MatX> out_map(out.mutable_data(), model.nv(), static_cast<Eigen::Index>(B));
  const Running running(m, inverse ? "rnea_batch" : "aba_batch");
  {
    py::gil_scoped_release release;
    plucker::BatchWorkspace workspace(model, threads);
    if (inverse)
      plucker::rnea_batch(model, workspace, states_map(Q), states_map(V), states_map(X), out_map);
    else
      plucker::aba_batch(model, workspace, states_map(Q), states_map(V), states_map(X), out_map);
  }
  return out;
}

py::array_t<double> crba_batch_py(PyModel& m, ArrayLike q, int threads) {
  warn_if_constrained(m, "crba_batch");
  const Model& model = m.model();
  const Array Q = batch_arg(q, "Q", model.nq(), "nq = " + std::to_string(model.nq()));
  const py::ssize_t B = Q.shape(0), nv = model.nv();
  threads_arg(threads);
  py::array_t<double> out({B, nv, nv});
  // Row-major (B, nv, nv) is the column-major nv x (nv B) layout of crba_batch with each
  // block transposed, which M's symmetry makes the same matrix.
  Eigen::Map<MatX> out_map(out.mutable_data(), nv, static_cast<Eigen::Index>(nv * B));
  const Running running(m, "crba_batch");
  {
    py::gil_scoped_release release;
    plucker::BatchWorkspace workspace(model, threads);
    plucker::crba_batch(model, workspace, states_map(Q), out_map);
  }
  return out;
}

/// crba_batch_packed: (B, nq) -> (B, nnz), row b = M(Q[b])'s nonzeros in jsim_pattern order.
py::array_t<double> crba_batch_packed_py(PyModel& m, ArrayLike q, int threads) {
  warn_if_constrained(m, "crba_batch_packed");
  const Model& model = m.model();
  const Array Q = batch_arg(q, "Q", model.nq(), "nq = " + std::to_string(model.nq()));
  const py::ssize_t B = Q.shape(0);
  threads_arg(threads);
  const Running running(m, "crba_batch_packed");
  plucker::BatchWorkspace workspace(model, threads);
  const py::ssize_t nnz = workspace.jsim_pattern().nnz();
  py::array_t<double> out({B, nnz});  // row-major (B, nnz) = column-major nnz x B
  Eigen::Map<MatX> out_map(out.mutable_data(), nnz, static_cast<Eigen::Index>(B));
  {
    py::gil_scoped_release release;
    plucker::crba_batch_packed(model, workspace, states_map(Q), out_map);
  }
  return out;
}

}  // namespace

void bind_batch(py::module_& mod) {
  mod.def(
      "rnea_batch",
      [](PyModel& m, ArrayLike Q, ArrayLike V, ArrayLike A, int threads) {
        return dynamics_batch_py(m, Q, V, A, threads, true);
      },
      py::arg("model"), py::arg("Q"), py::arg("V"), py::arg("A"), py::arg("threads") = 0,
      "rnea over B states: Q (B, nq), V and A (B, nv) -> tau (B, nv), row b = rnea(Q[b], V[b], A[b]).\n"
      "Runs on `threads` threads (0: one per hardware thread) without the GIL; every state is\n"
      "validated first (ValueError naming the state and joint). While it runs the model cannot\n"
      "change (setting its gravity from another thread raises RuntimeError).");
  mod.def(
      "aba_batch",
      [](PyModel& m, ArrayLike Q, ArrayLike V, ArrayLike TAU, int threads) {
        return dynamics_batch_py(m, Q, V, TAU, threads, false);
      },
      py::arg("model"), py::arg("Q"), py::arg("V"), py::arg("TAU"), py::arg("threads") = 0,
      "aba over B states: Q (B, nq), V and TAU (B, nv) -> qdd (B, nv). See rnea_batch.");
  mod.def("crba_batch", &crba_batch_py, py::arg("model"), py::arg("Q"), py::arg("threads") = 0,
          "crba over B states: Q (B, nq) -> M (B, nv, nv), full symmetric. See rnea_batch.");
  mod.def("crba_batch_packed", &crba_batch_packed_py, py::arg("model"), py::arg("Q"), py::arg("threads") = 0,
          "crba over B states, only the nonzeros the tree allows: Q (B, nq) -> (B, nnz), row b =\n"
          "M(Q[b])'s lower-triangle nonzeros in the order of jsim_pattern(model) (e.g.\n"
          "scipy.sparse.csr_matrix((row, col, row_start)) is M's lower triangle). See rnea_batch.");
  mod.def(
      "jsim_pattern",
      [](const PyModel& m) {
        const plucker::JsimPattern p = plucker::jsim_pattern(m.model());
        return py::make_tuple(py::array_t<int>(static_cast<py::ssize_t>(p.row_start.size()), p.row_start.data()),
                              py::array_t<int>(static_cast<py::ssize_t>(p.col.size()), p.col.data()));
      },
      py::arg("model"),
      "(row_start, col): the nonzero pattern of M's lower triangle in compressed sparse rows. Row k\n"
      "holds the DoF-level ancestors of DoF k in ascending order, then k (the diagonal last), as\n"
      "entries row_start[k]:row_start[k + 1] of col (branch-induced sparsity).");
}

}  // namespace plucker_py
