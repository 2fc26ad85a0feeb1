// plucker_flops: the workload of the operation counts (issue 5; `make flops`, bench/count_flops.py).
//
//   plucker_flops --model=SPEC --algo=NAME [--reps=K]
//   plucker_flops --validate=NAME [--reps=K]
//
// SPEC: chain:N (build_chain(N): revolute joints about body z/y, the RNEA fast path),
// tree:N (build_random_tree(N, 2, 0, 1): a binary tree of revolute-z joints), axischain:N
// (build_random_tree(N, 1, 0, 1): a chain of revolute-z joints whose X_tree are pure
// translations, numbered depth-first: the CRBA's plane-rotation path), or
// urdf:PATH / urdf-ff:PATH (a URDF file with a fixed base / a free-flyer root).
// NAME: rnea, nonlinear_effects, gravity_torques, crba, aba, forward_kinematics (q, v, a).
// Validation kernels with hand-counted operations: matvec3 (3x3 matrix times 3-vector:
// 9 mul + 6 add), normalize3 (x / |x|: 3 mul + 2 add + 1 sqrt + 3 div).
//
// The program builds the model and one random state, runs the algorithm once as a warm-up,
// then calls plucker_flops_region(), which runs it K times. Callgrind collects inside that
// function only (--toggle-collect=plucker_flops_region), callees included, so the counts
// are K calls of the algorithm plus the few integer instructions of the loop. Everything
// else (loading, allocation, the warm-up) is outside the collected region.
//
// stdout: one line of key=value pairs describing the run (count_flops.py reads it); pairs is
// the number of (DoF, ancestor DoF) pairs, the nonzeros of M's strict lower triangle, which
// sets the CRBA's O(n^2) term.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>
#include <string>

#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"
#include "plucker/algorithms/batch.hpp"

namespace {

using plucker::MatX;
using plucker::VecX;

// ---- validation kernels: the operations are counted by hand ----
// noinline, and fed values that depend on argc, so that the compiler can neither fold nor
// specialise them.
__attribute__((noinline)) void matvec3(const double* A, const double* x, double* y) {
  for (int i = 0; i < 3; ++i) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}
__attribute__((noinline)) void normalize3(const double* x, double* y) {
  const double n = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  for (int i = 0; i < 3; ++i) y[i] = x[i] / n;
}

struct Workload {
  std::function<void()> call;  // one call of the algorithm
};

// Callgrind's collection is switched on at the entry of this function and off at its exit.
__attribute__((noinline)) void plucker_flops_region(const Workload& w, int reps) {
  for (int k = 0; k < reps; ++k) w.call();
  asm volatile("" ::: "memory");
}

std::string arg_value(int argc, char** argv, const std::string& key, const std::string& fallback = "") {
  const std::string prefix = "--" + key + "=";
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind(prefix, 0) == 0) return std::string(argv[i]).substr(prefix.size());
  return fallback;
}

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "plucker_flops: " << why
            << "\nusage: plucker_flops --model=chain:N|tree:N|axischain:N|urdf:PATH|urdf-ff:PATH --algo=NAME [--reps=K]\n"
               "       plucker_flops --validate=matvec3|normalize3 [--reps=K]\n";
  std::exit(2);
}

plucker::Model make_model(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) usage("bad --model '" + spec + "'");
  const std::string kind = spec.substr(0, colon), arg = spec.substr(colon + 1);
  if (kind == "chain") return plucker::build_chain(std::stoi(arg));
  if (kind == "tree") return plucker::build_random_tree(std::stoi(arg), 2.0, 0.0, 1.0);
  if (kind == "axischain") return plucker::build_random_tree(std::stoi(arg), 1.0, 0.0, 1.0);
  if (kind == "urdf" || kind == "urdf-ff") {
    plucker::UrdfOptions options;
    options.root = kind == "urdf-ff" ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
    options.on_warning = [](const std::string&) {};  // real robot files warn; not our business here
    return plucker::load_urdf(arg, options);
  }
  usage("bad --model '" + spec + "'");
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = std::stoi(arg_value(argc, argv, "reps", "1"));
  const std::string validate = arg_value(argc, argv, "validate");
  if (reps < 1) usage("--reps must be >= 1");

  double A[9], x[3], y[3];
  for (int i = 0; i < 9; ++i) A[i] = 1.0 + 0.1 * argc * i;
  for (int i = 0; i < 3; ++i) x[i] = 0.5 + argc * 0.25 * i;

  if (!validate.empty()) {
    Workload w;
    int mul = 0, add = 0, div = 0, sqrt = 0;
    if (validate == "matvec3") {
      w.call = [&] { matvec3(A, x, y); };
      mul = 9, add = 6;
    } else if (validate == "normalize3") {
      w.call = [&] { normalize3(x, y); };
      mul = 3, add = 2, div = 3, sqrt = 1;
    } else {
      usage("unknown --validate '" + validate + "'");
    }
    w.call();
    plucker_flops_region(w, reps);
    std::cout << "kind=validate name=" << validate << " reps=" << reps << " expect_mul=" << mul
              << " expect_add=" << add << " expect_div=" << div << " expect_sqrt=" << sqrt << " check=" << y[0] + y[2]
              << '\n';
    return 0;
  }

  const std::string spec = arg_value(argc, argv, "model"), algo = arg_value(argc, argv, "algo");
  if (spec.empty() || algo.empty()) usage("--model and --algo are required");
  const plucker::Model model = make_model(spec);
  plucker::Data data(model);

  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const VecX q = plucker::random_configuration(model, rng);
  VecX v(model.nv()), a(model.nv()), tau(model.nv());
  for (int i = 0; i < model.nv(); ++i) v[i] = unit(rng), a[i] = unit(rng), tau[i] = 10.0 * unit(rng);

  Workload w;
  if (algo == "rnea")
    w.call = [&] { plucker::rnea(model, data, q, v, a); };
  else if (algo == "nonlinear_effects")
    w.call = [&] { plucker::nonlinear_effects(model, data, q, v); };
  else if (algo == "gravity_torques")
    w.call = [&] { plucker::gravity_torques(model, data, q); };
  else if (algo == "crba")
    w.call = [&] { plucker::crba(model, data, q); };
  else if (algo == "aba")
    w.call = [&] { plucker::aba(model, data, q, v, tau); };
  else if (algo == "forward_kinematics")
    w.call = [&] { plucker::forward_kinematics(model, data, q, v, a); };
  else if (algo == "minv")
    w.call = [&] { plucker::minv(model, data, q); };
  else if (algo.rfind("batch_", 0) == 0) {
    // One group of W states in the SIMD lanes, one thread (the batched kernels).
    static plucker::BatchWorkspace batch(model, 1);
    const int B = plucker::batch_lanes();
    static MatX Q, V, A, out, M;
    Q = q.replicate(1, B), V = v.replicate(1, B), A = a.replicate(1, B);
    out.resize(model.nv(), B), M.resize(model.nv(), model.nv() * B);
    if (algo == "batch_rnea")
      w.call = [&] { plucker::rnea_batch(model, batch, Q, V, A, out); };
    else if (algo == "batch_aba")
      w.call = [&] { plucker::aba_batch(model, batch, Q, V, A, out); };
    else if (algo == "batch_crba")
      w.call = [&] { plucker::crba_batch(model, batch, Q, M); };
    else
      usage("unknown --algo '" + algo + "'");
  } else
    usage("unknown --algo '" + algo + "'");

  w.call();  // warm-up: first-touch of Data, lazy initialisation, PLT binding
  plucker_flops_region(w, reps);

  // Something of the result, so that a broken build shows up as nonsense here.
  double check = 0.0;
  if (algo == "crba")
    check = data.M.trace();
  else if (algo == "aba")
    check = data.qdd.squaredNorm();
  else if (algo == "forward_kinematics")
    check = data.v.back().angular.norm();
  else
    check = data.tau.squaredNorm();
  std::cout << "kind=algorithm model=" << spec << " name=" << model.name() << " algo=" << algo << " reps=" << reps
            << " nbodies=" << model.nbodies() << " nq=" << model.nq() << " nv=" << model.nv()
            << " pairs=" << plucker::jsim_pattern(model).nnz() - model.nv() << " check=" << check
            << " flags=\"" << PLUCKER_FLOPS_FLAGS << "\"\n";
  return 0;
}
