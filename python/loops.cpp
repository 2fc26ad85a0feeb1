// Closed kinematic loops (docs/loops.md): constraints, assembly, constrained dynamics, and the
// builders of the example mechanisms.
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "plucker/model/builders.hpp"

namespace plucker_py {
namespace {

plucker::ConstrainedOptions constrained_options(PyModel& m, const std::string& method, py::tuple baumgarte,
                                                double rank_tolerance, py::object loop_joint_forces, int threads = 1) {
  plucker::ConstrainedOptions opt;
  opt.threads = threads;
  opt.method = plucker::parse_constrained_method(method);
  if (baumgarte.size() != 2) value_error("baumgarte must be a pair (alpha, beta)");
  opt.baumgarte_alpha = real_arg(baumgarte[0], "baumgarte[0] (alpha)");
  opt.baumgarte_beta = real_arg(baumgarte[1], "baumgarte[1] (beta)");
  opt.rank_tolerance = rank_tolerance;
  if (!loop_joint_forces.is_none()) {
    const int na = m.model().num_loop_actuators();
    opt.loop_joint_forces = fixed_vector(loop_joint_forces, "loop_joint_forces", {na, "num_loop_actuators"});
  }
  return opt;
}

py::tuple constrained_forward_dynamics_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau,
                                          const std::string& method, py::tuple baumgarte, double rank_tolerance,
                                          py::object loop_joint_forces, int threads) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const plucker::ConstrainedOptions opt =
      constrained_options(m, method, baumgarte, rank_tolerance, loop_joint_forces, threads);
  return call({&qa, &va, &ta}, [&] {
    plucker::Data& data = m.data();
    const VecX& qdd = plucker::constrained_forward_dynamics(m.model(), data, qa, va, ta, opt);
    return py::make_tuple(vec_out(qdd), vec_out(data.loops.lambda));
  });
}

py::tuple constrained_forward_dynamics_derivatives_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau,
                                                      const std::string& method, py::tuple baumgarte,
                                                      double rank_tolerance, py::object loop_joint_forces) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const plucker::ConstrainedOptions opt = constrained_options(m, method, baumgarte, rank_tolerance, loop_joint_forces);
  return call({&qa, &va, &ta}, [&] {
    plucker::Data& data = m.data();
    plucker::constrained_forward_dynamics_derivatives(m.model(), data, qa, va, ta, opt);
    const plucker::Data::LoopResults& d = data.loops;
    return py::make_tuple(mat_out(d.dqdd_dq), mat_out(d.dqdd_dv), mat_out(d.dqdd_dtau), mat_out(d.dlambda_dq),
                          mat_out(d.dlambda_dv), mat_out(d.dlambda_dtau));
  });
}

}  // namespace

void bind_loops(py::module_& mod) {
  mod.def("constrained_forward_dynamics", &constrained_forward_dynamics_py, py::arg("model"), py::arg("q"),
          py::arg("v"), py::arg("tau"), py::arg("method") = "kkt", py::arg("baumgarte") = py::make_tuple(0.0, 0.0),
          py::arg("rank_tolerance") = 1e-10, py::arg("loop_joint_forces") = py::none(), py::arg("threads") = 1,
          "(qdd, lam) of the closed-loop system M qdd + C = tau + L^T lam, L qdd = c (Eq. 20 of\n"
          "Featherstone & Orin, \"Robot Dynamics: Equations and Algorithms\", ICRA 2000) by\n"
          "method 'kkt' (Eq. 20 directly), 'range_space' (Eq. 21, lambda first with O(n) tree solves),\n"
          "'null_space' (Eq. 22), or 'dca' / 'dca_accurate' (the divide-and-conquer algorithm, each loop\n"
          "joint closed by the assembly formula; threads=k runs its levels on k threads; mimic relations\n"
          "closed around it by the range-space step, one more DCA solve each). baumgarte=(alpha, beta):\n"
          "phi'' + 2 alpha phi' + beta^2 phi = 0.\n"
          "Rank-deficient constraints are handled by a rank-revealing step (rank_tolerance); lam is the\n"
          "minimum-norm one.");
  mod.def("constrained_forward_dynamics_derivatives", &constrained_forward_dynamics_derivatives_py, py::arg("model"),
          py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("method") = "kkt",
          py::arg("baumgarte") = py::make_tuple(0.0, 0.0), py::arg("rank_tolerance") = 1e-10,
          py::arg("loop_joint_forces") = py::none(),
          "(dqdd_dq, dqdd_dv, dqdd_dtau, dlam_dq, dlam_dv, dlam_dtau): the derivatives of the very solve\n"
          "constrained_forward_dynamics does with these arguments (analytical; q in the tangent space, as\n"
          "rnea_derivatives). dqdd_*: (nv, nv); dlam_*: (num_constraints, nv), also when the constraints\n"
          "are redundant: lam is then the minimum-norm one, differentiable while the rank of L stays the\n"
          "same (its derivative includes the turn of range(L) with q).");
  mod.def(
      "constraint_residual",
      [](PyModel& m, ArrayLike q) {
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return vec_out(plucker::constraint_residual(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"), "phi(q), (num_constraints,): zero when every loop (and mimic) is closed.");
  mod.def(
      "constraint_jacobian",
      [](PyModel& m, ArrayLike q) {
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return mat_out(plucker::constraint_jacobian(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"), "L(q), (num_constraints, nv): phi' = L v.");
  mod.def(
      "constraint_bias",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
        return call({&qa, &va}, [&] { return vec_out(plucker::constraint_bias(m.model(), m.data(), qa, va)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), "c(q, v) = -(dL/dt) v: the constraints read L qdd = c.");
  mod.def(
      "assemble",
      [](PyModel& m, ArrayLike q_guess, Names fixed_joints, double tolerance, int max_iterations) {
        const Vector qa = q_arg(m, q_guess, "q_guess");
        plucker::AssembleOptions opt;
        opt.tolerance = tolerance;
        opt.max_iterations = max_iterations;
        opt.fixed_joints = joints_arg(m, fixed_joints, "fixed_joints");
        return call({&qa}, [&] { return vec_out(plucker::assemble(m.model(), m.data(), qa, opt)); });
      },
      py::arg("model"), py::arg("q_guess"), py::arg("fixed_joints") = py::tuple(), py::arg("tolerance") = 1e-12,
      py::arg("max_iterations") = 50,
      "q with phi(q) = 0 near q_guess (Newton projection with minimum-norm steps), holding the joints\n"
      "named in fixed_joints. Raises plucker.SingularError naming the loops it cannot close.");
  mod.def(
      "project_velocity",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
        return call({&qa, &va}, [&] { return vec_out(plucker::project_velocity(m.model(), m.data(), qa, va)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"),
      "The velocity closest to v in the kinetic-energy metric with L v = 0.");
  mod.def(
      "loop_joint_forces",
      [](PyModel& m, ArrayLike q, ArrayLike lam, const std::string& frame) {
        const Vector qa = q_arg(m, q);
        const VecX la = fixed_vector(lam, "lam", {m.model().num_constraints(), "num_constraints"});
        const ReferenceFrame rf = frame_arg(frame);
        return call({&qa}, [&] {
          const std::vector<Force> f = plucker::loop_joint_forces(m.model(), m.data(), qa, la, rf);
          py::dict out;
          for (std::size_t k = 0; k < f.size(); ++k)
            out[to_str(m.model().loop_joints()[k].name)] = vec_out(f[k].vector());
          return out;
        });
      },
      py::arg("model"), py::arg("q"), py::arg("lam"), py::arg("frame") = "local",
      "Dict loop_joint_name -> spatial force [moment; force] (6,) that the loop joint transmits to its\n"
      "successor body (the predecessor receives the opposite), from the multipliers lam of\n"
      "constrained_forward_dynamics: 'local' = in the joint frame (moment about its origin), 'world'.");
  mod.def(
      "constrained_inverse_dynamics",
      [](PyModel& m, ArrayLike q, ArrayLike v, ArrayLike qdd, Names actuated_joints) {
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), aa = v_arg(m, qdd, "qdd");
        const std::vector<int> act = joints_arg(m, actuated_joints, "actuated_joints");
        return call({&qa, &va, &aa}, [&] {
          const plucker::ClosedLoopInverseDynamics r =
              plucker::constrained_inverse_dynamics(m.model(), m.data(), qa, va, aa, act);
          return py::make_tuple(vec_out(r.u), vec_out(r.lambda));
        });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("qdd"), py::arg("actuated_joints"),
      "(u, lam): actuator forces of the named joints (then of actuated loop joints) and constraint\n"
      "multipliers producing qdd. Raises plucker.SingularError when the actuators cannot produce it.");
  mod.def(
      "build_four_bar",
      [](double ground, double crank, double coupler, double rocker, double crank_angle) {
        plucker::FourBarParams p;
        p.ground = ground, p.crank = crank, p.coupler = coupler, p.rocker = rocker, p.crank_angle = crank_angle;
        return wrap(plucker::build_four_bar(p));
      },
      py::arg("ground") = 1.0, py::arg("crank") = 0.3, py::arg("coupler") = 0.9, py::arg("rocker") = 0.7,
      py::arg("crank_angle") = 1.0,
      "Planar four-bar linkage in the x-y plane (gravity -y): crank_joint turns the crank about the\n"
      "origin, coupler_joint the coupler at the crank tip, rocker_joint the rocker about (ground, 0, 0);\n"
      "the loop joint loop_joint closes coupler to rocker. q = 0 is assembled, with the crank at\n"
      "crank_angle [rad]; links of 2 kg/m.");
  mod.def(
      "build_slider_crank", []() { return wrap(plucker::build_slider_crank()); },
      "Planar slider-crank; q = 0 is assembled.");
  mod.def(
      "build_delta", []() { return wrap(plucker::build_delta()); },
      "3-DoF Delta-type translational parallel robot; q = 0 is assembled.");
}

}  // namespace plucker_py
