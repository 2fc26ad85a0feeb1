// plucker_bench --derivatives: plucker's analytical derivatives (rnea_derivatives,
// aba_derivatives, and aba as the unit) beside MuJoCo's finite-difference transition derivatives
// mjd_transitionFD (forward and centered, eps 1e-6) and mj_forward, on the headline models (those
// whose URDF is present), the same pool of states, in interleaved rounds pinned to one CPU;
// medians. mjd_transitionFD is not the same function as aba_derivatives: it differentiates one
// mj_step (the Euler integrator included), 2 nv + na columns (na = 0 here), each a step (the
// velocity columns skip the position stage).
// Agreement: dqdd/dq and dqdd/dv recovered from the velocity rows of MuJoCo's A and mapped to
// plucker's coordinates (peers.hpp, TransitionFd), against aba_derivatives. Results: a table on
// stdout and <out>/derivatives_peer.json (docs/benchmarks.md, "Derivatives against MuJoCo's
// mjd_transitionFD", written by bench/make_report.py).
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <limits>
#include <regex>

#include "common.hpp"

namespace plucker_bench {
namespace {

constexpr double kEps = 1e-6;    // mjd_transitionFD's finite-difference step
constexpr int kCheckStates = 5;  // states of the pool in the agreement check
// Agreement: a relative difference at most kAgreeTol + kFloorFactor x the finite differences'
// rounding floor. The floor: MuJoCo's qdd carries a rounding error of about u max|qdd| (u the unit
// roundoff), which the difference quotient divides by eps (dv' = h dqdd, and A's row is divided by
// h again): u max|qdd| / eps, relative to max|plucker's matrix|. Where tau drives tiny links to
// |qdd| ~ 1e6 (talos_full's fingers), that is ~1e-5 and dominates; a wrong coordinate map gives
// 1e-3 or more.
constexpr double kAgreeTol = 1e-4;
constexpr double kFloorFactor = 20.0;

struct Mode {
  std::string name;
  bool mujoco;
  std::function<void(int)> call;  // state i of the pool
};

/// Median ns per call of each mode: `reps` rounds, each timing every mode in turn for about
/// min_time (at least 3 calls), the state index going on round to round. The figure is the
/// thread's CPU time per call (as the table's: not inflated while other processes share the CPU).
std::vector<double> time_interleaved(const std::vector<Mode>& modes, int n, int reps, double min_time) {
  std::vector<std::vector<double>> ns(modes.size());
  auto thread_cpu_s = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  std::vector<int> next(modes.size(), 0);
  for (const Mode& m : modes) m.call(0);  // warm
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < modes.size(); ++k) {
      if (modes[k].mujoco) clean_simd_state();
      int i = next[k];
      long calls = 0;
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = thread_cpu_s();
      double s = 0.0;
      do {
        modes[k].call(i);
        if (++i == n) i = 0;
        ++calls;
        s = seconds_since(t0);
      } while (s < min_time || calls < 3);
      next[k] = i;
      ns[k].push_back(1e9 * (thread_cpu_s() - c0) / static_cast<double>(calls));
    }
  std::vector<double> out;
  for (auto& t : ns) out.push_back(median(t));
  return out;
}

double rel_diff(const MatX& theirs, const MatX& ours) {
  const double scale = std::max(ours.cwiseAbs().maxCoeff(), 1e-300);
  return (theirs - ours).cwiseAbs().maxCoeff() / scale;
}

struct Agreement {
  bool compared = false;
  std::string why;                                        // when not compared
  double fwd_dq = 0, fwd_dv = 0, ctr_dq = 0, ctr_dv = 0;  // max over the checked states
  double floor_dq = 0, floor_dv = 0;                      // rounding floor (relative), max over states
  bool ok() const {
    const double tq = kAgreeTol + kFloorFactor * floor_dq, tv = kAgreeTol + kFloorFactor * floor_dv;
    return compared && std::isfinite(fwd_dq + fwd_dv + ctr_dq + ctr_dv) && std::max(fwd_dq, ctr_dq) <= tq &&
           std::max(fwd_dv, ctr_dv) <= tv;
  }
};

struct Row {
  std::string model;
  int nv = 0, columns = 0, steps_forward = 0, steps_centered = 0;  // mj_step calls per mjd call
  bool floating = false;
  double h = 0.0;
  std::vector<std::string> names;
  std::vector<double> ns;  // per mode
  Agreement agree;
  std::string mujoco_why;  // MuJoCo not timed: why
};

std::string fmt_rel(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1e", x);
  return b;
}

#ifdef PLUCKER_HAVE_MUJOCO
std::unique_ptr<TransitionFd> create_transition_fd(const ModelDesc& desc, std::string& why) {
  std::unique_ptr<TransitionFd> fd;
  std::string printed;
  {
    Quiet quiet;
    try {
      fd = make_mujoco_transition_fd(desc, kEps, why);
    } catch (const std::exception& e) {
      why = std::string("exception: ") + e.what();
    }
    printed = quiet.release();
  }
  if (!fd && why.empty()) why = printed;
  return fd;
}

Agreement check_agreement(Bundle& b, TransitionFd& fd) {
  Agreement g;
  g.compared = true;
  const int nv = b.model.nv();
  MatX dq(nv, nv), dv(nv, nv);
  for (int i = 0; i < std::min(kCheckStates, b.n); ++i) {
    plucker::aba_derivatives(b.model, *b.data, b.q(i), b.v(i), b.tau(i));
    const double floor_abs = std::numeric_limits<double>::epsilon() / 2 * b.data->qdd.cwiseAbs().maxCoeff() / kEps;
    g.floor_dq = std::max(g.floor_dq, floor_abs / std::max(b.data->dqdd_dq.cwiseAbs().maxCoeff(), 1e-300));
    g.floor_dv = std::max(g.floor_dv, floor_abs / std::max(b.data->dqdd_dv.cwiseAbs().maxCoeff(), 1e-300));
    for (const bool centered : {false, true}) {
      fd.qdd_derivatives(i, centered, dq.data(), dv.data());
      double& eq = centered ? g.ctr_dq : g.fwd_dq;
      double& ev = centered ? g.ctr_dv : g.fwd_dv;
      eq = std::max(eq, rel_diff(dq, b.data->dqdd_dq));
      ev = std::max(ev, rel_diff(dv, b.data->dqdd_dv));
    }
  }
  return g;
}
#endif

Row run_model(const Options& opt, const Spec& spec, const TempDir& tmp) {
  Row row;
  Bundle b;
  b.name = spec.name;
  b.model = load_model(spec);
  make_pool(b, kPoolSize);
  row.model = b.name;
  row.nv = b.model.nv();
  row.floating = spec.floating;
  plucker::Model& model = b.model;
  plucker::Data& data = *b.data;
  std::vector<Mode> modes = {
      {"aba", false,
       [&](int i) { benchmark::DoNotOptimize(plucker::aba(model, data, b.q(i), b.v(i), b.tau(i)).data()); }},
      {"rnea_derivatives", false, [&](int i) { plucker::rnea_derivatives(model, data, b.q(i), b.v(i), b.a(i)); }},
      {"aba_derivatives", false, [&](int i) { plucker::aba_derivatives(model, data, b.q(i), b.v(i), b.tau(i)); }},
  };
  StatePool pool = pool_of(b);  // the adapter keeps a pointer: alive until the end
#ifdef PLUCKER_HAVE_MUJOCO
  std::unique_ptr<TransitionFd> fd;
  if (opt.peers) {
    const ModelDesc desc = describe(b, stripped_copy(spec.urdf, tmp), spec.floating);
    fd = create_transition_fd(desc, row.mujoco_why);
  } else {
    row.mujoco_why = "--no_peers";
  }
  if (fd) {
    fd->set_pool(pool);
    row.columns = fd->columns();
    row.h = fd->timestep();
    row.agree = check_agreement(b, *fd);
    row.steps_forward = fd->steps_per_call(0, false);
    row.steps_centered = fd->steps_per_call(0, true);
    TransitionFd* f = fd.get();
    modes.push_back({"mj_forward", true, [f](int i) { f->forward(i); }});
    modes.push_back({"mjd_transitionFD_forward", true, [f](int i) { f->transition(i, false); }});
    modes.push_back({"mjd_transitionFD_centered", true, [f](int i) { f->transition(i, true); }});
  }
  if (!fd) row.agree.why = "MuJoCo not loaded: " + one_line(row.mujoco_why);
#else
  (void)tmp;
  row.mujoco_why = "not built (libmujoco-dev absent at configure time)";
  row.agree.why = row.mujoco_why;
#endif
  {
    PinnedToOneCpu pin;
    row.ns = time_interleaved(modes, b.n, std::max(opt.reps, 5), std::max(opt.min_time, 0.05));
  }
  for (const Mode& m : modes) row.names.push_back(m.name);
  return row;
}

double ns_of(const Row& r, const std::string& name) {
  for (std::size_t k = 0; k < r.names.size(); ++k)
    if (r.names[k] == name) return r.ns[k];
  return std::nan("");
}

std::string json_num(double x) {
  if (!std::isfinite(x)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

}  // namespace

int run_derivatives_peer(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> notes;
  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  TempDir tmp;
  std::vector<Row> rows;
  for (const Spec& spec : model_specs(notes)) {
    if (std::find(kHeadline.begin(), kHeadline.end(), spec.name) == kHeadline.end()) continue;
    if (!std::regex_search(spec.name, filter)) continue;
    std::fprintf(stderr, "  %s\n", spec.name.c_str());
    rows.push_back(run_model(opt, spec, tmp));
  }
  for (const std::string& h : kHeadline)
    if (std::regex_search(h, filter) &&
        std::none_of(rows.begin(), rows.end(), [&](const Row& r) { return r.model == h; }))
      notes.push_back(h + ": URDF not found in the shared models, skipped");
  const int reps = std::max(opt.reps, 5);
  std::printf(
      "Derivatives against MuJoCo's mjd_transitionFD: median CPU ns per call over %d interleaved rounds, "
      "pinned to one CPU, pool of %d states; load %s.\n"
      "mjd_transitionFD (eps %g) differentiates ONE mj_step (Euler: v' = v + h qdd, q' = q + h v'): A has\n"
      "2 nv + na columns (na = 0 here), each a step (forward: one perturbed step per column + the nominal\n"
      "one; centered: two per column; velocity columns skip the position stage, mj_stepSkip(mjSTAGE_POS)).\n"
      "It includes the integrator: it is not the same function as\n"
      "aba_derivatives (dqdd/dq, dqdd/dv; and dqdd/dtau = M^-1). stepF/stepC: mj_step calls per mjd call,\n"
      "counted. Units: x aba = ns / plucker aba's ns in the same rounds; fwd/ad = mjdFD fwd / aba_der.\n\n",
      reps, kPoolSize, loadavg().c_str(), kEps);
  std::printf("%-14s %4s %4s %5s %5s %9s %9s %9s %9s %10s %10s %8s %8s %8s %8s %8s\n", "model", "nv", "cols", "stepF",
              "stepC", "aba", "rnea_der", "aba_der", "mj_fwd", "mjdFD fwd", "mjdFD ctr", "fwd/col", "ctr/col",
              "aba_d xa", "fwd xa", "fwd/ad");
  for (const Row& r : rows) {
    const double aba = ns_of(r, "aba"), ad = ns_of(r, "aba_derivatives"), fw = ns_of(r, "mjd_transitionFD_forward"),
                 ct = ns_of(r, "mjd_transitionFD_centered");
    std::printf("%-14s %4d %4d %5d %5d %9.0f %9.0f %9.0f %9.0f %10.0f %10.0f %8.0f %8.0f %8.2f %8.1f %8.1f\n",
                r.model.c_str(), r.nv, r.columns, r.steps_forward, r.steps_centered, aba, ns_of(r, "rnea_derivatives"),
                ad, ns_of(r, "mj_forward"), fw, ct, fw / r.columns, ct / r.columns, ad / aba, fw / aba, fw / ad);
  }
  std::printf(
      "\nAgreement: dqdd/dq and dqdd/dv from the velocity rows of A (dv'/dq = h dqdd/dq, dv'/dv = I + h "
      "dqdd/dv,\nmapped to plucker's coordinates, the free joint included) vs aba_derivatives; max over %d "
      "states of\nmax|difference| / max|plucker|. floor: the finite differences' rounding floor u max|qdd| / eps "
      "/ max|plucker|\n(u = 2^-53: MuJoCo's qdd is computed to about u max|qdd|, the quotient divides that by eps); "
      "agreement:\nforward and centered <= %.0e + %.0f x floor.\n",
      kCheckStates, kAgreeTol, kFloorFactor);
  std::printf("%-14s %9s %11s %11s %11s %11s %11s %11s %6s\n", "model", "h (s)", "fwd dq", "fwd dv", "ctr dq", "ctr dv",
              "floor dq", "floor dv", "agree");
  for (const Row& r : rows) {
    if (!r.agree.compared) {
      std::printf("%-14s not compared: %s\n", r.model.c_str(), r.agree.why.c_str());
      continue;
    }
    const Agreement& g = r.agree;
    std::printf("%-14s %9.4g %11s %11s %11s %11s %11s %11s %6s\n", r.model.c_str(), r.h, fmt_rel(g.fwd_dq).c_str(),
                fmt_rel(g.fwd_dv).c_str(), fmt_rel(g.ctr_dq).c_str(), fmt_rel(g.ctr_dv).c_str(),
                fmt_rel(g.floor_dq).c_str(), fmt_rel(g.floor_dv).c_str(), g.ok() ? "yes" : "NO");
  }
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  const std::string path = output_path(opt.out, "derivatives_peer.json");
  std::ofstream js(path);
  js << "{\n  \"eps\": " << kEps << ", \"reps\": " << reps << ", \"pool\": " << kPoolSize
     << ", \"check_states\": " << kCheckStates << ", \"agree_tolerance\": " << kAgreeTol
     << ", \"floor_factor\": " << kFloorFactor << ", \"compiler\": \"" << json_escape(compiler_string())
     << "\", \"flags\": \"" << json_escape(build_flags()) << "\", \"load\": \"" << json_escape(loadavg())
     << "\", \"date\": \"" << now_utc() << "\",\n  \"notes\": [";
  for (std::size_t k = 0; k < notes.size(); ++k) js << (k ? ", " : "") << "\"" << json_escape(notes[k]) << "\"";
  js << "],\n  \"models\": [\n";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    js << "    {\"model\": \"" << r.model << "\", \"nv\": " << r.nv << ", \"columns\": " << r.columns
       << ", \"steps_forward\": " << r.steps_forward << ", \"steps_centered\": " << r.steps_centered
       << ", \"floating\": " << (r.floating ? "true" : "false") << ", \"timestep\": " << json_num(r.h)
       << ", \"mujoco\": " << (r.mujoco_why.empty() ? "null" : "\"" + json_escape(one_line(r.mujoco_why)) + "\"")
       << ",\n     \"ns\": {";
    for (std::size_t m = 0; m < r.names.size(); ++m)
      js << (m ? ", " : "") << "\"" << r.names[m] << "\": " << json_num(r.ns[m]);
    const Agreement& g = r.agree;
    js << "},\n     \"agreement\": {\"compared\": " << (g.compared ? "true" : "false");
    if (g.compared)
      js << ", \"forward_dq\": " << json_num(g.fwd_dq) << ", \"forward_dv\": " << json_num(g.fwd_dv)
         << ", \"centered_dq\": " << json_num(g.ctr_dq) << ", \"centered_dv\": " << json_num(g.ctr_dv)
         << ", \"floor_dq\": " << json_num(g.floor_dq) << ", \"floor_dv\": " << json_num(g.floor_dv)
         << ", \"agree\": " << (g.ok() ? "true" : "false");
    else
      js << ", \"why\": \"" << json_escape(g.why) << "\"";
    js << "}}" << (k + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  js.close();
  std::printf("\nplucker_bench --derivatives: %.0f s; wrote %s\n", seconds_since(t0), display_dir(path).c_str());
  return 0;
}

}  // namespace plucker_bench
