// Bounded memory and time on any input, and no silent wrong answer (issue 15): each test
// reproduces one of the failures found by the hostile-input review and checks the fix.
//
// Memory is measured with glibc's mallinfo2 (bytes in use by malloc): deterministic for the
// same allocations. Under AddressSanitizer, whose runtime owns malloc, those tests skip.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "dynamics_test_support.hpp"
#include "plucker/algorithms/batch.hpp"
#include "plucker/model/physical_range.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

/// Bytes malloc holds now.
std::size_t heap_in_use() { return mallinfo2().uordblks; }

RigidBodyInertia link_inertia() {
  return RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.05, 0, 0), Mat3::Identity() * 1e-3);
}

Model chain(int n) {
  Model m("base");
  for (int i = 1; i <= n; ++i)
    m.add_body(i - 1, JointRevoluteZ{}, Transform::translation(Vec3(0.1, 0, 0)), link_inertia(),
               "link" + std::to_string(i), "joint" + std::to_string(i));
  return m;
}

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

// ---------------------------------------------------------------- 1. O(N) Model and Data
// A 10,000-link chain used to hold O(N^2) support and subtree lists (787 MB to load) and a Data
// of 8.4 GB (M, L, M^-1 and per-body blocks of size nv - idx_v). Now: about a kilobyte per body
// for the Model, a few hundred bytes per body for the Data of rnea/aba, nothing nv x nv.
TEST(Reliability, ModelAndDataGrowLinearly) {
  if (kSanitized) GTEST_SKIP() << "mallinfo2 does not see ASan's allocator";
  constexpr int n = 5000;
  const std::size_t before_model = heap_in_use();
  const Model model = chain(n);
  const double model_bytes = static_cast<double>(heap_in_use() - before_model);
  EXPECT_LT(model_bytes / n, 2000.0) << "Model bytes per body";
  EXPECT_EQ(model.subtree(1).size(), static_cast<std::size_t>(n));
  EXPECT_EQ(model.support(n).size(), static_cast<std::size_t>(n));
  EXPECT_EQ(model.subtree_v_end(1), n);

  const std::size_t before_data = heap_in_use();
  Data data(model);
  const double data_bytes = static_cast<double>(heap_in_use() - before_data);
  EXPECT_LT(data_bytes / n, 600.0) << "Data bytes per body";
  EXPECT_EQ(data.M.size(), 0);  // made by crba on first use

  // rnea and aba run without making anything nv x nv.
  const VecX q = VecX::Constant(n, 0.1), v = VecX::Constant(n, 0.01), tau = VecX::Zero(n);
  rnea(model, data, q, v, tau);
  aba(model, data, q, v, tau);
  EXPECT_TRUE(data.qdd.allFinite());
  EXPECT_LT(static_cast<double>(heap_in_use() - before_data) / n, 1500.0) << "Data after rnea and aba, bytes per body";
  EXPECT_EQ(data.M.size(), 0);
  EXPECT_EQ(data.Minv.size(), 0);
}

// ---------------------------------------------------------------- 2. threads
TEST(Reliability, BatchThreadsAreCapped) {
  const Model model = build_chain(3);
  const std::string msg = message_of<InvalidArgument>([&] { BatchWorkspace(model, max_batch_threads() + 1); });
  EXPECT_NE(msg.find("is more than"), std::string::npos) << msg;
  EXPECT_NO_THROW(BatchWorkspace(model, 2));
}

// BatchWorkspace(model, 2000) under `ulimit -v 3000000` hung forever: the pool started threads
// in its constructor and, when one could not start, unwinding destroyed the condition variable
// the started ones waited on. Now the started workers are joined and plucker::Error says so.
// Run in a child process with little address space (every thread reserves a stack), which an
// alarm kills if it hangs.
TEST(Reliability, ThreadThatCannotStartIsAnErrorNotAHang) {
  if (kSanitized) GTEST_SKIP() << "ASan reserves terabytes of address space";
  const Model model = build_chain(3);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a hang ends as SIGALRM
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    // What the process maps now plus 40 MB: a few 8 MB thread stacks, not max_batch_threads().
    long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    limit.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (40u << 20);
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    try {
      BatchWorkspace ws(model, max_batch_threads());
      _exit(2);  // every thread started: the limit did not bite (not a failure of the pool)
    } catch (const Error& e) {
      _exit(std::string(e.what()).find("could not start worker thread") != std::string::npos ? 0 : 1);
    } catch (...) {
      _exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child hung or crashed (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << ")";
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "the address-space limit did not stop a thread from starting";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---------------------------------------------------------------- 4. conjugate gradient
// On chain1024, pcg stopped at its 10 nv cap with relative residual 0.85 and returned
// accelerations 1e-2 off, without a word. Now it iterates to its tolerance or raises.
TEST(Reliability, ConjugateGradientNeverReturnsUnconverged) {
  const Model model = build_chain(64, {Vec3::UnitZ(), Vec3::UnitY()}, 3);
  Data data(model);
  Rng rng(1501);
  const VecX q = random_configuration(model, rng), b = random_vector(model.nv(), rng);
  const std::string msg =
      message_of<ConvergenceError>([&] { solve_conjugate_gradient(model, data, q, b, true, 1e-14, 3); });
  EXPECT_NE(msg.find("no convergence in 3 iterations"), std::string::npos) << msg;
  try {
    solve_conjugate_gradient(model, data, q, b, false, 1e-14, 2);
  } catch (const ConvergenceError& e) {
    EXPECT_EQ(e.iterations(), 2);
    EXPECT_GT(e.residual(), 1e-14);
  }
  // Converged answers are answers: against the dense solve.
  for (bool pre : {false, true}) {
    const VecX x = solve_conjugate_gradient(model, data, q, b, pre);
    EXPECT_TRUE(data.cg.converged);
    const MatX M = crba(model, data, q);
    const VecX ref = M.llt().solve(b);
    const Spectrum sp = spectrum(M);
    EXPECT_LE((x - ref).norm(), 100 * sp.cond() * kEps * ref.norm()) << (pre ? "pcg" : "cg");
  }
}

// ---------------------------------------------------------------- 6. Data of another model
TEST(Reliability, FrameFunctionsCheckTheirData) {
  const Model humanoid = build_humanoid(0, true), other = build_chain(3);
  Data wrong(other);
  forward_kinematics(other, wrong, neutral(other));
  ASSERT_FALSE(humanoid.frames().empty());
  EXPECT_NE(message_of<InvalidArgument>([&] { frame_transform(humanoid, wrong, 0); }).find("different model"),
            std::string::npos);
  EXPECT_NE(message_of<InvalidArgument>([&] { frame_pose(humanoid, wrong, 0); }).find("different model"),
            std::string::npos);
  Data fresh(humanoid);  // right model, no poses yet
  EXPECT_NE(message_of<InvalidArgument>([&] { frame_pose(humanoid, fresh, 0); }).find("forward_kinematics"),
            std::string::npos);
}

// ---------------------------------------------------------------- 7. extreme finite values
TEST(Reliability, PhysicalRangeIsCheckedWhenBuilding) {
  Model m;
  const RigidBodyInertia I = link_inertia();
  const std::string far = message_of<ModelError>(
      [&] { m.add_body(0, JointRevoluteZ{}, Transform::translation(Vec3(1e308, 0, 0)), I, "a", "ja"); });
  EXPECT_NE(far.find("beyond the physical range"), std::string::npos) << far;
  const std::string heavy = message_of<ModelError>([&] {
    m.add_body(0, JointRevoluteZ{}, Transform(),
               RigidBodyInertia::from_mass_com_inertia(1e10, Vec3::Zero(), Mat3::Identity()), "a", "ja");
  });
  EXPECT_NE(heavy.find("mass 1e+10 kg is beyond"), std::string::npos) << heavy;
  const std::string com = message_of<ModelError>([&] {
    m.add_body(0, JointRevoluteZ{}, Transform(), RigidBodyInertia::unchecked(1.0, Vec3(2e6, 0, 0), Mat3::Identity()),
               "a", "ja");
  });
  EXPECT_NE(com.find("centre of mass"), std::string::npos) << com;
  EXPECT_NE(message_of<ModelError>([&] {
              m.add_frame("f", 0, Transform::translation(Vec3(0, 0, 5e6)));
            }).find("beyond the physical range"),
            std::string::npos);
  EXPECT_EQ(m.nbodies(), 1);  // nothing was added
}

// v = 1e200 gave NaN torques and a NaN kinetic energy; tau = 1e308 gave infinite accelerations,
// and cg/pcg then blamed "no mass or inertia". Now: NumericalError naming where it appeared.
TEST(Reliability, NonFiniteResultsAreErrorsThatNameTheJoint) {
  const Model model = build_chain(6);
  Data data(model);
  const VecX q = neutral(model), zero = VecX::Zero(model.nv());
  const VecX huge_v = VecX::Constant(model.nv(), 1e200), huge_tau = VecX::Constant(model.nv(), 1e308);
  const std::string r = message_of<NumericalError>([&] { rnea(model, data, q, huge_v, zero); });
  EXPECT_NE(r.find("rnea: the force of body 'link1' (joint 'joint1') is not finite"), std::string::npos) << r;
  EXPECT_NE(message_of<NumericalError>([&] { kinetic_energy(model, data, q, huge_v); }).find("kinetic_energy"),
            std::string::npos);
  EXPECT_NE(message_of<NumericalError>([&] { aba(model, data, q, zero, huge_tau); }).find("joint '"),
            std::string::npos);
  for (ForwardDynamicsMethod method : forward_dynamics_methods()) {
    const std::string fd =
        message_of<NumericalError>([&] { forward_dynamics(model, data, q, zero, huge_tau, method); });
    EXPECT_NE(fd.find("not finite"), std::string::npos) << to_string(method) << ": " << fd;
  }
}

// ---------------------------------------------------------------- 8. one criterion for "singular"
// On build_random_tree(256, taper=0.9) (cond(M) = 7e37: the distal bodies are tiny, not massless)
// six methods raised SingularError and the four Cholesky ones answered. Now no method calls it
// singular, and every answer agrees with the ABA's (cg may not converge: ConvergenceError; the
// basic DCA may raise NumericalError naming the joint where it lost precision).
TEST(Reliability, MethodsAgreeAboutSingularity) {
  const Model model = build_random_tree(256, 1.0, 0.0, 0.9);
  Data data(model);
  Rng rng(1508);
  const VecX q = random_configuration(model, rng), v = VecX::Zero(model.nv()), tau = VecX::Ones(model.nv());
  const VecX ref = aba(model, data, q, v, tau);
  for (ForwardDynamicsMethod method : forward_dynamics_methods()) {
    try {
      const VecX qdd = forward_dynamics(model, data, q, v, tau, method);
      EXPECT_LE((qdd - ref).norm(), 1e-10 * ref.norm()) << to_string(method);
    } catch (const ConvergenceError& e) {
      EXPECT_TRUE(method == ForwardDynamicsMethod::ConjugateGradient) << to_string(method) << ": " << e.what();
    } catch (const NumericalError& e) {
      // The basic divide-and-conquer algorithm (world-frame handle equations, docs/dca.md) loses
      // the definiteness of a joint's T^T Phi T on this tree and says so, naming the joint;
      // dca_accurate answers.
      EXPECT_TRUE(method == ForwardDynamicsMethod::Dca) << to_string(method) << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("joint '"), std::string::npos) << e.what();
    } catch (const Error& e) {
      ADD_FAILURE() << to_string(method) << ": " << e.what();
    }
  }
  // A massless leaf is singular for every method, named by its joint.
  Model massless = build_chain(4);
  massless.add_body(4, JointRevoluteZ{}, Transform::translation(Vec3(0.1, 0, 0)), RigidBodyInertia(), "ghost",
                    "ghost_joint");
  Data d2(massless);
  const VecX q2 = neutral(massless), z = VecX::Zero(massless.nv());
  for (ForwardDynamicsMethod method : forward_dynamics_methods()) {
    const std::string msg = message_of<SingularError>([&] { forward_dynamics(massless, d2, q2, z, z, method); });
    EXPECT_NE(msg.find("ghost_joint"), std::string::npos) << to_string(method) << ": " << msg;
  }
}

// A body of denormal mass (1e-310 kg, found by fuzz_dynamics) passed the relative test: its pivot
// and M_kk are both denormal, so D^-1 overflowed and the ABA, innovations and minv returned NaN,
// the Cholesky methods -inf. Now every method raises SingularError naming the joint.
TEST(Reliability, DenormalMassIsSingularForEveryMethod) {
  const double tiny = 1e-310;
  ASSERT_LT(tiny, std::numeric_limits<double>::min());
  struct Case {
    const char* name;
    bool prismatic;
    RigidBodyInertia inertia;
  };
  const Case cases[] = {
      {"revolute, tiny mass and tensor", false,
       RigidBodyInertia::from_mass_com_inertia(tiny, Vec3::Zero(), Mat3::Identity() * tiny)},
      {"prismatic, tiny mass", true,
       RigidBodyInertia::from_mass_com_inertia(tiny, Vec3::Zero(), Mat3::Identity() * 1e-2)},
  };
  for (const Case& c : cases) {
    Model model = chain(3);
    if (c.prismatic)
      model.add_body(3, JointPrismaticX{}, Transform::translation(Vec3(0.1, 0, 0)), c.inertia, "dust", "dust_joint");
    else
      model.add_body(3, JointRevoluteZ{}, Transform::translation(Vec3(0.1, 0, 0)), c.inertia, "dust", "dust_joint");
    Data data(model);
    const VecX q = VecX::Constant(model.nq(), 0.3), v = VecX::Constant(model.nv(), 0.5), tau = VecX::Ones(model.nv());
    for (ForwardDynamicsMethod method : forward_dynamics_methods()) {
      const std::string msg = message_of<SingularError>([&] { forward_dynamics(model, data, q, v, tau, method); });
      EXPECT_NE(msg.find("dust_joint"), std::string::npos) << c.name << ", " << to_string(method) << ": " << msg;
    }
    EXPECT_NE(message_of<SingularError>([&] { aba(model, data, q, v, tau); }).find("dust_joint"), std::string::npos)
        << c.name;
    EXPECT_NE(message_of<SingularError>([&] { minv(model, data, q); }).find("dust_joint"), std::string::npos) << c.name;
    EXPECT_NE(message_of<SingularError>([&] { forward_dynamics_crba(model, data, q, v, tau); }).find("dust_joint"),
              std::string::npos)
        << c.name;
    crba(model, data, q);
    EXPECT_NE(message_of<SingularError>([&] { factorize_ltdl(model, data); }).find("dust_joint"), std::string::npos)
        << c.name;
    crba(model, data, q);
    EXPECT_NE(message_of<SingularError>([&] { factorize_ltl(model, data); }).find("dust_joint"), std::string::npos)
        << c.name;
  }
}

// On romeo (massless fingers, mimic constraints), null_space answered for 3 of 8 states and raised
// "K^T M K is not positive definite" (naming no joint) for the others. Now every method raises
// for every state, naming a joint.
TEST(Reliability, ConstrainedMethodsAgreeAboutSingularity) {
  const std::string path = shared_model_path("romeo");
  if (path.empty()) GTEST_SKIP() << "romeo.urdf not found (PLUCKER_SHARED_DIR)";
  const Model model = load_shared_model(path, RootJoint::FreeFlyer);
  ASSERT_GT(model.num_constraints(), 0);
  Data data(model);
  Rng rng(1509);
  const VecX zero = VecX::Zero(model.nv());
  for (int s = 0; s < 8; ++s) {
    const VecX q = random_configuration(model, rng);
    for (ConstrainedMethod method :
         {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace}) {
      ConstrainedOptions options;
      options.method = method;
      const std::string msg =
          message_of<SingularError>([&] { constrained_forward_dynamics(model, data, q, zero, zero, options); });
      EXPECT_NE(msg.find("joint '"), std::string::npos) << "state " << s << " " << to_string(method) << ": " << msg;
    }
    // project_velocity shares the null-space criterion and its message.
    const std::string msg = message_of<SingularError>([&] { project_velocity(model, data, q, zero); });
    EXPECT_NE(msg.find("joint '"), std::string::npos) << "state " << s << " project_velocity: " << msg;
  }
}

// ---------------------------------------------------------------- smaller defects
TEST(Reliability, ModelConstructionRefusesWhatCannotBeARobot) {
  Model m;
  const RigidBodyInertia I = link_inertia();
  JointLimits limits;
  limits.velocity = VecX::Constant(1, std::nan(""));
  EXPECT_NE(message_of<ModelError>([&] {
              m.add_body(0, JointRevoluteZ{}, Transform(), I, "a", "ja", limits);
            }).find("velocity and effort limits"),
            std::string::npos);
  limits = {};
  limits.effort = VecX::Constant(1, -1.0);
  EXPECT_NE(message_of<ModelError>([&] {
              m.add_body(0, JointRevoluteZ{}, Transform(), I, "a", "ja", limits);
            }).find("velocity and effort limits"),
            std::string::npos);
  EXPECT_NE(message_of<ModelError>([&] {
              m.add_body(0, JointRevoluteZ{}, Transform(), I, "l\xff", "ja");
            }).find("'l\\xff' is not valid UTF-8"),
            std::string::npos);
  JointRevolute zero_axis;
  zero_axis.axis = Vec3::Zero();
  EXPECT_NE(message_of<ModelError>([&] { m.add_body(0, zero_axis, Transform(), I, "a", "ja"); }).find("unit vector"),
            std::string::npos);
  const int a = m.add_body(0, JointRevoluteZ{}, Transform(), I, "a", "ja");
  const int b = m.add_body(a, JointRevoluteZ{}, Transform(), I, "b", "jb");
  const int c = m.add_body(b, JointRevoluteZ{}, Transform(), I, "c", "jc");
  EXPECT_NE(message_of<ModelError>([&] { m.add_mimic({a, a, 2.0, 0.0}); }).find("mimics itself"), std::string::npos);
  // A multiplier of 1e300 overflowed the null-space basis (NaN from project_velocity).
  EXPECT_NE(message_of<ModelError>([&] {
              m.add_mimic({a, b, 1e300, 0.0});
            }).find("multiplier 1e+300 is beyond"),
            std::string::npos);
  EXPECT_NE(message_of<ModelError>([&] {
              m.add_mimic({a, b, 1.0, -1e300});
            }).find("offset -1e+300 is beyond"),
            std::string::npos);
  EXPECT_TRUE(m.mimics().empty());
  m.add_mimic({a, b, 2.0, 0.0});                                                                               // j = 2k
  EXPECT_NE(message_of<ModelError>([&] { m.add_mimic({b, a, 2.0, 0.0}); }).find("cycle"), std::string::npos);  // k = 2j
  m.add_mimic({b, c, 1.0, 0.0});
  EXPECT_NE(message_of<ModelError>([&] { m.add_mimic({c, a, 1.0, 0.0}); }).find("cycle"), std::string::npos);
  EXPECT_NE(message_of<ModelError>([&] { m.add_mimic({a, c, 1.0, 0.0}); }).find("already mimics"), std::string::npos);
  EXPECT_EQ(m.mimics().size(), 2u);
}

// A quaternion of norm 1 + 2e-6 was reported as "not unit (norm 1)".
TEST(Reliability, MessagesPrintNumbersThatTellTheProblem) {
  const Model model = build_humanoid(0, true);
  VecX q = neutral(model);
  q.segment<4>(3) *= 1.000002;
  const std::string msg = message_of<InvalidArgument>([&] { model.check_configuration(q); });
  EXPECT_NE(msg.find("norm 1.000002"), std::string::npos) << msg;
}

// assemble printed a residual of 1.3e308 as a 300-digit number.
TEST(Reliability, AssembleReportsHugeResidualsBriefly) {
  const Model model = build_slider_crank();
  Data data(model);
  VecX q = neutral(model);
  q.setConstant(1e5);  // far from closing
  AssembleOptions options;
  options.max_iterations = 0;
  const std::string msg = message_of<SingularError>([&] { assemble(model, data, q, options); });
  EXPECT_LT(msg.size(), 600u) << msg;
  EXPECT_EQ(msg.find("000000000000"), std::string::npos) << msg;
}

// Two threads sharing one Data gave wrong answers silently (6 of 2,000). One Data per thread is
// the rule; debug builds detect the overlap and throw.
TEST(Reliability, SharedDataIsDetectedInDebugBuilds) {
#ifdef NDEBUG
  GTEST_SKIP() << "the guard is compiled in debug builds only";
#else
  const Model model = build_chain(32);
  Data data(model);
  const VecX q = neutral(model), v = VecX::Ones(model.nv()), a = VecX::Zero(model.nv());
  std::atomic<int> detected{0};
  std::atomic<bool> stop{false};
  auto run = [&] {
    for (int k = 0; k < 20000 && !stop; ++k) {
      try {
        rnea(model, data, q, v, a);
      } catch (const InvalidArgument& e) {
        if (std::string(e.what()).find("one Data per thread") != std::string::npos) ++detected, stop = true;
      }
    }
  };
  std::thread t1(run), t2(run);
  t1.join();
  t2.join();
  EXPECT_GT(detected.load(), 0);
  // One thread at a time is fine, nested calls too (forward_dynamics calls rnea).
  EXPECT_NO_THROW(forward_dynamics(model, data, q, v, a, ForwardDynamicsMethod::CrbaLtdl));
#endif
}

}  // namespace
