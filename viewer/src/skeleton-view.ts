/**
 * A skeleton drawn from object-space matrices: a cylinder from each bone's parent to the
 * bone, and a sphere at every joint (so leaf bones show). One instanced mesh each, so a
 * pose update is a few matrix writes and one draw call per part.
 */
import * as THREE from 'three';

const UP = new THREE.Vector3(0, 1, 0);

export interface SkeletonViewOptions {
  /** Cylinder radius in scene units. */
  radius: number;
  /** Render layer (the stage shows layers per viewport). */
  layer: number;
  /** Colour of every bone until {@link SkeletonView.setBoneColour} is called. */
  colour: THREE.ColorRepresentation;
  /** Below 1: a translucent shell (the raw skeleton when overlaid). */
  opacity?: number;
  /**
   * Links longer than this are not drawn (their joints are): in mocap a root bone often
   * stays at the origin while the hips travel metres away, and a link across the stage
   * would hide the figure. Default: no limit.
   */
  maxLinkLength?: number;
}

export class SkeletonView {
  readonly group = new THREE.Group();
  private readonly parents: Int32Array;
  private readonly links: THREE.InstancedMesh;
  private readonly joints: THREE.InstancedMesh;
  /** Bone index → link instance (−1 for roots). */
  private readonly linkOf: Int32Array;
  private readonly material: THREE.MeshLambertMaterial;
  private radius: number;
  private readonly maxLinkLength: number;
  private readonly a = new THREE.Vector3();
  private readonly b = new THREE.Vector3();
  private readonly dir = new THREE.Vector3();
  private readonly q = new THREE.Quaternion();
  private readonly s = new THREE.Vector3();
  private readonly m = new THREE.Matrix4();
  private readonly colour = new THREE.Color();

  constructor(parents: Int32Array, options: SkeletonViewOptions) {
    this.parents = parents;
    this.radius = options.radius;
    this.maxLinkLength = options.maxLinkLength ?? Infinity;
    this.material = new THREE.MeshLambertMaterial({ color: 0xffffff });
    this.setOpacity(options.opacity ?? 1);
    const cylinder = new THREE.CylinderGeometry(1, 1, 1, 12, 1);
    cylinder.translate(0, 0.5, 0);
    const sphere = new THREE.SphereGeometry(1, 14, 10);
    this.linkOf = new Int32Array(parents.length).fill(-1);
    let links = 0;
    for (let b = 0; b < parents.length; b++) if (parents[b] >= 0) this.linkOf[b] = links++;
    this.links = new THREE.InstancedMesh(cylinder, this.material, Math.max(1, links));
    this.links.count = links;
    this.joints = new THREE.InstancedMesh(sphere, this.material, parents.length);
    for (const mesh of [this.links, this.joints]) {
      mesh.layers.set(options.layer);
      mesh.frustumCulled = false;
      this.group.add(mesh);
    }
    this.group.layers.set(options.layer);
    const base = new THREE.Color(options.colour).getRGB(new THREE.Color(), THREE.SRGBColorSpace);
    for (let b = 0; b < parents.length; b++) this.setBoneColour(b, base.r, base.g, base.b);
  }

  /** Changes the cylinder radius (joints are 1.5×); applied at the next {@link update}. */
  setRadius(radius: number): void {
    this.radius = radius;
  }

  /** 1 draws solid bones; below 1 a translucent shell that does not hide what is inside. */
  setOpacity(opacity: number): void {
    const m = this.material;
    const transparent = opacity < 1;
    if (m.transparent !== transparent) m.needsUpdate = true;
    m.transparent = transparent;
    m.opacity = opacity;
    m.depthWrite = !transparent;
  }

  /** Colours bone `bone` (sRGB components 0..1): its joint and the link from its parent. */
  setBoneColour(bone: number, r: number, g: number, b: number): void {
    this.colour.setRGB(r, g, b, THREE.SRGBColorSpace);
    this.joints.setColorAt(bone, this.colour);
    const link = this.linkOf[bone];
    if (link >= 0) this.links.setColorAt(link, this.colour);
    if (this.joints.instanceColor) this.joints.instanceColor.needsUpdate = true;
    if (this.links.instanceColor) this.links.instanceColor.needsUpdate = true;
  }

  /** Poses the view from object-space matrices (16 floats per bone, column-major, as localToObject writes). */
  update(matrices: Float32Array): void {
    const r = this.radius;
    for (let bone = 0; bone < this.parents.length; bone++) {
      const o = bone * 16;
      this.b.set(matrices[o + 12], matrices[o + 13], matrices[o + 14]);
      this.s.setScalar(r * 1.5);
      this.m.compose(this.b, this.q.identity(), this.s);
      this.joints.setMatrixAt(bone, this.m);
      const link = this.linkOf[bone];
      if (link < 0) continue;
      const p = this.parents[bone] * 16;
      this.a.set(matrices[p + 12], matrices[p + 13], matrices[p + 14]);
      this.dir.subVectors(this.b, this.a);
      const length = this.dir.length();
      if (length > 1e-9) this.q.setFromUnitVectors(UP, this.dir.divideScalar(length));
      else this.q.identity();
      if (length > this.maxLinkLength) this.s.set(0, 0, 0);
      else this.s.set(r, length, r);
      this.m.compose(this.a, this.q, this.s);
      this.links.setMatrixAt(link, this.m);
    }
    this.joints.instanceMatrix.needsUpdate = true;
    this.links.instanceMatrix.needsUpdate = true;
  }

  dispose(): void {
    this.group.removeFromParent();
    this.links.geometry.dispose();
    this.joints.geometry.dispose();
    this.material.dispose();
    this.links.dispose();
    this.joints.dispose();
  }
}
