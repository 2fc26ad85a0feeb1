// libFuzzer target for the algorithms on loaded models: bytes -> load_urdf_string -> every
// algorithm at a few states derived from the bytes, under ASan + UBSan.
//
// Input layout (FuzzedDataProvider): the last bytes choose the options and the states, the rest
// is the URDF document. The last byte: bit 0 = RootJoint::FreeFlyer, bit 1 = strict; the 8
// before it seed the states; the one before those picks their scale. A seed file is a URDF
// document followed by 10 such bytes (fuzz/corpus/fuzz_dynamics/, written by
// fuzz/make_dynamics_seeds.py).
//
// A model that loads may still be bad (massless moving subtrees, near-singular inertias, huge
// and tiny masses side by side, mimics and loop joints that cannot close): the algorithms must
// then throw a plucker::Error (SingularError, NumericalError, ...). Anything else is a bug and
// aborts with a message naming the algorithm: a NaN or inf in a returned result, an exception
// that is not a plucker::Error, a crash or a sanitizer report. The states are moderate (|v| <=
// 10, |tau| <= 100, q = neutral (+) v' with |v'| <= 3): non-finite results come from the
// model, not from a state outside double precision.
//
// Models over kMaxBodies bodies (or kMaxDof DoF, kMaxConstraints constraint rows) are skipped
// so that every input runs in milliseconds; fuzz_urdf covers the loader on any size.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "plucker/errors.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/plucker.hpp"

namespace {

using namespace plucker;

constexpr int kMaxBodies = 64;
constexpr int kMaxDof = 160;
constexpr int kMaxConstraints = 48;

// FUZZ_DYNAMICS_KEEP_GOING=1 (to replay a finding): report every bad result of the input
// instead of aborting at the first.
const bool kKeepGoing = [] {
  const char* e = std::getenv("FUZZ_DYNAMICS_KEEP_GOING");
  return e && *e && *e != '0';
}();

void die(const std::string& what) {
  std::fprintf(stderr, "fuzz_dynamics: %s\n", what.c_str());
  std::fflush(stderr);
  if (!kKeepGoing) std::abort();
}

template <class M>
std::string first_non_finite(const M& x) {
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      if (!std::isfinite(x(i, j)))
        return "(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(x(i, j)) + " of " +
               std::to_string(x.rows()) + " x " + std::to_string(x.cols());
  return "";
}

struct Checker {
  const Model& model;
  std::string state;  // which state, for messages

  void finite(const std::string& algo, const Eigen::Ref<const MatX>& x) const {
    const std::string bad = first_non_finite(x);
    if (!bad.empty())
      die(algo + " returned a non-finite value at " + bad + " (" + state + ", model '" + model.name() + "', " +
          std::to_string(model.nbodies()) + " bodies, nv " + std::to_string(model.nv()) + ")");
  }
  void finite(const std::string& algo, double x) const {
    if (!std::isfinite(x)) finite(algo, MatX::Constant(1, 1, x));
  }

  /// Runs f; a plucker::Error is an acceptable outcome, any other exception a bug.
  template <class F>
  void run(const std::string& algo, F&& f) const {
    try {
      f();
    } catch (const Error&) {
      // Refused: SingularError, NumericalError, ConvergenceError, InvalidArgument ...
    } catch (const std::exception& e) {
      die(algo + " threw an exception that is not a plucker::Error: " + e.what() + " (" + state + ")");
    } catch (...) {
      die(algo + " threw something that is not a std::exception (" + state + ")");
    }
  }
};

void run_all(const Model& model, Data& data, const VecX& q, const VecX& v, const VecX& a, const VecX& tau,
             const std::string& state) {
  const Checker c{model, state};
  const int nb = model.nbodies();

  c.run("rnea", [&] { c.finite("rnea", rnea(model, data, q, v, a)); });
  std::vector<Force> f_ext(static_cast<size_t>(nb), Force(Vec3(0.1, -0.2, 0.3), Vec3(1.0, 2.0, -3.0)));
  c.run("rnea(f_ext, World)", [&] { c.finite("rnea(f_ext, World)", rnea(model, data, q, v, a, f_ext)); });
  c.run("rnea(f_ext, Local)",
        [&] { c.finite("rnea(f_ext, Local)", rnea(model, data, q, v, a, f_ext, ReferenceFrame::Local)); });
  c.run("nonlinear_effects", [&] { c.finite("nonlinear_effects", nonlinear_effects(model, data, q, v)); });
  c.run("gravity_torques", [&] { c.finite("gravity_torques", gravity_torques(model, data, q)); });
  c.run("rnea_composite", [&] { c.finite("rnea_composite", rnea_composite(model, data, q, v, a)); });
  c.run("crba", [&] { c.finite("crba", crba(model, data, q)); });
  c.run("crba(Upper)", [&] { c.finite("crba(Upper)", crba(model, data, q, Triangle::Upper)); });
  c.run("mass_matrix_direct", [&] { c.finite("mass_matrix_direct", mass_matrix_direct(model, data, q)); });
  c.run("mass_matrix_symmetry", [&] { c.finite("mass_matrix_symmetry", mass_matrix_symmetry(model, data, q)); });
  c.run("mass_times", [&] { c.finite("mass_times", mass_times(model, data, q, a)); });
  c.run("aba", [&] { c.finite("aba", aba(model, data, q, v, tau)); });
  c.run("aba(f_ext)", [&] { c.finite("aba(f_ext)", aba(model, data, q, v, tau, f_ext)); });
  c.run("forward_dynamics_crba",
        [&] { c.finite("forward_dynamics_crba", forward_dynamics_crba(model, data, q, v, tau)); });
  for (ForwardDynamicsMethod m : forward_dynamics_methods()) {
    const std::string name = "forward_dynamics(" + std::string(to_string(m)) + ")";
    c.run(name, [&] { c.finite(name, forward_dynamics(model, data, q, v, tau, m)); });
  }
  c.run("minv", [&] { c.finite("minv", minv(model, data, q)); });
  c.run("solve_innovations", [&] { c.finite("solve_innovations", solve_innovations(model, data, q, tau)); });
  c.run("solve_conjugate_gradient",
        [&] { c.finite("solve_conjugate_gradient", solve_conjugate_gradient(model, data, q, tau, false)); });
  c.run("crba + factorize_ltdl + solve_ltdl", [&] {
    crba(model, data, q, Triangle::Upper);
    factorize_ltdl(model, data);
    VecX x = tau;
    solve_ltdl(model, data, x);
    c.finite("crba + factorize_ltdl + solve_ltdl", x);
  });
  c.run("crba + factorize_ltl + solve_ltl", [&] {
    crba(model, data, q, Triangle::Upper);
    factorize_ltl(model, data);
    VecX x = tau;
    solve_ltl(model, data, x);
    c.finite("crba + factorize_ltl + solve_ltl", x);
  });

  // Kinematics, Jacobians, energy.
  c.run("forward_kinematics", [&] {
    forward_kinematics(model, data, q, v, a);
    for (int i = 0; i < nb; ++i) {
      c.finite("body_pose", body_pose(data, i));
      c.finite("forward_kinematics (v)", data.v[static_cast<size_t>(i)].vector());
      c.finite("forward_kinematics (a)", data.a[static_cast<size_t>(i)].vector());
    }
    for (int f = 0; f < static_cast<int>(model.frames().size()); ++f)
      c.finite("frame_pose", frame_pose(model, data, f));
  });
  for (int i : {nb - 1, nb / 2}) {
    for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local}) {
      const std::string tag = std::string(frame == ReferenceFrame::World ? "(World)" : "(Local)");
      c.run("body_jacobian" + tag, [&] { c.finite("body_jacobian" + tag, body_jacobian(model, data, q, i, frame)); });
      c.run("jacobian_dot_times_v" + tag, [&] {
        c.finite("jacobian_dot_times_v" + tag, jacobian_dot_times_v(model, data, q, v, i, frame).vector());
      });
    }
  }
  c.run("center_of_mass", [&] { c.finite("center_of_mass", center_of_mass(model, data, q)); });
  c.run("center_of_mass_jacobian",
        [&] { c.finite("center_of_mass_jacobian", center_of_mass_jacobian(model, data, q)); });
  c.run("kinetic_energy", [&] { c.finite("kinetic_energy", kinetic_energy(model, data, q, v)); });
  c.run("potential_energy", [&] { c.finite("potential_energy", potential_energy(model, data, q)); });

  // Closed loops: loop joints and mimics.
  if (model.num_constraints() > 0) {
    c.run("constraint_terms", [&] {
      constraint_terms(model, data, q, v);
      c.finite("constraint_terms (phi)", data.loops.phi);
      c.finite("constraint_terms (L)", data.loops.L);
      c.finite("constraint_terms (c)", data.loops.c);
    });
    for (ConstrainedMethod m : {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace,
                                ConstrainedMethod::Dca, ConstrainedMethod::DcaAccurate}) {
      for (double baumgarte : {0.0, 10.0}) {
        const std::string name =
            "constrained_forward_dynamics(" + std::string(to_string(m)) + (baumgarte > 0 ? ", baumgarte" : "") + ")";
        ConstrainedOptions o;
        o.method = m;
        o.baumgarte_alpha = o.baumgarte_beta = baumgarte;
        o.loop_joint_forces = VecX::Constant(model.num_loop_actuators(), 1.0);
        c.run(name, [&] {
          c.finite(name, constrained_forward_dynamics(model, data, q, v, tau, o));
          c.finite(name + " (lambda)", data.loops.lambda);
        });
      }
    }
    c.run("assemble", [&] {
      AssembleOptions o;
      o.max_iterations = 20;
      c.finite("assemble", assemble(model, data, q, o));
    });
    c.run("project_velocity", [&] { c.finite("project_velocity", project_velocity(model, data, q, v)); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint8_t flags = in.ConsumeIntegral<uint8_t>();
  const uint64_t seed = in.ConsumeIntegral<uint64_t>();
  const uint8_t scale_pick = in.ConsumeIntegral<uint8_t>();
  const std::string xml = in.ConsumeRemainingBytesAsString();

  UrdfOptions options;
  options.root = (flags & 1) ? RootJoint::FreeFlyer : RootJoint::Fixed;
  options.strict = (flags & 2) != 0;
  options.on_warning = [](const std::string&) {};
  std::unique_ptr<Model> model;
  try {
    model = std::make_unique<Model>(load_urdf_string(xml, options, "fuzz.urdf"));
  } catch (const ModelError&) {
    return 0;  // fuzz_urdf checks the refusals
  } catch (const std::exception& e) {
    die(std::string("load_urdf_string threw something other than ModelError: ") + e.what());
    return 0;
  }
  if (model->nbodies() > kMaxBodies || model->nv() > kMaxDof || model->num_constraints() > kMaxConstraints) return 0;

  std::unique_ptr<Data> work;
  try {
    work = std::make_unique<Data>(*model);
  } catch (const Error&) {
    return 0;
  } catch (const std::exception& e) {
    die(std::string("Data(model) threw something other than plucker::Error: ") + e.what());
    return 0;
  }

  const int nv = model->nv();
  static const double kScales[] = {1.0, 0.0, 1e-3, 10.0};
  const double scale = kScales[scale_pick % 4];
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  auto random_vec = [&](double bound) {
    VecX x(nv);
    for (int k = 0; k < nv; ++k) x[k] = bound * unit(rng);
    return x;
  };
  // State 0: at rest in the neutral configuration; states 1 and 2 from the seed.
  run_all(*model, *work, neutral(*model), VecX::Zero(nv), VecX::Zero(nv), VecX::Zero(nv), "state 0 (rest)");
  for (int s = 1; s <= 2; ++s) {
    VecX q;
    try {
      q = integrate(*model, neutral(*model), random_vec(3.0));
    } catch (const Error& e) {
      die(std::string("integrate(neutral, v) threw: ") + e.what());
      return 0;
    }
    const VecX v = random_vec(10.0 * scale), a = random_vec(10.0 * scale), tau = random_vec(100.0 * scale);
    run_all(*model, *work, q, v, a, tau, "state " + std::to_string(s) + ", seed " + std::to_string(seed));
  }
  return 0;
}
