// The global formulation (paper 000 §3.5): the Newton-Euler factorisation M = H^T P^-T I P^-1 H
// against the CRBA.
#include <gtest/gtest.h>

#include "dynamics_test_support.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

std::vector<std::pair<std::string, Model>> models() {
  std::vector<std::pair<std::string, Model>> out;
  out.emplace_back("chain9", build_chain(9, {Vec3(1, 1, 0), Vec3::UnitZ()}, 2));
  out.emplace_back("tree31", build_random_tree(31, 2.0, 0.7, 0.9, 4));
  out.emplace_back("humanoid_floating", build_humanoid(6, true));
  out.emplace_back("all_joints", build_all_joints_tree(10));
  for (const char* name : {"panda", "talos_full"}) {
    const std::string path = shared_model_path(name);
    if (!path.empty())
      out.emplace_back(
          name, load_shared_model(path, std::string(name) == "talos_full" ? RootJoint::FreeFlyer : RootJoint::Fixed));
  }
  return out;
}

// M from the operators of Eq. 29 equals the CRBA's (a different recursion, link coordinates) to
// rounding: 1e-12 relative to the largest entry.
TEST(GlobalFormulation, NewtonEulerFactorisationIsTheCrbaMassMatrix) {
  for (const auto& [name, model] : models()) {
    Data data(model);
    Rng rng(501);
    const VecX q = random_configuration(model, rng);
    const MatX M_ne = mass_matrix_newton_euler(model, data, q);
    const MatX M = crba(model, data, q);
    EXPECT_LE((M_ne - M).cwiseAbs().maxCoeff(), 1e-12 * M.cwiseAbs().maxCoeff()) << name;
  }
}

}  // namespace
