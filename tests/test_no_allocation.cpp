// No heap allocation once warm (include/plucker/algorithms/data.hpp): Data(model) holds the
// O(N) state, each algorithm makes its own scratch on its first call on a Data, and every later
// call runs on it without allocating.
//
// How it is measured. This file replaces, for the whole test executable, the global
// operator new/delete (every form) AND the C allocation functions malloc, calloc, realloc,
// aligned_alloc, posix_memalign and memalign: Eigen's dynamic matrices allocate with
// std::malloc, not operator new, so counting operator new alone would miss a temporary
// Eigen::VectorXd. The replacements forward to glibc's __libc_* entry points and count a
// call only while a thread-local flag is armed, i.e. inside the measured region; outside
// it they are plain pass-throughs. A positive control checks that both std::vector and
// Eigen allocations are seen.
//
// Needs glibc (the __libc_* entry points). Under AddressSanitizer / ThreadSanitizer, whose
// runtimes own malloc, the replacements are compiled out and the tests skip.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "alloc_count.hpp"
#include "dynamics_test_support.hpp"

namespace alloc_count {
// Constant-initialised TLS of the executable itself: reading it never allocates.
thread_local bool armed = false;
thread_local long count = 0;
inline void note() {
  if (armed) ++count;
}
}  // namespace alloc_count

#ifdef PLUCKER_COUNT_ALLOCATIONS
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) noexcept {
  alloc_count::note();
  return __libc_malloc(n);
}
void* calloc(std::size_t k, std::size_t n) noexcept {
  alloc_count::note();
  return __libc_calloc(k, n);
}
void* realloc(void* p, std::size_t n) noexcept {
  alloc_count::note();
  return __libc_realloc(p, n);
}
void free(void* p) noexcept { __libc_free(p); }
void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept {
  alloc_count::note();
  return __libc_memalign(alignment, n);
}
void* memalign(std::size_t alignment, std::size_t n) noexcept {
  alloc_count::note();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) noexcept {
  alloc_count::note();
  void* p = __libc_memalign(alignment, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}  // extern "C"

namespace {
void* counted_new(std::size_t n) {
  alloc_count::note();
  if (void* p = __libc_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* counted_new_aligned(std::size_t n, std::align_val_t a) {
  alloc_count::note();
  if (void* p = __libc_memalign(static_cast<std::size_t>(a), n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  alloc_count::note();
  return __libc_malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  alloc_count::note();
  return __libc_malloc(n ? n : 1);
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  alloc_count::note();
  return __libc_memalign(static_cast<std::size_t>(a), n ? n : 1);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  alloc_count::note();
  return __libc_memalign(static_cast<std::size_t>(a), n ? n : 1);
}
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
#endif  // PLUCKER_COUNT_ALLOCATIONS

namespace {

using namespace plucker;
using namespace plucker::test;

/// Keeps the optimiser from eliding an allocation whose result is otherwise unused.
template <class T>
void escape(const T& x) {
  asm volatile("" : : "g"(&x) : "memory");
}

using alloc_count::allocations;

class NoAllocation : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef PLUCKER_COUNT_ALLOCATIONS
    GTEST_SKIP() << "allocation counting needs glibc and no ASan/TSan (their runtimes own malloc)";
#endif
  }
};

// The counter sees operator new (std::vector) and malloc (Eigen dynamic matrices); without
// this, a zero count below would prove nothing.
TEST_F(NoAllocation, CounterSeesNewAndMalloc) {
  EXPECT_GE(allocations([] {
              std::vector<int> v(10);
              escape(v);
            }),
            1);
  EXPECT_GE(allocations([] {
              VecX x = VecX::Zero(100);
              escape(x);
            }),
            1);
  EXPECT_GE(allocations([] {
              void* p = std::malloc(64);
              escape(p);
              std::free(p);
            }),
            1);
  EXPECT_EQ(allocations([] {
              Vec6 x = Vec6::Zero();
              escape(x);
            }),
            0);
}

struct Call {
  std::string name;
  std::function<void()> run;
};

void expect_no_allocation(const Model& model) {
  Data data(model);
  Rng rng(501);
  const VecX q = random_configuration(model, rng);
  const VecX v = random_vector(model.nv(), rng), a = random_vector(model.nv(), rng),
             tau = random_vector(model.nv(), rng);
  std::vector<Force> f(model.nbodies());
  for (auto& fi : f) fi = random_force(rng);
  const int tip = model.nbodies() - 1;
  // Batched calls on one thread with a reused workspace: nothing per state (nor per call). Two
  // groups of W states in SIMD lanes and one state alone.
  const int B = 2 * batch_lanes() + 1;
  BatchWorkspace batch(model, 1), batch2(model, 2);  // batch2: the calling thread's share, parked workers
  const MatX Q = q.replicate(1, B), V = v.replicate(1, B), A = a.replicate(1, B);
  MatX batch_out(model.nv(), B), batch_M(model.nv(), model.nv() * B), batch_Mp(batch.jsim_pattern().nnz(), B);
  MatX batch_d1(model.nv(), model.nv() * B), batch_d2(model.nv(), model.nv() * B), batch_d3(model.nv(), model.nv() * B);
  const bool has_frame = !model.frames().empty();
  using RF = ReferenceFrame;
  // A regular task: the last frame's (else the last body's) full motion with a floating base,
  // its position otherwise.
  const TaskRows op_rows = model.has_floating_base() ? TaskRows::All : TaskRows::Position;
  const OperationalTask op_tasks[1] = {
      has_frame ? OperationalTask::of_frame(model, static_cast<int>(model.frames().size()) - 1, op_rows)
                : OperationalTask::of_body(tip, op_rows)};
  // std::function objects are built before measuring; calling one does not allocate.
  const std::vector<Call> calls = {
      {"rnea", [&] { escape(rnea(model, data, q, v, a)); }},
      {"rnea f_ext World", [&] { escape(rnea(model, data, q, v, a, f, RF::World)); }},
      {"rnea f_ext Local", [&] { escape(rnea(model, data, q, v, a, f, RF::Local)); }},
      {"nonlinear_effects", [&] { escape(nonlinear_effects(model, data, q, v)); }},
      {"gravity_torques", [&] { escape(gravity_torques(model, data, q)); }},
      {"crba Full", [&] { escape(crba(model, data, q)); }},
      {"crba Upper", [&] { escape(crba(model, data, q, Triangle::Upper)); }},
      {"aba", [&] { escape(aba(model, data, q, v, tau)); }},
      {"aba f_ext World", [&] { escape(aba(model, data, q, v, tau, f, RF::World)); }},
      {"aba f_ext Local", [&] { escape(aba(model, data, q, v, tau, f, RF::Local)); }},
      {"forward_dynamics_crba", [&] { escape(forward_dynamics_crba(model, data, q, v, tau)); }},
      {"forward_dynamics_crba f_ext", [&] { escape(forward_dynamics_crba(model, data, q, v, tau, f, RF::World)); }},
      {"forward_dynamics_global_sparse", [&] { escape(forward_dynamics_global_sparse(model, data, q, v, tau)); }},
      {"forward_dynamics_global_sparse f_ext",
       [&] { escape(forward_dynamics_global_sparse(model, data, q, v, tau, f, RF::World)); }},
      {"forward_dynamics_cfa", [&] { escape(forward_dynamics_cfa(model, data, q, v, tau)); }},
      {"forward_dynamics_cfa serial f_ext",
       [&] { escape(forward_dynamics_cfa(model, data, q, v, tau, f, RF::Local, CfaSolver::Serial)); }},
      {"forward_dynamics_dca Basic", [&] { escape(forward_dynamics_dca(model, data, q, v, tau, DcaVariant::Basic)); }},
      {"forward_dynamics_dca Accurate f_ext",
       [&] { escape(forward_dynamics_dca(model, data, q, v, tau, DcaVariant::Accurate, 1, f, RF::Local)); }},
      {"forward_dynamics_dca (2 threads, calling thread)",
       [&] { escape(forward_dynamics_dca(model, data, q, v, tau, DcaVariant::Accurate, 2)); }},
      {"forward_kinematics(q)", [&] { forward_kinematics(model, data, q); }},
      {"forward_kinematics(q, v)", [&] { forward_kinematics(model, data, q, v); }},
      {"forward_kinematics(q, v, a)", [&] { forward_kinematics(model, data, q, v, a); }},
      {"body_pose", [&] { escape(body_pose(data, tip)); }},
      {"frame_pose",
       [&] {
         if (has_frame) escape(frame_pose(model, data, 0));
       }},
      {"kinetic_energy", [&] { escape(kinetic_energy(model, data, q, v)); }},
      {"potential_energy", [&] { escape(potential_energy(model, data, q)); }},
      {"body_jacobian World", [&] { escape(body_jacobian(model, data, q, tip, RF::World)); }},
      {"body_jacobian Local", [&] { escape(body_jacobian(model, data, q, tip, RF::Local)); }},
      {"jacobian_dot_times_v", [&] { escape(jacobian_dot_times_v(model, data, q, v, tip, RF::World)); }},
      {"operational_space local",
       [&] { escape(operational_space(model, data, q, v, op_tasks, ReferenceFrame::Local)); }},
      {"operational_space local_world_aligned",
       [&] { escape(operational_space(model, data, q, v, op_tasks, ReferenceFrame::LocalWorldAligned)); }},
      {"operational_space dense",
       [&] {
         escape(operational_space(model, data, q, v, op_tasks, ReferenceFrame::World, OperationalSpaceMethod::Dense));
       }},
      {"operational_space sparse",
       [&] {
         escape(operational_space(model, data, q, v, op_tasks, ReferenceFrame::World, OperationalSpaceMethod::Sparse));
       }},
      {"operational_space recursive",
       [&] {
         escape(
             operational_space(model, data, q, v, op_tasks, ReferenceFrame::Local, OperationalSpaceMethod::Recursive));
       }},
      {"operational_space efpa",
       [&] {
         escape(operational_space(model, data, q, v, op_tasks, ReferenceFrame::Local, OperationalSpaceMethod::Efpa));
       }},
      {"operational_space efpa damped",
       [&] {
         OperationalSpaceOptions o;
         o.damping = 0.1;
         escape(operational_space(model, data, q, v, op_tasks, ReferenceFrame::Local, OperationalSpaceMethod::Efpa, o));
       }},
      {"center_of_mass", [&] { escape(center_of_mass(model, data, q)); }},
      {"center_of_mass_jacobian", [&] { escape(center_of_mass_jacobian(model, data, q)); }},
      {"rnea_batch (1 thread)", [&] { rnea_batch(model, batch, Q, V, A, batch_out); }},
      {"aba_batch (1 thread)", [&] { aba_batch(model, batch, Q, V, A, batch_out); }},
      {"crba_batch (1 thread)", [&] { crba_batch(model, batch, Q, batch_M); }},
      {"crba_batch Upper (1 thread)", [&] { crba_batch(model, batch, Q, batch_M, Triangle::Upper); }},
      {"crba_batch_packed (1 thread)", [&] { crba_batch_packed(model, batch, Q, batch_Mp); }},
      {"rnea_derivatives_batch (1 thread)", [&] { rnea_derivatives_batch(model, batch, Q, V, A, batch_d1, batch_d2); }},
      {"aba_derivatives_batch (1 thread)",
       [&] { aba_derivatives_batch(model, batch, Q, V, A, batch_d1, batch_d2, batch_d3); }},
      {"rnea_batch (2 threads, calling thread)", [&] { rnea_batch(model, batch2, Q, V, A, batch_out); }},
      {"crba_batch (2 threads, calling thread)", [&] { crba_batch(model, batch2, Q, batch_M); }},
  };
  // Positive control inside the library: integrate() returns a new VecX, allocated by Eigen
  // code compiled into libplucker, and that allocation must be seen.
  EXPECT_GE(allocations([&] { escape(integrate(model, q, v, 0.1)); }), 1) << model.name() << ": counter blind";
  // A first call on the fresh Data makes each algorithm's scratch; then no call allocates, twice
  // over (no lazy growth either time).
  for (const Call& c : calls) c.run();
  for (int round = 0; round < 2; ++round)
    for (const Call& c : calls)
      EXPECT_EQ(allocations(c.run), 0) << model.name() << ": " << c.name << " allocates (round " << round << ")";
}

// constrained_forward_dynamics_derivatives: loop joints (four-bar: redundant rows; Delta), mimic
// relations (geared elbow), a weld of rank 0, and actuated loop joints; the three methods with
// Baumgarte terms, and the divide-and-conquer ones on the loop-only models. After one warm-up
// call per method, no call allocates (twice over).
TEST_F(NoAllocation, ConstrainedForwardDynamicsDerivatives) {
  Model actuated_four_bar;
  {
    const Model base = build_four_bar();
    actuated_four_bar = Model(base.body_name(0));
    actuated_four_bar.set_gravity(base.gravity());
    for (int i = 1; i < base.nbodies(); ++i)
      actuated_four_bar.add_body(base.parent(i), base.joint(i), base.X_tree(i), base.inertia(i), base.body_name(i),
                                 base.joint_name(i));
    for (LoopJoint lj : base.loop_joints()) {
      lj.actuated = true;
      actuated_four_bar.add_loop_joint(lj);
    }
  }
  // (model, with the divide-and-conquer methods: they refuse the rank-0 weld)
  const std::vector<std::pair<Model, bool>> cases = {{build_four_bar(), true},
                                                     {build_delta(), true},
                                                     {geared_elbow(), true},
                                                     {chain_with_redundant_weld(), false},
                                                     {actuated_four_bar, true}};
  for (const auto& model_case : cases) {
    const Model& m = model_case.first;  // (clang 14 does not capture structured bindings in lambdas)
    const bool with_dca = model_case.second;
    Data d(m);
    Rng rng(502);
    const VecX q = assemble(m, d, integrate(m, neutral(m), random_vector(m.nv(), rng, 0.2)));
    const VecX v = random_vector(m.nv(), rng), tau = random_vector(m.nv(), rng);
    for (ConstrainedMethod method :
         {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace, ConstrainedMethod::Dca,
          ConstrainedMethod::DcaAccurate}) {
      if (!with_dca && (method == ConstrainedMethod::Dca || method == ConstrainedMethod::DcaAccurate)) continue;
      ConstrainedOptions opt;
      opt.method = method;
      opt.baumgarte_alpha = 3.0;
      opt.baumgarte_beta = 5.0;
      opt.loop_joint_forces = random_vector(m.num_loop_actuators(), rng);
      constrained_forward_dynamics_derivatives(m, d, q, v, tau, opt);  // warm-up
      for (int round = 0; round < 2; ++round)
        EXPECT_EQ(allocations([&] { constrained_forward_dynamics_derivatives(m, d, q, v, tau, opt); }), 0)
            << m.name() << " " << to_string(method) << " (round " << round << ")";
    }
  }
}

TEST_F(NoAllocation, HumanoidFloatingBase) { expect_no_allocation(build_humanoid(0, true)); }
TEST_F(NoAllocation, QuadrupedFixedBase) { expect_no_allocation(build_quadruped(0, false)); }
TEST_F(NoAllocation, EveryJointKind) { expect_no_allocation(build_all_joints_tree(0)); }

}  // namespace
