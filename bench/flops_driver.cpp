// plucker_flops: the workload of the operation counts (issue 5; `make flops`, bench/count_flops.py).
//
//   plucker_flops --model=SPEC --algo=NAME [--reps=K] [--time=ROUNDS]
//   plucker_flops --validate=NAME [--reps=K]
//   plucker_flops --op=NAME [--reps=K]
//
// SPEC: chain:N (build_chain(N): revolute joints about body z/y, the RNEA fast path),
// tree:N (build_random_tree(N, 2, 0, 1): a binary tree of revolute-z joints), axischain:N
// (build_random_tree(N, 1, 0, 1): a chain of revolute-z joints whose X_tree are pure
// translations, numbered depth-first: the CRBA's plane-rotation path), or
// urdf:PATH / urdf-ff:PATH (a URDF file with a fixed base / a free-flyer root).
// NAME: rnea, nonlinear_effects, gravity_torques, crba, aba, forward_kinematics (q, v, a).
// Validation kernels with hand-counted operations: matvec3 (3x3 matrix times 3-vector:
// 9 mul + 6 add), normalize3 (x / |x|: 3 mul + 2 add + 1 sqrt + 3 div).
// Spatial operations (--op, the list in op_names below): one operation of the library's
// operations layer (src/spatial/ops.hpp, inertia_ops.hpp), as the recursions instantiate it on
// double, in a noinline wrapper: the recursions inline these operations, so their cost is
// measured here, one by one, for the breakdown in docs/flops.md.
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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "plucker/algorithms/batch.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"
#include "spatial/inertia_ops.hpp"

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

// ---- the operations layer, one operation per wrapper ----
namespace ops = plucker::ops;
using plucker::Force;
using plucker::Motion;
using plucker::RigidBodyInertia;
using plucker::Transform;
using AxisZ = ops::AxisTransform<2, double>;

struct OpOperands {
  Transform X;
  AxisZ Xz;
  Motion m, n;
  Force f, out_f;
  Motion out_m;
  RigidBodyInertia I, I_out;
  ops::ArticulatedT<double> IA, IA_out;  // packed, as the ABA and the innovations factorisation hold them
};
__attribute__((noinline)) void op_apply_motion(OpOperands& o) { o.out_m = ops::apply(o.X, o.m); }
__attribute__((noinline)) void op_apply_inverse_force(OpOperands& o) { o.out_f = ops::apply_inverse(o.X, o.f); }
__attribute__((noinline)) void op_apply_inverse_force_axis(OpOperands& o) { o.out_f = ops::apply_inverse(o.Xz, o.f); }
__attribute__((noinline)) void op_crf(OpOperands& o) { o.out_f = ops::crf(o.m, o.f); }
__attribute__((noinline)) void op_crm(OpOperands& o) { o.out_m = ops::crm(o.m, o.n); }
__attribute__((noinline)) void op_times_rigid(OpOperands& o) { o.out_f = ops::times(o.I, o.m); }
__attribute__((noinline)) void op_body_force(OpOperands& o) { o.out_f = ops::body_force<true>(o.I, o.m, o.n); }
__attribute__((noinline)) void op_times_articulated(OpOperands& o) { o.out_f = ops::times6(o.IA, o.m); }
__attribute__((noinline)) void op_congruence_rigid(OpOperands& o) { ops::add_congruence(o.X, o.I, o.I_out); }
__attribute__((noinline)) void op_congruence_rigid_axis(OpOperands& o) { ops::add_congruence(o.Xz, o.I, o.I_out); }
__attribute__((noinline)) void op_congruence_articulated(OpOperands& o) { ops::add_congruence(o.X, o.IA, o.IA_out); }
__attribute__((noinline)) void op_congruence_articulated_axis(OpOperands& o) {
  ops::add_congruence(o.Xz, o.IA, o.IA_out);
}
using OpFn = void (*)(OpOperands&);
struct OpEntry {
  const char* name;
  OpFn fn;
};
constexpr OpEntry op_names[] = {
    {"apply_motion", op_apply_motion},                          // X m, general E
    {"apply_inverse_force", op_apply_inverse_force},            // X^T f, general E
    {"apply_inverse_force_axis", op_apply_inverse_force_axis},  // X^T f, E a plane rotation about z
    {"crf", op_crf},                                            // v x* f
    {"crm", op_crm},                                            // v x m
    {"times_rigid", op_times_rigid},                            // I v, rigid (m, h, Ibar)
    {"body_force", op_body_force},                              // I a + v x* I v (Eq. 5)
    {"times_articulated", op_times_articulated},                // I^A c, symmetric 6x6
    {"congruence_rigid", op_congruence_rigid},                  // I_p += X^T I X (Eq. 9), general E
    {"congruence_rigid_axis", op_congruence_rigid_axis},
    {"congruence_articulated", op_congruence_articulated},  // I^A_p += X^T I^a X (Eq. 12), general E
    {"congruence_articulated_axis", op_congruence_articulated_axis},
};

OpOperands make_operands(int seed) {
  std::mt19937_64 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  OpOperands o;
  // One draw per statement, in the order g++ 12 evaluated the arguments of the former one-call
  // forms (right to left; clang++ goes left to right): the same operands under both compilers.
  const auto vec3 = [&] {
    const double z = u(rng), y = u(rng), x = u(rng);
    return Eigen::Vector3d(x, y, z);
  };
  const auto pair = [&](auto make) {  // make(angular, linear), the linear part drawn first
    const Eigen::Vector3d linear = vec3();
    return make(vec3(), linear);
  };
  const Eigen::Vector3d axis = vec3().normalized();
  const Eigen::Vector3d r = vec3();
  o.X = Transform(Eigen::AngleAxisd(u(rng), axis).toRotationMatrix(), r);
  const double angle = u(rng);
  o.Xz = AxisZ{{std::sin(angle), std::cos(angle)}, vec3()};
  o.m = pair([](const Eigen::Vector3d& a, const Eigen::Vector3d& l) { return Motion(a, l); });
  o.n = pair([](const Eigen::Vector3d& a, const Eigen::Vector3d& l) { return Motion(a, l); });
  o.f = pair([](const Eigen::Vector3d& a, const Eigen::Vector3d& l) { return Force(a, l); });
  const Eigen::Matrix3d Ic = Eigen::Vector3d(0.3, 0.2, 0.1).asDiagonal();
  const Eigen::Vector3d com = vec3();
  o.I = RigidBodyInertia::from_mass_com_inertia(2.0 + u(rng), com, Ic);
  o.I_out = o.I;
  o.IA = ops::articulated_packed<double>(o.I);
  o.IA_out = o.IA;
  return o;
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
  std::cerr
      << "plucker_flops: " << why
      << "\nusage: plucker_flops --model=chain:N|tree:N|axischain:N|urdf:PATH|urdf-ff:PATH --algo=NAME [--reps=K]\n"
         "       plucker_flops --validate=matvec3|normalize3 [--reps=K]\n"
         "       plucker_flops --op=NAME [--reps=K]\n";
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
    std::cout << "kind=validate name=" << validate << " reps=" << reps << " expect_mul=" << mul << " expect_add=" << add
              << " expect_div=" << div << " expect_sqrt=" << sqrt << " check=" << y[0] + y[2] << '\n';
    return 0;
  }

  if (const std::string op = arg_value(argc, argv, "op"); !op.empty()) {
    OpFn fn = nullptr;
    for (const OpEntry& e : op_names)
      if (op == e.name) fn = e.fn;
    if (!fn) usage("unknown --op '" + op + "'");
    OpOperands operands = make_operands(argc);
    Workload w;
    w.call = [&] { fn(operands); };
    w.call();
    plucker_flops_region(w, reps);
    std::cout << "kind=op name=" << op << " reps=" << reps << " check="
              << operands.out_f.linear.norm() + operands.out_m.linear.norm() + operands.I_out.mass() +
                     operands.IA_out.A.xx + operands.IA_out.A.yy + operands.IA_out.A.zz + operands.IA_out.C.xx +
                     operands.IA_out.C.yy + operands.IA_out.C.zz
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
  else if (algo == "rnea_derivatives")
    w.call = [&] { plucker::rnea_derivatives(model, data, q, v, a); };
  else if (algo == "aba_derivatives")
    w.call = [&] { plucker::aba_derivatives(model, data, q, v, tau); };
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
  if (const std::string rounds = arg_value(argc, argv, "time"); !rounds.empty()) {
    // --time=R: R rounds of `reps` calls timed in process; prints the median ns per call (a
    // quick A/B timer on a loaded machine; the benchmark proper is plucker_bench).
    std::vector<double> per_call;
    for (int r = 0; r < std::max(1, std::stoi(rounds)); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      plucker_flops_region(w, reps);
      per_call.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                         reps);
    }
    std::nth_element(per_call.begin(), per_call.begin() + per_call.size() / 2, per_call.end());
    std::cout << per_call[per_call.size() / 2] << '\n';
    return 0;
  }
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
            << " pairs=" << plucker::jsim_pattern(model).nnz() - model.nv() << " check=" << check << " flags=\""
            << PLUCKER_FLOPS_FLAGS << "\"\n";
  return 0;
}
