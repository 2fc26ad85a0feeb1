// Procedural model builders for tests, benchmarks and examples.
//
// Every builder is deterministic: the same arguments (seed included) give a
// bit-identical Model (std::mt19937_64; with the same standard library, since
// std::uniform_real_distribution is implementation-defined). Every random draw is its own
// statement, so g++ and clang++ put the same numbers in the same places; only the arithmetic
// after the draws may differ in the last bits between compilers (FMA contraction with
// -march=native). The seed perturbs masses
// and lengths by a few percent (build_chain and build_all_joints_tree draw their masses,
// lengths and joint placements from it), so a test can run the same algorithm on a
// family of slightly different robots.
// Every inertia is physically valid (built with RigidBodyInertia::from_mass_com_inertia).
#pragma once

#include <cstdint>
#include <vector>

#include "plucker/model/model.hpp"

namespace plucker {

/// Fixed-base serial chain of n revolute bodies ("link1".."linkN", joints "joint1".."jointN").
/// Joint k (0-based) turns about axes[k % axes.size()] (through make_revolute, so +x/+y/+z
/// take the fast path). Links are 0.1-0.3 m long, masses 0.5-2 kg (uniform, from the seed),
/// rod-like inertias, and each joint frame is rotated by a small random rotation (< 0.1 rad)
/// relative to the end of the previous link. No position limits.
/// Throws InvalidArgument for n < 0, an empty axes list or a zero/non-finite axis.
Model build_chain(int n, const std::vector<Vec3>& axes = {Vec3::UnitZ(), Vec3::UnitY()}, std::uint64_t seed = 0);

/// Fixed-base kinematic tree of n revolute bodies in the spirit of Featherstone's autoTree
/// (spatial_v2):
///  * parent(i) = floor((i - 2 + ceil(bf)) / bf) for i = 1..n (body 0 is the base): bf = 1
///    gives an unbranched chain, bf = 2 a binary tree (parent(i) = floor(i/2)), non-integer
///    bf something in between. Requires bf >= 1.
///  * link i has length taper^(i-1) and mass taper^(i-1) (each times 1 +- 3 % from the seed),
///    COM at half its length along its x axis, inertia about the COM
///    m l^2 diag(0.0025, 1.015/12, 1.015/12) as in autoTree; the child joint sits at the
///    end of the parent link (x = parent's length).
///  * the joint axis of a body at depth d is Rx(skew * (d - 1)) z, so successive joint axes
///    are rotated by `skew` about the link direction: skew = 0 gives all-z axes (fast
///    path, a planar mechanism), other values general unit axes (JointRevolute).
/// Throws InvalidArgument for n < 0, bf < 1 or non-finite, taper <= 0 or non-finite, or a
/// non-finite skew.
Model build_random_tree(int n, double branching_factor, double skew, double taper, std::uint64_t seed = 0);

/// Humanoid-like tree, total mass ~69 kg (+- a few %): pelvis (body 1, free-flyer to the world
/// if floating_base, else welded with a fixed joint), torso (torso_z, torso_y), head (neck_z,
/// neck_y), two arms l_/r_ (shoulder_y, shoulder_x, shoulder_z, elbow, wrist_z, wrist_x, wrist_y)
/// and two legs l_/r_ (hip_z, hip_x, hip_y, knee, ankle_y, ankle_x), all 1-DoF revolute joints
/// about the body x/y/z axes (fast path) with position/velocity/effort limits that contain 0.
/// Frames "l_sole", "r_sole", "l_hand_tip", "r_hand_tip".
/// Sizes: 30 actuated DoF; floating: nq = 37, nv = 36; fixed: nq = nv = 30. Pelvis frame:
/// x forward, y left, z up.
Model build_humanoid(std::uint64_t seed = 0, bool floating_base = true);

/// Quadruped (ANYmal/HyQ-like): trunk ~25 kg (body 1, free-flyer if floating_base, else fixed)
/// and four legs LF, RF, LH, RH, each ~2.5 kg with joints `<leg>_HAA` (about x), `<leg>_HFE` (about
/// y), `<leg>_KFE` (about y) and bodies `<leg>_HIP`, `<leg>_THIGH`, `<leg>_SHANK`; frames `<leg>_FOOT`.
/// Floating: nq = 19, nv = 18; fixed: nq = nv = 12.
Model build_quadruped(std::uint64_t seed = 0, bool floating_base = true);

/// A small floating-base tree that uses every joint kind of joints.hpp at least once: free-flyer
/// root, fixed, revolute x/y/z and general axis, prismatic x/y/z and general axis, helical,
/// cylindrical, planar (z normal and a general normal), spherical, a 2-column general joint
/// (rotation about and translation along one offset axis) and a 1-column general screw joint.
/// 17 moving bodies, nq = 33, nv = 29. Masses (0.5-2 kg), rotated box inertias, COM offsets and
/// joint placements (rotations < 0.5 rad, offsets 0.1-0.3 m) are drawn from the seed; the joint
/// kinds, axes and topology are the same for every seed. Some joints have finite position limits
/// (the free-flyer position within +-2 m).
Model build_all_joints_tree(std::uint64_t seed = 0);

// ---- closed-loop mechanisms (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3.4):
// spanning tree + loop joints ---- Links are solid rods (radius 0.02 m) of `density` kg per metre. Each is built so
// that neutral(model) is an assembled configuration (phi(q) = 0); the nominal angles are built into the tree joints'
// X_tree.

/// Planar four-bar in the x-y plane, gravity (0, -9.81, 0): ground pivots A = origin and
/// D = (ground, 0, 0); "crank" turns about A (joint "crank_joint", q = its absolute angle from
/// +x, minus crank_angle), "coupler" hangs from the crank tip ("coupler_joint"), "rocker" turns
/// about D ("rocker_joint"); every q is the offset from the nominal (assembled) angle.
/// The revolute loop joint "loop_joint" (axis z) joins the coupler's far end to the rocker's
/// far end. Modelled in 3D, its 5 constraint rows have rank 2 (3 redundant rows).
/// `crank_angle`: the crank angle at q = 0; `branch` (+1 / -1) picks the assembly (+1: the
/// coupler-rocker joint on the +y side of the diagonal from the crank tip to D). Throws
/// InvalidArgument when the linkage cannot close at crank_angle.
struct FourBarParams {
  double ground = 1.0, crank = 0.3, coupler = 0.9, rocker = 0.7;
  double density = 2.0;      ///< kg per metre of link
  double crank_angle = 1.0;  ///< rad
  int branch = 1;
};
Model build_four_bar(const FourBarParams& params = {});

/// Planar slider-crank in the x-y plane, gravity (0, -9.81, 0): "crank" (length `crank`) turns
/// about the origin ("crank_joint", angle minus crank_angle), "rod" (length `rod`) hangs from its tip
/// ("rod_joint"), "slider" (mass slider_mass) moves along x ("slider_joint", prismatic, offset
/// from its nominal position). Revolute loop joint "wrist_pin" joins the rod's far end to the
/// slider. Requires rod > crank.
struct SliderCrankParams {
  double crank = 0.2, rod = 0.6, density = 2.0, slider_mass = 1.0, crank_angle = 0.5;
};
Model build_slider_crank(const SliderCrankParams& params = {});

/// A 3-DoF Delta-type translational parallel robot (Clavel's Delta with each forearm
/// parallelogram replaced by its kinematic equivalent, one forearm with a universal joint at
/// each end whose axes are parallel to the actuated axis u_i and to each other (Tsai's 3-RUU
/// condition: the platform can only translate)). Three actuated revolute "arm_i_joint" on a
/// base of radius base_radius; the platform hangs from leg 1's wrist in the tree and is closed to
/// legs 2 and 3 by two revolute loop joints "wrist_2_u", "wrist_3_u". Gravity -z. nv = 13, 10 loop
/// constraints, mobility 3. neutral(model) is the symmetric configuration with every arm
/// `arm_angle` below horizontal (arm q = offset from it). Frame "platform_center" is on the
/// platform.
struct DeltaParams {
  double base_radius = 0.2, platform_radius = 0.05, arm = 0.25, forearm = 0.6;
  double arm_mass = 0.4, rod_mass = 0.1, platform_mass = 0.3, arm_angle = 0.4;
};
Model build_delta(const DeltaParams& params = {});

/// build_random_tree(n, branching_factor, 0.5, 1, seed) with every joint frame turned by a
/// random rotation (< 0.8 rad; so the joint axes span space), plus `loops` loop joints of `type`
/// between random bodies joined through at least 3 more tree joints than the loop joint has
/// constraints (so every loop keeps >= 3 DoF), placed so that neutral(model) is assembled. Loops may share
/// tree joints, so L can still be rank-deficient. For tests and benchmarks of the constrained solvers.
Model build_random_loops(int n, int loops, LoopJointType type, double branching_factor = 2.0, std::uint64_t seed = 0);

}  // namespace plucker
