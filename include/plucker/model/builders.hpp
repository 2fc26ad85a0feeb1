// Procedural model builders for tests, benchmarks and examples.
//
// Every builder is deterministic: the same arguments (seed included) give a
// bit-identical Model (std::mt19937_64; with the same standard library, since
// std::uniform_real_distribution is implementation-defined). The seed perturbs masses
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
/// and four legs LF, RF, LH, RH, each ~2.5 kg with joints <leg>_HAA (about x), <leg>_HFE (about
/// y), <leg>_KFE (about y) and bodies <leg>_HIP, <leg>_THIGH, <leg>_SHANK; frames <leg>_FOOT.
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

}  // namespace plucker
