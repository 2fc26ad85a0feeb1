// MuJoCo 2.2.2 (Debian libmujoco-dev) adapter for the benchmark.
//
// Loading: MuJoCo's URDF importer reads the stripped URDF (no <visual>/<collision>:
// it refuses missing meshes, and collision geometry could give massless links a mass
// through inertiafromgeom). For a floating-base model a dummy root link and a
// <joint type="floating" name="root_joint"> are prepended, which MuJoCo turns into a
// free joint on the robot's root body. Damping, armature, friction loss and stiffness
// are zeroed in the compiled mjModel, and contact, constraints, limits, equality,
// passive and actuation forces are disabled, so that only rigid-body dynamics remain.
//
// Timed work, each starting from qpos (and qvel, qacc / qfrc) copied into mjData:
//   ID: mj_kinematics, mj_comPos, mj_comVel, mj_rne(flg_acc = 1)
//   M : mj_kinematics, mj_comPos, mj_crb (MuJoCo's sparse qM; no dense copy by mj_fullM)
//   FD: mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne(flg_acc = 0),
//       qfrc_smooth = tau - qfrc_bias, mj_solveM  (the smooth part of mj_forward)
//
// Transition derivatives (plucker_bench --derivatives): mjd_transitionFD on the same model with
// the Euler integrator, the state's tau in qfrc_applied; dqdd/dq and dqdd/dv recovered from the
// velocity rows of A and mapped to plucker's coordinates (MujocoTransitionFd::qdd_derivatives).
//
// Coordinates: a MuJoCo free joint has qpos = [x y z qw qx qy qz], qvel = [linear
// velocity of the body origin in WORLD coordinates; angular velocity in BODY
// coordinates], qacc its time derivative, qfrc the dual [world force; body moment].
// plucker's free-flyer uses the body-frame spatial velocity [omega; v_o] (see peers.hpp),
// so v_lin_mj = R v_o and acc_lin_mj = R (a_o + omega x v_o).
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "peers.hpp"

namespace plucker_bench {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class MujocoPeer final : public Peer {
 public:
  MujocoPeer(mjModel* m, const ModelDesc& desc) : m_(m), d_(mj_makeData(m)), desc_(desc) {}
  ~MujocoPeer() override {
    if (d_) mj_deleteData(d_);
    if (m_) mj_deleteModel(m_);
  }

  // Builds the joint map; returns "" or the reason the models do not correspond.
  std::string map_joints() {
    if (m_->nv != desc_.nv)
      return "nv differs: mujoco " + std::to_string(m_->nv) + ", plucker " + std::to_string(desc_.nv);
    std::map<std::string, int> by_name;
    for (int j = 0; j < m_->njnt; ++j) {
      const char* n = mj_id2name(m_, mjOBJ_JOINT, j);
      if (n) by_name[n] = j;
    }
    for (const JointDesc& jd : desc_.joints) {
      auto it = by_name.find(jd.name);
      if (it == by_name.end()) return "joint '" + jd.name + "' not found in the MuJoCo model";
      const int j = it->second;
      const int type = m_->jnt_type[j];
      if (jd.free_flyer != (type == mjJNT_FREE)) return "joint '" + jd.name + "' has a different type";
      if (!jd.free_flyer && type != mjJNT_HINGE && type != mjJNT_SLIDE)
        return "joint '" + jd.name + "' is neither hinge nor slide";
      joints_.push_back({jd, m_->jnt_qposadr[j], m_->jnt_dofadr[j]});
    }
    return "";
  }

  const char* library() const override { return "mujoco"; }

  // For the transition-derivative adapter below: the model, data, joint map and converted pool.
  struct J {
    JointDesc desc;
    int qadr, dadr;
  };
  mjModel* model() const { return m_; }
  mjData* data() const { return d_; }
  const std::vector<J>& joints() const { return joints_; }
  const StatePool* pool() const { return pool_; }
  const double* qpos(int i) const { return &qpos_[static_cast<std::size_t>(m_->nq) * i]; }
  const double* qvel(int i) const { return &qvel_[static_cast<std::size_t>(m_->nv) * i]; }
  const double* qfrc(int i) const { return &qfrc_[static_cast<std::size_t>(m_->nv) * i]; }

  std::string method(Task task, std::string&) const override {
    switch (task) {
      case Task::InverseDynamics:
        return "mj_kinematics+mj_comPos+mj_comVel+mj_rne(acc)";
      case Task::MassMatrix:
        return "mj_kinematics+mj_comPos+mj_crb (sparse qM)";
      case Task::ForwardDynamics:
        return "mj_kinematics+mj_comPos+mj_crb+mj_factorM+mj_comVel+mj_rne(bias)+mj_solveM";
    }
    return "";
  }

  void set_pool(const StatePool& p) override {
    pool_ = &p;
    n_ = p.n;
    const std::size_t nq = m_->nq, nv = m_->nv;
    qpos_.assign(nq * n_, 0.0);
    qvel_.assign(nv * n_, 0.0);
    qacc_.assign(nv * n_, 0.0);
    qfrc_.assign(nv * n_, 0.0);
    for (int i = 0; i < n_; ++i) {
      const double *q = p.qi(i), *v = p.vi(i), *a = p.ai(i), *tau = p.taui(i);
      double *mq = &qpos_[nq * i], *mv = &qvel_[nv * i], *ma = &qacc_[nv * i], *mf = &qfrc_[nv * i];
      for (const J& j : joints_) {
        if (!j.desc.free_flyer) {
          mq[j.qadr] = q[j.desc.idx_q];
          mv[j.dadr] = v[j.desc.idx_v];
          ma[j.dadr] = a[j.desc.idx_v];
          mf[j.dadr] = tau[j.desc.idx_v];
          continue;
        }
        const double* fq = q + j.desc.idx_q;
        const double *w = v + j.desc.idx_v, *vo = w + 3, *dw = a + j.desc.idx_v, *dvo = dw + 3;
        const double *n_moment = tau + j.desc.idx_v, *n_force = n_moment + 3;
        double R[9];
        quat_xyzw_to_rot(fq + 3, R);
        for (int k = 0; k < 3; ++k) mq[j.qadr + k] = fq[k];
        mq[j.qadr + 3] = fq[6];  // w x y z
        mq[j.qadr + 4] = fq[3];
        mq[j.qadr + 5] = fq[4];
        mq[j.qadr + 6] = fq[5];
        rot_mul(R, vo, mv + j.dadr);  // linear velocity, world
        for (int k = 0; k < 3; ++k) mv[j.dadr + 3 + k] = w[k];
        double wxv[3], acc[3];
        cross3(w, vo, wxv);
        for (int k = 0; k < 3; ++k) acc[k] = dvo[k] + wxv[k];
        rot_mul(R, acc, ma + j.dadr);
        for (int k = 0; k < 3; ++k) ma[j.dadr + 3 + k] = dw[k];
        rot_mul(R, n_force, mf + j.dadr);  // dual of the world linear velocity
        for (int k = 0; k < 3; ++k) mf[j.dadr + 3 + k] = n_moment[k];
      }
    }
    result_.assign(nv, 0.0);
  }

  void run(Task task, int i) override {
    const std::size_t nq = m_->nq, nv = m_->nv;
    std::memcpy(d_->qpos, &qpos_[nq * i], nq * sizeof(mjtNum));
    switch (task) {
      case Task::InverseDynamics:
        std::memcpy(d_->qvel, &qvel_[nv * i], nv * sizeof(mjtNum));
        std::memcpy(d_->qacc, &qacc_[nv * i], nv * sizeof(mjtNum));
        mj_kinematics(m_, d_);
        mj_comPos(m_, d_);
        mj_comVel(m_, d_);
        mj_rne(m_, d_, 1, result_.data());
        break;
      case Task::MassMatrix:
        mj_kinematics(m_, d_);
        mj_comPos(m_, d_);
        mj_crb(m_, d_);
        break;
      case Task::ForwardDynamics:
        std::memcpy(d_->qvel, &qvel_[nv * i], nv * sizeof(mjtNum));
        mj_kinematics(m_, d_);
        mj_comPos(m_, d_);
        mj_crb(m_, d_);
        mj_factorM(m_, d_);
        mj_comVel(m_, d_);
        mj_rne(m_, d_, 0, d_->qfrc_bias);
        mju_sub(d_->qfrc_smooth, &qfrc_[nv * i], d_->qfrc_bias, m_->nv);
        mj_solveM(m_, d_, d_->qacc, d_->qfrc_smooth, 1);
        break;
    }
  }

  void compute(Task task, int i, double* out) override {
    run(task, i);
    const int nv = m_->nv;
    const double* q = pool_->qi(i);
    const double* v = pool_->vi(i);
    // Column map: plucker dof -> (mujoco dof, coefficient) entries, mj = T ours.
    std::vector<std::vector<std::pair<int, double>>> T(nv);
    for (const J& j : joints_) {
      if (!j.desc.free_flyer) {
        T[j.desc.idx_v] = {{j.dadr, 1.0}};
        continue;
      }
      double R[9];
      quat_xyzw_to_rot(q + j.desc.idx_q + 3, R);
      for (int c = 0; c < 3; ++c) {
        T[j.desc.idx_v + c] = {{j.dadr + 3 + c, 1.0}};
        T[j.desc.idx_v + 3 + c] = {{j.dadr, R[c]}, {j.dadr + 1, R[3 + c]}, {j.dadr + 2, R[6 + c]}};
      }
    }
    switch (task) {
      case Task::InverseDynamics:  // tau_ours = T^T tau_mj
        for (int c = 0; c < nv; ++c) {
          double s = 0.0;
          for (auto [k, w] : T[c]) s += w * result_[k];
          out[c] = s;
        }
        break;
      case Task::MassMatrix: {  // M_ours = T^T M_mj T
        std::vector<double> M(static_cast<std::size_t>(nv) * nv);
        mj_fullM(m_, M.data(), d_->qM);  // row-major, symmetric
        for (int c = 0; c < nv; ++c)
          for (int r = 0; r < nv; ++r) {
            double s = 0.0;
            for (auto [k, wk] : T[r])
              for (auto [l, wl] : T[c]) s += wk * wl * M[static_cast<std::size_t>(k) * nv + l];
            out[static_cast<std::size_t>(c) * nv + r] = s;
          }
        break;
      }
      case Task::ForwardDynamics:
        for (const J& j : joints_) {
          if (!j.desc.free_flyer) {
            out[j.desc.idx_v] = d_->qacc[j.dadr];
            continue;
          }
          double R[9], lin[3], wxv[3];
          quat_xyzw_to_rot(q + j.desc.idx_q + 3, R);
          const double *w = v + j.desc.idx_v, *vo = w + 3;
          rot_tmul(R, d_->qacc + j.dadr, lin);
          cross3(w, vo, wxv);
          for (int k = 0; k < 3; ++k) {
            out[j.desc.idx_v + k] = d_->qacc[j.dadr + 3 + k];
            out[j.desc.idx_v + 3 + k] = lin[k] - wxv[k];
          }
        }
        break;
    }
  }

 private:
  mjModel* m_;
  mjData* d_;
  ModelDesc desc_;
  std::vector<J> joints_;
  const StatePool* pool_ = nullptr;
  int n_ = 0;
  std::vector<double> qpos_, qvel_, qacc_, qfrc_, result_;
};

}  // namespace

namespace {
std::unique_ptr<MujocoPeer> load_mujoco_peer(const ModelDesc& desc, std::string& why) {
  std::string xml = read_text(desc.urdf);
  if (xml.empty()) {
    why = "cannot read " + desc.urdf;
    return nullptr;
  }
  if (desc.floating) {
    // A dummy world link + a floating joint to the root link: MuJoCo's importer makes
    // it a free joint (qpos/qvel conventions above).
    const std::size_t robot = xml.find("<robot");
    const std::size_t close = robot == std::string::npos ? robot : xml.find('>', robot);
    if (close == std::string::npos) {
      why = "no <robot> element";
      return nullptr;
    }
    const std::string extra =
        "\n<link name=\"plucker_mj_world__\"/>\n<joint name=\"root_joint\" type=\"floating\">"
        "<parent link=\"plucker_mj_world__\"/><child link=\"" +
        desc.root_link + "\"/></joint>\n";
    xml.insert(close + 1, extra);
  }
  char path[] = "/tmp/plucker_bench_mujoco_XXXXXX.urdf";
  const int fd = mkstemps(path, 5);
  if (fd < 0) {
    why = "cannot create a temporary file";
    return nullptr;
  }
  {
    FILE* f = fdopen(fd, "w");
    std::fwrite(xml.data(), 1, xml.size(), f);
    std::fclose(f);
  }
  char err[1024] = "";
  mjModel* m = mj_loadXML(path, nullptr, err, sizeof(err));
  std::remove(path);
  if (!m) {
    why = std::string("mj_loadXML: ") + err;
    for (char& c : why)
      if (c == '\n') c = ' ';
    return nullptr;
  }
  for (int k = 0; k < m->nv; ++k) m->dof_armature[k] = m->dof_damping[k] = m->dof_frictionloss[k] = 0.0;
  for (int j = 0; j < m->njnt; ++j) m->jnt_stiffness[j] = 0.0;
  m->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT | mjDSBL_CONTACT |
                         mjDSBL_PASSIVE | mjDSBL_ACTUATION;
  for (int k = 0; k < 3; ++k) m->opt.gravity[k] = desc.gravity[k];
  auto peer = std::make_unique<MujocoPeer>(m, desc);
  why = peer->map_joints();
  if (!why.empty()) return nullptr;
  return peer;
}
}  // namespace

std::unique_ptr<Peer> make_mujoco_peer(const ModelDesc& desc, std::string& why) { return load_mujoco_peer(desc, why); }

namespace {

/// skew(x) y = x cross y, row-major 3 x 3.
void skew3(const double* x, double S[9]) {
  S[0] = 0.0, S[1] = -x[2], S[2] = x[1];
  S[3] = x[2], S[4] = 0.0, S[5] = -x[0];
  S[6] = -x[1], S[7] = x[0], S[8] = 0.0;
}

/// C = A B, row-major, A r x k, B k x c.
void matmul(const std::vector<double>& A, const std::vector<double>& B, int r, int k, int c, std::vector<double>& C) {
  C.assign(static_cast<std::size_t>(r) * c, 0.0);
  for (int i = 0; i < r; ++i)
    for (int l = 0; l < k; ++l) {
      const double a = A[static_cast<std::size_t>(i) * k + l];
      if (a == 0.0) continue;
      for (int j = 0; j < c; ++j) C[static_cast<std::size_t>(i) * c + j] += a * B[static_cast<std::size_t>(l) * c + j];
    }
}

/// mjd_transitionFD on the peer model (what it computes: peers.hpp, TransitionFd).
class MujocoTransitionFd final : public TransitionFd {
 public:
  MujocoTransitionFd(std::unique_ptr<MujocoPeer> peer, double eps) : p_(std::move(peer)), eps_(eps) {
    mjModel* m = p_->model();
    m->opt.integrator = mjINT_EULER;  // MuJoCo's default, made explicit: v' = v + h qdd, q' = q + h v'
    n_ = 2 * m->nv + m->na;
    A_.assign(static_cast<std::size_t>(n_) * n_, 0.0);
  }
  int columns() const override { return n_; }
  double timestep() const override { return p_->model()->opt.timestep; }
  void set_pool(const StatePool& pool) override { p_->set_pool(pool); }
  void forward(int i) override {
    load(i);
    mj_forward(p_->model(), p_->data());
  }
  void transition(int i, bool centered) override {
    load(i);
    mjd_transitionFD(p_->model(), p_->data(), eps_, centered ? 1 : 0, A_.data(), nullptr, nullptr, nullptr);
  }
  int steps_per_call(int i, bool centered) override {
    mjData* d = p_->data();
    d->time = 0.0;
    transition(i, centered);
    const int n = static_cast<int>(std::lround(d->time / p_->model()->opt.timestep));
    d->time = 0.0;
    return n;
  }

  void qdd_derivatives(int i, bool centered, double* dq_out, double* dv_out) override {
    const mjModel* m = p_->model();
    const int nv = m->nv;
    const std::size_t nn = static_cast<std::size_t>(nv) * nv;
    const double h = m->opt.timestep;
    transition(i, centered);
    // MuJoCo's dqdd/dq (its position tangent) and dqdd/dv (its qvel), row-major, from the
    // velocity rows of A (row-major, (2 nv + na) columns): dv'/dq = h Gq, dv'/dv = I + h Gv.
    std::vector<double> Gq(nn), Gv(nn);
    for (int r = 0; r < nv; ++r)
      for (int c = 0; c < nv; ++c) {
        const std::size_t row = static_cast<std::size_t>(nv + r) * n_;
        Gq[static_cast<std::size_t>(r) * nv + c] = A_[row + c] / h;
        Gv[static_cast<std::size_t>(r) * nv + c] = (A_[row + nv + c] - (r == c ? 1.0 : 0.0)) / h;
      }
    forward(i);  // the nominal qacc, for the free joint's acceleration conversion
    const double* qacc = p_->data()->qacc;
    // plucker's qdd = S qacc + c(q, v) with MuJoCo's state (q_mj, v_mj) a function of plucker's:
    //   T   = d v_mj / d v = d q_mj / d q (tangents)   (mj x ours)
    //   Dvq = d v_mj / d q at fixed plucker v          (mj x ours)
    //   Dfq = d qfrc_mj / d q at fixed plucker tau     (mj x ours; the free joint's force is
    //         fixed in body axes for plucker, in world axes in qfrc_applied)
    //   S   = d qdd / d qacc                            (ours x mj)
    //   Pq, Pv: the explicit q- and v-dependence of the conversion (ours x ours)
    // so dqdd/dq = S (Gq T + Gv Dvq + M^-1 Dfq) + Pq and dqdd/dv = S Gv T + Pv (M^-1: MuJoCo's
    // factor of the nominal mj_forward). Free joint (peers.hpp): v_mj = [R v_o; w],
    // qacc = [R (a_o + w x v_o); dw], qfrc = [R f; n]; a rotation tangent e_k turns R into
    // R exp(e_k^), a translation tangent moves the origin by R e_k.
    std::vector<double> T(nn, 0.0), S(nn, 0.0), Dvq(nn, 0.0), Dfq(nn, 0.0), Pq(nn, 0.0), Pv(nn, 0.0);
    auto at = [nv](std::vector<double>& M, int r, int c) -> double& { return M[static_cast<std::size_t>(r) * nv + c]; };
    const double* q = p_->pool()->qi(i);
    const double* v = p_->pool()->vi(i);
    const double* tau = p_->pool()->taui(i);
    for (const MujocoPeer::J& j : p_->joints()) {
      const int o = j.desc.idx_v, a = j.dadr;
      if (!j.desc.free_flyer) {
        at(T, a, o) = 1.0;
        at(S, o, a) = 1.0;
        continue;
      }
      double R[9], Svo[9], Sw[9], Salin[9], Sf[9], alin[3];
      quat_xyzw_to_rot(q + j.desc.idx_q + 3, R);
      const double *w = v + o, *vo = w + 3, *f = tau + o + 3;
      skew3(f, Sf);
      rot_tmul(R, qacc + a, alin);  // R^T qacc_lin = a_o + w x v_o
      skew3(vo, Svo);
      skew3(w, Sw);
      skew3(alin, Salin);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          at(T, a + 3 + r, o + c) = r == c ? 1.0 : 0.0;  // angular: body frame in both
          at(T, a + r, o + 3 + c) = R[3 * r + c];        // linear: world (mj) = R body (ours)
          at(S, o + r, a + 3 + c) = r == c ? 1.0 : 0.0;
          at(S, o + 3 + r, a + c) = R[3 * c + r];  // R^T
          double rs = 0.0;                         // d (R v_o) / d rotation tangent = -R skew(v_o)
          for (int k = 0; k < 3; ++k) rs += R[3 * r + k] * Svo[3 * k + c];
          at(Dvq, a + r, o + c) = -rs;
          double rf = 0.0;  // d (R f) / d rotation tangent = -R skew(f), f: the body-frame force
          for (int k = 0; k < 3; ++k) rf += R[3 * r + k] * Sf[3 * k + c];
          at(Dfq, a + r, o + c) = -rf;
          at(Pq, o + 3 + r, o + c) = Salin[3 * r + c];    // d (R^T x) / d rotation tangent = skew(R^T x)
          at(Pv, o + 3 + r, o + c) = Svo[3 * r + c];      // d (-w x v_o) / d w = skew(v_o)
          at(Pv, o + 3 + r, o + 3 + c) = -Sw[3 * r + c];  // d (-w x v_o) / d v_o = -skew(w)
        }
    }
    std::vector<double> GqT, GvD, GvT, X, Y;
    matmul(Gq, T, nv, nv, nv, GqT);
    matmul(Gv, Dvq, nv, nv, nv, GvD);
    for (std::size_t k = 0; k < nn; ++k) GqT[k] += GvD[k];
    std::vector<double> col(nv), sol(nv);  // + M^-1 Dfq, column by column
    for (int c = 0; c < nv; ++c) {
      bool any = false;
      for (int r = 0; r < nv; ++r) any |= (col[r] = at(Dfq, r, c)) != 0.0;
      if (!any) continue;
      mj_solveM(m, p_->data(), sol.data(), col.data(), 1);
      for (int r = 0; r < nv; ++r) at(GqT, r, c) += sol[r];
    }
    matmul(S, GqT, nv, nv, nv, X);
    matmul(Gv, T, nv, nv, nv, GvT);
    matmul(S, GvT, nv, nv, nv, Y);
    for (int r = 0; r < nv; ++r)
      for (int c = 0; c < nv; ++c) {
        const std::size_t rm = static_cast<std::size_t>(r) * nv + c, cm = static_cast<std::size_t>(c) * nv + r;
        dq_out[cm] = X[rm] + Pq[rm];
        dv_out[cm] = Y[rm] + Pv[rm];
      }
  }

 private:
  void load(int i) {
    const mjModel* m = p_->model();
    mjData* d = p_->data();
    std::memcpy(d->qpos, p_->qpos(i), sizeof(mjtNum) * m->nq);
    std::memcpy(d->qvel, p_->qvel(i), sizeof(mjtNum) * m->nv);
    std::memcpy(d->qfrc_applied, p_->qfrc(i), sizeof(mjtNum) * m->nv);
  }
  std::unique_ptr<MujocoPeer> p_;
  double eps_;
  int n_ = 0;
  std::vector<double> A_;
};

}  // namespace

std::unique_ptr<TransitionFd> make_mujoco_transition_fd(const ModelDesc& desc, double eps, std::string& why) {
  std::unique_ptr<MujocoPeer> peer = load_mujoco_peer(desc, why);
  if (!peer) return nullptr;
  const mjModel* m = peer->model();
  if (m->nu != 0 || m->na != 0 || m->nsensordata != 0) {
    why = "the MuJoCo model has actuators, activations or sensors (nu " + std::to_string(m->nu) + ", na " +
          std::to_string(m->na) + ", nsensordata " + std::to_string(m->nsensordata) + ")";
    return nullptr;
  }
  return std::make_unique<MujocoTransitionFd>(std::move(peer), eps);
}

namespace {
/// mj_loadXML of the text `xml` written to a temporary file with the suffix; nullptr and `why`.
mjModel* load_text(const std::string& xml, const char* suffix, std::string& why) {
  std::string pattern = std::string("/tmp/plucker_bench_mujoco_XXXXXX") + suffix;
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  const int fd = mkstemps(path.data(), static_cast<int>(std::strlen(suffix)));
  if (fd < 0) {
    why = "cannot create a temporary file";
    return nullptr;
  }
  FILE* f = fdopen(fd, "w");
  std::fwrite(xml.data(), 1, xml.size(), f);
  std::fclose(f);
  char err[1024] = "";
  mjModel* m = mj_loadXML(path.data(), nullptr, err, sizeof(err));
  std::remove(path.data());
  if (!m) {
    why = std::string("mj_loadXML: ") + err;
    for (char& c : why)
      if (c == '\n') c = ' ';
  }
  return m;
}
}  // namespace

std::string mujoco_contact_timing(const ModelDesc& desc, const ContactWorld& world, ContactTiming& out) {
  // 1. The URDF (floating root prepended) through MuJoCo's importer, saved back as MJCF.
  std::string xml = read_text(desc.urdf), why;
  if (xml.empty()) return "cannot read " + desc.urdf;
  if (!desc.floating) return "the contact world needs a floating base";
  const std::size_t robot = xml.find("<robot");
  const std::size_t close = robot == std::string::npos ? robot : xml.find('>', robot);
  if (close == std::string::npos) return "no <robot> element";
  xml.insert(close + 1,
             "\n<link name=\"plucker_mj_world__\"/>\n<joint name=\"root_joint\" type=\"floating\">"
             "<parent link=\"plucker_mj_world__\"/><child link=\"" +
                 desc.root_link + "\"/></joint>\n");
  mjModel* m0 = load_text(xml, ".urdf", why);
  if (!m0) return why;
  char saved[] = "/tmp/plucker_bench_mujoco_XXXXXX.xml";
  const int fd = mkstemps(saved, 4);
  if (fd < 0) {
    mj_deleteModel(m0);
    return "cannot create a temporary file";
  }
  ::close(fd);
  char err[1024] = "";
  const int ok = mj_saveLastXML(saved, m0, err, sizeof(err));
  mj_deleteModel(m0);
  std::string mjcf = read_text(saved);
  std::remove(saved);
  if (!ok || mjcf.empty()) return std::string("mj_saveLastXML: ") + err;
  // 2. The ground plane and the foot spheres (the spheres collide with the plane only).
  const std::size_t wb = mjcf.find("<worldbody>");
  if (wb == std::string::npos) return "no <worldbody> in the saved MJCF";
  mjcf.insert(wb + 11, "\n<geom name=\"plucker_ground\" type=\"plane\" size=\"0 0 1\"/>");
  for (std::size_t k = 0; k < world.foot_bodies.size(); ++k) {
    const std::string key = "<body name=\"" + world.foot_bodies[k] + "\"";
    const std::size_t at = mjcf.find(key);
    if (at == std::string::npos) return "body '" + world.foot_bodies[k] + "' not in the MuJoCo model";
    const std::size_t end = mjcf.find('>', at);
    char geom[256];
    std::snprintf(geom, sizeof(geom),
                  "\n<geom name=\"plucker_foot_%zu\" type=\"sphere\" size=\"%.17g\" pos=\"%.17g %.17g %.17g\"/>", k,
                  world.radius, world.foot_centers[3 * k], world.foot_centers[3 * k + 1],
                  world.foot_centers[3 * k + 2]);
    mjcf.insert(end + 1, geom);
  }
  mjModel* m = load_text(mjcf, ".xml", why);
  if (!m) return why;
  // 3. The same dynamics as the plucker side: no joint damping, armature, friction loss, limits,
  // passive or actuator forces; contact on; MuJoCo's Euler step (semi-implicit) at dt.
  for (int k = 0; k < m->nv; ++k) m->dof_armature[k] = m->dof_damping[k] = m->dof_frictionloss[k] = 0.0;
  for (int j = 0; j < m->njnt; ++j) m->jnt_stiffness[j] = 0.0;
  m->opt.disableflags |= mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT | mjDSBL_PASSIVE | mjDSBL_ACTUATION;
  for (int k = 0; k < 3; ++k) m->opt.gravity[k] = desc.gravity[k];
  m->opt.timestep = world.dt;
  m->opt.integrator = mjINT_EULER;
  const int ground = mj_name2id(m, mjOBJ_GEOM, "plucker_ground");
  for (int g = 0; g < m->ngeom; ++g) {
    const bool is_ground = g == ground;
    m->geom_contype[g] = is_ground ? 0 : 1;
    m->geom_conaffinity[g] = is_ground ? 1 : 0;
    m->geom_friction[3 * g] = world.mu;
  }
  out.method = "mj_step (Euler, dt " + std::to_string(world.dt) +
               ", default soft contact: " + (m->opt.cone == mjCONE_PYRAMIDAL ? "pyramidal" : "elliptic") +
               " cone, solver " +
               (m->opt.solver == mjSOL_NEWTON ? "Newton"
                : m->opt.solver == mjSOL_CG   ? "CG"
                                              : "PGS") +
               ", iterations " + std::to_string(m->opt.iterations) + ")";
  // 4. Joint map: plucker q/v index -> MuJoCo qpos/dof address.
  struct Map {
    int idx_q, idx_v, qadr, dadr;
    bool free;
  };
  std::vector<Map> map;
  for (const JointDesc& jd : desc.joints) {
    const int j = mj_name2id(m, mjOBJ_JOINT, jd.name.c_str());
    if (j < 0) {
      mj_deleteModel(m);
      return "joint '" + jd.name + "' not in the MuJoCo model";
    }
    map.push_back({jd.idx_q, jd.idx_v, m->jnt_qposadr[j], m->jnt_dofadr[j], jd.free_flyer});
  }
  auto rollout = [&](mjData* d) {
    mj_resetData(m, d);
    for (const Map& j : map) {
      if (!j.free) {
        d->qpos[j.qadr] = world.q0[static_cast<std::size_t>(j.idx_q)];
        continue;
      }
      const double* fq = &world.q0[static_cast<std::size_t>(j.idx_q)];
      for (int k = 0; k < 3; ++k) d->qpos[j.qadr + k] = fq[k];
      d->qpos[j.qadr + 3] = fq[6];
      d->qpos[j.qadr + 4] = fq[3];
      d->qpos[j.qadr + 5] = fq[4];
      d->qpos[j.qadr + 6] = fq[5];
    }
    for (int t = 0; t < world.steps; ++t) {
      for (const Map& j : map)
        if (!j.free)
          d->qfrc_applied[j.dadr] = world.kp * (world.q_des[static_cast<std::size_t>(j.idx_q)] - d->qpos[j.qadr]) -
                                    world.kd * d->qvel[j.dadr];
      mj_step(m, d);
    }
  };
  mjData* d = mj_makeData(m);
  rollout(d);  // warm
  for (const Map& j : map)
    if (j.free) out.final_height = d->qpos[j.qadr + 2];
  out.final_contacts = d->ncon;
  for (int c = 0; c < d->ncon; ++c) {
    mjtNum f[6];
    mj_contactForce(m, d, c, f);  // contact frame: normal first
    out.final_force_z += f[0] * d->contact[c].frame[2] + f[1] * d->contact[c].frame[5] + f[2] * d->contact[c].frame[8];
  }
  for (int r = 0; r < world.reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    rollout(d);
    out.seconds_single.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  mj_deleteData(d);
  // Batched: `batch` rollouts on 2 threads, each with its own mjData.
  for (int r = 0; r < world.reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int th = 0; th < 2; ++th)
      pool.emplace_back([&, th] {
        mjData* dd = mj_makeData(m);
        for (int b = th; b < world.batch; b += 2) rollout(dd);
        mj_deleteData(dd);
      });
    for (std::thread& t : pool) t.join();
    out.seconds_batch.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  mj_deleteModel(m);
  return "";
}

}  // namespace plucker_bench
