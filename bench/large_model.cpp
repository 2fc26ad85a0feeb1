// plucker_bench --large=N: memory and time of a very large model (issue 15's targets). Writes
// an N-link revolute chain URDF (the document scripts/gen-chain-urdf.py writes) to a temporary
// file, then measures, in this process: the URDF load (wall time, peak resident memory), a Data
// made for it, the first RNEA and ABA calls (which allocate their workspaces) and a warm ABA
// call. Memory figures are resident-set sizes from /proc/self/status: VmHWM is reset before the
// load through /proc/self/clear_refs, so "peak during load" is the load's own high-water mark.
// Results: stdout and <out>/large_model.json.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "common.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/plucker.hpp"

namespace plucker_bench {
namespace {

// A /proc/self/status field in kB (VmRSS, VmHWM), or -1 where the file is unavailable.
long status_kb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  return -1;
}

// Resets VmHWM to the current resident size (Linux >= 4.0); false where it is not supported.
bool reset_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  return static_cast<bool>(f.flush());
}

void write_chain(const std::string& path, int links) {
  std::ofstream out(path);
  out << "<?xml version=\"1.0\"?>\n<robot name=\"chain" << links << "\">\n";
  for (int i = 0; i < links; ++i) {
    out << "<link name=\"link" << i
        << "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.004\" ixy=\"0\" ixz=\"0\" iyy=\"0.005\" "
           "iyz=\"0\" izz=\"0.002\"/></inertial></link>\n";
    if (i + 1 < links)
      out << "<joint name=\"joint" << i << "\" type=\"revolute\"><parent link=\"link" << i << "\"/><child link=\"link"
          << i + 1 << "\"/><origin xyz=\"0 0 0.1\" rpy=\"0 0 0\"/><axis xyz=\"" << (i % 2 == 0 ? "0 0 1" : "0 1 0")
          << "\"/><limit lower=\"-3\" upper=\"3\" effort=\"10\" "
          << "velocity=\"5\"/></joint>\n";
  }
  out << "</robot>\n";
}

}  // namespace

int run_large_model(int links, const std::string& out_dir) {
  if (links < 2) {
    std::cerr << "--large: need at least 2 links\n";
    return 1;
  }
  namespace fs = std::filesystem;
  const fs::path urdf = fs::temp_directory_path() /
                        ("plucker_chain" + std::to_string(links) + "_" + std::to_string(::getpid()) + ".urdf");
  write_chain(urdf.string(), links);
  const double file_mb = static_cast<double>(fs::file_size(urdf)) / 1e6;

  using clock = std::chrono::steady_clock;
  const bool peak_ok = reset_peak();
  const long rss_before_load = status_kb("VmRSS");
  auto t0 = clock::now();
  const plucker::Model model = plucker::load_urdf(urdf.string());
  const double load_s = seconds_since(t0);
  const long load_peak = status_kb("VmHWM") - rss_before_load;
  const long model_kb = status_kb("VmRSS") - rss_before_load;
  fs::remove(urdf);

  const long rss_before_data = status_kb("VmRSS");
  t0 = clock::now();
  plucker::Data data(model);
  const double data_s = seconds_since(t0);
  const long data_kb = status_kb("VmRSS") - rss_before_data;

  const Eigen::VectorXd q = Eigen::VectorXd::Constant(model.nq(), 1e-3);
  const Eigen::VectorXd v = Eigen::VectorXd::Constant(model.nv(), 1e-2);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv());
  t0 = clock::now();
  const Eigen::VectorXd tau = plucker::rnea(model, data, q, v, zero);
  const double rnea_s = seconds_since(t0);
  const long after_rnea_kb = status_kb("VmRSS") - rss_before_data;
  t0 = clock::now();
  plucker::aba(model, data, q, v, tau);
  const double aba_first_s = seconds_since(t0);
  t0 = clock::now();
  const Eigen::VectorXd qdd = plucker::aba(model, data, q, v, tau);
  const double aba_warm_s = seconds_since(t0);
  const long after_aba_kb = status_kb("VmRSS") - rss_before_data;
  // tau = rnea(q, v, 0), so aba(q, v, tau) = 0 in exact arithmetic; in floating point qdd is off
  // by about cond(M) eps (the chain's M grows ill-conditioned as N^2..N^4, Featherstone 2004),
  // while the backward error |rnea(q, v, qdd) - tau| / |tau| stays near eps when the ABA is right.
  const double residual = qdd.cwiseAbs().maxCoeff();
  const double backward =
      (plucker::rnea(model, data, q, v, qdd) - tau).cwiseAbs().maxCoeff() / tau.cwiseAbs().maxCoeff();

  std::printf("large model: %d-link revolute chain, URDF %.1f MB, %d bodies, nv %d\n", links, file_mb, model.nbodies(),
              model.nv());
  std::printf("  load_urdf        %8.3f s   peak +%ld MB during load%s, model resident +%ld MB\n", load_s,
              load_peak / 1024, peak_ok ? "" : " (VmHWM not resettable: process peak)", model_kb / 1024);
  std::printf("  Data(model)      %8.4f s   +%ld MB\n", data_s, data_kb / 1024);
  std::printf("  rnea (first)     %8.4f s   Data +%ld MB after\n", rnea_s, after_rnea_kb / 1024);
  std::printf("  aba (first/warm) %8.4f / %.4f s   Data +%ld MB after\n", aba_first_s, aba_warm_s, after_aba_kb / 1024);
  std::printf("  qdd = aba(q, v, rnea(q, v, 0)): max |qdd| %.1e (forward error), backward error %.1e\n", residual,
              backward);
  std::printf("  process peak resident %ld MB\n", status_kb("VmHWM") / 1024);

  fs::create_directories(out_dir);
  std::ofstream json(fs::path(out_dir) / "large_model.json");
  json << "{\"links\": " << links << ", \"urdf_mb\": " << file_mb << ", \"load_s\": " << load_s
       << ", \"load_peak_kb\": " << load_peak << ", \"model_kb\": " << model_kb << ", \"data_s\": " << data_s
       << ", \"data_kb\": " << data_kb << ", \"rnea_s\": " << rnea_s << ", \"data_after_rnea_kb\": " << after_rnea_kb
       << ", \"aba_first_s\": " << aba_first_s << ", \"aba_warm_s\": " << aba_warm_s
       << ", \"data_after_aba_kb\": " << after_aba_kb << ", \"aba_residual\": " << residual
       << ", \"aba_backward_error\": " << backward << ", \"process_peak_kb\": " << status_kb("VmHWM") << "}\n";
  return std::isfinite(residual) && std::isfinite(backward) ? 0 : 1;
}

}  // namespace plucker_bench
