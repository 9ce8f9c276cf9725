import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { readFileSync } from 'node:fs';
import { it } from 'vitest';
import { NodeIO } from '@gltf-transform/core';
import { createMixerClip } from '../../src/adapters/three.js';
import { compress } from '../../src/compress/index.js';
import { readGltf } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { mulberry32 } from '../utils/synthetic.js';
import { poseToObject, virtualVertexError } from '../../src/metric/error-metric.js';

async function load(glb: Uint8Array): Promise<GLTF> {
  const buffer = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  return new Promise((resolve, reject) => new GLTFLoader().parse(buffer, '', resolve, reject));
}
function objects(root: THREE.Object3D): THREE.Object3D[] { const l: THREE.Object3D[] = []; root.traverse((o) => l.push(o)); return l; }
function worldError(a: THREE.Object3D[], b: THREE.Object3D[], shells: number[]): number {
  a[0].updateMatrixWorld(true); b[0].updateMatrixWorld(true);
  const va = new THREE.Vector3(), vb = new THREE.Vector3();
  let worst = 0;
  a.forEach((o, i) => { const shell = shells[i]; for (let axis = 0; axis < 3; axis++) { va.set(axis === 0 ? shell : 0, axis === 1 ? shell : 0, axis === 2 ? shell : 0); vb.copy(va); va.applyMatrix4(o.matrixWorld); vb.applyMatrix4(b[i].matrixWorld); worst = Math.max(worst, va.distanceTo(vb)); } });
  return worst;
}
const MODELS = (process.env.KT_MODELS ?? 'Fox,CesiumMan,InterpolationTest,BoxAnimated,RiggedFigure,RiggedSimple').split(',');
it('probe', async () => {
  for (const m of MODELS) {
    const dir = `../shared/data/khronos-samples/${m}`;
    let file: string; try { file = `${dir}/${m}.glb`; readFileSync(file); } catch { file = `${dir}/${m}.gltf`; }
    const io = new NodeIO();
    const doc = await io.read(file);
    for (const t of doc.getRoot().listTextures()) t.dispose();
    const glb = await io.writeBinary(doc);
    const raw = await load(glb), packed = await load(glb);
    const la0 = objects(raw.scene), lb0 = objects(packed.scene);
    for (const source of await readGltf(glb, file)) {
      const { bytes, stats } = compress(source);
      const compressed = CompressedClip.open(bytes);
      const mixerClip = createMixerClip(compressed, packed.scene, { associations: packed.parser.associations, onWarning: () => {} });
      const rawClip = raw.animations.find((c) => c.name === source.name) ?? raw.animations[0];
      const la: THREE.Object3D[] = [], lb: THREE.Object3D[] = [], shells: number[] = [];
      const nodeOf = (g: GLTF, o: THREE.Object3D) => (g.parser.associations.get(o) as { nodes?: number } | undefined)?.nodes;
      source.skeleton.nodeIndices!.forEach((n, b) => {
        const i = la0.findIndex((o) => nodeOf(raw, o) === n && !(o as THREE.Mesh).isMesh);
        const j = lb0.findIndex((o) => nodeOf(packed, o) === n && !(o as THREE.Mesh).isMesh);
        if (i >= 0 && j >= 0) { la.push(la0[i]); lb.push(lb0[j]); shells.push(source.skeleton.shellDistances[b]); }
      });
      la.unshift(la0[0]); lb.unshift(lb0[0]); shells.unshift(0);
      const mixerA = new THREE.AnimationMixer(raw.scene), mixerB = new THREE.AnimationMixer(packed.scene);
      mixerA.clipAction(rawClip).play(); mixerB.clipAction(mixerClip).play();
      const times: number[] = [];
      const random = mulberry32(7);
      for (let i = 0; i < 1000; i++) times.push(random() * rawClip.duration);
      for (const tr of rawClip.tracks) for (const t of tr.times) times.push(t, t - 1e-4, t + 1e-4, t - 3e-4);
      let worst = 0, at = 0;
      for (const t of [...new Set(times)]) {
        if (t < 0 || t > rawClip.duration) continue;
        mixerA.setTime(t); mixerB.setTime(t);
        const e = process.env.KT_BONES ? worldError([la0[0], ...la0.filter((o) => (o as THREE.Bone).isBone)], [lb0[0], ...lb0.filter((o) => (o as THREE.Bone).isBone)], [0, ...la0.filter((o) => (o as THREE.Bone).isBone).map(() => 0.03)]) : worldError(la, lb, shells);
        if (e > worst) { worst = e; at = t; }
      }
      {
        mixerB.setTime(at); mixerA.setTime(at);
        const pose = new Float32Array(compressed.boneCount * 10);
        compressed.createSampler().sample(at, pose);
        let dq = 0, dr = 0;
        source.skeleton.nodeIndices!.forEach((n, b) => {
          const o = lb0.find((x) => nodeOf(packed, x) === n && !(x as THREE.Mesh).isMesh);
          const r = la0.find((x) => nodeOf(raw, x) === n && !(x as THREE.Mesh).isMesh);
          if (!o || !r) return;
          const q = o.quaternion;
          dq = Math.max(dq, Math.abs(q.x - pose[b * 10]), Math.abs(q.y - pose[b * 10 + 1]), Math.abs(q.z - pose[b * 10 + 2]), Math.abs(q.w - pose[b * 10 + 3]), Math.abs(o.position.x - pose[b * 10 + 4]));
          dr = Math.max(dr, r.quaternion.angleTo(o.quaternion) * source.skeleton.shellDistances[b]);
        });
        console.log('direct vs mixer max diff', dq, 'raw vs packed local', dr);
        const B = source.skeleton.parents.length;
        const pa = new Float64Array(B * 10), pb = new Float64Array(B * 10);
        const fill = (g: GLTF, list: THREE.Object3D[], out: Float64Array) => source.skeleton.nodeIndices!.forEach((n, b) => {
          const o = list.find((x) => nodeOf(g, x) === n && !(x as THREE.Mesh).isMesh)!;
          out.set([o.quaternion.x, o.quaternion.y, o.quaternion.z, o.quaternion.w, o.position.x, o.position.y, o.position.z, o.scale.x, o.scale.y, o.scale.z], b * 10);
        });
        fill(raw, la0, pa); fill(packed, lb0, pb);
        const oa = new Float64Array(B * 12), ob = new Float64Array(B * 12);
        poseToObject(pa, source.skeleton.parents, oa); poseToObject(pb, source.skeleton.parents, ob);
        for (let b = 0; b < B; b++) { const e = virtualVertexError(oa, b * 12, ob, b * 12, source.skeleton.shellDistances[b]); if (e > 0.5e-4) console.log('  obj', source.skeleton.boneNames[b], e / 1e-4, 'parent', source.skeleton.parents[b]); }
        let worst2 = 0, wb = 0;
        for (let b = 0; b < B; b++) { const e = virtualVertexError(oa, b * 12, ob, b * 12, source.skeleton.shellDistances[b]); if (e > worst2) { worst2 = e; wb = b; } }
        console.log('compressor metric on three locals', worst2 / 1e-4, 'bone', source.skeleton.boneNames[wb], 'shell', source.skeleton.shellDistances[wb], 'root world scale', la0[0].children.map((c) => c.scale.toArray().join(',')).join(' | '));
        const key = new Float32Array(B * 10); compressed.sampleKey(Math.round(at * compressed.sampleRate), key);
        const ok = new Float64Array(B * 12); poseToObject(Float64Array.from(key), source.skeleton.parents, ok);
        let w3 = 0; for (let b = 0; b < B; b++) w3 = Math.max(w3, virtualVertexError(oa, b * 12, ok, b * 12, source.skeleton.shellDistances[b]));
        console.log('sampleKey vs three raw', w3 / 1e-4);
        raw.scene.updateMatrixWorld(true); packed.scene.updateMatrixWorld(true);
        const bonesA = la0.filter((o) => (o as THREE.Bone).isBone), bonesB = lb0.filter((o) => (o as THREE.Bone).isBone);
        bonesA.forEach((o, i) => {
          const e = worldError([o], [bonesB[i]], [0.03]);
          if (e > 0.9e-4) {
            const sc = new THREE.Vector3().setFromMatrixScale(o.matrixWorld);
            const chain: string[] = []; let p: THREE.Object3D | null = o; while (p) { chain.push(`${p.name}:${p.scale.toArray().map((x) => x.toFixed(3)).join(',')}`); p = p.parent; }
            let p2: THREE.Object3D | null = o, q2: THREE.Object3D | null = bonesB[i];
            while (p2 && q2) { console.log('   ', p2.name, q2.name, (p2.quaternion.angleTo(q2.quaternion) * 0.03 / 1e-4).toFixed(3), (p2.position.distanceTo(q2.position) / 1e-4).toFixed(3), 'inSkel', source.skeleton.nodeIndices!.indexOf(nodeOf(raw, p2) ?? -5), nodeOf(raw, p2), nodeOf(packed, q2)); p2 = p2.parent; q2 = q2.parent; }
            const bi = source.skeleton.boneNames.indexOf(o.name);
            const ta = new THREE.Vector3().setFromMatrixPosition(o.matrixWorld), tb = new THREE.Vector3().setFromMatrixPosition(bonesB[i].matrixWorld);
            console.log('   world dt', ta.distanceTo(tb) / 1e-4, 'obj dt', Math.hypot(oa[bi * 12 + 9] - ob[bi * 12 + 9], oa[bi * 12 + 10] - ob[bi * 12 + 10], oa[bi * 12 + 11] - ob[bi * 12 + 11]) / 1e-4, 'world pos', ta.toArray(), 'obj pos', [oa[bi * 12 + 9], oa[bi * 12 + 10], oa[bi * 12 + 11]]);
            const tp = new THREE.Vector3().setFromMatrixPosition(bonesB[i].matrixWorld);
            let q3: THREE.Object3D | null = bonesB[i]; const norms: string[] = [];
            while (q3) { norms.push(`${((q3.quaternion.length() - 1) * 1e8).toFixed(1)}e-8 s${q3.scale.toArray().map((x) => ((x - 1) * 1e8).toFixed(1)).join(',')}`); q3 = q3.parent; }
            console.log('   packed world', tp.toArray(), 'obj', [ob[bi * 12 + 9], ob[bi * 12 + 10], ob[bi * 12 + 11]], norms.join(' '));
            console.log('world bone', o.name, e / 1e-4, 'world scale', sc.toArray(), chain.join(' < '));
          }
        });
      }
      console.log(`${m}/${source.name}: unbound ${mixerClip.unboundBones.length} stats ${stats.maxError.toExponential(3)} up ${stats.upsampling.toFixed(2)} table ${!!compressed.keyTimes} n ${compressed.sampleCount} bytes ${bytes.length} bound ${la.length - 1} → mixer worst ${(worst / 1e-4).toFixed(3)}× at ${at.toFixed(5)}`);
      mixerA.stopAllAction(); mixerB.stopAllAction(); mixerA.uncacheRoot(raw.scene); mixerB.uncacheRoot(packed.scene);
    }
  }
}, 600000);
