// A user's translation unit that calls every public algorithm of plucker, for the compile
// budget (issue 16: under 20 s of CPU and 1 GB with g++ 12): scripts/compile-budget.sh
// compiles it with the Release flags and reports time and peak memory. It is also linked and
// run there, so that it cannot drift from the API.
#include <cstdio>
#include <plucker/algorithms/batch.hpp>
#include <plucker/constraints/constrained_dynamics.hpp>
#include <plucker/constraints/loop_constraints.hpp>
#include <plucker/io/urdf.hpp>
#include <plucker/model/builders.hpp>
#include <plucker/plucker.hpp>
#include <random>

int main() {
  using namespace plucker;
  const Model model = build_chain(8);
  Data data(model);
  std::mt19937_64 rng(1);
  const VecX q = random_configuration(model, rng);
  const VecX v = VecX::Constant(model.nv(), 0.1), a = VecX::Constant(model.nv(), 0.2);
  const VecX tau = rnea(model, data, q, v, a);
  double sum = tau.sum();
  sum += nonlinear_effects(model, data, q, v).sum() + gravity_torques(model, data, q).sum();
  sum += rnea_composite(model, data, q, v, a).sum() + mass_times(model, data, q, a).sum();
  sum += crba(model, data, q).sum() + mass_matrix_direct(model, data, q).sum();
  sum += mass_matrix_symmetry(model, data, q).sum() + minv(model, data, q).sum();
  sum += aba(model, data, q, v, tau).sum() + forward_dynamics_crba(model, data, q, v, tau).sum();
  for (ForwardDynamicsMethod m :
       {ForwardDynamicsMethod::Aba, ForwardDynamicsMethod::CrbaCholesky, ForwardDynamicsMethod::CrbaLtdl,
        ForwardDynamicsMethod::DirectCholesky, ForwardDynamicsMethod::SymmetryCholesky,
        ForwardDynamicsMethod::ConjugateGradient, ForwardDynamicsMethod::PreconditionedCG,
        ForwardDynamicsMethod::Innovations, ForwardDynamicsMethod::Minv, ForwardDynamicsMethod::Auto})
    sum += forward_dynamics(model, data, q, v, tau, m).sum();
  crba(model, data, q);
  factorize_ltdl(model, data);
  VecX x = a;
  solve_ltdl(model, data, x);
  crba(model, data, q);
  factorize_ltl(model, data);
  solve_ltl(model, data, x);
  sum += x.sum() + solve_conjugate_gradient(model, data, q, a, true).sum();
  sum += solve_innovations(model, data, q, a).sum();
  forward_kinematics(model, data, q, v, a);
  sum += body_jacobian(model, data, q, model.nbodies() - 1).sum();
  sum += jacobian_dot_times_v(model, data, q, v, model.nbodies() - 1).linear.sum();
  sum += center_of_mass(model, data, q).sum() + center_of_mass_jacobian(model, data, q).sum();
  sum += kinetic_energy(model, data, q, v) + potential_energy(model, data, q);

  BatchWorkspace batch(model, 1);
  MatX Q = q.replicate(1, 4), V = v.replicate(1, 4), A = a.replicate(1, 4), T(model.nv(), 4), Qdd(model.nv(), 4);
  MatX M(model.nv(), model.nv() * 4);
  rnea_batch(model, batch, Q, V, A, T);
  aba_batch(model, batch, Q, V, T, Qdd);
  crba_batch(model, batch, Q, M);
  sum += Qdd.sum() + M.sum();

  const Model loop = build_four_bar();
  Data loop_data(loop);
  const VecX ql = assemble(loop, loop_data, neutral(loop));
  const VecX vl = project_velocity(loop, loop_data, ql, VecX::Zero(loop.nv()));
  constraint_terms(loop, loop_data, ql, vl);
  sum += constraint_residual(loop, loop_data, ql).sum() + constraint_jacobian(loop, loop_data, ql).sum();
  sum += constraint_bias(loop, loop_data, ql, vl).sum();
  for (ConstrainedMethod m : {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace}) {
    ConstrainedOptions options;
    options.method = m;
    sum += constrained_forward_dynamics(loop, loop_data, ql, vl, VecX::Zero(loop.nv()), options).sum();
  }
  std::printf("every_algorithm: checksum %.6g\n", sum);
  return 0;
}
