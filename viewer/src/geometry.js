// What to draw for each link. The URDF loader builds <visual> (and, asked to, <collision>) boxes,
// cylinders and spheres itself; mesh files are not shipped with the robots we show, so a link
// whose geometry is only meshes (or that has none) is drawn as capsules from its origin to each
// child joint's origin, a rod through its centre of mass when it has no children (a link of a
// linkage: the rod ends where it began, mirrored through the COM), else a ball.

import * as THREE from 'three';

export const COLORS = {
    fallback: new THREE.Color(0.93, 0.45, 0.1), // capsules: the robot's colour (the test looks for it)
    primitive: new THREE.Color(0.42, 0.52, 0.68), // URDF primitives without a <material>
    collision: new THREE.Color(0.55, 0.62, 0.45),
};

function meshes(group) {
    return group.children.filter((c) => c.isMesh);
}

/** Capsule of radius r from a to b (vectors in the link frame). */
function capsule(a, b, r, material) {
    const d = new THREE.Vector3().subVectors(b, a);
    const len = d.length();
    const m = new THREE.Mesh(new THREE.CapsuleGeometry(r, len, 6, 16), material);
    m.position.addVectors(a, b).multiplyScalar(0.5);
    m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), d.divideScalar(len));
    return m;
}

// <geometry><capsule radius length/></geometry> (urdfdom's extension; the loader skips it): a
// capsule along the element's z axis, `length` between the centres of its end caps.
function addCapsuleElement(group) {
    const node = group.urdfNode && group.urdfNode.querySelector('geometry > capsule');
    if (!node || meshes(group).length > 0) return;
    const radius = parseFloat(node.getAttribute('radius'));
    const length = parseFloat(node.getAttribute('length'));
    if (!(radius > 0) || !(length >= 0)) return;
    const material = new THREE.MeshPhongMaterial({ color: COLORS.primitive });
    const half = new THREE.Vector3(0, 0, length / 2);
    group.add(length > 0 ? capsule(half.clone().negate(), half, radius, material)
        : new THREE.Mesh(new THREE.SphereGeometry(radius, 20, 14), material));
}

/** A length scale of the robot: the diagonal of the box around its link origins and COMs. */
export function robotScale(robot) {
    robot.updateMatrixWorld(true);
    const box = new THREE.Box3();
    const p = new THREE.Vector3();
    for (const link of Object.values(robot.links)) {
        box.expandByPoint(p.setFromMatrixPosition(link.matrixWorld));
        const c = link.inertial.origin.xyz;
        box.expandByPoint(p.set(c[0], c[1], c[2]).applyMatrix4(link.matrixWorld));
    }
    const size = box.getSize(p).length();
    return size > 1e-6 ? size : 0.2;
}

/**
 * Chooses each link's drawing: its <visual> primitives, else its <collision> primitives, else
 * capsules. Returns {radius, counts} (how many links got each kind, for the page's info line).
 */
export function dressRobot(robot) {
    const scale = robotScale(robot);
    const r = Math.min(0.05, Math.max(0.004, 0.018 * scale));
    const fallback = new THREE.MeshStandardMaterial({ color: COLORS.fallback, roughness: 0.55, metalness: 0.1 });
    const counts = { visual: 0, collision: 0, capsules: 0 };
    for (const link of Object.values(robot.links)) {
        const visuals = link.children.filter((c) => c.isURDFVisual);
        const colliders = link.children.filter((c) => c.isURDFCollider);
        for (const g of [...visuals, ...colliders]) addCapsuleElement(g);
        for (const v of visuals) {
            for (const m of meshes(v)) {
                // the loader's default material is white: give unpainted primitives a colour
                if (!v.urdfNode.querySelector('material')) m.material = new THREE.MeshPhongMaterial({ color: COLORS.primitive });
            }
        }
        for (const c of colliders) {
            c.visible = false;
            for (const m of meshes(c)) m.material = new THREE.MeshPhongMaterial({ color: COLORS.collision });
        }
        if (visuals.some((v) => meshes(v).length > 0)) {
            counts.visual += 1;
            continue;
        }
        const drawnColliders = colliders.filter((c) => meshes(c).length > 0);
        if (drawnColliders.length > 0) {
            for (const c of drawnColliders) c.visible = true;
            counts.collision += 1;
            continue;
        }
        counts.capsules += 1;
        const origin = new THREE.Vector3();
        const ends = link.children.filter((c) => c.isURDFJoint).map((j) => j.position.clone()).filter((p) => p.length() > r);
        if (ends.length === 0) {
            const c = link.inertial.origin.xyz;
            const com = new THREE.Vector3(c[0], c[1], c[2]);
            if (com.length() > r) ends.push(com.multiplyScalar(2));
        }
        const group = new THREE.Group();
        group.name = `${link.name}/capsules`;
        group.userData.pluckerFallback = true;
        for (const end of ends) group.add(capsule(origin, end, r, fallback));
        if (ends.length === 0) {
            const ball = new THREE.Mesh(new THREE.SphereGeometry(1.4 * r, 20, 14), fallback);
            group.add(ball);
        }
        link.add(group);
    }
    return { radius: r, scale, counts };
}
