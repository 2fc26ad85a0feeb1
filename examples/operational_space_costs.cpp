// Times each operational-space method on one model and task set, for the cost study of
// docs/operational_space.md (driven by scripts/operational_space_costs.py, which builds the
// models and writes the tables).
//
//   operational_space_costs MODEL.urdf fixed|free TASK[,TASK...] [calls]
//
// A task is a body or frame name with an optional ":position" / ":orientation". For each method
// (dense, sparse, recursive, efpa, dca; dca also with 2 and 4 threads as "dca/2t", "dca/4t")
// and each output set ("lambda": J, Lambda^-1, Lambda;
// "all": also Jbar, N and the bias) prints one JSON object per line: the best of 5 rounds of
// `calls` calls (default 2000) at one random state, in ns per call, the operation count of the
// method's formula (operational_space_choice) and the model's sizes. The first call warms the
// workspace (no allocation after it), and every method's Lambda is checked against the dense one
// (relative difference printed as "rel_err").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <plucker/algorithms/operational_space.hpp>
#include <plucker/io/urdf.hpp>
#include <plucker/plucker.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

int run(int argc, char** argv) {
  using namespace plucker;
  if (argc < 4) {
    std::cerr << "usage: operational_space_costs MODEL.urdf fixed|free TASK[,TASK...] [calls]\n";
    return 2;
  }
  const std::string root = argv[2];
  if (root != "fixed" && root != "free") {
    std::cerr << "operational_space_costs: root must be 'fixed' or 'free', got '" << root << "'\n";
    return 2;
  }
  const Model model = load_urdf(argv[1], root == "free" ? RootJoint::FreeFlyer : RootJoint::Fixed);
  std::vector<OperationalTask> tasks;
  std::stringstream list(argv[3]);
  for (std::string item; std::getline(list, item, ',');) {
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon), rows = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (!rows.empty() && rows != "position" && rows != "orientation") {
      std::cerr << "operational_space_costs: rows must be 'position' or 'orientation', got '" << rows << "'\n";
      return 2;
    }
    tasks.push_back(OperationalTask::named(model, name,
                                           rows == "position"      ? TaskRows::Position
                                           : rows == "orientation" ? TaskRows::Orientation
                                                                   : TaskRows::All));
  }
  const int calls = argc > 4 ? std::stoi(argv[4]) : 2000;
  Data data(model);
  std::mt19937_64 rng(7);
  const VecX q = random_configuration(model, rng);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX v(model.nv());
  for (int i = 0; i < model.nv(); ++i) v[i] = u(rng);

  const MatX Lambda_dense =
      operational_space(model, data, q, v, tasks, ReferenceFrame::Local, OperationalSpaceMethod::Dense).Lambda;
  for (const char* out : {"lambda", "all"}) {
    OperationalSpaceOptions options;
    options.outputs = std::string(out) == "all" ? kOutputAll : kOutputLambda;
    const OperationalSpaceChoice choice = operational_space_choice(model, tasks, options.outputs);
    for (int k = 0; k < 7; ++k) {
      // 0-3: the methods auto chooses from; 4: dca on one thread; 5, 6: dca on 2 and 4 threads.
      const auto method = static_cast<OperationalSpaceMethod>(std::min(k, 4));
      options.threads = k == 5 ? 2 : k == 6 ? 4 : 1;
      const std::string label = k < 5 ? to_string(method) : "dca/" + std::to_string(options.threads) + "t";
      const OperationalSpaceDcaCost dca_cost = operational_space_dca_cost(model, tasks);
      const double ops = k < 4 ? choice.operations[static_cast<std::size_t>(k)] : static_cast<double>(dca_cost.total);
      const double predicted = k < 4 ? choice.predicted_ns[static_cast<std::size_t>(k)] : 0.0;
      const MatX L = operational_space(model, data, q, v, tasks, ReferenceFrame::Local, method, options).Lambda;
      const double rel_err = (L - Lambda_dense).norm() / Lambda_dense.norm();
      double best = 1e300;
      for (int round = 0; round < 5; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        double sink = 0.0;
        for (int c = 0; c < calls; ++c)
          sink += operational_space(model, data, q, v, tasks, ReferenceFrame::Local, method, options).Lambda(0, 0);
        const auto t1 = std::chrono::steady_clock::now();
        if (sink == 42.0) std::cerr << "";  // keep the calls
        best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
      }
      int m = 0;
      for (const OperationalTask& t : tasks) m += t.num_rows;
      std::printf(
          "{\"method\": \"%s\", \"outputs\": \"%s\", \"ns\": %.1f, \"operations\": %.0f, \"predicted_ns\": %.1f, "
          "\"auto\": \"%s\", \"nv\": %d, \"bodies\": %d, \"m\": %d, \"tasks\": %zu, \"rel_err\": %.2e, "
          "\"critical_path\": %lld}\n",
          label.c_str(), out, best, ops, predicted, to_string(choice.method).c_str(), model.nv(), model.nbodies() - 1,
          m, tasks.size(), rel_err, k < 4 ? 0LL : dca_cost.critical_path);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a bad model, name or singular task: say which, exit 1
    std::cerr << "operational_space_costs: " << e.what() << "\n";
    return 1;
  }
}
