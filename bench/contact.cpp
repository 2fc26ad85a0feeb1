// plucker_bench --contact: steps per second of the solo12 world (floating base, 4 foot spheres
// of radius 0.02 m on a ground plane, mu = 0.8, dt = 1 ms, a joint PD controller holding a
// standing pose, dropped from 0.3 m; 2,000 steps per rollout) for plucker's Simulator (compliant
// Hunt-Crossley contact with semi-implicit Euler; rigid contact, frictionless and with friction)
// and MuJoCo's mj_step on the same robot with the same contacts (Euler, its default soft
// contact), in the same run. Single thread: one rollout, median of `reps`; batched: 8 rollouts
// on 2 threads, each thread with its own simulator / mjData, median of `reps`. Results:
// a table on stdout and <out>/contact.json (docs/contact.md, "Speed against MuJoCo").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common.hpp"
#include "plucker/contact/simulator.hpp"
#include "plucker/io/urdf.hpp"

namespace plucker_bench {
namespace {

constexpr const char* kFeet[] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

struct Row {
  std::string name, method;
  double single_steps_s = 0.0, batch_steps_s = 0.0;
  double final_height = 0.0, final_force_z = 0.0;
  int final_contacts = 0;
};

plucker::Simulator make_sim(const plucker::Model& model, const std::string& kind) {
  using namespace plucker;
  Simulator sim(model, 1e-3);
  HalfSpace h;
  h.friction.static_coefficient = h.friction.dynamic_coefficient = 0.8;
  if (kind == "compliant") {
    h.normal_force.law = ContactLaw::HuntCrossley;
    h.normal_force.stiffness = 1e5;
    h.normal_force.damping = 0.3e5;
    h.friction.regularization = 0.1;
  } else {
    h.normal_force.law = ContactLaw::Rigid;
    if (kind == "rigid_frictionless") h.friction.static_coefficient = h.friction.dynamic_coefficient = 0.0;
  }
  sim.add_ground(h);
  for (const char* foot : kFeet) sim.add_sphere(foot, Vec3::Zero(), 0.02);
  return sim;
}

}  // namespace

int run_contact(const Options& opt) {
  using namespace plucker;
  const std::string path = shared_dir() + "/models/solo12.urdf";
  if (!std::filesystem::exists(path)) {
    std::printf("plucker_bench --contact: %s not found; nothing to do\n", path.c_str());
    return 0;
  }
  UrdfOptions uo;
  uo.root = RootJoint::FreeFlyer;
  uo.on_warning = [](const std::string&) {};
  Bundle b;
  b.name = "solo12_ff";
  b.model = load_urdf(path, uo);
  const Model& model = b.model;
  // The standing pose of examples/python/drop_quadruped.py, base at 0.3 m.
  VecX q_des = neutral(model);
  for (const auto& [leg, sign] : {std::pair{"FL", 1.0}, {"FR", 1.0}, {"HL", -1.0}, {"HR", -1.0}}) {
    q_des[model.idx_q(model.joint_index(std::string(leg) + "_HFE"))] = 0.8 * sign;
    q_des[model.idx_q(model.joint_index(std::string(leg) + "_KFE"))] = -1.6 * sign;
  }
  VecX q0 = q_des;
  q0[2] = 0.3;
  ContactWorld world;
  world.q0.assign(q0.data(), q0.data() + q0.size());
  world.q_des.assign(q_des.data(), q_des.data() + q_des.size());
  world.reps = std::max(3, opt.reps);
  for (const char* foot : kFeet) {
    const Frame& f = model.frames()[static_cast<std::size_t>(model.frame_index(foot))];
    world.foot_bodies.push_back(model.body_name(f.body));
    for (int k = 0; k < 3; ++k) world.foot_centers.push_back(f.X_body.r[k]);
  }
  std::vector<int> iq, iv;  // the 1-DoF joints
  for (int i = 1; i < model.nbodies(); ++i)
    if (model.joint_nv(i) == 1) {
      iq.push_back(model.idx_q(i));
      iv.push_back(model.idx_v(i));
    }
  std::vector<Row> rows;
  for (const std::string kind : {"compliant", "rigid", "rigid_frictionless"}) {
    Simulator proto = make_sim(model, kind);
    auto rollout = [&](Simulator& sim, Row* row) {
      VecX q = q0, v = VecX::Zero(model.nv()), tau = VecX::Zero(model.nv());
      for (int t = 0; t < world.steps; ++t) {
        for (std::size_t j = 0; j < iq.size(); ++j)
          tau[iv[j]] = world.kp * (q_des[iq[j]] - q[iq[j]]) - world.kd * v[iv[j]];
        sim.step(q, v, tau);
      }
      if (row) {
        row->final_height = q[2];
        for (const ContactPair& p : sim.last_contacts()) {
          row->final_contacts += p.normal_force > 0.0 ? 1 : 0;
          row->final_force_z += p.force.z();
        }
      }
    };
    Row row;
    row.name = "plucker " + kind;
    row.method = kind == "compliant" ? "Simulator::step, semi-implicit Euler, Hunt-Crossley k 1e5, lambda 0.3 k, "
                                       "regularised Coulomb eps 0.1 m/s"
                                     : (kind == "rigid" ? "Simulator::step, rigid (Moreau-Jean), PGS friction cones"
                                                        : "Simulator::step, rigid (Moreau-Jean), Lemke LCP");
    {
      Simulator sim = proto;
      rollout(sim, &row);  // warm, and the end state
      std::vector<double> t;
      for (int r = 0; r < world.reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        rollout(sim, nullptr);
        t.push_back(seconds_since(t0));
      }
      row.single_steps_s = world.steps / median(t);
    }
    std::vector<double> tb;
    for (int r = 0; r < world.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      for (int th = 0; th < 2; ++th)
        pool.emplace_back([&, th] {
          Simulator sim = proto;
          for (int k = th; k < world.batch; k += 2) rollout(sim, nullptr);
        });
      for (std::thread& t : pool) t.join();
      tb.push_back(seconds_since(t0));
    }
    row.batch_steps_s = world.steps * world.batch / median(tb);
    rows.push_back(row);
  }
#ifdef PLUCKER_HAVE_MUJOCO
  if (opt.peers) {
    TempDir tmp;
    const ModelDesc desc = describe(b, stripped_copy(path, tmp), true);
    ContactTiming mj;
    const std::string why = mujoco_contact_timing(desc, world, mj);
    if (!why.empty()) {
      std::printf("mujoco: %s\n", why.c_str());
    } else {
      Row row;
      row.name = "mujoco mj_step";
      row.method = mj.method;
      row.single_steps_s = world.steps / median(mj.seconds_single);
      row.batch_steps_s = world.steps * world.batch / median(mj.seconds_batch);
      row.final_height = mj.final_height;
      row.final_contacts = mj.final_contacts;
      row.final_force_z = mj.final_force_z;
      rows.push_back(row);
    }
  }
#else
  std::printf("mujoco: not built (libmujoco-dev absent at configure time)\n");
#endif
  const double weight = -model.gravity().z() * model.total_mass();
  std::printf("solo12, 4 foot spheres, dt 1 ms, %d steps per rollout, median of %d; load %s\n", world.steps, world.reps,
              loadavg().c_str());
  std::printf("%-28s %14s %14s %12s %9s %12s\n", "", "steps/s 1 thr", "steps/s 2 thr", "us/step", "height",
              "Fz/weight");
  for (const Row& r : rows)
    std::printf("%-28s %14.3g %14.3g %12.2f %9.4f %12.4f\n", r.name.c_str(), r.single_steps_s, r.batch_steps_s,
                1e6 / r.single_steps_s, r.final_height, r.final_force_z / weight);
  for (const Row& r : rows) std::printf("  %s: %s\n", r.name.c_str(), r.method.c_str());
  std::filesystem::create_directories(opt.out);
  std::ofstream json(output_path(opt.out, "contact.json"));
  json << "{\n  \"model\": \"solo12 (floating base)\", \"steps\": " << world.steps << ", \"reps\": " << world.reps
       << ", \"batch\": " << world.batch << ", \"threads\": 2,\n  \"compiler\": \"" << json_escape(compiler_string())
       << "\", \"flags\": \"" << json_escape(build_flags()) << "\", \"load\": \"" << json_escape(loadavg())
       << "\", \"date\": \"" << now_utc() << "\",\n  \"rows\": [\n";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    json << "    {\"name\": \"" << json_escape(r.name) << "\", \"method\": \"" << json_escape(r.method)
         << "\", \"steps_per_s_single\": " << r.single_steps_s << ", \"steps_per_s_batch\": " << r.batch_steps_s
         << ", \"final_height\": " << r.final_height << ", \"final_contacts\": " << r.final_contacts
         << ", \"final_force_z_over_weight\": " << r.final_force_z / weight << "}" << (k + 1 < rows.size() ? "," : "")
         << "\n";
  }
  json << "  ]\n}\n";
  std::printf("wrote %s\n", display_dir(output_path(opt.out, "contact.json")).c_str());
  return 0;
}

}  // namespace plucker_bench
