/**
 * bonepress viewer: plays a raw clip and its compressed version side by side (or
 * overlaid), colours every decoded bone by its error at the current time, and shows the
 * compressor's figures. Compression runs in a worker with the library (`bonepress`); the
 * page samples the result with the runtime decoder (`bonepress/runtime`).
 */
import {
  COMPRESS_DEFAULTS,
  convertLength,
  LENGTH_UNITS,
  parseLength,
  rawSizeBytes,
  type CompressStats,
  type LengthUnit,
  type RawClip,
} from 'bonepress';
import { animationBytes } from 'bonepress/gltf-transform';
import {
  CompressedClip,
  createPose,
  localToObject,
  sampleKey,
  segmentBitRates,
  type ClipSampler,
  type SampleOptions,
} from 'bonepress/runtime';
import { CompressedAnimationClip } from 'bonepress/three';
import * as THREE from 'three';

import { AssetPlayer, carriesBonepress, gltfJson, type AssetSizes } from './asset.js';
import { PoseErrorMeter } from './bone-error.js';
import { DEFAULT_CLIP_NAME, DEFAULT_CLIP_TEXT } from './default-clip.js';
import { formatBytes, formatDistance, formatRatio, formatSeconds, formatSignificant } from './format.js';
import { heatColour, legendGradient, overBudgetCss } from './heat.js';
import { drawHistogram } from './histogram.js';
import type { ClipSummary, WorkerRequest, WorkerResponse } from './protocol.js';
import { locateKeys, sampleRawClip } from './raw-sampler.js';
import { SkeletonView } from './skeleton-view.js';
import { LAYER_DECODED, LAYER_RAW, Stage, type ClipBounds, type ViewMode } from './stage.js';

// ---------------------------------------------------------------------------------------
// Page elements

function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`viewer: #${id} is missing from index.html`);
  return node as T;
}

const ui = {
  file: $<HTMLInputElement>('file'),
  clipSelect: $<HTMLSelectElement>('clip-select'),
  settings: $<HTMLFieldSetElement>('settings'),
  threshold: $<HTMLInputElement>('threshold'),
  thresholdUnit: $<HTMLSelectElement>('threshold-unit'),
  shell: $<HTMLInputElement>('shell'),
  shellUnit: $<HTMLSelectElement>('shell-unit'),
  status: $('status'),
  stage: $('stage'),
  canvas: $<HTMLCanvasElement>('view'),
  noWebgl: $('no-webgl'),
  legend: $('legend'),
  legendBar: $('legend-bar'),
  legendOver: $('legend-over'),
  legendUnit: $('legend-unit'),
  legendMid: $('legend-mid'),
  legendMax: $('legend-max'),
  currentError: $('current-error'),
  clipName: $('clip-name'),
  bones: $('bones'),
  samples: $('samples'),
  duration: $('duration'),
  rawBytes: $('raw-bytes'),
  compressedBytes: $('compressed-bytes'),
  ratio: $('ratio'),
  thresholdValue: $('threshold-value'),
  maxError: $('max-error'),
  p99Error: $('p99-error'),
  worst: $('worst'),
  compressTime: $('compress-time'),
  histogram: document.getElementById('histogram') as unknown as SVGSVGElement,
  download: $<HTMLButtonElement>('download'),
  assetPanel: $('asset-panel'),
  meshes: $('meshes'),
  animations: $('animations'),
  fileBytes: $('file-bytes'),
  animationBytes: $('animation-bytes'),
  sourceFileBytes: $('source-file-bytes'),
  sourceAnimationBytes: $('source-animation-bytes'),
  viewAsset: $<HTMLButtonElement>('view-asset'),
  play: $<HTMLButtonElement>('play'),
  scrub: $<HTMLInputElement>('scrub'),
  time: $<HTMLOutputElement>('time'),
  speed: $<HTMLSelectElement>('speed'),
  mode: $<HTMLSelectElement>('mode'),
  follow: $<HTMLInputElement>('follow'),
};

function setStatus(text: string, isError = false): void {
  ui.status.textContent = text;
  ui.status.title = text;
  ui.status.classList.toggle('error', isError);
}

/** For the e2e test and scripts: "0" while working, "1" when the figures are shown, "error" after a failure. */
function setReady(state: '0' | '1' | 'error'): void {
  document.body.dataset.ready = state;
}

// ---------------------------------------------------------------------------------------
// What is on screen

/** A raw clip with its compressed version (from a BVH, glTF, … compressed here). */
interface ComparedClip {
  kind: 'compared';
  fileName: string;
  raw: RawClip;
  decoded: CompressedClip;
  bpk: Uint8Array;
  stats: CompressStats;
  meter: PoseErrorMeter;
}

/** A `.bpk` opened as is: no raw clip, so no error. */
interface BpkClip {
  kind: 'bpk';
  fileName: string;
  decoded: CompressedClip;
  bpk: Uint8Array;
}

type Shown = ComparedClip | BpkClip;

interface Playback {
  shown: Shown;
  rawView: SkeletonView | undefined;
  decodedView: SkeletonView;
  rawPose: Float32Array;
  /** Samples the decoded clip into {@link decodedPose}. */
  decodedSampler: ClipSampler;
  decodedPose: Float32Array;
  rawMatrices: Float32Array;
  decodedMatrices: Float32Array;
  errors: Float64Array;
  /** Bone cylinder radius in clip units, from the figure's size. */
  radius: number;
  /** See {@link figureBones}. */
  body: number[];
  /** Skeleton identity (parents), to keep the camera when only the settings changed. */
  parentsKey: string;
}

let stage: Stage | undefined;
try {
  stage = new Stage(ui.canvas);
} catch (e) {
  // No WebGL (some headless or locked-down browsers): the figures still work.
  ui.noWebgl.hidden = false;
  ui.canvas.hidden = true;
  console.warn('viewer: no WebGL', e);
}

let playback: Playback | undefined;
/** A compressed glTF asset shown whole (instead of `playback`). */
let asset: AssetPlayer | undefined;
let time = 0;
let playing = true;
let dirty = true;
const sampleOptions: SampleOptions = { looping: 'clamp', rounding: 'none' };
const colour: [number, number, number] = [0, 0, 0];
const centre = new THREE.Vector3();

function duration(): number {
  if (asset) return asset.clip?.duration ?? 0;
  return playback ? playback.shown.decoded.duration : 0;
}

/** Errors show in the threshold field's unit, whatever the clip's (a glTF clip is in metres). */
function displayUnit(): LengthUnit {
  return ui.thresholdUnit.value as LengthUnit;
}

/** `value` in `unit` (a clip's, or its stats': always a length unit) in {@link displayUnit}. */
function inDisplayUnit(value: number, unit: string): number {
  return convertLength({ value, unit: unit as LengthUnit }, displayUnit());
}

function viewMode(): ViewMode {
  if (asset) return 'decoded-only';
  if (playback?.shown.kind === 'bpk') return 'decoded-only';
  return ui.mode.value === 'overlaid' ? 'overlaid' : 'side-by-side';
}

/**
 * Object-space bounds of every key of the clip, for the floor and camera. The figure's size
 * leaves out root bones, which in mocap are often a trajectory on the ground far from the body.
 */
function clipBounds(shown: Shown, pose: Float32Array, matrices: Float32Array): ClipBounds {
  const box = new THREE.Box3();
  const frameBox = new THREE.Box3();
  const p = new THREE.Vector3();
  let poseSize = 0;
  const poseExtent = new THREE.Vector3();
  const n = shown.kind === 'compared' ? shown.raw.sampleCount : shown.decoded.sampleCount;
  const parents = shown.decoded.parents;
  const body = figureBones(parents);
  const sampler = shown.decoded.createSampler();
  for (let k = 0; k < n; k++) {
    if (shown.kind === 'compared') sampleRawClip(shown.raw, k / shown.raw.sampleRate, pose);
    else sampleKey(sampler, k, pose);
    localToObject(pose, parents, matrices);
    for (let b = 0; b < parents.length; b++) box.expandByPoint(p.fromArray(matrices, b * 16 + 12));
    frameBox.makeEmpty();
    for (const b of body) frameBox.expandByPoint(p.fromArray(matrices, b * 16 + 12));
    const size = frameBox.getSize(p);
    poseSize = Math.max(poseSize, size.x, size.y, size.z);
    poseExtent.max(size);
  }
  return { box, poseSize, poseExtent };
}

/** Bones that make up the figure: all but roots, unless the skeleton is roots only. */
function figureBones(parents: Int32Array): number[] {
  const body = Array.from(parents.keys()).filter((b) => parents[b] >= 0);
  return body.length > 0 ? body : Array.from(parents.keys());
}

/** Writes the centroid of the figure's joints into `out`. */
function figureCentre(matrices: Float32Array, body: readonly number[], out: THREE.Vector3): THREE.Vector3 {
  out.set(0, 0, 0);
  for (const b of body) {
    out.x += matrices[b * 16 + 12];
    out.y += matrices[b * 16 + 13];
    out.z += matrices[b * 16 + 14];
  }
  return out.divideScalar(Math.max(1, body.length));
}

function show(shown: Shown): void {
  const parents = shown.decoded.parents;
  const boneCount = parents.length;
  const parentsKey = `${shown.kind}:${Array.from(parents).join(',')}`;
  const keepCamera = playback?.parentsKey === parentsKey;
  closeAsset();
  playback?.rawView?.dispose();
  playback?.decodedView.dispose();

  const rawPose = createPose(boneCount);
  const rawMatrices = new Float32Array(boneCount * 16);
  const bounds = clipBounds(shown, rawPose, rawMatrices);
  const radius = Math.max(bounds.poseSize, 1e-6) * 0.011;
  const maxLinkLength = bounds.poseSize;
  const decodedView = new SkeletonView(parents, { radius, maxLinkLength, layer: LAYER_DECODED, colour: 0xb8c0cc });
  const rawView =
    shown.kind === 'compared'
      ? new SkeletonView(parents, { radius, maxLinkLength, layer: LAYER_RAW, colour: 0xc9ced6 })
      : undefined;
  playback = {
    shown,
    rawView,
    decodedView,
    rawPose,
    rawMatrices,
    parentsKey,
    decodedSampler: shown.decoded.createSampler(),
    decodedPose: createPose(boneCount),
    decodedMatrices: new Float32Array(boneCount * 16),
    errors: new Float64Array(boneCount),
    radius,
    body: figureBones(parents),
  };
  if (stage) {
    stage.scene.add(decodedView.group);
    if (rawView) stage.scene.add(rawView.group);
    if (!keepCamera) stage.frame(bounds, viewMode());
  }
  applyMode();
  if (!keepCamera || time > duration()) time = 0;
  ui.scrub.max = String(duration());
  fillPanels(shown);
  dirty = true;
}

function applyMode(): void {
  const mode = viewMode();
  ui.stage.classList.remove('side-by-side', 'overlaid', 'decoded-only');
  ui.stage.classList.add(mode);
  ui.mode.disabled = mode === 'decoded-only';
  ui.legend.classList.toggle('hidden', mode === 'decoded-only');
  if (stage) stage.mode = mode;
  if (playback?.rawView) {
    const overlaid = mode === 'overlaid';
    const { radius } = playback;
    playback.rawView.setOpacity(overlaid ? 0.28 : 1);
    playback.rawView.setRadius(overlaid ? radius * 1.9 : radius);
  }
  dirty = true;
}

// ---------------------------------------------------------------------------------------
// Panels

function fillPanels(shown: Shown): void {
  const c = shown.decoded;
  const unit = c.unit;
  ui.clipName.textContent = c.name ?? shown.fileName;
  ui.clipName.title = shown.fileName;
  ui.bones.textContent = String(c.boneCount);
  ui.samples.textContent = `${c.sampleCount} @ ${+c.sampleRate.toFixed(3)} Hz`;
  ui.duration.textContent = formatSeconds(c.duration);
  ui.download.disabled = false;
  ui.assetPanel.hidden = true;
  if (shown.kind === 'compared') {
    const s = shown.stats;
    ui.rawBytes.textContent = formatBytes(s.rawBytes);
    ui.compressedBytes.textContent = formatBytes(s.compressedBytes);
    ui.ratio.textContent = formatRatio(s.ratio);
    const shownUnit = displayUnit();
    ui.thresholdValue.textContent = formatDistance(inDisplayUnit(s.threshold, s.unit), shownUnit);
    ui.maxError.textContent = formatDistance(inDisplayUnit(s.maxError, s.unit), shownUnit);
    ui.maxError.classList.toggle('over', s.maxError > s.threshold);
    ui.p99Error.textContent = formatDistance(inDisplayUnit(s.p99Error, s.unit), shownUnit);
    ui.worst.textContent = `${s.worstBone} @ ${s.worstSample}`;
    ui.worst.title = `bone ${s.worstBone}, sample ${s.worstSample} (${formatSeconds(s.worstSample / c.sampleRate)})`;
    ui.compressTime.textContent = formatSeconds(s.seconds);
    drawHistogram(ui.histogram, s.bitRateHistogram);
    ui.legendUnit.textContent = shownUnit;
    ui.legendMid.textContent = formatSignificant(inDisplayUnit(s.threshold, s.unit) / 2);
    ui.legendMax.textContent = formatSignificant(inDisplayUnit(s.threshold, s.unit));
  } else {
    // A .bpk alone: sizes and bit rates come from the file; there is nothing to measure against.
    const raw = rawSizeBytes(c.boneCount, c.sampleCount);
    ui.rawBytes.textContent = formatBytes(raw);
    ui.compressedBytes.textContent = formatBytes(c.byteLength);
    ui.ratio.textContent = formatRatio(raw / c.byteLength);
    for (const node of [ui.thresholdValue, ui.maxError, ui.p99Error, ui.worst, ui.compressTime]) node.textContent = '–';
    ui.maxError.classList.remove('over');
    const histogram: Record<number, number> = {};
    for (let s = 0; s < c.segmentCount; s++)
      for (const bits of segmentBitRates(c, s)) histogram[bits] = (histogram[bits] ?? 0) + 1;
    drawHistogram(ui.histogram, histogram);
    ui.legendUnit.textContent = unit;
  }
}

// ---------------------------------------------------------------------------------------
// A compressed glTF asset, shown whole

const assetBox = new THREE.Box3();

function closeAsset(): void {
  asset?.dispose();
  asset = undefined;
  ui.assetPanel.hidden = true;
  delete document.body.dataset.meshes;
  delete document.body.dataset.skinnedMeshes;
  delete document.body.dataset.clips;
  delete document.body.dataset.compressedClips;
}

/** Replaces whatever is shown with `player`: its scene, an animation picker and its sizes. */
function showAsset(player: AssetPlayer): void {
  closeAsset();
  playback?.rawView?.dispose();
  playback?.decodedView.dispose();
  playback = undefined;
  asset = player;
  const poseExtent = new THREE.Vector3();
  const box = player.clipBounds(poseExtent);
  player.setTime(0);
  const pose = player.bounds(new THREE.Box3()).getSize(new THREE.Vector3());
  if (stage) {
    stage.scene.add(player.root);
    stage.frame({ box, poseSize: Math.max(pose.x, pose.y, pose.z, 1e-3), poseExtent }, viewMode());
  }
  ui.clipSelect.replaceChildren(
    ...player.clips.map((c, i) => new Option(`${c.name} (${formatSeconds(c.duration)})`, String(i))),
  );
  ui.clipSelect.hidden = player.clips.length < 2;
  ui.settings.disabled = true;
  ui.download.disabled = true;
  ui.viewAsset.hidden = true;
  time = 0;
  applyMode();
  fillAssetPanels(player);
  const data = document.body.dataset;
  data.meshes = String(player.meshCount);
  data.skinnedMeshes = String(player.skinnedMeshes.length);
  data.clips = String(player.clips.length);
  data.compressedClips = String(player.compressedClipCount);
  dirty = true;
}

function fillAssetPanels(player: AssetPlayer): void {
  const clip = player.clip;
  const compressed = clip instanceof CompressedAnimationClip ? clip.compressed : undefined;
  ui.clipName.textContent = clip?.name ?? player.fileName;
  ui.clipName.title = player.fileName;
  ui.bones.textContent = compressed ? String(compressed.boneCount) : '–';
  ui.samples.textContent = compressed ? `${compressed.sampleCount} @ ${+compressed.sampleRate.toFixed(3)} Hz` : '–';
  ui.duration.textContent = clip ? formatSeconds(clip.duration) : '–';
  ui.scrub.max = String(duration());
  const { sizes } = player;
  // Size: the whole file's animations, against 40 bytes per bone per sample of its clips.
  ui.rawBytes.textContent = sizes.rawBytes > 0 ? formatBytes(sizes.rawBytes) : '–';
  ui.compressedBytes.textContent = formatBytes(sizes.animation.total);
  ui.ratio.textContent = sizes.rawBytes > 0 ? formatRatio(sizes.rawBytes / sizes.animation.total) : '–';
  for (const node of [ui.thresholdValue, ui.maxError, ui.p99Error, ui.worst, ui.compressTime]) node.textContent = '–';
  ui.maxError.classList.remove('over');
  const histogram: Record<number, number> = {};
  if (compressed)
    for (let g = 0; g < compressed.segmentCount; g++)
      for (const bits of segmentBitRates(compressed, g)) histogram[bits] = (histogram[bits] ?? 0) + 1;
  drawHistogram(ui.histogram, histogram);
  ui.assetPanel.hidden = false;
  ui.meshes.textContent = `${player.meshCount} (${player.skinnedMeshes.length} skinned)`;
  ui.animations.textContent = `${player.clips.length} (${player.compressedClipCount} compressed)`;
  ui.fileBytes.textContent = formatBytes(sizes.fileBytes);
  ui.animationBytes.textContent = formatBytes(sizes.animation.total);
  ui.animationBytes.title = `accessors ${sizes.animation.accessorBytes} B + compressed clips ${sizes.animation.compressedBytes} B + JSON ${sizes.animation.jsonBytes} B`;
  ui.sourceFileBytes.textContent = sizes.source ? formatBytes(sizes.source.fileBytes) : '–';
  ui.sourceAnimationBytes.textContent = sizes.source ? formatBytes(sizes.source.animation.total) : '–';
}

function updateAssetPose(player: AssetPlayer): void {
  player.setTime(time);
  stage?.track(player.bounds(assetBox).getCenter(centre));
  const clip = player.clip;
  ui.time.value = `${time.toFixed(3)} / ${(clip?.duration ?? 0).toFixed(3)} s`;
  ui.scrub.value = String(time);
}

async function openAsset(fileName: string, bytes: Uint8Array, source?: AssetSizes['source']): Promise<void> {
  loadId = nextId++; // supersede any load or compression in flight
  compressId = loadId;
  const id = loadId;
  loaded = undefined;
  setStatus(`loading ${fileName}…`);
  try {
    const player = await AssetPlayer.load(fileName, bytes, source);
    if (id !== loadId) {
      player.dispose();
      return;
    }
    showAsset(player);
    setStatus(
      `${fileName}: ${player.clips.length} animations (${player.compressedClipCount} compressed), ${player.skinnedMeshes.length} skinned meshes`,
    );
    updatePose();
    stage?.render();
    dirty = false;
    setReady('1');
  } catch (e) {
    if (id !== loadId) return;
    setStatus(`${fileName}: ${(e as Error).message}`, true);
    setReady('error');
  }
}

// ---------------------------------------------------------------------------------------
// Playback

function updatePose(): void {
  if (asset) {
    updateAssetPose(asset);
    return;
  }
  if (!playback) return;
  const pb = playback;
  const { shown } = pb;
  pb.decodedSampler.sample(time, pb.decodedPose, sampleOptions);
  localToObject(pb.decodedPose, shown.decoded.parents, pb.decodedMatrices);
  pb.decodedView.update(pb.decodedMatrices);
  let root = pb.decodedMatrices;
  if (shown.kind === 'compared' && pb.rawView) {
    sampleRawClip(shown.raw, time, pb.rawPose);
    localToObject(pb.rawPose, shown.raw.skeleton.parents, pb.rawMatrices);
    pb.rawView.update(pb.rawMatrices);
    root = pb.rawMatrices;
    shown.meter.measure(pb.rawPose, pb.decodedPose, pb.errors);
    const threshold = shown.stats.threshold;
    let worst = 0;
    for (let b = 0; b < pb.errors.length; b++) {
      heatColour(pb.errors[b], threshold, colour);
      pb.decodedView.setBoneColour(b, colour[0], colour[1], colour[2]);
      if (pb.errors[b] > pb.errors[worst]) worst = b;
    }
    const names = shown.raw.skeleton.boneNames;
    ui.currentError.textContent = `now: max ${formatSignificant(inDisplayUnit(pb.errors[worst], shown.raw.unit))} ${displayUnit()} (${names[worst]})`;
    ui.currentError.dataset.value = String(pb.errors[worst]);
  }
  stage?.track(figureCentre(root, pb.body, centre));
  const c = shown.decoded;
  const { k0, k1, alpha } = locateKeys(time - c.startTime, c.sampleRate, c.sampleCount);
  const key = alpha === 0 ? `key ${k0}` : `keys ${k0}–${k1}`;
  ui.time.value = `${time.toFixed(3)} / ${c.duration.toFixed(3)} s · ${key}`;
  ui.scrub.value = String(time);
}

let last = performance.now();
function tick(now: number): void {
  const dt = Math.min(0.1, (now - last) / 1000);
  last = now;
  if (playing && (playback || asset)) {
    const d = duration();
    time = d > 0 ? (time + dt * Number(ui.speed.value)) % d : 0;
    dirty = true;
  }
  if (dirty) {
    updatePose();
    stage?.render();
    dirty = false;
  }
  requestAnimationFrame(tick);
}

function setPlaying(on: boolean): void {
  playing = on;
  ui.play.textContent = on ? '❚❚' : '▶';
  ui.play.title = on ? 'pause' : 'play';
}

// ---------------------------------------------------------------------------------------
// Loading and compressing

const worker = new Worker(new URL('./compress.worker.ts', import.meta.url), { type: 'module' });
let nextId = 1;
let loadId = 0;
let compressId = 0;
let loaded: { fileName: string; clips: ClipSummary[] } | undefined;
type AssetSizesSource = NonNullable<AssetSizes['source']> & { fileName: string };
/** The loaded source asset, when it has a skin and can be compressed whole (#view-asset). */
let sourceAsset: AssetSizesSource | undefined;

function send(request: WorkerRequest, transfer: Transferable[] = []): void {
  worker.postMessage(request, transfer);
}

function lengthInput(value: HTMLInputElement, unit: HTMLSelectElement): string {
  return `${value.value.trim()}${unit.value}`;
}

function requestCompress(): void {
  if (!loaded) return;
  compressId = nextId++;
  setReady('0');
  const clip = loaded.clips[Number(ui.clipSelect.value) || 0];
  setStatus(`compressing ${clip?.name ?? loaded.fileName}…`);
  send({
    type: 'compress',
    id: compressId,
    clipIndex: Number(ui.clipSelect.value) || 0,
    error: lengthInput(ui.threshold, ui.thresholdUnit),
    shell: lengthInput(ui.shell, ui.shellUnit),
  });
}

let settingsTimer: ReturnType<typeof setTimeout> | undefined;
function settingsChanged(): void {
  clearTimeout(settingsTimer);
  if (loaded) setReady('0');
  settingsTimer = setTimeout(requestCompress, 250);
}

function openBytes(fileName: string, bytes: ArrayBuffer): void {
  setReady('0');
  sourceAsset = undefined;
  ui.viewAsset.hidden = true;
  if (/\.(glb|gltf)$/i.test(fileName)) {
    const json = gltfJson(new Uint8Array(bytes));
    if (carriesBonepress(json)) {
      void openAsset(fileName, new Uint8Array(bytes));
      return;
    }
    // A source asset with a skin: it can also be compressed whole and shown as the app would see it.
    if (json && (json.skins?.length ?? 0) > 0)
      sourceAsset = { fileName, fileBytes: bytes.byteLength, animation: animationBytes(json) };
  }
  if (fileName.toLowerCase().endsWith('.bpk')) {
    loadId = nextId++; // supersede any load or compression in flight
    compressId = loadId;
    loaded = undefined;
    try {
      const u8 = new Uint8Array(bytes);
      const decoded = CompressedClip.open(u8);
      ui.clipSelect.hidden = true;
      ui.settings.disabled = true;
      show({ kind: 'bpk', fileName, decoded, bpk: u8 });
      setStatus(`${fileName}: compressed clip, shown alone (no raw clip to measure against)`);
      setReady('1');
    } catch (e) {
      setStatus(`${fileName}: ${(e as Error).message}`, true);
      setReady('error');
    }
    return;
  }
  loadId = nextId++;
  compressId = loadId;
  setStatus(`reading ${fileName}…`);
  send({ type: 'load', id: loadId, fileName, bytes }, [bytes]);
}

worker.addEventListener('message', (event: MessageEvent<WorkerResponse>) => {
  const m = event.data;
  if (m.type === 'loaded') {
    if (m.id !== loadId) return;
    loaded = { fileName: m.fileName, clips: m.clips };
    ui.clipSelect.replaceChildren(
      ...m.clips.map((c, i) => new Option(`${c.name} (${c.sampleCount} samples)`, String(i))),
    );
    ui.clipSelect.hidden = m.clips.length < 2;
    ui.settings.disabled = false;
    ui.viewAsset.hidden = sourceAsset === undefined;
    requestCompress();
    return;
  }
  if (m.type === 'asset') {
    if (m.id !== compressId || !sourceAsset) return;
    const { fileName, ...source } = sourceAsset;
    void openAsset(fileName.replace(/\.(glb|gltf)$/i, '.bp.glb'), m.glb, source);
    return;
  }
  if (m.type === 'failed') {
    if (m.id !== (m.stage === 'load' ? loadId : compressId)) return;
    setStatus(`${m.stage === 'load' ? 'cannot read' : 'cannot compress'}: ${m.message}`, true);
    setReady('error');
    return;
  }
  if (m.id !== compressId || !loaded) return;
  const decoded = CompressedClip.open(m.bpk);
  show({
    kind: 'compared',
    fileName: loaded.fileName,
    raw: m.clip,
    decoded,
    bpk: m.bpk,
    stats: m.stats,
    meter: new PoseErrorMeter(m.clip, m.shellDistances),
  });
  setStatus(`${loaded.fileName}: ${m.stats.name} compressed in ${formatSeconds(m.stats.seconds)}`);
  // Pose and draw once now, so the figures and the picture agree when "ready" is read.
  updatePose();
  stage?.render();
  dirty = false;
  setReady('1');
});

worker.addEventListener('error', (event) => {
  setStatus(`worker failed: ${event.message || 'could not start'}`, true);
  setReady('error');
});

// ---------------------------------------------------------------------------------------
// Controls

function fillUnits(select: HTMLSelectElement, selected: LengthUnit): void {
  select.replaceChildren(...LENGTH_UNITS.map((u) => new Option(u, u, u === selected, u === selected)));
}
const defaultError = parseLength(COMPRESS_DEFAULTS.error);
const defaultShell = parseLength(COMPRESS_DEFAULTS.shell);
ui.threshold.value = String(defaultError.value);
fillUnits(ui.thresholdUnit, defaultError.unit);
ui.shell.value = String(defaultShell.value);
fillUnits(ui.shellUnit, defaultShell.unit);
for (const input of [ui.threshold, ui.thresholdUnit, ui.shell, ui.shellUnit])
  input.addEventListener('change', settingsChanged);
ui.clipSelect.addEventListener('change', () => {
  if (!asset) {
    requestCompress();
    return;
  }
  asset.select(Number(ui.clipSelect.value) || 0);
  time = 0;
  fillAssetPanels(asset);
  dirty = true;
});
ui.viewAsset.addEventListener('click', () => {
  if (!sourceAsset) return;
  compressId = nextId++;
  setReady('0');
  setStatus(`compressing every animation of ${sourceAsset.fileName}…`);
  send({
    type: 'compress-asset',
    id: compressId,
    error: lengthInput(ui.threshold, ui.thresholdUnit),
    shell: lengthInput(ui.shell, ui.shellUnit),
  });
});

ui.legendBar.style.background = legendGradient();
ui.legendOver.style.background = overBudgetCss();

ui.play.addEventListener('click', () => setPlaying(!playing));
ui.scrub.addEventListener('input', () => {
  setPlaying(false);
  time = Math.min(duration(), Math.max(0, Number(ui.scrub.value) || 0));
  dirty = true;
});
ui.mode.addEventListener('change', applyMode);
ui.follow.addEventListener('change', () => {
  if (stage) stage.follow = ui.follow.checked;
  dirty = true;
});
window.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
  if (e.key === ' ') {
    e.preventDefault();
    setPlaying(!playing);
  }
});
window.addEventListener('resize', () => {
  dirty = true;
});
stage?.controls.addEventListener('change', () => {
  dirty = true;
});

ui.download.addEventListener('click', () => {
  if (!playback) return;
  const { shown } = playback;
  const base =
    (shown.kind === 'compared' ? shown.stats.name : shown.decoded.name) ?? shown.fileName.replace(/\.[^.]*$/, '');
  const url = URL.createObjectURL(new Blob([shown.bpk.slice()], { type: 'application/octet-stream' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = shown.kind === 'bpk' ? shown.fileName : `${base}.bpk`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
});

async function openFile(file: File): Promise<void> {
  openBytes(file.name, await file.arrayBuffer());
}
ui.file.addEventListener('change', () => {
  const file = ui.file.files?.[0];
  if (file) void openFile(file);
  ui.file.value = '';
});
window.addEventListener('dragover', (e) => {
  e.preventDefault();
  ui.stage.classList.add('dragging');
});
window.addEventListener('dragleave', () => ui.stage.classList.remove('dragging'));
window.addEventListener('drop', (e) => {
  e.preventDefault();
  ui.stage.classList.remove('dragging');
  const file = e.dataTransfer?.files[0];
  if (file) void openFile(file);
});

// ---------------------------------------------------------------------------------------
// Start: the bundled default clip, compressed with the default settings.

/** `?open=<url>` (same origin or any URL the page may fetch): open that file instead of the bundled clip. */
async function openStart(): Promise<void> {
  const url = new URLSearchParams(location.search).get('open');
  if (!url) {
    openBytes(DEFAULT_CLIP_NAME, new TextEncoder().encode(DEFAULT_CLIP_TEXT).buffer as ArrayBuffer);
    return;
  }
  setReady('0');
  const fileName = decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || url);
  try {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    openBytes(fileName, await response.arrayBuffer());
  } catch (e) {
    setStatus(`cannot fetch ${url}: ${(e as Error).message}`, true);
    setReady('error');
  }
}

setPlaying(true);
void openStart();
requestAnimationFrame(tick);
