// plucker's viewer page: the robot of window.PLUCKER_DATA.urdf, posed along its trajectory.
// URL parameters: t=<seconds> (time shown first), paused=1, speed=<factor>, frames=1, com=1.
// The page writes what it shows into <pre id="state"> (link poses, centre of mass) when paused,
// and sets document.body.dataset.ready to "1" (or "error"), for the tests.

import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import URDFLoader from 'urdf-loader';
import { dressRobot } from './geometry.js';
import { apply, centerOfMass, check } from './trajectory.js';

const $ = (id) => document.getElementById(id);
const info = $('info');
const stateOut = $('state');

function fail(message) {
    info.textContent = `error: ${message}`;
    info.className = 'error';
    stateOut.textContent = JSON.stringify({ error: message });
    document.body.dataset.ready = 'error';
}

function number(params, name, fallback) {
    const x = parseFloat(params.get(name));
    return Number.isFinite(x) ? x : fallback;
}

function makeRenderer() {
    const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    renderer.setSize(window.innerWidth, window.innerHeight);
    $('view').appendChild(renderer.domElement);
    return renderer;
}

function makeScene(scale, center) {
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0xeef0f3);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x8890a0, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(2, -3, 5);
    scene.add(sun);
    // Ground grid in the world's z = 0 plane, lines every `step`, darker every tenth.
    const step = 10 ** Math.floor(Math.log10(scale / 4));
    const grid = groundGrid(Math.round(center.x / step) * step, Math.round(center.y / step) * step, step, 20);
    scene.add(grid);
    return scene;
}

/**
 * Grid lines around (cx, cy) in the z = 0 plane, each cut into short segments: SwiftShader (the
 * tests' CPU WebGL) drops a whole line segment that passes behind the camera, which a grid
 * spanning the camera's position has, rather than clipping it.
 */
function groundGrid(cx, cy, step, half) {
    const positions = [];
    const colors = [];
    const minor = new THREE.Color(0xc8ccd4);
    const major = new THREE.Color(0x98a0b0);
    const pieces = 4 * half;
    const extent = half * step;
    for (let i = -half; i <= half; i += 1) {
        const c = i % 10 === 0 ? major : minor;
        for (let k = 0; k < pieces; k += 1) {
            const a = -extent + (2 * extent * k) / pieces;
            const b = -extent + (2 * extent * (k + 1)) / pieces;
            positions.push(cx + i * step, cy + a, 0, cx + i * step, cy + b, 0); // along y
            positions.push(cx + a, cy + i * step, 0, cx + b, cy + i * step, 0); // along x
            for (let n = 0; n < 4; n += 1) colors.push(c.r, c.g, c.b);
        }
    }
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
    geometry.setAttribute('color', new THREE.Float32BufferAttribute(colors, 3));
    return new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ vertexColors: true }));
}

/** Box around every link origin over (up to 60 samples of) the trajectory. */
function sweptBox(traj, robot) {
    const box = new THREE.Box3();
    const p = new THREE.Vector3();
    const n = traj.t.length;
    const stride = Math.max(1, Math.floor(n / 60));
    for (let k = 0; k < n; k += stride) {
        apply(traj, robot, traj.t[k]);
        for (const link of Object.values(robot.links)) box.expandByPoint(p.setFromMatrixPosition(link.matrixWorld));
    }
    return box;
}

function main() {
    const data = window.PLUCKER_DATA;
    if (!data || typeof data.urdf !== 'string' || !data.trajectory) {
        fail('no robot data (data.js): write this page with `plucker view ROBOT.urdf [TRAJECTORY]`');
        return;
    }
    const traj = data.trajectory;
    const params = new URLSearchParams(window.location.search);

    const missingMeshes = new Set();
    const loader = new URDFLoader(new THREE.LoadingManager());
    loader.parseCollision = true;
    loader.packages = (pkg) => `package://${pkg}`;
    loader.loadMeshCb = (path) => missingMeshes.add(path); // no mesh files: primitives instead
    let robot;
    try {
        robot = loader.parse(data.urdf);
    } catch (e) {
        fail(`the URDF could not be read (${e.message})`);
        return;
    }
    const problems = check(traj, robot);
    if (problems.length > 0) {
        fail(problems.join('; '));
        return;
    }
    for (const joint of Object.values(robot.joints)) joint.ignoreLimits = true;
    const dressing = dressRobot(robot);
    const r = dressing.radius;

    let renderer;
    try {
        renderer = makeRenderer();
    } catch (e) {
        fail(`WebGL is not available in this browser (${e.message})`);
        return;
    }
    const box = sweptBox(traj, robot);
    const center = box.getCenter(new THREE.Vector3());
    const size = Math.max(box.getSize(new THREE.Vector3()).length(), dressing.scale, 0.1);
    const scene = makeScene(size, center);
    scene.add(robot);

    // Frame axes on every link (x red, y green, z blue) and the centre-of-mass marker.
    const axes = [];
    for (const link of Object.values(robot.links)) {
        const a = new THREE.AxesHelper(Math.max(4 * r, 0.08 * size));
        a.setColors(new THREE.Color(0xe00000), new THREE.Color(0x00a000), new THREE.Color(0x0040ff));
        a.material.depthTest = false;
        a.renderOrder = 2;
        link.add(a);
        axes.push(a);
    }
    const comGroup = new THREE.Group();
    const comMaterial = new THREE.MeshBasicMaterial({ color: 0x7a1fa0, depthTest: false });
    const comBall = new THREE.Mesh(new THREE.SphereGeometry(1.8 * r, 20, 14), comMaterial);
    comBall.renderOrder = 3;
    const comShadow = new THREE.Mesh(new THREE.RingGeometry(1.5 * r, 2.2 * r, 24), comMaterial);
    const comLine = new THREE.Line(new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), new THREE.Vector3()]),
        new THREE.LineDashedMaterial({ color: 0x7a1fa0, dashSize: r, gapSize: r, depthTest: false }));
    comGroup.add(comBall, comShadow, comLine);
    scene.add(comGroup);
    const com = new THREE.Vector3();

    const camera = new THREE.PerspectiveCamera(40, window.innerWidth / window.innerHeight, size / 200, size * 100);
    camera.up.set(0, 0, 1);
    // Far enough that the box around the motion fits the view, from the front right, 30 degrees up.
    const distance = (0.6 * size) / Math.tan(THREE.MathUtils.degToRad(20));
    camera.position.copy(center).add(new THREE.Vector3(0.7, -1.0, 0.7).normalize().multiplyScalar(distance));
    const controls = new OrbitControls(camera, renderer.domElement);
    controls.target.copy(center);
    controls.update();

    const t0 = traj.t[0];
    const t1 = traj.t[traj.t.length - 1];
    const slider = $('time');
    slider.min = t0;
    slider.max = t1;
    slider.disabled = t1 <= t0;
    const ui = { frames: $('frames'), com: $('com'), speed: $('speed'), play: $('play'), clock: $('clock') };
    ui.frames.checked = params.get('frames') === '1';
    ui.com.checked = params.get('com') === '1';
    const speed = params.get('speed');
    if (speed && [...ui.speed.options].some((o) => o.value === speed)) ui.speed.value = speed;

    let t = Math.min(t1, Math.max(t0, number(params, 't', t0)));
    let playing = params.get('paused') !== '1' && t1 > t0;
    let last = null;

    function writeState(k, w) {
        const links = {};
        for (const [name, link] of Object.entries(robot.links)) links[name] = link.matrixWorld.toArray();
        stateOut.textContent = JSON.stringify({
            t, sample: k, weight: w, links, com: comGroup.visible ? com.toArray() : null,
            com_data: traj.com ? centerOfMass(traj, t, new THREE.Vector3()).toArray() : null,
            radius: r, drawn: dressing.counts, missing_meshes: missingMeshes.size,
        });
    }

    function show() {
        const [k, w] = apply(traj, robot, t);
        for (const a of axes) a.visible = ui.frames.checked;
        comGroup.visible = ui.com.checked && centerOfMass(traj, t, com) !== null;
        if (comGroup.visible) {
            comBall.position.copy(com);
            comShadow.position.set(com.x, com.y, 0.001);
            comLine.geometry.setFromPoints([com, new THREE.Vector3(com.x, com.y, 0)]);
            comLine.computeLineDistances();
        }
        slider.value = t;
        ui.clock.textContent = `${t.toFixed(3)} / ${t1.toFixed(3)} s`;
        ui.play.textContent = playing ? 'Pause' : 'Play';
        renderer.render(scene, camera);
        if (!playing) writeState(k, w);
    }

    function tick(now) {
        if (!playing) return;
        if (last !== null) {
            t += ((now - last) / 1000) * parseFloat(ui.speed.value);
            if (t > t1) t = t0 + ((t - t0) % (t1 - t0));
        }
        last = now;
        show();
        requestAnimationFrame(tick);
    }

    function setPlaying(on) {
        playing = on && t1 > t0;
        last = null;
        show();
        if (playing) requestAnimationFrame(tick);
    }

    ui.play.addEventListener('click', () => setPlaying(!playing));
    slider.addEventListener('input', () => {
        t = parseFloat(slider.value);
        if (playing) setPlaying(false);
        else show();
    });
    for (const el of [ui.frames, ui.com]) el.addEventListener('change', show);
    controls.addEventListener('change', () => renderer.render(scene, camera));
    window.addEventListener('keydown', (e) => {
        if (e.code === 'Space' && !['INPUT', 'BUTTON', 'SELECT'].includes(e.target.tagName)) {
            e.preventDefault();
            setPlaying(!playing);
        }
    });
    window.addEventListener('resize', () => {
        camera.aspect = window.innerWidth / window.innerHeight;
        camera.updateProjectionMatrix();
        renderer.setSize(window.innerWidth, window.innerHeight);
        show();
    });

    const c = dressing.counts;
    info.textContent = `${robot.robotName || data.robot}: ${Object.keys(robot.links).length} links; drawn from `
        + `<visual> ${c.visual}, <collision> ${c.collision}, capsules ${c.capsules}`
        + (missingMeshes.size ? ` (${missingMeshes.size} mesh files not shipped)` : '')
        + `; ${traj.t.length} samples`;
    setPlaying(playing);
    document.body.dataset.ready = '1';
}

main();
