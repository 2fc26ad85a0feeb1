// The trajectory the CLI writes (plucker_cli.py, `plucker view`) and how its samples set the
// robot's joints. Format "plucker-trajectory/1":
//   t      [T] sample times, strictly increasing [s]
//   q      [T][nq] configurations in plucker's order (DEVELOPERS.md)
//   joints [{name, kind, q, nq}] where each joint's coordinates start in a row of q; kind is
//          "revolute" | "prismatic" (1 value: angle or displacement along the URDF axis),
//          "free_flyer" (7: [x y z qx qy qz qw], position in the parent frame and unit quaternion
//          child-to-parent; the root joint "root_joint" that plucker adds is the robot's pose in
//          the world), "spherical" (4: [qx qy qz qw]) or "pose" (any other kind: the CLI gives
//          the child link's pose in the parent link, [x y z qx qy qz qw], per sample in poses)
//   poses  {joint name: [T][7]} for the joints of kind "pose"
//   com    [T][3] centre of mass in the world, from plucker.center_of_mass

import * as THREE from 'three';

export const FORMAT = 'plucker-trajectory/1';

/** Index k and weight w in [0, 1] with t between t[k] and t[k + 1] (clamped to the ends). */
export function locate(times, t) {
    const n = times.length;
    if (n === 1 || t <= times[0]) return [0, 0];
    if (t >= times[n - 1]) return [n - 1, 0];
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (times[mid] <= t) lo = mid;
        else hi = mid;
    }
    return [lo, (t - times[lo]) / (times[hi] - times[lo])];
}

function lerp(a, b, w) {
    return a + (b - a) * w;
}

// Normalised linear interpolation of two unit quaternions [x y z w] (the shorter way round).
function nlerp(row0, row1, i, w, out) {
    const s = row0[i] * row1[i] + row0[i + 1] * row1[i + 1] + row0[i + 2] * row1[i + 2] + row0[i + 3] * row1[i + 3];
    const sign = s < 0 ? -1 : 1;
    out.set(
        lerp(row0[i], sign * row1[i], w),
        lerp(row0[i + 1], sign * row1[i + 1], w),
        lerp(row0[i + 2], sign * row1[i + 2], w),
        lerp(row0[i + 3], sign * row1[i + 3], w),
    );
    return out.normalize();
}

const tmpQ = new THREE.Quaternion();
const tmpP = new THREE.Vector3();

/** Checks a trajectory against the loaded robot; returns a list of problems (empty if none). */
export function check(traj, robot) {
    const problems = [];
    if (traj.format !== FORMAT) problems.push(`trajectory format '${traj.format}', expected '${FORMAT}'`);
    const T = traj.t.length;
    if (T === 0) problems.push('the trajectory has no samples');
    if (traj.q.length !== T) problems.push(`${traj.t.length} times but ${traj.q.length} rows of q`);
    for (const j of traj.joints) {
        if (j.name === 'root_joint' && !(j.name in robot.joints)) continue;
        const joint = robot.joints[j.name];
        if (!joint) {
            problems.push(`joint '${j.name}' of the trajectory is not in the URDF`);
            continue;
        }
        const type = joint.jointType;
        const ok = {
            revolute: ['revolute', 'continuous'],
            prismatic: ['prismatic'],
            free_flyer: ['floating'],
            spherical: ['spherical', 'ball'],
            pose: null,
        }[j.kind];
        if (ok === undefined) problems.push(`joint '${j.name}': unknown kind '${j.kind}'`);
        else if (ok !== null && !ok.includes(type)) {
            problems.push(`joint '${j.name}' is ${j.kind} in the trajectory but ${type} in the URDF`);
        }
        if (j.kind === 'pose' && !(traj.poses && traj.poses[j.name] && traj.poses[j.name].length === T)) {
            problems.push(`joint '${j.name}': no poses given`);
        }
    }
    return problems;
}

/**
 * Sets the robot's joints (and root pose) to the trajectory at time t; returns the sample
 * index and weight used. Mimic followers are set after the other joints, from their own
 * coordinates, so the drawing shows the data as it is.
 */
export function apply(traj, robot, t) {
    const [k, w] = locate(traj.t, t);
    const k1 = Math.min(k + 1, traj.t.length - 1);
    const q0 = traj.q[k];
    const q1 = traj.q[k1];
    const isMimic = (j) => (robot.joints[j.name] && robot.joints[j.name].type === 'URDFMimicJoint' ? 1 : 0);
    const ordered = [...traj.joints].sort((a, b) => isMimic(a) - isMimic(b));
    for (const j of ordered) {
        const i = j.q;
        if (j.name === 'root_joint' && !(j.name in robot.joints)) {
            robot.position.set(lerp(q0[i], q1[i], w), lerp(q0[i + 1], q1[i + 1], w), lerp(q0[i + 2], q1[i + 2], w));
            nlerp(q0, q1, i + 3, w, robot.quaternion);
            continue;
        }
        const joint = robot.joints[j.name];
        if (!joint.origPosition) {
            joint.origPosition = joint.position.clone();
            joint.origQuaternion = joint.quaternion.clone();
        }
        switch (j.kind) {
            case 'revolute':
            case 'prismatic':
                joint.ignoreLimits = true;
                joint.setJointValue(lerp(q0[i], q1[i], w));
                break;
            case 'free_flyer':
                tmpP.set(lerp(q0[i], q1[i], w), lerp(q0[i + 1], q1[i + 1], w), lerp(q0[i + 2], q1[i + 2], w));
                joint.position.copy(tmpP.applyQuaternion(joint.origQuaternion)).add(joint.origPosition);
                joint.quaternion.copy(joint.origQuaternion).multiply(nlerp(q0, q1, i + 3, w, tmpQ));
                break;
            case 'spherical':
                joint.quaternion.copy(joint.origQuaternion).multiply(nlerp(q0, q1, i, w, tmpQ));
                break;
            case 'pose': {
                const p0 = traj.poses[j.name][k];
                const p1 = traj.poses[j.name][k1];
                joint.position.set(lerp(p0[0], p1[0], w), lerp(p0[1], p1[1], w), lerp(p0[2], p1[2], w));
                nlerp(p0, p1, 3, w, joint.quaternion);
                break;
            }
        }
    }
    robot.updateMatrixWorld(true);
    return [k, w];
}

/** The centre of mass at time t (interpolated), or null when the trajectory has none. */
export function centerOfMass(traj, t, out) {
    if (!traj.com) return null;
    const [k, w] = locate(traj.t, t);
    const a = traj.com[k];
    const b = traj.com[Math.min(k + 1, traj.t.length - 1)];
    return out.set(lerp(a[0], b[0], w), lerp(a[1], b[1], w), lerp(a[2], b[2], w));
}
