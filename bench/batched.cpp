// plucker_bench --batch: rnea_batch / crba_batch / aba_batch throughput on the headline
// models, <out>/batch.json. Each figure: the pool of kPoolSize states evaluated by one batched
// call (workspace made once), repeated for about min_time; wall time and the process's CPU time
// (all threads) per state, median over the repetitions. Why the modes are timed in interleaved
// rounds, pinned, beside MuJoCo: docs/benchmark_notes.md, "Batched section".
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <regex>
#include <thread>

#include "common.hpp"

namespace plucker_bench {
namespace {

double process_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct BatchTiming {
  double wall_ns = 0, cpu_ns = 0;  // per state, medians
};

struct BatchMode {
  std::string name;  // "single", "batch/1", ...
  int threads;
  std::function<void()> pass;  // evaluates the whole pool once
};

/// Each round times every mode once, so a slow spell of the VM falls on all of them alike; the
/// one-thread modes run pinned to one CPU (the last of the process's affinity mask).
std::vector<BatchTiming> time_interleaved(const Options& opt, int states, const std::vector<BatchMode>& modes) {
  std::vector<std::vector<double>> wall(modes.size()), cpu(modes.size());
  for (const BatchMode& m : modes) m.pass();  // warm up
  for (int r = 0; r < opt.reps; ++r)
    for (std::size_t k = 0; k < modes.size(); ++k) {
      std::optional<PinnedToOneCpu> pin;
      if (modes[k].threads == 1) pin.emplace();
      long passes = 0;
      const auto w0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_s();
      double elapsed = 0;
      do {
        modes[k].pass();
        ++passes;
        elapsed = seconds_since(w0);
      } while (elapsed < opt.min_time);
      const double c = process_cpu_s() - c0;
      wall[k].push_back(1e9 * elapsed / static_cast<double>(passes * states));
      cpu[k].push_back(1e9 * c / static_cast<double>(passes * states));
    }
  std::vector<BatchTiming> out;
  for (std::size_t k = 0; k < modes.size(); ++k) out.push_back({median(wall[k]), median(cpu[k])});
  return out;
}

/// MuJoCo's single-state call on the same pool, the yardstick timed in the same rounds (URDF
/// models, when built with it, on the tasks where it agrees with plucker).
struct MujocoYardstick {
  StatePool pool;  // the peer keeps a pointer to it: filled in place, never moved
  std::unique_ptr<Peer> peer;
  std::set<Task> tasks;
};

void attach_mujoco(MujocoYardstick& y, Bundle& b, [[maybe_unused]] const Spec& spec,
                   [[maybe_unused]] const TempDir& tmp, [[maybe_unused]] std::vector<std::string>& notes) {
  y.pool = pool_of(b);
#ifdef PLUCKER_HAVE_MUJOCO
  if (spec.urdf.empty()) return;
  const std::string stripped = stripped_copy(spec.urdf, tmp);
  std::string why;
  y.peer = create_peer(&make_mujoco_peer, describe(b, stripped, spec.floating), why);
  if (!y.peer) {
    notes.push_back(b.name + ": mujoco not loaded (" + one_line(why) + ")");
    return;
  }
  y.peer->set_pool(y.pool);
  for (const Check& c : compare_peer(b, *y.peer, 10, /*stop_if_id_disagrees=*/false).checks) {
    if (c.ok)
      y.tasks.insert(c.task);
    else
      notes.push_back(b.name + ": mujoco " + task_name(c.task) + " disagrees (" + fmt_e(c.err) + "), not timed");
  }
#endif
}

/// The pass of every mode of one algorithm; crba computes the upper triangle of each M
/// (Triangle::Upper), the work of Pinocchio's reference figure.
struct BatchOutputs {
  MatX out, M, Mp;  // rnea/aba results; crba_batch's M; crba_batch_packed's nonzeros
  MatX d1, d2, d3;  // the derivatives' nv x (nv B) results
};

std::vector<BatchMode> batch_modes(const std::string& a, Bundle& b, plucker::BatchWorkspace& ws1,
                                   plucker::BatchWorkspace& ws2, BatchOutputs& o, MujocoYardstick& y,
                                   const Task* task) {
  std::vector<BatchMode> modes;
  modes.push_back({"single", 1, [&] {
                     for (int i = 0; i < b.n; ++i) {
                       if (a == "rnea")
                         plucker::rnea(b.model, *b.data, b.q(i), b.v(i), b.a(i));
                       else if (a == "rnea_derivatives")
                         plucker::rnea_derivatives(b.model, *b.data, b.q(i), b.v(i), b.a(i));
                       else if (a == "aba_derivatives")
                         plucker::aba_derivatives(b.model, *b.data, b.q(i), b.v(i), b.tau(i));
                       else if (a == "crba")
                         plucker::crba(b.model, *b.data, b.q(i), plucker::Triangle::Upper);
                       else
                         plucker::aba(b.model, *b.data, b.q(i), b.v(i), b.tau(i));
                     }
                   }});
  for (plucker::BatchWorkspace* ws : {&ws1, &ws2})
    modes.push_back({"batch/" + std::to_string(ws->threads()), ws->threads(), [&, ws] {
                       if (a == "rnea")
                         plucker::rnea_batch(b.model, *ws, b.Q, b.V, b.A, o.out);
                       else if (a == "rnea_derivatives")
                         plucker::rnea_derivatives_batch(b.model, *ws, b.Q, b.V, b.A, o.d1, o.d2);
                       else if (a == "aba_derivatives")
                         plucker::aba_derivatives_batch(b.model, *ws, b.Q, b.V, b.TAU, o.d1, o.d2, o.d3);
                       else if (a == "crba")
                         plucker::crba_batch(b.model, *ws, b.Q, o.M, plucker::Triangle::Upper);
                       else
                         plucker::aba_batch(b.model, *ws, b.Q, b.V, b.TAU, o.out);
                     }});
  // crba: also the packed form, each M's nonzeros only (nnz instead of nv^2 doubles written per state).
  if (a == "crba")
    for (plucker::BatchWorkspace* ws : {&ws1, &ws2})
      modes.push_back({"packed/" + std::to_string(ws->threads()), ws->threads(),
                       [&, ws] { plucker::crba_batch_packed(b.model, *ws, b.Q, o.Mp); }});
  if (y.peer && task && y.tasks.count(*task))  // task: none for the derivatives
    modes.push_back({"mujoco", 1, [&, task = *task] {
                       clean_simd_state();
                       for (int i = 0; i < b.n; ++i) y.peer->run(task, i);
                     }});
  return modes;
}

/// One row: printed, and a record of batch.json. pin_mj_ns: Pinocchio's ns in these rounds by
/// the MuJoCo yardstick (NaN without MuJoCo).
void record(JsonArray& js, const std::string& model, const std::string& alg, const BatchMode& mode,
            const BatchTiming& t, double pinocchio_ns, double pin_mj_ns) {
  const double per_core = 1e9 / t.cpu_ns, pin_rate = 1e9 / pinocchio_ns;  // NaN: no Pinocchio figure
  const double x_mj = pin_mj_ns / t.cpu_ns;
  std::printf("%-14s %-5s %-9s %10.1f %10.1f %14.0f %12.0f %12.2f %12.2f\n", model.c_str(), alg.c_str(),
              mode.name.c_str(), t.wall_ns, t.cpu_ns, per_core, pin_rate, per_core / pin_rate, x_mj);
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "  {\"model\": \"%s\", \"algorithm\": \"%s\", \"mode\": \"%s\", \"threads\": %d, "
                "\"wall_ns_per_state\": %.2f, \"cpu_ns_per_state\": %.2f, \"states_per_s\": %.0f, "
                "\"states_per_s_per_core\": %.0f, \"pinocchio_states_per_s\": %s, "
                "\"x_pinocchio_mujoco_scaled\": %s}",
                model.c_str(), alg.c_str(), mode.name.c_str(), mode.threads, t.wall_ns, t.cpu_ns, 1e9 / t.wall_ns,
                per_core, std::isfinite(pin_rate) ? std::to_string(std::lround(pin_rate)).c_str() : "null",
                std::isfinite(x_mj) ? std::to_string(x_mj).c_str() : "null");
  js.add(buf);
}

void print_header(const Options& opt) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "Batched throughput, pool of %d states per call; ns per state (wall / process CPU), states per "
      "second per core (= per CPU-second); load average at start %s; %u hardware threads; modes of a "
      "row group timed in %d interleaved rounds, one-thread modes pinned to one CPU; x pinocchio: "
      "against the issue's figure; x pin (mj): against MuJoCo's time in the same rounds / the "
      "issue's MuJoCo/Pinocchio ratio\n\n",
      kPoolSize, loadavg().c_str(), hw, opt.reps);
  std::printf("%-14s %-5s %-9s %10s %10s %14s %12s %12s %12s\n", "model", "alg", "mode", "wall ns", "cpu ns",
              "states/s/core", "pinocchio/s", "x pinocchio", "x pin (mj)");
}

/// Every algorithm of one headline model: its modes timed in interleaved rounds, then recorded.
void run_model(const Options& opt, const Spec& spec, const TempDir& tmp, JsonArray& js,
               std::vector<std::string>& notes) {
  Bundle b;
  b.name = spec.name;
  b.model = load_model(spec);
  make_pool(b, kPoolSize);
  const int nv = b.model.nv();
  BatchOutputs o{MatX(nv, b.n), MatX(nv, nv * b.n), MatX(), MatX(nv, nv * b.n), MatX(nv, nv * b.n), MatX(nv, nv * b.n)};
  const Ref3 pin = kPinocchioNs.at(b.name);
  MujocoYardstick mujoco;
  attach_mujoco(mujoco, b, spec, tmp, notes);
  // Made unpinned, so that the two-thread workspaces' workers may run on either CPU.
  plucker::BatchWorkspace ws1(b.model, 1), ws2(b.model, 2);
  o.Mp.resize(ws1.jsim_pattern().nnz(), b.n);
  for (const std::string a : {"rnea", "crba", "aba", "rnea_derivatives", "aba_derivatives"}) {
    // The derivatives have no MuJoCo yardstick here (--derivatives times mjd_transitionFD), and
    // Pinocchio's figures are its clang build's (issue #23) where it gives them.
    const bool derivatives = a == "rnea_derivatives" || a == "aba_derivatives";
    const Task task = a == "rnea" ? Task::InverseDynamics : a == "crba" ? Task::MassMatrix : Task::ForwardDynamics;
    const std::vector<BatchMode> modes = batch_modes(a, b, ws1, ws2, o, mujoco, derivatives ? nullptr : &task);
    const std::vector<BatchTiming> t = time_interleaved(opt, b.n, modes);
    double pin_mj_ns = std::nan("");
    if (modes.back().name == "mujoco") pin_mj_ns = t.back().cpu_ns / ref_of(kMujocoOverPinocchio.at(b.name), a);
    const double pin_ns = derivatives ? pinocchio_clang_derivative_ns(b.name, a) : ref_of(pin, a);
    for (std::size_t k = 0; k < modes.size(); ++k) record(js, b.name, a, modes[k], t[k], pin_ns, pin_mj_ns);
  }
}

}  // namespace

int run_batch(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> notes;
  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  JsonArray js(output_path(opt.out, "batch.json"));
  TempDir tmp;
  print_header(opt);
  for (const Spec& spec : model_specs(notes)) {
    if (std::find(kHeadline.begin(), kHeadline.end(), spec.name) == kHeadline.end()) continue;
    if (!std::regex_search(spec.name, filter)) continue;
    run_model(opt, spec, tmp, js, notes);
  }
  js.close();
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  std::printf("\nplucker_bench --batch: %.0f s; wrote %s/batch.json\n", seconds_since(t0),
              display_dir(opt.out).c_str());
  return 0;
}

}  // namespace plucker_bench
