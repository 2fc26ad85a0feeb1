// The forward-dynamics family: forward_dynamics_crba, forward_dynamics (every method), the choice
// of 'auto', minv, and the conjugate-gradient solve with its report.
#include <string>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

PyObject* g_fd_choice_type = nullptr;  // namedtuple ForwardDynamicsChoice(method, reason)
PyObject* g_cg_result_type = nullptr;  // namedtuple ConjugateGradientResult(x, iterations, residual)
PyObject* g_dca_cost_type = nullptr;   // namedtuple DcaCost(levels, max_handles, total, critical_path, kinematics)

py::array_t<double> fd_crba_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, ForceDict f_ext,
                               const std::string& frame) {
  warn_if_constrained(m, "forward_dynamics_crba");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const ReferenceFrame rf = frame_arg(frame);
  const std::vector<Force> f = forces_arg(m, f_ext, rf, &qa);
  return call({&qa, &va, &ta}, [&] {
    if (f.empty()) return vec_out(plucker::forward_dynamics_crba(m.model(), m.data(), qa, va, ta));
    return vec_out(plucker::forward_dynamics_crba(m.model(), m.data(), qa, va, ta, f, rf));
  });
}

py::array_t<double> forward_dynamics_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, const std::string& method,
                                        ForceDict f_ext, const std::string& frame, int threads) {
  warn_if_constrained(m, "forward_dynamics");
  using Method = plucker::ForwardDynamicsMethod;
  const Method meth = plucker::parse_forward_dynamics_method(method);
  const bool dca = meth == Method::Dca || meth == Method::DcaAccurate;
  if (threads < 1) value_error("forward_dynamics: threads must be at least 1, got " + std::to_string(threads));
  if (threads != 1 && !dca)
    value_error("forward_dynamics: threads applies to the methods 'dca' and 'dca_accurate' only, not '" + method + "'");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const ReferenceFrame rf = frame_arg(frame);
  const std::vector<Force> f = forces_arg(m, f_ext, rf, &qa);
  return call({&qa, &va, &ta}, [&] {
    if (dca)
      return vec_out(plucker::forward_dynamics_dca(
          m.model(), m.data(), qa, va, ta,
          meth == Method::Dca ? plucker::DcaVariant::Basic : plucker::DcaVariant::Accurate, threads, f, rf));
    return vec_out(plucker::forward_dynamics(m.model(), m.data(), qa, va, ta, meth, f, rf));
  });
}

plucker::DcaVariant dca_variant_arg(const std::string& variant) {
  if (variant == "basic") return plucker::DcaVariant::Basic;
  if (variant == "accurate") return plucker::DcaVariant::Accurate;
  value_error("dca_cost: variant must be 'basic' or 'accurate', got '" + variant + "'");
}

py::object solve_cg_py(PyModel& m, ArrayLike q, ArrayLike b, bool preconditioned, double tolerance,
                       OptInt max_iterations) {
  warn_if_constrained(m, "solve_conjugate_gradient");
  const Vector qa = q_arg(m, q), ba = v_arg(m, b, "b");
  int cap = -1;  // the C++ default, 10 nv
  if (!max_iterations.is_none()) {
    if (PyBool_Check(max_iterations.ptr()) || !PyIndex_Check(max_iterations.ptr()))
      value_error("max_iterations must be an integer >= 0 or None, got " +
                  py::repr(max_iterations).cast<std::string>());
    const long long n = max_iterations.cast<long long>();
    if (n < 0 || n > 1000000000)
      value_error("max_iterations must be in [0, 1e9] or None (10 nv), got " + std::to_string(n));
    cap = static_cast<int>(n);
  }
  return call({&qa, &ba}, [&] {
    plucker::Data& data = m.data();
    const VecX& x = plucker::solve_conjugate_gradient(m.model(), data, qa, ba, preconditioned, tolerance, cap);
    const plucker::Data::CgReport& r = data.cg;  // converged: the C++ solver raises ConvergenceError otherwise
    return py::reinterpret_borrow<py::object>(g_cg_result_type)(vec_out(x), r.iterations, r.relative_residual,
                                                                r.backward_error);
  });
}

}  // namespace

void bind_forward_dynamics(py::module_& mod) {
  mod.def("forward_dynamics_crba", &fd_crba_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
          py::arg("f_ext") = py::none(), py::arg("frame") = "world",
          "Forward dynamics by CRBA + dense Cholesky (the O(n^3) reference path); same arguments as aba.");
  {
    py::tuple names(plucker::forward_dynamics_methods().size());
    std::size_t k = 0;
    for (plucker::ForwardDynamicsMethod meth : plucker::forward_dynamics_methods())
      names[k++] = py::str(std::string(plucker::to_string(meth)));
    mod.attr("FORWARD_DYNAMICS_METHODS") = names;
  }
  g_fd_choice_type = named_tuple(mod, "ForwardDynamicsChoice", py::make_tuple("method", "reason"),
                                 "The method forward_dynamics(method='auto') runs on a model, and why.");
  g_cg_result_type =
      named_tuple(mod, "ConjugateGradientResult", py::make_tuple("x", "iterations", "residual", "backward_error"),
                  "The result of solve_conjugate_gradient: the solution x, the iterations done, the relative\n"
                  "residual |b - M x| / |b| and the backward error |b - M x| / (|M| |x| + |b|) at exit.");
  mod.def("forward_dynamics", &forward_dynamics_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
          py::arg("method") = "auto", py::arg("f_ext") = py::none(), py::arg("frame") = "world", py::arg("threads") = 1,
          (std::string("Forward dynamics qdd = FD(q, v, tau) by any method of FORWARD_DYNAMICS_METHODS:\n"
                       "'aba' (articulated-body algorithm, O(N)), 'crba_cholesky' (CRBA + dense Cholesky),\n"
                       "'crba_ltdl' (CRBA + LTDL on the tree's sparsity), 'direct_cholesky' / 'symmetry_cholesky'\n"
                       "(M by the direct / symmetry-based method + dense Cholesky), 'cg' / 'pcg' (conjugate\n"
                       "gradient on O(N) products M y, plain / preconditioned by diag(H R H*)), 'innovations'\n"
                       "(M = [I + H phi K] D [I + H phi K]*, two O(N) triangular sweeps), 'minv' (M^-1 from\n"
                       "its operator form times tau - C), 'global_sparse' (Baraff's O(N) sparse LDL^T of the\n"
                       "global formulation's KKT system, Eq. 27), 'cfa' (the Constraint-Force Algorithm: chains\n"
                       "with short branches, Eq. 28 by cyclic reduction), 'dca' / 'dca_accurate' (Featherstone's\n"
                       "divide-and-conquer algorithm, world-frame / body-frame handle equations;\n"
                       "threads=k runs its assembly tree on k threads), 'auto' (see forward_dynamics_choice).\n"
                       "Raises ValueError for an unknown method, a topology 'cfa' does not cover, or threads != 1\n"
                       "with a method other than 'dca' / 'dca_accurate', and\n"
                       "plucker.SingularError naming the joint where M is singular.\n") +
           f_ext_doc)
              .c_str());
  mod.def(
      "forward_dynamics_choice",
      [](const PyModel& m) {
        const plucker::ForwardDynamicsChoice c = plucker::forward_dynamics_choice(m.model());
        return py::reinterpret_borrow<py::object>(g_fd_choice_type)(std::string(plucker::to_string(c.method)),
                                                                    to_str(c.reason));
      },
      py::arg("model"),
      "ForwardDynamicsChoice(method, reason): the method that forward_dynamics(method='auto') runs\n"
      "on this model ('aba' or 'crba_ltdl', by predicted time from the topology) and why.");
  g_dca_cost_type = named_tuple(
      mod, "DcaCost", py::make_tuple("levels", "max_handles", "total", "critical_path", "kinematics"),
      "The assembly tree of forward_dynamics(method='dca...') and its floating-point operations (see dca_cost).");
  mod.def(
      "dca_cost",
      [](const PyModel& m, const std::string& variant) {
        const plucker::DcaCost c = plucker::dca_cost(m.model(), dca_variant_arg(variant));
        return py::reinterpret_borrow<py::object>(g_dca_cost_type)(c.levels, c.max_handles, c.total, c.critical_path,
                                                                   c.kinematics);
      },
      py::arg("model"), py::arg("variant") = "accurate",
      "DcaCost(levels, max_handles, total, critical_path, kinematics) of the divide-and-conquer\n"
      "algorithm on this model: the height of its assembly tree, the most handles on a subassembly,\n"
      "and the multiplications + additions of one call: in all, on the longest chain of dependent\n"
      "steps (the time on unboundedly many processors), and on the longest such chain of the pass of\n"
      "poses and velocities that precedes them (a parallel prefix, ceil(log2(depth)) rounds).\n"
      "variant: 'basic' or 'accurate'.");
  mod.def(
      "mass_matrix_newton_euler",
      [](PyModel& m, ArrayLike q) {
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return mat_out(plucker::mass_matrix_newton_euler(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"),
      "M = H^T P^-T I P^-1 H, the Newton-Euler factorisation of the global formulation (Featherstone &\n"
      "Orin, \"Robot Dynamics: Equations and Algorithms\", ICRA 2000, Eqs. 23-29), applied as operators\n"
      "in world coordinates: the reference form the CRBA is checked against.");
  mod.def(
      "forward_dynamics_global_sparse",
      [](PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, ForceDict f_ext, const std::string& frame) {
        warn_if_constrained(m, "forward_dynamics_global_sparse");
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
        const ReferenceFrame rf = frame_arg(frame);
        const std::vector<Force> f = forces_arg(m, f_ext, rf, &qa);
        return call({&qa, &va, &ta}, [&] {
          return vec_out(plucker::forward_dynamics_global_sparse(m.model(), m.data(), qa, va, ta, f, rf));
        });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f_ext") = py::none(),
      py::arg("frame") = "world",
      "Baraff's linear-time method: qdd from the KKT system of the bodies' accelerations and the joints'\n"
      "constraint forces (Featherstone & Orin 2000, Eq. 27) in link coordinates, by a block LDL^T in its\n"
      "perfect elimination order (leaves first), O(N). Same arguments as aba.");
  mod.def(
      "forward_dynamics_cfa",
      [](PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, const std::string& solver, ForceDict f_ext,
         const std::string& frame) {
        warn_if_constrained(m, "forward_dynamics_cfa");
        plucker::CfaSolver s = plucker::CfaSolver::CyclicReduction;
        if (solver == "serial")
          s = plucker::CfaSolver::Serial;
        else if (solver != "cyclic_reduction")
          value_error("solver must be 'cyclic_reduction' or 'serial', got '" + solver + "'");
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
        const ReferenceFrame rf = frame_arg(frame);
        const std::vector<Force> f = forces_arg(m, f_ext, rf, &qa);
        return call({&qa, &va, &ta},
                    [&] { return vec_out(plucker::forward_dynamics_cfa(m.model(), m.data(), qa, va, ta, f, rf, s)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("solver") = "cyclic_reduction",
      py::arg("f_ext") = py::none(), py::arg("frame") = "world",
      "The Constraint-Force Algorithm (Featherstone & Fijany 1999): Eq. 28, block-tridiagonal in the\n"
      "joints' constraint forces along the main chain, solved by cyclic reduction (O(log N) depth) or\n"
      "serially (solver='serial'); short branches are folded into the chain first. Raises ValueError\n"
      "for a topology it does not cover (see cfa_topology) and plucker.SingularError naming the body\n"
      "when a main-chain body's inertia is singular.");
  mod.def(
      "cfa_topology",
      [](const PyModel& m) {
        const plucker::CfaTopology t = plucker::cfa_topology(m.model());
        py::list chain;
        for (int i : t.chain) chain.append(to_str(m.model().body_name(i)));
        py::dict out;
        out["covered"] = t.covered;
        out["chain"] = chain;
        out["reason"] = to_str(t.reason);
        return out;
      },
      py::arg("model"),
      "{'covered', 'chain', 'reason'}: whether forward_dynamics_cfa covers the model (a main chain, the\n"
      "path to the deepest leaf, with branches of at most 12 bodies off it), the main chain's body\n"
      "names base to tip, and why not.");
  mod.def(
      "cfa_operation_counts",
      [](PyModel& m) {
        const plucker::CfaOperationCounts c = plucker::cfa_operation_counts(m.data());
        py::dict out;
        out["chain_bodies"] = c.chain_bodies;
        out["branch_bodies"] = c.branch_bodies;
        out["levels"] = c.levels;
        out["total"] = c.total;
        out["critical_path"] = c.critical_path;
        return out;
      },
      py::arg("model"),
      "The floating-point operations of the last forward_dynamics_cfa on this model: 'total' (work),\n"
      "'critical_path' (with one processor per body / joint / reduction task), the cyclic-reduction\n"
      "'levels', 'chain_bodies' and 'branch_bodies'.");
  mod.def(
      "minv",
      [](PyModel& m, ArrayLike q) {
        warn_if_constrained(m, "minv");
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return mat_out(plucker::minv(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"),
      "M(q)^-1, (nv, nv), from the operator form [I - H psi K]* D^-1 [I - H psi K] (Jain, \"Unified\n"
      "Formulation of Dynamics for Serial Rigid Multibody Systems\", J. Guidance, Control, and Dynamics\n"
      "1991, Lemma 6.4),\n"
      "O(N^2) without forming or factorising M. Raises plucker.SingularError naming the joint.");
  mod.def("solve_conjugate_gradient", &solve_cg_py, py::arg("model"), py::arg("q"), py::arg("b"),
          py::arg("preconditioned") = false, py::arg("tolerance") = 1e-14, py::arg("max_iterations") = py::none(),
          "x = M(q)^-1 b by conjugate gradient on O(N) products M p (M is never formed), preconditioned\n"
          "by diag(H R H*) when preconditioned=True. Iterates until |r| <= tolerance |b| or max_iterations\n"
          "(None: 10 nv). Returns ConjugateGradientResult(x, iterations, residual); raises\n"
          "plucker.ConvergenceError (with .iterations and .residual) when it stops at max_iterations\n"
          "above the tolerance, and plucker.SingularError naming the joint where M is singular.");
}

}  // namespace plucker_py
