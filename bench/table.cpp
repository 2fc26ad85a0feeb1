// plucker_bench (default mode): robot models x algorithms, plucker and the peers (MuJoCo,
// KDL, DART when compiled in), one table; <out>/results.json, agreement.txt, meta.json.
// A peer is timed on a model only where its results agree with plucker's (compare_peer).
#include <cmath>
#include <iostream>
#include <regex>
#include <sstream>

#include "common.hpp"

namespace plucker_bench {
namespace {

/// What the table's run gathers, step by step.
struct TableRun {
  TempDir tmp;  // the stripped URDF copies the peers load
  std::vector<std::string> notes, agreement;
  std::vector<std::unique_ptr<Bundle>> bundles;
  std::map<std::string, Key> keys;  // benchmark name -> (model, algorithm, library)
  std::vector<std::string> libraries = {"plucker"};
  std::vector<std::pair<std::string, PeerFactory>> factories;
  std::map<std::string, std::map<std::string, std::string>> methods;  // library -> algorithm -> method
};

struct Row {
  std::string model, algorithm;
  std::map<std::string, double> ns;  // library -> median ns
};

double get(const Row& r, const std::string& lib) {
  auto it = r.ns.find(lib);
  return it == r.ns.end() ? std::nan("") : it->second;
}

// ---------------------------------------------------------------------------
// Preparation: models, pools, peers and their agreement
// ---------------------------------------------------------------------------
void add_libraries(TableRun& run, const Options& opt) {
  if (opt.peers) {
#ifdef PLUCKER_HAVE_MUJOCO
    run.factories.emplace_back("mujoco", &make_mujoco_peer);
#endif
#ifdef PLUCKER_HAVE_KDL
    run.factories.emplace_back("kdl", &make_kdl_peer);
#endif
#ifdef PLUCKER_HAVE_DART
    run.factories.emplace_back("dart", &make_dart_peer);
#endif
  }
  for (auto& f : run.factories) run.libraries.push_back(f.first);
  run.methods["plucker"] = {
      {"rnea", "plucker::rnea"}, {"crba", "plucker::crba (full symmetric M)"}, {"aba", "plucker::aba"}};
}

/// Every algorithm must run on the first states (forward dynamics may be singular).
void try_algorithms(Bundle& b, std::vector<std::string>& notes) {
  for (const Algorithm& a : kAlgorithms) {
    if (a.fd && !b.singular.empty()) {
      b.skipped[a.name] = b.singular;
      continue;
    }
    if (std::string(a.name).find("derivatives") != std::string::npos && b.model.nv() > 256) {
      b.skipped[a.name] = "nv > 256: the nv x nv products of a derivative call take seconds per pool";
      continue;
    }
    try {
      for (int i = 0; i < std::min(b.n, 10); ++i) a.run(b, i);
    } catch (const plucker::SingularError& e) {  // forward dynamics undefined: no fd method is timed
      b.skipped[a.name] = one_line(e.what());
      if (a.fd && b.singular.empty()) b.singular = one_line(e.what());
    } catch (const std::exception& e) {  // this method refuses the model (a topology, no convergence)
      b.skipped[a.name] = one_line(e.what());
    }
  }
  for (const auto& [alg, why] : b.skipped) notes.push_back(b.name + " " + alg + ": not timed (" + why + ")");
}

/// The model with its pool; `stripped` receives the peers' URDF copy. nullptr (and a note)
/// when plucker cannot load it.
std::unique_ptr<Bundle> prepare_bundle(TableRun& run, const Spec& spec, std::string& stripped) {
  auto b = std::make_unique<Bundle>();
  b->name = spec.name;
  b->source = spec.source;
  try {
    b->model = load_model(spec);
    if (!spec.urdf.empty()) stripped = stripped_copy(spec.urdf, run.tmp);
  } catch (const std::exception& e) {
    run.notes.push_back(spec.name + ": not loaded by plucker (" + one_line(e.what()) + "), skipped");
    return nullptr;
  }
  make_pool(*b, kPoolSize);
  if (auto it = kSingular.find(b->name); it != kSingular.end()) b->singular = it->second;
  try_algorithms(*b, run.notes);
  return b;
}

bool id_agrees(const PeerComparison& cmp) {
  for (const Check& c : cmp.checks)
    if (c.task == Task::InverseDynamics) return c.ok;
  return false;
}

/// "agreement <lib> <model>: max rel err ... OK|PARTIAL|DISAGREE [per task; tol; states] ..."
std::string agreement_line(const std::string& head, const std::string& lib, const std::string& model,
                           const PeerComparison& cmp, int nstates) {
  double worst = 0.0;
  bool all_ok = true;
  const bool id_ok = id_agrees(cmp);
  std::ostringstream detail;
  for (const Check& c : cmp.checks) {
    worst = std::max(worst, c.err);
    all_ok = all_ok && c.ok;
    detail << (detail.tellp() > 0 ? ", " : "") << task_name(c.task) << " " << fmt_e(c.err);
    if (c.task == Task::ForwardDynamics) detail << " (backward err; qdd rel diff " << fmt_e(c.qdd_err) << ")";
    if (!c.ok) detail << " FAIL";
  }
  std::ostringstream line;
  line << head << "max rel err " << fmt_e(worst) << " "
       << (all_ok  ? "OK"
           : id_ok ? "PARTIAL"
                   : "DISAGREE")
       << " [" << detail.str() << "; tol " << fmt_e(tolerance(lib)) << "; " << nstates << " states]";
  if (!cmp.unsupported.empty()) {
    line << " not timed: ";
    for (std::size_t k = 0; k < cmp.unsupported.size(); ++k) line << (k ? "; " : "") << cmp.unsupported[k];
  }
  if (!id_ok) line << " -> inverse dynamics disagrees: " << lib << " not timed on " << model;
  return line.str();
}

/// Peers load the same URDF (so only URDF models): each one made, compared with plucker, and
/// kept for timing when its inverse dynamics agrees (with the tasks that agree).
void attach_peers(TableRun& run, Bundle& b, const Spec& spec, const std::string& stripped) {
  const ModelDesc desc = describe(b, stripped, spec.floating);
  const StatePool pool = pool_of(b);
  const int nstates = b.model.nv() > 200 ? 3 : 10;
  for (auto& [lib, factory] : run.factories) {
    std::string why;
    std::unique_ptr<Peer> peer = create_peer(factory, desc, why);
    const std::string head = "agreement " + lib + " " + b.name + ": ";
    if (!peer) {
      run.agreement.push_back(head + "not compared, not timed (" + one_line(why) + ")");
      continue;
    }
    peer->set_pool(pool);
    const PeerComparison cmp = compare_peer(b, *peer, nstates, /*stop_if_id_disagrees=*/true);
    for (const auto& [task, method] : cmp.methods) run.methods[lib][task_algorithm(task)] = method;
    run.agreement.push_back(agreement_line(head, lib, b.name, cmp, nstates));
    if (!id_agrees(cmp)) continue;
    PeerEntry entry{std::move(peer), {}};
    for (const Check& c : cmp.checks)
      if (c.ok) entry.timed.insert(c.task);
    b.peers.push_back(std::move(entry));
  }
}

void prepare_models(TableRun& run, const Options& opt) {
  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  std::cerr << "plucker_bench: preparing models (" << kPoolSize << " random states each) and checking peers\n";
  for (const Spec& spec : model_specs(run.notes)) {
    if (!std::regex_search(spec.name, filter)) continue;
    std::string stripped;
    std::unique_ptr<Bundle> b = prepare_bundle(run, spec, stripped);
    if (!b) continue;
    if (!spec.urdf.empty()) attach_peers(run, *b, spec, stripped);
    run.bundles.push_back(std::move(b));
  }
  for (const std::string& l : run.agreement) std::cout << l << "\n";
  for (const std::string& n : run.notes) std::cout << "note: " << n << "\n";
  std::cout << std::flush;
}

/// Per model, per algorithm, plucker then the peers (their repetitions interleaved in time).
void register_table(TableRun& run, const Options& opt) {
  for (auto& bp : run.bundles) {
    Bundle* b = bp.get();
    for (const Algorithm& a : kAlgorithms) {
      if (!b->skipped.count(a.name)) {
        const std::string name = "model/" + b->name + "/" + a.name + "/plucker";
        run.keys[name] = {b->name, a.name, "plucker"};
        auto fn = a.run;
        register_pool_bench(name, opt, b->n, /*clean_simd=*/true, [b, fn](int i) { fn(*b, i); });
      }
      if (!a.peer) continue;
      const Task task = *a.peer;
      for (PeerEntry& pe : b->peers) {
        if (!pe.timed.count(task)) continue;
        Peer* peer = pe.peer.get();
        const std::string name = "model/" + b->name + "/" + a.name + "/" + peer->library();
        run.keys[name] = {b->name, a.name, peer->library()};
        register_pool_bench(name, opt, b->n, /*clean_simd=*/true, [peer, task](int i) { peer->run(task, i); });
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Results: rows, the printed table and summaries
// ---------------------------------------------------------------------------
std::vector<Row> collect_rows(const TableRun& run, const Collector& collector) {
  std::vector<Row> rows;
  for (auto& bp : run.bundles)
    for (const Algorithm& a : kAlgorithms) {
      Row r{bp->name, a.name, {}};
      bool any = false;
      for (const std::string& lib : run.libraries) {
        const double t = collector.median("model/" + bp->name + "/" + a.name + "/" + lib);
        if (std::isfinite(t)) r.ns[lib] = t, any = true;
      }
      if (any) rows.push_back(r);
    }
  return rows;
}

/// Header and cells of the printed table: each library's ns and ratio to plucker, and Pinocchio's.
std::vector<std::vector<std::string>> table_cells(const std::vector<Row>& rows,
                                                  const std::vector<std::string>& libraries) {
  std::vector<std::string> header = {"model", "algorithm", "plucker ns"};
  for (std::size_t k = 1; k < libraries.size(); ++k) {
    header.push_back(libraries[k] + " ns");
    header.push_back(libraries[k] + "/pl");
  }
  header.push_back("pinocchio ns");
  header.push_back("pin/pl");
  std::vector<std::vector<std::string>> cells = {header};
  for (const Row& r : rows) {
    const double ours = get(r, "plucker");
    std::vector<std::string> c = {r.model, r.algorithm, fmt_ns(ours)};
    for (std::size_t k = 1; k < libraries.size(); ++k) {
      const double t = get(r, libraries[k]);
      c.push_back(fmt_ns(t));
      c.push_back(fmt_ratio(t / ours));
    }
    double pin = std::nan("");
    if (auto it = kPinocchioNs.find(r.model); it != kPinocchioNs.end()) pin = ref_of(it->second, r.algorithm);
    c.push_back(fmt_ns(pin));
    c.push_back(fmt_ratio(pin / ours));
    cells.push_back(c);
  }
  return cells;
}

/// Columns aligned (model and algorithm left, figures right), a rule under the header, a
/// blank line between models.
std::string format_table(const std::vector<Row>& rows, const std::vector<std::string>& libraries) {
  const std::vector<std::vector<std::string>> cells = table_cells(rows, libraries);
  std::vector<std::size_t> w(cells[0].size());
  for (std::size_t k = 0; k < w.size(); ++k)
    for (const auto& c : cells) w[k] = std::max(w[k], c[k].size());
  std::ostringstream table;
  auto line = [&](const std::vector<std::string>& c) {
    for (std::size_t k = 0; k < c.size(); ++k) {
      if (k < 2)
        table << (k ? "  " : "") << c[k] << std::string(w[k] - c[k].size(), ' ');
      else
        table << "  " << std::string(w[k] - c[k].size(), ' ') << c[k];
    }
    table << "\n";
  };
  line(cells[0]);
  std::size_t total = 0;
  for (std::size_t k = 0; k < w.size(); ++k) total += w[k] + (k ? 2 : 0);
  table << std::string(total, '-') << "\n";
  std::string last;
  for (std::size_t k = 1; k < cells.size(); ++k) {
    if (!last.empty() && cells[k][0] != last) table << "\n";
    last = cells[k][0];
    line(cells[k]);
  }
  return table.str();
}

/// One line per headline model and task: same-run mujoco/plucker against its goal.
std::string format_targets(const std::vector<Row>& rows) {
  std::ostringstream targets;
  for (const std::string& m : kHeadline) {
    const Ref3& ref = kMujocoOverPinocchio.at(m);
    for (const char* alg : {"rnea", "crba", "aba"}) {
      const Row* row = nullptr;
      for (const Row& r : rows)
        if (r.model == m && r.algorithm == alg) row = &r;
      const double goal = kTargetFactor * ref_of(ref, alg);
      const char* task = std::string(alg) == "rnea" ? "ID" : std::string(alg) == "crba" ? "M " : "FD";
      char buf[256];
      const double ours = row ? get(*row, "plucker") : std::nan("");
      const double mj = row ? get(*row, "mujoco") : std::nan("");
      if (!std::isfinite(ours) || !std::isfinite(mj)) {
        std::snprintf(buf, sizeof(buf), "target %-14s %s (%s): no same-run MuJoCo figure  N/A\n", m.c_str(), task, alg);
      } else {
        const double ratio = mj / ours;
        std::snprintf(buf, sizeof(buf), "target %-14s %s (%s): mujoco/plucker %.2f, goal >= %.2f (1.25 x %.2f)  %s\n",
                      m.c_str(), task, alg, ratio, goal, ref_of(ref, alg), ratio >= goal ? "PASS" : "MISS");
      }
      targets << buf;
    }
  }
  return targets.str();
}

/// Forward dynamics: what `auto` picked vs the fastest single method (fd_* rows) per model.
std::string format_fd_summary(const TableRun& run, const std::vector<Row>& rows) {
  std::ostringstream fdsum;
  for (auto& bp : run.bundles) {
    std::string best;
    double best_ns = std::nan(""), auto_ns = std::nan(""), aba_ns = std::nan(""), fd_aba_ns = std::nan("");
    for (const Row& r : rows) {
      if (r.model != bp->name) continue;
      const double t = get(r, "plucker");
      if (r.algorithm == "aba") aba_ns = t;
      if (r.algorithm.rfind("fd_", 0) != 0) continue;
      if (r.algorithm == "fd_aba") fd_aba_ns = t;
      if (r.algorithm == "fd_auto")
        auto_ns = t;
      else if (std::isfinite(t) && !(t >= best_ns))
        best_ns = t, best = r.algorithm.substr(3);
    }
    if (!std::isfinite(auto_ns) || !std::isfinite(best_ns)) continue;
    const auto choice = plucker::forward_dynamics_choice(bp->model);
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "fd auto %-22s picks %-10s %9s ns; fastest single method %-17s %9s ns; auto/best %s "
                  "(noise: fd_aba/aba, the same code, %s)\n",
                  bp->name.c_str(), std::string(plucker::to_string(choice.method)).c_str(), fmt_ns(auto_ns).c_str(),
                  best.c_str(), fmt_ns(best_ns).c_str(), fmt_ratio(auto_ns / best_ns).c_str(),
                  fmt_ratio(fd_aba_ns / aba_ns).c_str());
    fdsum << buf;
  }
  return fdsum.str();
}

void print_results(const TableRun& run, const Options& opt, const std::vector<Row>& rows, const std::string& elapsed) {
  std::cout << "\nMedian CPU ns per call (" << opt.reps << " repetitions, pool of " << kPoolSize
            << " random states); <lib>/pl = that library's time / plucker's (> 1: plucker faster).\n"
            << "Rows rnea / crba / aba: peers time their inverse dynamics / mass matrix / forward dynamics.\n"
            << "pinocchio ns: reference figures of Pinocchio 3.7 on the same kind of machine (not measured here).\n\n"
            << format_table(rows, run.libraries) << "\n"
            << "MuJoCo targets (same-run mujoco/plucker >= 1.25 x mujoco/pinocchio):\n"
            << format_targets(rows)
            << "\nForward dynamics (forward_dynamics.hpp): the method `auto` runs vs the fastest fd_* row:\n"
            << format_fd_summary(run, rows);
  for (const std::string& n : run.notes)
    if (n.find(": error: ") != std::string::npos) std::cout << "note: " << n << "\n";
  std::cout << "\nplucker_bench: " << run.keys.size() << " benchmarks in " << elapsed << " s\n";
}

// ---------------------------------------------------------------------------
// Files: results.json, agreement.txt, meta.json
// ---------------------------------------------------------------------------
void write_results(const TableRun& run, const Options& opt, const std::vector<Row>& rows) {
  JsonArray js(output_path(opt.out, "results.json"));
  for (const Row& r : rows)
    for (const std::string& lib : run.libraries) {
      const double t = get(r, lib);
      if (!std::isfinite(t)) continue;
      char b[64];
      std::snprintf(b, sizeof(b), "%.1f", t);
      js.add("  {\"model\": \"" + json_escape(r.model) + "\", \"algorithm\": \"" + json_escape(r.algorithm) +
             "\", \"library\": \"" + lib + "\", \"ns\": " + b + "}");
    }
}

void write_agreement(const TableRun& run, const Options& opt) {
  std::ofstream ag(output_path(opt.out, "agreement.txt"));
  for (const std::string& l : run.agreement) ag << l << "\n";
  for (const std::string& n : run.notes) ag << "note: " << n << "\n";
}

void write_meta(const TableRun& run, const Options& opt, const Collector& collector, const std::string& load_start,
                const std::string& elapsed) {
  std::ofstream mt(output_path(opt.out, "meta.json"));
  mt << "{\n  \"date\": \"" << now_utc() << "\",\n  \"compiler\": \"" << json_escape(compiler_string())
     << "\",\n  \"flags\": \"" << json_escape(build_flags()) << "\",\n  \"repetitions\": " << opt.reps
     << ",\n  \"timer\": \"process CPU time\",\n  \"min_time_s\": " << opt.min_time
     << ",\n  \"pool_size\": " << kPoolSize << ",\n  \"elapsed_s\": " << elapsed << ",\n  \"loadavg_start\": \""
     << load_start << "\",\n  \"loadavg_end\": \"" << loadavg() << "\",\n  \"num_cpus\": " << collector.num_cpus_
     << ",\n  \"mhz\": " << collector.mhz_ << ",\n  \"cpu_scaling\": " << (collector.scaling_ ? "true" : "false")
     << ",\n  \"libraries\": [";
  for (std::size_t k = 0; k < run.libraries.size(); ++k) mt << (k ? ", " : "") << "\"" << run.libraries[k] << "\"";
  mt << "],\n  \"methods\": {";
  bool f1 = true;
  for (const auto& [lib, m] : run.methods) {
    mt << (f1 ? "\n" : ",\n") << "    \"" << lib << "\": {";
    bool f2 = true;
    for (const auto& [alg, how] : m) {
      mt << (f2 ? "" : ", ") << "\"" << alg << "\": \"" << json_escape(how) << "\"";
      f2 = false;
    }
    mt << "}";
    f1 = false;
  }
  mt << "\n  },\n  \"models\": [";
  for (std::size_t k = 0; k < run.bundles.size(); ++k) {
    const Bundle& b = *run.bundles[k];
    mt << (k ? ",\n" : "\n") << "    {\"model\": \"" << b.name << "\", \"source\": \"" << json_escape(b.source)
       << "\", \"nbodies\": " << b.model.nbodies() - 1 << ", \"nq\": " << b.model.nq() << ", \"nv\": " << b.model.nv()
       << "}";
  }
  mt << "\n  ]\n}\n";
}

}  // namespace

int run_models(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string load_start = loadavg();
  TableRun run;
  add_libraries(run, opt);
  prepare_models(run, opt);
  register_table(run, opt);

  std::cerr << "plucker_bench: prepared in " << static_cast<int>(seconds_since(t0)) << " s; running " << run.keys.size()
            << " benchmarks (" << opt.reps << " repetitions x " << opt.min_time << " s)\n";
  Collector collector(run.keys);
  benchmark::RunSpecifiedBenchmarks(&collector);
  for (const auto& [name, err] : collector.errors()) run.notes.push_back(name + ": error: " + err);

  const std::vector<Row> rows = collect_rows(run, collector);
  char elapsed[64];
  std::snprintf(elapsed, sizeof(elapsed), "%.0f", seconds_since(t0));
  print_results(run, opt, rows, elapsed);
  write_results(run, opt, rows);
  write_agreement(run, opt);
  write_meta(run, opt, collector, load_start, elapsed);
  std::cout << "plucker_bench: wrote " << display_dir(opt.out) << "/{results.json,agreement.txt,meta.json}\n";
  return 0;
}

}  // namespace plucker_bench
