// The shared infrastructure of plucker_bench (common.hpp).
#include "common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

#include "fd_models.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"

namespace plucker_bench {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------
std::string default_out_dir() {
  if (const char* e = std::getenv("PLUCKER_BENCH_OUT"); e && *e) return e;
#ifdef PLUCKER_SOURCE_DIR
  return std::string(PLUCKER_SOURCE_DIR) + "/build/bench";
#else
  return "build/bench";
#endif
}

std::string shared_dir() {
  if (const char* e = std::getenv("PLUCKER_SHARED_DIR"); e && *e) return e;
#ifdef PLUCKER_SHARED_DIR
  return PLUCKER_SHARED_DIR;
#else
  return "";
#endif
}

// ---------------------------------------------------------------------------
// Formatting, files and JSON
// ---------------------------------------------------------------------------
std::string one_line(std::string s, std::size_t max) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }), s.end());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

std::string fmt_e(double x) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1e", x);
  return b;
}

std::string fmt_ns(double ns) {
  if (!std::isfinite(ns)) return "-";
  char b[32];
  if (ns < 1e7) {
    std::snprintf(b, sizeof(b), "%.0f", ns);
  } else {
    const int e = static_cast<int>(std::floor(std::log10(ns)));
    std::snprintf(b, sizeof(b), "%.2fe%d", ns / std::pow(10.0, e), e);
  }
  return b;
}

std::string fmt_ratio(double r) {
  if (!std::isfinite(r)) return "-";
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", r);
  return b;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      o += ' ';
    else
      o += c;
  }
  return o;
}

std::string compiler_string() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string build_flags() {
  std::string f;
#ifdef __OPTIMIZE__
  f += "optimized";
#else
  f += "not optimized";
#endif
#ifdef PLUCKER_BENCH_FLAGS
  f = PLUCKER_BENCH_FLAGS;
#endif
#ifdef __AVX512F__
  f += " [AVX-512]";
#elif defined(__AVX2__)
  f += " [AVX2]";
#elif defined(__AVX__)
  f += " [AVX]";
#else
  f += " [no AVX: not built with -march=native?]";
#endif
  return f;
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(f >> a >> b >> c)) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f %.2f %.2f", a, b, c);
  return buf;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char b[64];
  std::strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return b;
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string display_dir(const std::string& dir) { return fs::absolute(dir).lexically_normal().string(); }

std::string output_path(const std::string& dir, const std::string& file) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir + "/" + file;
}

Quiet::Quiet() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  std::cerr.flush();
  file_ = std::tmpfile();
  if (!file_) return;
  saved_out_ = dup(1);
  saved_err_ = dup(2);
  dup2(fileno(file_), 1);
  dup2(fileno(file_), 2);
}

std::string Quiet::release() {
  if (!file_) return captured_;
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  std::cerr.flush();
  dup2(saved_out_, 1);
  dup2(saved_err_, 2);
  close(saved_out_);
  close(saved_err_);
  std::rewind(file_);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file_)) > 0) captured_.append(buf, n);
  std::fclose(file_);
  file_ = nullptr;
  return captured_;
}

// ---------------------------------------------------------------------------
// URDF copies without <visual>/<collision>
// ---------------------------------------------------------------------------
std::string strip_geometry(std::string xml) {
  for (const std::string tag : {"visual", "collision"}) {
    std::size_t pos = 0;
    while ((pos = xml.find("<" + tag, pos)) != std::string::npos) {
      const char next = pos + tag.size() + 1 < xml.size() ? xml[pos + tag.size() + 1] : '\0';
      if (!(next == '>' || next == '/' || std::isspace(static_cast<unsigned char>(next)))) {
        ++pos;  // e.g. <collision_checking>
        continue;
      }
      const std::size_t gt = xml.find('>', pos);
      if (gt == std::string::npos) break;
      std::size_t end;
      if (xml[gt - 1] == '/') {
        end = gt + 1;
      } else {
        const std::size_t close = xml.find("</" + tag, gt);
        if (close == std::string::npos) break;
        end = xml.find('>', close);
        if (end == std::string::npos) break;
        ++end;
      }
      xml.erase(pos, end - pos);
    }
  }
  return xml;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/plucker_bench_XXXXXX";
  if (mkdtemp(tmpl)) path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

std::string stripped_copy(const std::string& urdf, const TempDir& tmp) {
  std::ifstream in(urdf);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string stripped = tmp.path() + "/" + fs::path(urdf).filename().string();
  std::ofstream(stripped) << strip_geometry(ss.str());
  return stripped;
}

// ---------------------------------------------------------------------------
// State pools
// ---------------------------------------------------------------------------
void make_pool(Bundle& b, int n) {
  std::mt19937_64 rng(kSeed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const int nq = b.model.nq(), nv = b.model.nv();
  b.n = n;
  b.Q.resize(nq, n);
  b.V.resize(nv, n);
  b.A.resize(nv, n);
  b.TAU.resize(nv, n);
  for (int i = 0; i < n; ++i) {
    b.Q.col(i) = plucker::random_configuration(b.model, rng);
    for (int k = 0; k < nv; ++k) b.V(k, i) = unit(rng);
    for (int k = 0; k < nv; ++k) b.A(k, i) = unit(rng);
    for (int k = 0; k < nv; ++k) b.TAU(k, i) = 10.0 * unit(rng);
  }
  b.data = std::make_unique<plucker::Data>(b.model);
  b.tasks.clear();
  if (b.name.rfind("talos_full", 0) == 0) {
    for (const char* frame :
         {"left_sole_link", "right_sole_link", "wrist_left_ft_tool_link", "wrist_right_ft_tool_link"})
      b.tasks.push_back(plucker::OperationalTask::named(b.model, frame));
  } else {
    b.tasks.push_back(plucker::OperationalTask::of_body(b.model.nbodies() - 1));
  }
}

StatePool pool_of(const Bundle& b) {
  StatePool p;
  p.n = b.n;
  p.nq = b.model.nq();
  p.nv = b.model.nv();
  p.q.assign(b.Q.data(), b.Q.data() + b.Q.size());
  p.v.assign(b.V.data(), b.V.data() + b.V.size());
  p.a.assign(b.A.data(), b.A.data() + b.A.size());
  p.tau.assign(b.TAU.data(), b.TAU.data() + b.TAU.size());
  return p;
}

// ---------------------------------------------------------------------------
// The algorithm registry
// ---------------------------------------------------------------------------
namespace {
void fd(Bundle& b, int i, plucker::ForwardDynamicsMethod m) {
  plucker::forward_dynamics(b.model, *b.data, b.q(i), b.v(i), b.tau(i), m);
}
/// Lambda (with J and Lambda^-1) of b.tasks, the quantity the 2010 and 2012 papers time.
void opspace(Bundle& b, int i, plucker::OperationalSpaceMethod m) {
  plucker::OperationalSpaceOptions options;
  options.outputs = plucker::kOutputLambda;
  plucker::operational_space(b.model, *b.data, b.q(i), b.v(i), b.tasks, plucker::ReferenceFrame::Local, m, options);
}
}  // namespace

// clang-format off
const std::vector<Algorithm> kAlgorithms = {
  {"rnea", false, Task::InverseDynamics, [](Bundle& b, int i) { plucker::rnea(b.model, *b.data, b.q(i), b.v(i), b.a(i)); }},
  {"crba", false, Task::MassMatrix, [](Bundle& b, int i) { plucker::crba(b.model, *b.data, b.q(i)); }},
  {"crba_upper", false, std::nullopt, [](Bundle& b, int i) { plucker::crba(b.model, *b.data, b.q(i), plucker::Triangle::Upper); }},
  {"aba", true, Task::ForwardDynamics, [](Bundle& b, int i) { plucker::aba(b.model, *b.data, b.q(i), b.v(i), b.tau(i)); }},
  {"forward_dynamics_crba", true, std::nullopt, [](Bundle& b, int i) { plucker::forward_dynamics_crba(b.model, *b.data, b.q(i), b.v(i), b.tau(i)); }},
  {"nonlinear_effects", false, std::nullopt, [](Bundle& b, int i) { plucker::nonlinear_effects(b.model, *b.data, b.q(i), b.v(i)); }},
  {"forward_kinematics", false, std::nullopt, [](Bundle& b, int i) { plucker::forward_kinematics(b.model, *b.data, b.q(i)); }},
  {"jacobian", false, std::nullopt, [](Bundle& b, int i) { plucker::body_jacobian(b.model, *b.data, b.q(i), b.model.nbodies() - 1); }},
  {"mass_matrix_direct", false, std::nullopt, [](Bundle& b, int i) { plucker::mass_matrix_direct(b.model, *b.data, b.q(i)); }},
  {"mass_matrix_symmetry", false, std::nullopt, [](Bundle& b, int i) { plucker::mass_matrix_symmetry(b.model, *b.data, b.q(i)); }},
  {"rnea_composite", false, std::nullopt, [](Bundle& b, int i) { plucker::rnea_composite(b.model, *b.data, b.q(i), b.v(i), b.a(i)); }},
  {"minv", true, std::nullopt, [](Bundle& b, int i) { plucker::minv(b.model, *b.data, b.q(i)); }},
  {"rnea_derivatives", false, std::nullopt, [](Bundle& b, int i) { plucker::rnea_derivatives(b.model, *b.data, b.q(i), b.v(i), b.a(i)); }},
  {"aba_derivatives", true, std::nullopt, [](Bundle& b, int i) { plucker::aba_derivatives(b.model, *b.data, b.q(i), b.v(i), b.tau(i)); }},
  {"fd_aba", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Aba); }},
  {"fd_crba_cholesky", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::CrbaCholesky); }},
  {"fd_crba_ltdl", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::CrbaLtdl); }},
  {"fd_direct_cholesky", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::DirectCholesky); }},
  {"fd_symmetry_cholesky", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::SymmetryCholesky); }},
  {"fd_cg", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::ConjugateGradient); }},
  {"fd_pcg", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::PreconditionedCG); }},
  {"fd_innovations", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Innovations); }},
  {"fd_minv", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Minv); }},
  {"fd_global_sparse", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::GlobalSparse); }},
  {"fd_cfa", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Cfa); }},
  {"fd_dca", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Dca); }},
  {"fd_dca_accurate", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::DcaAccurate); }},
  {"fd_auto", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Auto); }},
  {"opspace_dense", true, std::nullopt, [](Bundle& b, int i) { opspace(b, i, plucker::OperationalSpaceMethod::Dense); }},
  {"opspace_sparse", true, std::nullopt, [](Bundle& b, int i) { opspace(b, i, plucker::OperationalSpaceMethod::Sparse); }},
  {"opspace_recursive", true, std::nullopt, [](Bundle& b, int i) { opspace(b, i, plucker::OperationalSpaceMethod::Recursive); }},
  {"opspace_efpa", true, std::nullopt, [](Bundle& b, int i) { opspace(b, i, plucker::OperationalSpaceMethod::Efpa); }},
};
// clang-format on

const char* task_algorithm(Task t) {
  for (const Algorithm& a : kAlgorithms)
    if (a.peer == t) return a.name;
  return "?";
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------
namespace {
// Robots meant to be used with a free-flyer root (models/README.md); the others are fixed-base.
const std::set<std::string> kFloating = {
    "talos_full", "simple_humanoid", "romeo_small", "romeo", "anymal", "solo12", "hyq", "icub", "pr2"};
// Display order (others follow alphabetically).
const std::vector<std::string> kOrder = {"ur5",
                                         "iiwa14",
                                         "panda",
                                         "chain32",
                                         "chain1024",
                                         "solo12_ff",
                                         "anymal_ff",
                                         "hyq_ff",
                                         "talos_full_ff",
                                         "simple_humanoid_ff",
                                         "romeo_small_ff",
                                         "romeo_ff",
                                         "icub_ff",
                                         "pr2_ff"};

std::vector<Spec> robot_specs(const fs::path& models) {
  std::vector<Spec> robots;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models, ec)) {
    if (e.path().extension() != ".urdf") continue;
    const std::string stem = e.path().stem().string();
    Spec s;
    s.floating = kFloating.count(stem) > 0;
    s.name = stem + (s.floating ? "_ff" : "");
    s.source = "models/" + e.path().filename().string() + (s.floating ? " + free-flyer root" : " (fixed base)");
    s.urdf = e.path().string();
    robots.push_back(s);
  }
  auto rank = [](const std::string& n) {
    auto it = std::find(kOrder.begin(), kOrder.end(), n);
    return it == kOrder.end() ? kOrder.size() : static_cast<std::size_t>(it - kOrder.begin());
  };
  std::sort(robots.begin(), robots.end(), [&](const Spec& a, const Spec& b) {
    return std::make_pair(rank(a.name), a.name) < std::make_pair(rank(b.name), b.name);
  });
  return robots;
}
}  // namespace

const std::map<std::string, std::string> kSingular = {
    {"romeo_ff", "singular joint-space inertia (24 massless finger links)"}};

std::vector<Spec> model_specs(std::vector<std::string>& notes) {
  std::vector<Spec> specs;
  const std::string shared = shared_dir();
  const fs::path models = fs::path(shared) / "models";
  std::error_code ec;
  if (shared.empty() || !fs::is_directory(models, ec)) {
    notes.push_back("shared models directory not found ('" + models.string() +
                    "'): robot models skipped (set PLUCKER_SHARED_DIR)");
  } else {
    specs = robot_specs(models);
  }
  specs.push_back({"builder_chain32", "build_chain(32)", "", false, [] { return plucker::build_chain(32); }});
  specs.push_back({"builder_tree32", "build_random_tree(32, bf=2, skew=0.5, taper=0.95)", "", false,
                   [] { return plucker::build_random_tree(32, 2.0, 0.5, 0.95); }});
  specs.push_back(
      {"builder_humanoid_ff", "build_humanoid(floating)", "", true, [] { return plucker::build_humanoid(0, true); }});
  specs.push_back({"builder_quadruped_ff", "build_quadruped(floating)", "", true,
                   [] { return plucker::build_quadruped(0, true); }});
  specs.push_back({"free_bodies8", "8 bodies, each with a free-flyer to the world (fd_models.hpp)", "", true,
                   [] { return multi_dof_bodies(8, false); }});
  return specs;
}

plucker::Model load_model(const Spec& spec) {
  if (spec.urdf.empty()) return spec.build();
  plucker::UrdfOptions uo;
  uo.root = spec.floating ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
  uo.on_warning = [](const std::string&) {};
  return plucker::load_urdf(spec.urdf, uo);
}

// ---------------------------------------------------------------------------
// Peers
// ---------------------------------------------------------------------------
ModelDesc describe(const Bundle& b, const std::string& stripped, bool floating) {
  ModelDesc d;
  d.name = b.name;
  d.urdf = stripped;
  d.floating = floating;
  d.root_link = floating ? b.model.body_name(1) : b.model.body_name(0);
  d.nq = b.model.nq();
  d.nv = b.model.nv();
  for (int i = 1; i < b.model.nbodies(); ++i) {
    if (b.model.joint_nv(i) == 0) continue;
    JointDesc j;
    j.name = b.model.joint_name(i);
    j.idx_q = b.model.idx_q(i);
    j.idx_v = b.model.idx_v(i);
    j.nq = b.model.joint_nq(i);
    j.nv = b.model.joint_nv(i);
    j.free_flyer = plucker::joint_kind(b.model.joint(i)) == "free_flyer";
    d.joints.push_back(j);
  }
  for (int k = 0; k < 3; ++k) d.gravity[k] = b.model.gravity()[k];
  return d;
}

std::unique_ptr<Peer> create_peer(PeerFactory factory, const ModelDesc& desc, std::string& why) {
  std::unique_ptr<Peer> peer;
  std::string printed;
  {
    Quiet quiet;
    try {
      peer = factory(desc, why);
    } catch (const std::exception& e) {
      why = std::string("exception: ") + e.what();
    }
    printed = quiet.release();
  }
  if (!peer && why.empty()) why = printed;
  return peer;
}

namespace {
double inf_norm(const Eigen::Ref<const MatX>& m) { return m.size() ? m.cwiseAbs().maxCoeff() : 0.0; }
}  // namespace

double tolerance(const std::string& library) { return library == "mujoco" ? 1e-7 : 1e-8; }

Check check_task(Bundle& b, Peer& peer, Task task, int nstates) {
  Check c{task};
  const int nv = b.model.nv();
  plucker::Data& d = *b.data;
  for (int i = 0; i < nstates; ++i) {
    switch (task) {
      case Task::InverseDynamics: {
        VecX theirs(nv);
        peer.compute(task, i, theirs.data());
        const VecX ours = plucker::rnea(b.model, d, b.q(i), b.v(i), b.a(i));
        c.err = std::max(c.err, inf_norm(theirs - ours) / std::max(inf_norm(ours), 1e-300));
        break;
      }
      case Task::MassMatrix: {
        MatX theirs(nv, nv);
        peer.compute(task, i, theirs.data());
        const MatX ours = plucker::crba(b.model, d, b.q(i));
        c.err = std::max(c.err, inf_norm(theirs - ours) / std::max(inf_norm(ours), 1e-300));
        break;
      }
      case Task::ForwardDynamics: {
        // Normwise backward error of the peer's qdd for M qdd = tau - c (plucker's M and
        // c): |ID(q, v, qdd) - tau| / (|M| |qdd| + |tau| + |c|), infinity norms. It is the
        // relative size of the smallest perturbation of (M, tau - c) that makes the peer's
        // qdd exact, so it is not inflated by the conditioning of M the way the forward
        // difference of qdd (recorded for information) is.
        VecX theirs(nv);
        peer.compute(task, i, theirs.data());
        const VecX bias = plucker::nonlinear_effects(b.model, d, b.q(i), b.v(i));
        const double normM = plucker::crba(b.model, d, b.q(i)).cwiseAbs().rowwise().sum().maxCoeff();
        const VecX tau_back = plucker::rnea(b.model, d, b.q(i), b.v(i), theirs);
        const double scale = std::max(normM * inf_norm(theirs) + inf_norm(b.tau(i)) + inf_norm(bias), 1e-300);
        c.err = std::max(c.err, inf_norm(tau_back - b.tau(i)) / scale);
        const VecX ours = plucker::aba(b.model, d, b.q(i), b.v(i), b.tau(i));
        c.qdd_err = std::max(c.qdd_err, inf_norm(theirs - ours) / std::max(inf_norm(ours), 1e-300));
        break;
      }
    }
  }
  c.ok = std::isfinite(c.err) && c.err <= tolerance(peer.library());
  return c;
}

PeerComparison compare_peer(Bundle& b, Peer& peer, int nstates, bool stop_if_id_disagrees) {
  PeerComparison out;
  for (Task t : {Task::InverseDynamics, Task::MassMatrix, Task::ForwardDynamics}) {
    std::string why_not;
    const std::string m = peer.method(t, why_not);
    if (m.empty()) {
      out.unsupported.push_back(std::string(task_name(t)) + ": " + why_not);
      continue;
    }
    if (t == Task::ForwardDynamics && !b.singular.empty()) {
      out.unsupported.push_back(std::string("FD: ") + b.singular);
      continue;
    }
    out.methods[t] = m;
    out.checks.push_back(check_task(b, peer, t, nstates));
    if (stop_if_id_disagrees && t == Task::InverseDynamics && !out.checks.back().ok) break;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Reference figures and targets
// ---------------------------------------------------------------------------
const std::map<std::string, Ref3> kPinocchioNs = {
    {"ur5", {758, 428, 1721}},        {"iiwa14", {953, 535, 2004}},           {"panda", {1207, 674, 2696}},
    {"solo12_ff", {1845, 948, 4108}}, {"talos_full_ff", {5753, 3996, 13335}}, {"chain32", {4298, 4090, 9670}}};
const std::map<std::string, Ref3> kMujocoOverPinocchio = {
    {"ur5", {1.73, 2.27, 0.90}},       {"iiwa14", {1.54, 2.08, 0.88}},        {"panda", {1.51, 2.01, 0.85}},
    {"solo12_ff", {1.56, 2.49, 1.04}}, {"talos_full_ff", {1.62, 2.07, 1.18}}, {"chain32", {1.56, 1.59, 1.40}}};
const std::vector<std::string> kHeadline = {"ur5", "iiwa14", "panda", "solo12_ff", "talos_full_ff", "chain32"};

double pinocchio_clang_derivative_ns(const std::string& model, const std::string& algorithm) {
  static const std::map<std::string, std::pair<double, double>> ns = {{"ur5", {2001, 3256}},
                                                                      {"panda", {2974, 4745}},
                                                                      {"chain32", {15217, 26662}},
                                                                      {"solo12_ff", {5418, 10191}},
                                                                      {"talos_full_ff", {18895, 47146}}};
  const auto it = ns.find(model);
  if (it == ns.end()) return std::nan("");
  return algorithm == "rnea_derivatives"  ? it->second.first
         : algorithm == "aba_derivatives" ? it->second.second
                                          : std::nan("");
}

double ref_of(const Ref3& r, const std::string& algorithm) {
  return algorithm == "rnea" ? r.id : algorithm == "crba" ? r.m : algorithm == "aba" ? r.fd : std::nan("");
}

// ---------------------------------------------------------------------------
// The collecting reporter
// ---------------------------------------------------------------------------
bool Collector::ReportContext(const Context& ctx) {
  num_cpus_ = ctx.cpu_info.num_cpus;
  mhz_ = ctx.cpu_info.cycles_per_second / 1e6;
  scaling_ = ctx.cpu_info.scaling == benchmark::CPUInfo::ENABLED;
  return true;
}

void Collector::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.run_type != Run::RT_Iteration) continue;
    const std::string name = r.run_name.function_name;
    if (r.error_occurred) {
      errors_[name] = r.error_message;
      continue;
    }
    times_[name].push_back(r.GetAdjustedCPUTime());
    auto it = keys_.find(name);
    const std::string model = it == keys_.end() ? name : it->second.model;
    if (model != current_) {
      if (!current_.empty()) std::cerr << "\n";
      current_ = model;
      std::cerr << "  " << model << " " << std::flush;
    }
    if (r.repetition_index <= 0) std::cerr << "." << std::flush;
  }
}

void Collector::Finalize() {
  if (!current_.empty()) std::cerr << "\n";
}

double Collector::median(const std::string& name) const {
  auto it = times_.find(name);
  if (it == times_.end() || it->second.empty()) return std::nan("");
  return plucker_bench::median(it->second);
}

}  // namespace plucker_bench
