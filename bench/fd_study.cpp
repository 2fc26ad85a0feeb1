// The forward-dynamics study's modes of plucker_bench (bench/fd_study.py drives them), on the
// models of fd_models.hpp:
//
//   --fd                      every forward-dynamics method (forward_dynamics.hpp) vs N on chains
//                             and branched trees, and the robot-like builders: median CPU ns per
//                             call, <out>/fd_timing.json (bench/fd_calibrate.py fits the constants
//                             of ForwardDynamicsMethod::Auto to it).
//   --fd_ops=MODEL,METHOD,K   build MODEL, draw one state, run forward_dynamics(METHOD) K times,
//                             exit. Run under valgrind's lackey tool with K = 0 and K = 1, the
//                             difference of the counts is the cost of one call (operation counts
//                             by instrumentation).
//   --fd_accuracy             relative error of every method's qdd against a long-double
//                             reference (below) on chains of growing size and condition
//                             number: <out>/fd_accuracy.json.
//   --fd_global               the global formulation's methods (global_sparse, cfa by cyclic
//                             reduction and serially) with the ABA and CRBA + LTDL, against the same
//                             reference, on chains, chains with short branches and binary trees
//                             of 16-1024 bodies, and the CFA's operation counts (total and critical
//                             path): <out>/fd_global.json (bench/fd_global_plot.py plots it).
//
// The reference: the same model's dynamics in quadruple precision (GCC's __float128, eps 1.9e-34):
// C by the RNEA, M by the direct method (nv gravity-free RNEA calls), qdd = M^-1 (tau - C) by
// L D L^T, all with 6 x 6 spatial matrices. The model parameters (doubles) are exact in it, so the
// reference is the exact dynamics of the very model the double-precision methods see, to about
// cond(M) * 1e-34. The same computation in long double (eps 1.1e-19) is reported beside it.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <variant>

#include "common.hpp"
#include "fd_models.hpp"
#include "plucker/plucker.hpp"

// __float128 as an Eigen scalar (the reference only multiplies, adds and divides with it).
namespace Eigen {
template <>
struct NumTraits<__float128> : GenericNumTraits<long double> {
  using Real = __float128;
  using NonInteger = __float128;
  using Nested = __float128;
  using Literal = __float128;
  enum {
    IsInteger = 0,
    IsSigned = 1,
    IsComplex = 0,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 8,
    MulCost = 8
  };
  static Real epsilon() { return static_cast<Real>(1.925929944387235853055977942584927319e-34L); }
  static Real dummy_precision() { return static_cast<Real>(1e-30L); }
  static int digits10() { return 33; }
};
}  // namespace Eigen

namespace plucker_bench {
namespace {

using Quad = __float128;
constexpr double kQuadEps = 1.925929944387235853055977942584927319e-34;

template <class T>
using V3 = Eigen::Matrix<T, 3, 1>;
template <class T>
using M3 = Eigen::Matrix<T, 3, 3>;
template <class T>
using V6 = Eigen::Matrix<T, 6, 1>;
template <class T>
using M6 = Eigen::Matrix<T, 6, 6>;
template <class T>
using VX = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using MX = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

// cos and sin in T: the library functions for long double, Taylor series for __float128 (|x| <= 4:
// the terms fall below 1e-36 by the 60th).
template <class T>
void cos_sin(double x, T& c, T& s) {
  if constexpr (std::is_same_v<T, Quad>) {
    const Quad xq = x;
    Quad term = 1, cq = 0, sq = 0;
    for (int k = 0; k < 60; ++k) {  // term = x^k / k!
      if (k % 4 == 0) cq += term;
      if (k % 4 == 1) sq += term;
      if (k % 4 == 2) cq -= term;
      if (k % 4 == 3) sq -= term;
      term = term * xq / static_cast<Quad>(k + 1);
    }
    c = cq;
    s = sq;
  } else {
    c = std::cos(static_cast<T>(x));
    s = std::sin(static_cast<T>(x));
  }
}

template <class T>
M3<T> skew(const V3<T>& a) {
  M3<T> s;
  s << T(0), -a.z(), a.y(), a.z(), T(0), -a.x(), -a.y(), a.x(), T(0);
  return s;
}
template <class T>
M6<T> crm(const V6<T>& v) {  // motion cross product [w x, 0; v x, w x]
  M6<T> m = M6<T>::Zero();
  m.template topLeftCorner<3, 3>() = m.template bottomRightCorner<3, 3>() = skew<T>(v.template head<3>());
  m.template bottomLeftCorner<3, 3>() = skew<T>(v.template tail<3>());
  return m;
}

/// A revolute-joint body of the reference model.
template <class T>
struct RefBody {
  int parent = 0;
  M3<T> E_tree;
  V3<T> r_tree, axis;
  M6<T> inertia;  // [Ibar, h x; (h x)^T, m 1]
};

/// The model in T, or nothing when a joint is not revolute (the reference covers the chains and
/// trees of the study).
template <class T>
std::optional<std::vector<RefBody<T>>> reference_model(const plucker::Model& model) {
  std::vector<RefBody<T>> out(static_cast<std::size_t>(model.nbodies()));
  for (int i = 1; i < model.nbodies(); ++i) {
    RefBody<T>& b = out[static_cast<std::size_t>(i)];
    b.parent = model.parent(i);
    b.E_tree = model.X_tree(i).E.cast<T>();
    b.r_tree = model.X_tree(i).r.cast<T>();
    const std::optional<plucker::Vec3> axis = std::visit(
        [](const auto& j) -> std::optional<plucker::Vec3> {
          using J = std::decay_t<decltype(j)>;
          if constexpr (std::is_same_v<J, plucker::JointRevoluteX>)
            return plucker::Vec3::UnitX();
          else if constexpr (std::is_same_v<J, plucker::JointRevoluteY>)
            return plucker::Vec3::UnitY();
          else if constexpr (std::is_same_v<J, plucker::JointRevoluteZ>)
            return plucker::Vec3::UnitZ();
          else if constexpr (std::is_same_v<J, plucker::JointRevolute>)
            return j.axis;
          else
            return std::nullopt;
        },
        model.joint(i));
    if (!axis) return std::nullopt;
    b.axis = axis->cast<T>();
    const plucker::RigidBodyInertia& I = model.inertia(i);
    const V3<T> h = I.first_moment().cast<T>();
    b.inertia.template topLeftCorner<3, 3>() = I.inertia_origin().cast<T>();
    b.inertia.template topRightCorner<3, 3>() = skew<T>(h);
    b.inertia.template bottomLeftCorner<3, 3>() = skew<T>(h).transpose();
    b.inertia.template bottomRightCorner<3, 3>() = M3<T>::Identity() * static_cast<T>(I.mass());
  }
  return out;
}

/// tau = ID(q, v, a) in T (paper 000 Eqs. 1-8) with gravity g, 6 x 6 spatial matrices.
template <class T>
VX<T> reference_rnea(const std::vector<RefBody<T>>& bodies, const plucker::VecX& q, const VX<T>& v, const VX<T>& a,
                     const V3<T>& g) {
  const int n = static_cast<int>(bodies.size());
  std::vector<M6<T>> X(static_cast<std::size_t>(n));
  std::vector<V6<T>> vel(static_cast<std::size_t>(n), V6<T>::Zero()), acc(static_cast<std::size_t>(n), V6<T>::Zero()),
      f(static_cast<std::size_t>(n), V6<T>::Zero());
  acc[0].template tail<3>() = -g;
  for (int i = 1; i < n; ++i) {
    const RefBody<T>& b = bodies[static_cast<std::size_t>(i)];
    T c, s;
    cos_sin<T>(q[i - 1], c, s);
    const M3<T> R = c * M3<T>::Identity() + s * skew<T>(b.axis) + (T(1) - c) * b.axis * b.axis.transpose();
    const M3<T> E = R.transpose() * b.E_tree;  // X_J(q) X_tree; r = r_tree
    M6<T>& Xi = X[static_cast<std::size_t>(i)];
    Xi.setZero();
    Xi.template topLeftCorner<3, 3>() = Xi.template bottomRightCorner<3, 3>() = E;
    Xi.template bottomLeftCorner<3, 3>() = -E * skew<T>(b.r_tree);
    V6<T> S = V6<T>::Zero();
    S.template head<3>() = b.axis;
    const std::size_t p = static_cast<std::size_t>(b.parent);
    vel[i] = Xi * vel[p] + S * v[i - 1];
    acc[i] = Xi * acc[p] + S * a[i - 1] + crm<T>(vel[i]) * S * v[i - 1];
    f[i] = b.inertia * acc[i] - crm<T>(vel[i]).transpose() * (b.inertia * vel[i]);  // crf = -crm^T
  }
  VX<T> tau(n - 1);
  for (int i = n - 1; i > 0; --i) {
    const RefBody<T>& b = bodies[static_cast<std::size_t>(i)];
    tau[i - 1] = b.axis.dot(f[i].template head<3>());
    if (b.parent > 0) f[static_cast<std::size_t>(b.parent)] += X[static_cast<std::size_t>(i)].transpose() * f[i];
  }
  return tau;
}

/// qdd = M^-1 (tau - C) in T: C by the RNEA, M by the direct method, then M = L D L^T.
template <class T>
VX<T> reference_fd(const std::vector<RefBody<T>>& bodies, const plucker::Model& model, const plucker::VecX& q,
                   const plucker::VecX& v, const plucker::VecX& tau, plucker::MatX* M_out = nullptr) {
  const int nv = model.nv();
  const VX<T> vt = v.cast<T>(), zero = VX<T>::Zero(nv);
  VX<T> x = tau.cast<T>() - reference_rnea<T>(bodies, q, vt, zero, model.gravity().cast<T>());
  MX<T> M(nv, nv);
  for (int k = 0; k < nv; ++k) M.col(k) = reference_rnea<T>(bodies, q, zero, VX<T>::Unit(nv, k), V3<T>::Zero());
  if (M_out) *M_out = M.template cast<double>();
  for (int j = 0; j < nv; ++j) {  // M = L D L^T in place (lower triangle)
    for (int k = 0; k < j; ++k) M(j, j) -= M(j, k) * M(j, k) * M(k, k);
    for (int i = j + 1; i < nv; ++i) {
      for (int k = 0; k < j; ++k) M(i, j) -= M(i, k) * M(j, k) * M(k, k);
      M(i, j) /= M(j, j);
    }
  }
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k < i; ++k) x[i] -= M(i, k) * x[k];
  for (int i = 0; i < nv; ++i) x[i] /= M(i, i);
  for (int i = nv - 1; i >= 0; --i)
    for (int k = i + 1; k < nv; ++k) x[i] -= M(k, i) * x[k];
  return x;
}

double rel_diff(const Eigen::Matrix<long double, Eigen::Dynamic, 1>& a,
                const Eigen::Matrix<long double, Eigen::Dynamic, 1>& b) {
  return static_cast<double>((a - b).norm() / b.norm());
}

// ---------------------------------------------------------------------------
// --fd: time of every method
// ---------------------------------------------------------------------------
struct FdItem {
  std::string family;  // chain, tree_bf<b>, robot
  std::unique_ptr<Bundle> b;
};

/// The methods timed: the fd_* rows of the registry, and minv.
std::vector<std::string> fd_algorithms() {
  std::vector<std::string> algs;
  for (const Algorithm& a : kAlgorithms)
    if (std::string(a.name).rfind("fd_", 0) == 0 || std::string(a.name) == "minv") algs.push_back(a.name);
  return algs;
}

/// The models matching --models, with a pool of 200 states each, and their benchmarks registered.
std::vector<FdItem> register_fd(const Options& opt, const std::vector<std::string>& algs,
                                std::map<std::string, Key>& keys) {
  std::vector<FdItem> items;
  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  for (const FdModel& fm : fd_models()) {
    if (!std::regex_search(fm.name, filter)) continue;
    auto b = std::make_unique<Bundle>();
    b->model = fm.build();
    b->name = fm.name;
    make_pool(*b, 200);
    items.push_back({fm.family, std::move(b)});
  }
  for (FdItem& it : items) {
    for (const Algorithm& a : kAlgorithms) {
      if (std::find(algs.begin(), algs.end(), a.name) == algs.end()) continue;
      const std::string name = "fd/" + it.b->name + "/" + a.name;
      keys[name] = {it.b->name, a.name, "plucker"};
      Bundle* bb = it.b.get();
      auto fn = a.run;
      try {  // a method that does not cover the model (cfa: bushy trees) is left out of its row
        fn(*bb, 0);
      } catch (const std::exception&) {
        continue;
      }
      register_pool_bench(name, opt, bb->n, /*clean_simd=*/false, [bb, fn](int i) { fn(*bb, i); });
    }
  }
  return items;
}

/// The table on stdout and the records of fd_timing.json (with the model's size, its LTDL
/// factorisation cost and the method `auto` picks, for fd_calibrate.py).
void report_fd(const Options& opt, const std::vector<FdItem>& items, const std::vector<std::string>& algs,
               const Collector& collector) {
  JsonArray js(output_path(opt.out, "fd_timing.json"));
  std::printf(
      "\nMedian CPU ns per call of forward_dynamics(method) (build_chain, build_random_tree(N, bf, 0.5, 1))\n\n%-18s "
      "%4s",
      "model", "nv");
  for (const std::string& a : algs) std::printf(" %12s", a.c_str());
  std::printf("  auto picks\n");
  for (const FdItem& it : items) {
    const plucker::Model& m = it.b->model;
    const plucker::FactorisationCost c = plucker::ltdl_cost(m);
    int sum_d2 = 0;
    for (int i = 1; i < m.nbodies(); ++i) sum_d2 += m.joint_nv(i) * m.joint_nv(i);
    std::printf("%-18s %4d", it.b->name.c_str(), m.nv());
    for (const std::string& a : algs) {
      const double t = collector.median("fd/" + it.b->name + "/" + a);
      std::printf(" %12s", fmt_ns(t).c_str());
      if (!std::isfinite(t)) continue;
      char buf[640];
      std::snprintf(
          buf, sizeof(buf),
          "  {\"family\": \"%s\", \"model\": \"%s\", \"algorithm\": \"%s\", \"ns\": %.1f, \"bodies\": %d, "
          "\"nv\": %d, \"sum_joint_nv2\": %d, \"depth_sum\": %lld, \"ltdl_mul\": %lld, \"auto_method\": \"%s\"}",
          it.family.c_str(), it.b->name.c_str(), a.c_str(), t, m.nbodies() - 1, m.nv(), sum_d2, c.factor_div,
          c.factor_mul, std::string(plucker::to_string(plucker::forward_dynamics_choice(m).method)).c_str());
      js.add(buf);
    }
    std::printf("  %s\n", std::string(plucker::to_string(plucker::forward_dynamics_choice(m).method)).c_str());
  }
}

}  // namespace

int run_fd(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, Key> keys;
  const std::vector<std::string> algs = fd_algorithms();
  const std::vector<FdItem> items = register_fd(opt, algs, keys);
  std::cerr << "plucker_bench --fd: running " << keys.size() << " benchmarks\n";
  Collector collector(keys);
  benchmark::RunSpecifiedBenchmarks(&collector);
  for (const auto& [name, err] : collector.errors()) std::printf("note: %s: error: %s\n", name.c_str(), err.c_str());
  report_fd(opt, items, algs, collector);
  std::printf("\nplucker_bench --fd: %zu benchmarks in %.0f s; wrote %s/fd_timing.json\n", keys.size(),
              seconds_since(t0), display_dir(opt.out).c_str());
  return 0;
}

int run_fd_ops(const std::string& spec) {
  const std::size_t c1 = spec.find(','), c2 = spec.find(',', c1 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos) {
    std::cerr << "--fd_ops=MODEL,METHOD,K\n";
    return 2;
  }
  const std::string name = spec.substr(0, c1), method = spec.substr(c1 + 1, c2 - c1 - 1);
  const int K = std::atoi(spec.substr(c2 + 1).c_str());
  for (const FdModel& fm : fd_models()) {
    if (fm.name != name) continue;
    const plucker::Model model = fm.build();
    plucker::Data data(model);
    std::mt19937_64 rng(7);
    const plucker::VecX q = plucker::random_configuration(model, rng);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    plucker::VecX v(model.nv()), tau(model.nv());
    for (int k = 0; k < model.nv(); ++k) v[k] = u(rng), tau[k] = 10.0 * u(rng);
    const plucker::ForwardDynamicsMethod m = plucker::parse_forward_dynamics_method(method);
    double checksum = 0.0;
    for (int k = 0; k < K; ++k) checksum += plucker::forward_dynamics(model, data, q, v, tau, m).sum();
    std::printf("%s %s K=%d nv=%d checksum %.6g cg_iterations %d\n", name.c_str(), method.c_str(), K, model.nv(),
                checksum, data.cg.iterations);
    return 0;
  }
  std::cerr << "--fd_ops: unknown model '" << name << "'\n";
  return 2;
}

int run_fd_accuracy(const std::string& out_dir, const std::string& models_regex) {
  const std::regex filter(models_regex.empty() ? std::string("^(chain|tapered_chain|tree_bf2_)") : models_regex);
  JsonArray js(output_path(out_dir, "fd_accuracy.json"));
  constexpr int kStates = 5;
  std::printf("%-18s %4s %9s %10s", "model", "nv", "cond(M)", "ld-ref dev");
  for (plucker::ForwardDynamicsMethod m : plucker::forward_dynamics_methods())
    if (m != plucker::ForwardDynamicsMethod::Auto)
      std::printf(" %10s", std::string(plucker::to_string(m)).substr(0, 10).c_str());
  std::printf("\n");
  for (const FdModel& fm : fd_models()) {
    if (!std::regex_search(fm.name, filter)) continue;
    const plucker::Model model = fm.build();
    const auto bodies_q = reference_model<Quad>(model);
    const auto bodies_ld = reference_model<long double>(model);
    if (!bodies_q) continue;
    plucker::Data data(model);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::map<std::string, double> worst;
    double cond_max = 0.0, ld_dev_max = 0.0;
    for (int s = 0; s < kStates; ++s) {
      const plucker::VecX q = plucker::random_configuration(model, rng);
      plucker::VecX v(model.nv()), tau(model.nv());
      for (int k = 0; k < model.nv(); ++k) v[k] = u(rng), tau[k] = 10.0 * u(rng);
      plucker::MatX M;
      const Eigen::Matrix<long double, Eigen::Dynamic, 1> ref =
          reference_fd<Quad>(*bodies_q, model, q, v, tau, &M).template cast<long double>();
      // How far a long-double reference would be from the quad one (the quad one is good to
      // about cond(M) * 1.9e-34).
      const double ld_dev = rel_diff(reference_fd<long double>(*bodies_ld, model, q, v, tau), ref);
      const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<plucker::MatX>(M, Eigen::EigenvaluesOnly).eigenvalues();
      const double cond = ev.maxCoeff() / ev.minCoeff();
      cond_max = std::max(cond_max, cond);
      ld_dev_max = std::max(ld_dev_max, ld_dev);
      for (plucker::ForwardDynamicsMethod m : plucker::forward_dynamics_methods()) {
        if (m == plucker::ForwardDynamicsMethod::Auto) continue;
        const std::string name(plucker::to_string(m));
        double err = std::nan("");
        int iterations = 0;
        try {
          const plucker::VecX qdd = plucker::forward_dynamics(model, data, q, v, tau, m);
          err = rel_diff(qdd.cast<long double>(), ref);
          if (m == plucker::ForwardDynamicsMethod::ConjugateGradient ||
              m == plucker::ForwardDynamicsMethod::PreconditionedCG)
            iterations = data.cg.iterations;
        } catch (const std::exception&) {}
        worst[name] = std::max(worst[name], err);
        char buf[512];
        std::snprintf(buf, sizeof(buf),
                      "  {\"family\": \"%s\", \"model\": \"%s\", \"nv\": %d, \"state\": %d, \"method\": \"%s\", "
                      "\"rel_err\": %.4e, \"cond\": %.4e, \"long_double_ref_dev\": %.3e, \"quad_ref_bound\": %.3e, "
                      "\"cg_iterations\": %d}",
                      fm.family.c_str(), fm.name.c_str(), model.nv(), s, name.c_str(), err, cond, ld_dev,
                      cond * kQuadEps, iterations);
        js.add(buf);
      }
    }
    std::printf("%-18s %4d %9.2e %10.1e", fm.name.c_str(), model.nv(), cond_max, ld_dev_max);
    for (plucker::ForwardDynamicsMethod m : plucker::forward_dynamics_methods())
      if (m != plucker::ForwardDynamicsMethod::Auto) std::printf(" %10.2e", worst[std::string(plucker::to_string(m))]);
    std::printf("\n");
    std::fflush(stdout);
  }
  js.close();
  std::printf(
      "\nworst relative error |qdd - qdd_ref| / |qdd_ref| over %d states; reference in __float128 (ld-ref dev: "
      "how far a long-double reference is from it); wrote %s/fd_accuracy.json\n",
      kStates, out_dir.c_str());
  return 0;
}

namespace {

/// A chain of n revolute links (axes z, y alternating) with a two-body twig (x axes) at every fourth
/// link: the CFA's "short branches off the main chain". n counts every body.
/// %.4e of x, or null (JSON has no NaN) for a method that does not apply.
std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4e", x);
  return buf;
}

plucker::Model twig_chain(int n) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  plucker::Model m;
  auto inertia = [&](double scale) {
    const double mass = scale * (0.5 + u(rng));
    const plucker::Vec3 com(0.1 + 0.05 * u(rng), 0.02 * u(rng), 0.02 * u(rng));
    const plucker::Vec3 moments(0.01 + 0.01 * u(rng), 0.02 + 0.01 * u(rng), 0.02 + 0.01 * u(rng));
    return plucker::RigidBodyInertia::from_mass_com_inertia(mass, com, mass * moments.asDiagonal().toDenseMatrix());
  };
  const plucker::Transform X = plucker::Transform::translation(plucker::Vec3(0.2, 0.0, 0.0));
  int parent = 0, bodies = 0;
  for (int k = 0; bodies < n; ++k) {
    const plucker::JointModel j =
        k % 2 ? plucker::JointModel(plucker::JointRevoluteY{}) : plucker::JointModel(plucker::JointRevoluteZ{});
    parent = m.add_body(parent, j, X, inertia(1.0), "link" + std::to_string(k), "joint" + std::to_string(k));
    ++bodies;
    if (k % 4 == 3)
      for (int t = 0, b = parent; t < 2 && bodies < n; ++t, ++bodies)
        b = m.add_body(b, plucker::JointRevoluteX{}, X, inertia(0.3),
                       "twig" + std::to_string(k) + "_" + std::to_string(t),
                       "twig_joint" + std::to_string(k) + "_" + std::to_string(t));
  }
  return m;
}

}  // namespace

int run_fd_global(const std::string& out_dir) {
  using Method = plucker::ForwardDynamicsMethod;
  struct Case {
    std::string family;
    int n;
    std::function<plucker::Model()> build;
  };
  std::vector<Case> cases;
  for (int n : {16, 32, 64, 128, 256, 512, 1024}) {
    cases.push_back({"chain", n, [n] { return plucker::build_chain(n); }});
    cases.push_back({"twig_chain", n, [n] { return twig_chain(n); }});
    cases.push_back({"tree_bf2", n, [n] { return plucker::build_random_tree(n, 2.0, 0.5, 1.0); }});
  }
  for (int n : {16, 32, 64})
    cases.push_back({"tapered_chain", n, [n] { return plucker::build_random_tree(n, 1.0, 0.5, 0.95); }});
  struct Run {
    const char* name;
    std::function<const plucker::VecX&(const plucker::Model&, plucker::Data&, const plucker::VecX&,
                                       const plucker::VecX&, const plucker::VecX&)>
        fd;
  };
  const std::vector<Run> runs = {
      {"aba",
       [](auto& m, auto& d, auto& q, auto& v, auto& t) -> const plucker::VecX& { return plucker::aba(m, d, q, v, t); }},
      {"crba_ltdl",
       [](auto& m, auto& d, auto& q, auto& v, auto& t) -> const plucker::VecX& {
         return plucker::forward_dynamics(m, d, q, v, t, Method::CrbaLtdl);
       }},
      {"global_sparse",
       [](auto& m, auto& d, auto& q, auto& v, auto& t) -> const plucker::VecX& {
         return plucker::forward_dynamics_global_sparse(m, d, q, v, t);
       }},
      {"cfa",
       [](auto& m, auto& d, auto& q, auto& v, auto& t) -> const plucker::VecX& {
         return plucker::forward_dynamics_cfa(m, d, q, v, t, {}, plucker::ReferenceFrame::World,
                                              plucker::CfaSolver::CyclicReduction);
       }},
      {"cfa_serial",
       [](auto& m, auto& d, auto& q, auto& v, auto& t) -> const plucker::VecX& {
         return plucker::forward_dynamics_cfa(m, d, q, v, t, {}, plucker::ReferenceFrame::World,
                                              plucker::CfaSolver::Serial);
       }},
  };
  JsonArray js(output_path(out_dir, "fd_global.json"));
  std::printf("%-14s %5s %9s", "model", "nv", "cond(M)");
  for (const Run& r : runs) std::printf(" %13s", r.name);
  std::printf(" %12s %12s %12s\n", "cfa levels", "cfa path", "serial path");
  for (const Case& c : cases) {
    const plucker::Model model = c.build();
    const auto bodies_q = reference_model<Quad>(model);
    if (!bodies_q) continue;
    plucker::Data data(model);
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int states = c.n <= 256 ? 3 : 1;  // the quad reference is O(N^3): about a minute at 1024
    std::map<std::string, double> worst;
    double cond_max = 0.0;
    plucker::CfaOperationCounts cr{}, serial{};
    for (int s = 0; s < states; ++s) {
      const plucker::VecX q = plucker::random_configuration(model, rng);
      plucker::VecX v(model.nv()), tau(model.nv());
      for (int k = 0; k < model.nv(); ++k) v[k] = u(rng), tau[k] = 10.0 * u(rng);
      plucker::MatX M;
      const Eigen::Matrix<long double, Eigen::Dynamic, 1> ref =
          reference_fd<Quad>(*bodies_q, model, q, v, tau, &M).template cast<long double>();
      const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<plucker::MatX>(M, Eigen::EigenvaluesOnly).eigenvalues();
      const double cond = ev.maxCoeff() / ev.minCoeff();
      cond_max = std::max(cond_max, cond);
      for (const Run& r : runs) {
        double err = std::nan("");
        try {
          err = rel_diff(r.fd(model, data, q, v, tau).cast<long double>(), ref);
          if (std::string(r.name) == "cfa") cr = plucker::cfa_operation_counts(data);
          if (std::string(r.name) == "cfa_serial") serial = plucker::cfa_operation_counts(data);
        } catch (const plucker::InvalidArgument&) {  // a topology the CFA does not cover: no point
        }
        if (!worst.count(r.name) || std::isnan(worst[r.name])) worst[r.name] = err;  // NaN: not covered
        worst[r.name] = std::max(worst[r.name], err);
        char buf[640];
        std::snprintf(buf, sizeof(buf),
                      "  {\"family\": \"%s\", \"bodies\": %d, \"nv\": %d, \"state\": %d, \"method\": \"%s\", "
                      "\"rel_err\": %s, \"cond\": %.4e, \"quad_ref_bound\": %.3e, \"cfa_levels\": %d, "
                      "\"cfa_critical_path\": %.6g, \"cfa_total\": %.6g, \"serial_critical_path\": %.6g}",
                      c.family.c_str(), c.n, model.nv(), s, r.name, json_number(err).c_str(), cond, cond * kQuadEps,
                      cr.levels, cr.critical_path, cr.total, serial.critical_path);
        js.add(buf);
      }
    }
    std::printf("%-14s %5d %9.2e", (c.family + std::to_string(c.n)).c_str(), model.nv(), cond_max);
    for (const Run& r : runs) std::printf(" %13.2e", worst[r.name]);
    std::printf(" %12d %12.4g %12.4g\n", cr.levels, cr.critical_path, serial.critical_path);
    std::fflush(stdout);
  }
  js.close();
  std::printf(
      "\nworst relative error |qdd - qdd_ref| / |qdd_ref| (reference in __float128); cfa path: flops on the "
      "critical path of cyclic reduction; wrote %s/fd_global.json\n",
      out_dir.c_str());
  return 0;
}

}  // namespace plucker_bench

namespace plucker_bench {

/// --dca_accuracy: the divide-and-conquer algorithm's accuracy study (docs/dca.md; after
/// Featherstone 1999 part 2's tests): relative error of the ABA and of both DCA variants against
/// the quadruple-precision reference on chains and binary random trees of 4 .. 1024 bodies.
int run_dca_accuracy(const std::string& out_dir, const std::string& models_regex) {
  const std::regex filter(models_regex.empty() ? std::string(".") : models_regex);
  JsonArray js(output_path(out_dir, "dca_accuracy.json"));
  using Method = plucker::ForwardDynamicsMethod;
  const Method methods[] = {Method::Aba, Method::Dca, Method::DcaAccurate};
  std::printf("%-14s %5s %9s %10s %10s %12s\n", "model", "nv", "cond(M)", "aba", "dca", "dca_accurate");
  for (int n = 4; n <= 1024; n *= 2) {
    for (const std::string family : {"chain", "tree_bf2"}) {
      const std::string name = family + "_" + std::to_string(n);
      if (!std::regex_search(name, filter)) continue;
      const plucker::Model model =
          family == "chain" ? plucker::build_chain(n) : plucker::build_random_tree(n, 2.0, 0.5, 1.0);
      const auto bodies_q = reference_model<Quad>(model);
      if (!bodies_q) continue;
      plucker::Data data(model);
      std::mt19937_64 rng(17);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::map<Method, double> worst;
      double cond_max = 0.0;
      const int states = n >= 512 ? 2 : 3;
      for (int s = 0; s < states; ++s) {
        const plucker::VecX q = plucker::random_configuration(model, rng);
        plucker::VecX v(model.nv()), tau(model.nv());
        for (int k = 0; k < model.nv(); ++k) v[k] = u(rng), tau[k] = 10.0 * u(rng);
        plucker::MatX M;
        const Eigen::Matrix<long double, Eigen::Dynamic, 1> ref =
            reference_fd<Quad>(*bodies_q, model, q, v, tau, &M).template cast<long double>();
        const Eigen::VectorXd ev =
            Eigen::SelfAdjointEigenSolver<plucker::MatX>(M, Eigen::EigenvaluesOnly).eigenvalues();
        const double cond = ev.maxCoeff() / ev.minCoeff();
        cond_max = std::max(cond_max, cond);
        for (Method m : methods) {
          const plucker::VecX qdd = plucker::forward_dynamics(model, data, q, v, tau, m);
          const double err = rel_diff(qdd.cast<long double>(), ref);
          worst[m] = std::max(worst[m], err);
          char buf[512];
          std::snprintf(buf, sizeof(buf),
                        "  {\"family\": \"%s\", \"n\": %d, \"state\": %d, \"method\": \"%s\", \"rel_err\": %.4e, "
                        "\"cond\": %.4e, \"quad_ref_bound\": %.3e}",
                        family.c_str(), n, s, std::string(plucker::to_string(m)).c_str(), err, cond, cond * kQuadEps);
          js.add(buf);
        }
      }
      std::printf("%-14s %5d %9.2e %10.2e %10.2e %12.2e\n", name.c_str(), model.nv(), cond_max, worst[Method::Aba],
                  worst[Method::Dca], worst[Method::DcaAccurate]);
      std::fflush(stdout);
    }
  }
  js.close();
  std::printf(
      "\nworst relative error |qdd - qdd_ref| / |qdd_ref| over the states; reference in __float128; wrote "
      "%s/dca_accuracy.json\n",
      out_dir.c_str());
  return 0;
}

}  // namespace plucker_bench
