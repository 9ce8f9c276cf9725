;; The compressor's measures, the same float64s as metric/error-metric.ts's functions:
;;   `measure`: the search's measure of one bone over a segment's keys (compress/bitrate.ts
;;     `SegmentSearch.measureBone`, the `vertices` metric): per key, the bone's object
;;     transform (composeAffine of its parent's and its local matrix) and its
;;     virtualVertexError against the raw clip's; `measureSubtree` and `spotSubtree`, the
;;     same over a tried bone's descendants (`measureSubtree`, `failsAtKey`);
;;   `poseToObject`: error-metric.ts's poseToObject of a float64 pose; `localAffines`, its
;;     poseToAffine of float32 poses (the search's local matrices); `sampleObjects`, its
;;     sampleToObject of a clip's samples;
;;   `referenceObjects`: compress/between.ts `SampleReference.objectAt`, the source's slerp
;;     and lerp between two samples as object transforms;
;;   `measureBones`: the checks between samples' measure of every bone at one time
;;     (compress/between.ts `IntervalChecks.measureAt`), measureBoneErrors per bone;
;;   `rebuild`: compress/quantize.ts `reconstructTrackSegment`, a track's keys as the decoder
;;     rebuilds them at a bit rate (the search's trials, `SegmentSearch.rebuild`);
;;   `leverSums`: compress/between.ts `roundingTerm`'s largest lever sum over a clip's samples.
;; Assembled at build time by scripts/assemble-kernel.mjs (wabt, then binaryen's inlining)
;; into compress/measure-kernel-wasm.ts.
;;
;; Every product and sum is the TypeScript's, in its order ((a·x + b·y) + c·z, two rows at a
;; time in f64x2 lanes), and Math.acos and Math.cos are the engine's own (imported): nothing
;; is fused, so the transforms and errors are the same float64s to the bit
;; (test/compress/measure-kernel.test.ts holds the two to that).
;;
;; Matrices are error-metric.ts's affine layout: 12 float64s (96 bytes), columns x, y, z of
;; the 3 × 3 part at bytes 0, 24, 48, the translation at 72; poses are POSE_STRIDE (10)
;; float64s (80 bytes) per bone: rotation x, y, z, w, translation, scale. `measure` writes
;; its peak error at byte 0 of the memory and its key at byte 8; buffers start at byte 16.
(module
  (import "env" "mem" (memory 1))
  (import "env" "acos" (func $acos (param f64) (result f64)))
  (import "env" "cos" (func $cos (param f64) (result f64)))

  ;; measureBoneErrors' whole-shell error, beside the vertex error $errors returns.
  (global $shell (mut f64) (f64.const 0))

  ;; Bone over `keys` keys, `stride` bytes from one key's matrices to the next in every
  ;; buffer: `parent` its parent's object transform at key 0 (0 for a root, whose object
  ;; transform is its local matrix), `local` its local matrix, `out` where its object
  ;; transform goes, `raw` the raw clip's. `out` may be the buffer `parent` is in (another
  ;; bone's slot), not `local`'s. Returns the first key whose error exceeds `threshold`, or
  ;; -1 with the largest error and its key at bytes 0 and 8.
  (func $measure (export "measure")
    (param $parent i32) (param $local i32) (param $out i32) (param $raw i32)
    (param $stride i32) (param $keys i32) (param $d f64) (param $threshold f64) (result i32)
    (local $k i32) (local $e f64) (local $peak f64) (local $peakKey i32)
    (local.set $peak (f64.const -1))
    (block $done
      (loop $key
        (br_if $done (i32.ge_s (local.get $k) (local.get $keys)))
        (if (i32.eqz (local.get $parent))
          (then
            (v128.store (local.get $out) (v128.load (local.get $local)))
            (v128.store offset=16 (local.get $out) (v128.load offset=16 (local.get $local)))
            (v128.store offset=32 (local.get $out) (v128.load offset=32 (local.get $local)))
            (v128.store offset=48 (local.get $out) (v128.load offset=48 (local.get $local)))
            (v128.store offset=64 (local.get $out) (v128.load offset=64 (local.get $local)))
            (v128.store offset=80 (local.get $out) (v128.load offset=80 (local.get $local))))
          (else (call $compose (local.get $parent) (local.get $local) (local.get $out))))
        (local.set $e (call $vertex (local.get $raw) (local.get $out) (local.get $d)))
        (if (f64.gt (local.get $e) (local.get $threshold)) (then (return (local.get $k))))
        (if (f64.gt (local.get $e) (local.get $peak))
          (then
            (local.set $peak (local.get $e))
            (local.set $peakKey (local.get $k))))
        (if (local.get $parent) (then (local.set $parent (i32.add (local.get $parent) (local.get $stride)))))
        (local.set $local (i32.add (local.get $local) (local.get $stride)))
        (local.set $out (i32.add (local.get $out) (local.get $stride)))
        (local.set $raw (i32.add (local.get $raw) (local.get $stride)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $key)))
    (f64.store (i32.const 0) (local.get $peak))
    (i32.store (i32.const 8) (local.get $peakKey))
    (i32.const -1))

  ;; virtualVertexError of the transforms at `a` and `b` at shell distance `d`: the largest of
  ;; the three virtual vertices' distances, a − b, two coordinates in f64x2 lanes.
  (func $vertex (param $a i32) (param $b i32) (param $d f64) (result f64)
    (local $dv v128) (local $dt01 v128) (local $dt2 f64) (local $v v128) (local $w f64) (local $e f64)
    (local $worst f64) (local $c i32)
    (local.set $dv (f64x2.splat (local.get $d)))
    (local.set $dt01 (f64x2.sub (v128.load offset=72 (local.get $a)) (v128.load offset=72 (local.get $b))))
    (local.set $dt2 (f64.sub (f64.load offset=88 (local.get $a)) (f64.load offset=88 (local.get $b))))
    (loop $vertex
      (local.set $v
        (f64x2.add
          (f64x2.mul (local.get $dv) (f64x2.sub (v128.load (local.get $a)) (v128.load (local.get $b))))
          (local.get $dt01)))
      (local.set $w
        (f64.add
          (f64.mul (local.get $d) (f64.sub (f64.load offset=16 (local.get $a)) (f64.load offset=16 (local.get $b))))
          (local.get $dt2)))
      (local.set $v (f64x2.mul (local.get $v) (local.get $v)))
      (local.set $e
        (f64.add
          (f64.add (f64x2.extract_lane 0 (local.get $v)) (f64x2.extract_lane 1 (local.get $v)))
          (f64.mul (local.get $w) (local.get $w))))
      (if (f64.gt (local.get $e) (local.get $worst)) (then (local.set $worst (local.get $e))))
      (local.set $a (i32.add (local.get $a) (i32.const 24)))
      (local.set $b (i32.add (local.get $b) (i32.const 24)))
      (local.set $c (i32.add (local.get $c) (i32.const 1)))
      (br_if $vertex (i32.lt_u (local.get $c) (i32.const 3))))
    (f64.sqrt (local.get $worst)))

  ;; out = a ∘ b (composeAffine): `out` may be `b`, not `a`.
  (func $compose (param $a i32) (param $b i32) (param $out i32)
    (local $a01 v128) (local $a34 v128) (local $a67 v128)
    (local $a2 f64) (local $a5 f64) (local $a8 f64)
    (local $x f64) (local $y f64) (local $z f64) (local $c i32)
    (local.set $a01 (v128.load (local.get $a)))
    (local.set $a2 (f64.load offset=16 (local.get $a)))
    (local.set $a34 (v128.load offset=24 (local.get $a)))
    (local.set $a5 (f64.load offset=40 (local.get $a)))
    (local.set $a67 (v128.load offset=48 (local.get $a)))
    (local.set $a8 (f64.load offset=64 (local.get $a)))
    (loop $column
      (local.set $x (f64.load (local.get $b)))
      (local.set $y (f64.load offset=8 (local.get $b)))
      (local.set $z (f64.load offset=16 (local.get $b)))
      (v128.store (local.get $out)
        (f64x2.add
          (f64x2.add
            (f64x2.mul (local.get $a01) (f64x2.splat (local.get $x)))
            (f64x2.mul (local.get $a34) (f64x2.splat (local.get $y))))
          (f64x2.mul (local.get $a67) (f64x2.splat (local.get $z)))))
      (f64.store offset=16 (local.get $out)
        (f64.add
          (f64.add (f64.mul (local.get $a2) (local.get $x)) (f64.mul (local.get $a5) (local.get $y)))
          (f64.mul (local.get $a8) (local.get $z))))
      (local.set $b (i32.add (local.get $b) (i32.const 24)))
      (local.set $out (i32.add (local.get $out) (i32.const 24)))
      (local.set $c (i32.add (local.get $c) (i32.const 1)))
      (br_if $column (i32.lt_u (local.get $c) (i32.const 4))))
    ;; $out is now at the matrix's end: its translation is at -24.
    (v128.store offset=0 (i32.sub (local.get $out) (i32.const 24))
      (f64x2.add (v128.load (i32.sub (local.get $out) (i32.const 24))) (v128.load offset=72 (local.get $a))))
    (f64.store (i32.sub (local.get $out) (i32.const 8))
      (f64.add (f64.load (i32.sub (local.get $out) (i32.const 8))) (f64.load offset=88 (local.get $a)))))

  ;; localToAffine: the affine matrix of rotation (qx, qy, qz, qw) as it is, translation and
  ;; scale, at `out`.
  (func $affine (param $qx f64) (param $qy f64) (param $qz f64) (param $qw f64)
    (param $tx f64) (param $ty f64) (param $tz f64) (param $sx f64) (param $sy f64) (param $sz f64) (param $o i32)
    (local $xx f64) (local $yy f64) (local $zz f64) (local $xy f64) (local $xz f64) (local $yz f64)
    (local $wx f64) (local $wy f64) (local $wz f64)
    (local.set $xx (f64.mul (f64.mul (local.get $qx) (local.get $qx)) (f64.const 2)))
    (local.set $yy (f64.mul (f64.mul (local.get $qy) (local.get $qy)) (f64.const 2)))
    (local.set $zz (f64.mul (f64.mul (local.get $qz) (local.get $qz)) (f64.const 2)))
    (local.set $xy (f64.mul (f64.mul (local.get $qx) (local.get $qy)) (f64.const 2)))
    (local.set $xz (f64.mul (f64.mul (local.get $qx) (local.get $qz)) (f64.const 2)))
    (local.set $yz (f64.mul (f64.mul (local.get $qy) (local.get $qz)) (f64.const 2)))
    (local.set $wx (f64.mul (f64.mul (local.get $qw) (local.get $qx)) (f64.const 2)))
    (local.set $wy (f64.mul (f64.mul (local.get $qw) (local.get $qy)) (f64.const 2)))
    (local.set $wz (f64.mul (f64.mul (local.get $qw) (local.get $qz)) (f64.const 2)))
    (f64.store (local.get $o)
      (f64.mul (f64.sub (f64.sub (f64.const 1) (local.get $yy)) (local.get $zz)) (local.get $sx)))
    (f64.store offset=8 (local.get $o) (f64.mul (f64.add (local.get $xy) (local.get $wz)) (local.get $sx)))
    (f64.store offset=16 (local.get $o) (f64.mul (f64.sub (local.get $xz) (local.get $wy)) (local.get $sx)))
    (f64.store offset=24 (local.get $o) (f64.mul (f64.sub (local.get $xy) (local.get $wz)) (local.get $sy)))
    (f64.store offset=32 (local.get $o)
      (f64.mul (f64.sub (f64.sub (f64.const 1) (local.get $xx)) (local.get $zz)) (local.get $sy)))
    (f64.store offset=40 (local.get $o) (f64.mul (f64.add (local.get $yz) (local.get $wx)) (local.get $sy)))
    (f64.store offset=48 (local.get $o) (f64.mul (f64.add (local.get $xz) (local.get $wy)) (local.get $sz)))
    (f64.store offset=56 (local.get $o) (f64.mul (f64.sub (local.get $yz) (local.get $wx)) (local.get $sz)))
    (f64.store offset=64 (local.get $o)
      (f64.mul (f64.sub (f64.sub (f64.const 1) (local.get $xx)) (local.get $yy)) (local.get $sz)))
    (f64.store offset=72 (local.get $o) (local.get $tx))
    (f64.store offset=80 (local.get $o) (local.get $ty))
    (f64.store offset=88 (local.get $o) (local.get $tz)))

  ;; localToAffine of `count` float32 poses (rotation, translation, scale) from `pose`,
  ;; `poseStride` bytes apart, into matrices from `out`, `outStride` bytes apart.
  (func (export "localAffines") (param $pose i32) (param $poseStride i32) (param $out i32) (param $outStride i32)
    (param $count i32)
    (block $done
      (loop $key
        (br_if $done (i32.le_s (local.get $count) (i32.const 0)))
        (call $affine
          (f64.promote_f32 (f32.load (local.get $pose)))
          (f64.promote_f32 (f32.load offset=4 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=8 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=12 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=16 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=20 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=24 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=28 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=32 (local.get $pose)))
          (f64.promote_f32 (f32.load offset=36 (local.get $pose)))
          (local.get $out))
        (local.set $pose (i32.add (local.get $pose) (local.get $poseStride)))
        (local.set $out (i32.add (local.get $out) (local.get $outStride)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $key))))

  ;; error-metric.ts sampleToObject of `count` samples from `first` of a clip of `n` samples
  ;; (float32 rotations, translations and scales, bone-major, at `rot`, `trans`, `scale`):
  ;; their object transforms into `out`, sample-major; `parents` an i32 per bone.
  (func (export "sampleObjects") (param $rot i32) (param $trans i32) (param $scale i32) (param $n i32)
    (param $first i32) (param $count i32) (param $parents i32) (param $bones i32) (param $out i32)
    (local $s i32) (local $b i32) (local $i i32) (local $o i32) (local $base i32) (local $parent i32)
    (local $r i32) (local $v i32)
    (local.set $base (local.get $out))
    (local.set $s (local.get $first))
    (block $done
      (loop $sample
        (br_if $done (i32.ge_s (local.get $s) (i32.add (local.get $first) (local.get $count))))
        (local.set $b (i32.const 0))
        (block $bonesDone
          (loop $bone
            (br_if $bonesDone (i32.ge_s (local.get $b) (local.get $bones)))
            (local.set $i (i32.add (i32.mul (local.get $b) (local.get $n)) (local.get $s)))
            (local.set $r (i32.add (local.get $rot) (i32.shl (local.get $i) (i32.const 4))))
            (local.set $v (i32.mul (local.get $i) (i32.const 12)))
            (local.set $o (i32.add (local.get $base) (i32.mul (local.get $b) (i32.const 96))))
            (call $affine
              (f64.promote_f32 (f32.load (local.get $r)))
              (f64.promote_f32 (f32.load offset=4 (local.get $r)))
              (f64.promote_f32 (f32.load offset=8 (local.get $r)))
              (f64.promote_f32 (f32.load offset=12 (local.get $r)))
              (f64.promote_f32 (f32.load (i32.add (local.get $trans) (local.get $v))))
              (f64.promote_f32 (f32.load offset=4 (i32.add (local.get $trans) (local.get $v))))
              (f64.promote_f32 (f32.load offset=8 (i32.add (local.get $trans) (local.get $v))))
              (f64.promote_f32 (f32.load (i32.add (local.get $scale) (local.get $v))))
              (f64.promote_f32 (f32.load offset=4 (i32.add (local.get $scale) (local.get $v))))
              (f64.promote_f32 (f32.load offset=8 (i32.add (local.get $scale) (local.get $v))))
              (local.get $o))
            (local.set $parent (i32.load (i32.add (local.get $parents) (i32.shl (local.get $b) (i32.const 2)))))
            (if (i32.ge_s (local.get $parent) (i32.const 0))
              (then
                (call $compose (i32.add (local.get $base) (i32.mul (local.get $parent) (i32.const 96)))
                  (local.get $o) (local.get $o))))
            (local.set $b (i32.add (local.get $b) (i32.const 1)))
            (br $bone)))
        (local.set $base (i32.add (local.get $base) (i32.mul (local.get $bones) (i32.const 96))))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $sample))))

  ;; poseToObject: the object transforms of the `bones` bones of the pose at `pose` into `out`,
  ;; parents (an i32 per bone, -1 for a root) at `parents`; with `needed` (not 0), only the
  ;; bones whose byte there is 1.
  (func (export "poseToObject") (param $pose i32) (param $out i32) (param $parents i32) (param $needed i32)
    (param $bones i32)
    (local $b i32) (local $p i32) (local $o i32) (local $parent i32)
    (block $done
      (loop $bone
        (br_if $done (i32.ge_s (local.get $b) (local.get $bones)))
        (block $skip
          (br_if $skip
            (i32.and
              (i32.ne (local.get $needed) (i32.const 0))
              (i32.eqz (i32.load8_u (i32.add (local.get $needed) (local.get $b))))))
          (local.set $p (i32.add (local.get $pose) (i32.mul (local.get $b) (i32.const 80))))
          (local.set $o (i32.add (local.get $out) (i32.mul (local.get $b) (i32.const 96))))
          (call $affine
            (f64.load (local.get $p))
            (f64.load offset=8 (local.get $p))
            (f64.load offset=16 (local.get $p))
            (f64.load offset=24 (local.get $p))
            (f64.load offset=32 (local.get $p))
            (f64.load offset=40 (local.get $p))
            (f64.load offset=48 (local.get $p))
            (f64.load offset=56 (local.get $p))
            (f64.load offset=64 (local.get $p))
            (f64.load offset=72 (local.get $p))
            (local.get $o))
          (local.set $parent (i32.load (i32.add (local.get $parents) (i32.shl (local.get $b) (i32.const 2)))))
          (if (i32.ge_s (local.get $parent) (i32.const 0))
            (then
              (call $compose
                (i32.add (local.get $out) (i32.mul (local.get $parent) (i32.const 96)))
                (local.get $o)
                (local.get $o)))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $bone))))

  ;; measureBoneErrors of the transforms at `a` and `b` at shell distance `d` with floor
  ;; `floor`: returns the vertex error, and leaves the whole-shell error in $shell.
  (func $errors (param $a i32) (param $b i32) (param $d f64) (param $floor f64) (result f64)
    (local $tx f64) (local $ty f64) (local $tz f64)
    (local $d0 f64) (local $d1 f64) (local $d2 f64) (local $d3 f64) (local $d4 f64)
    (local $d5 f64) (local $d6 f64) (local $d7 f64) (local $d8 f64)
    (local $e0 f64) (local $e1 f64) (local $e2 f64) (local $x f64) (local $y f64) (local $z f64)
    (local $m00 f64) (local $m11 f64) (local $m22 f64) (local $m01 f64) (local $m02 f64) (local $m12 f64)
    (local $move f64) (local $cheap f64) (local $off f64) (local $q f64) (local $largest f64)
    (local $a00 f64) (local $a11 f64) (local $a22 f64) (local $p f64) (local $det f64) (local $r f64)
    (local $phi f64) (local $third f64) (local $worst f64)
    (local.set $tx (f64.sub (f64.load offset=72 (local.get $a)) (f64.load offset=72 (local.get $b))))
    (local.set $ty (f64.sub (f64.load offset=80 (local.get $a)) (f64.load offset=80 (local.get $b))))
    (local.set $tz (f64.sub (f64.load offset=88 (local.get $a)) (f64.load offset=88 (local.get $b))))
    (local.set $d0 (f64.sub (f64.load (local.get $a)) (f64.load (local.get $b))))
    (local.set $d1 (f64.sub (f64.load offset=8 (local.get $a)) (f64.load offset=8 (local.get $b))))
    (local.set $d2 (f64.sub (f64.load offset=16 (local.get $a)) (f64.load offset=16 (local.get $b))))
    (local.set $d3 (f64.sub (f64.load offset=24 (local.get $a)) (f64.load offset=24 (local.get $b))))
    (local.set $d4 (f64.sub (f64.load offset=32 (local.get $a)) (f64.load offset=32 (local.get $b))))
    (local.set $d5 (f64.sub (f64.load offset=40 (local.get $a)) (f64.load offset=40 (local.get $b))))
    (local.set $d6 (f64.sub (f64.load offset=48 (local.get $a)) (f64.load offset=48 (local.get $b))))
    (local.set $d7 (f64.sub (f64.load offset=56 (local.get $a)) (f64.load offset=56 (local.get $b))))
    (local.set $d8 (f64.sub (f64.load offset=64 (local.get $a)) (f64.load offset=64 (local.get $b))))
    (local.set $x (f64.add (f64.mul (local.get $d) (local.get $d0)) (local.get $tx)))
    (local.set $y (f64.add (f64.mul (local.get $d) (local.get $d1)) (local.get $ty)))
    (local.set $z (f64.add (f64.mul (local.get $d) (local.get $d2)) (local.get $tz)))
    (local.set $e0 (f64.add (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))
      (f64.mul (local.get $z) (local.get $z))))
    (local.set $x (f64.add (f64.mul (local.get $d) (local.get $d3)) (local.get $tx)))
    (local.set $y (f64.add (f64.mul (local.get $d) (local.get $d4)) (local.get $ty)))
    (local.set $z (f64.add (f64.mul (local.get $d) (local.get $d5)) (local.get $tz)))
    (local.set $e1 (f64.add (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))
      (f64.mul (local.get $z) (local.get $z))))
    (local.set $x (f64.add (f64.mul (local.get $d) (local.get $d6)) (local.get $tx)))
    (local.set $y (f64.add (f64.mul (local.get $d) (local.get $d7)) (local.get $ty)))
    (local.set $z (f64.add (f64.mul (local.get $d) (local.get $d8)) (local.get $tz)))
    (local.set $e2 (f64.add (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))
      (f64.mul (local.get $z) (local.get $z))))
    (local.set $m00 (f64.add (f64.add (f64.mul (local.get $d0) (local.get $d0)) (f64.mul (local.get $d1) (local.get $d1)))
      (f64.mul (local.get $d2) (local.get $d2))))
    (local.set $m11 (f64.add (f64.add (f64.mul (local.get $d3) (local.get $d3)) (f64.mul (local.get $d4) (local.get $d4)))
      (f64.mul (local.get $d5) (local.get $d5))))
    (local.set $m22 (f64.add (f64.add (f64.mul (local.get $d6) (local.get $d6)) (f64.mul (local.get $d7) (local.get $d7)))
      (f64.mul (local.get $d8) (local.get $d8))))
    (local.set $move (f64.sqrt (f64.add (f64.add (f64.mul (local.get $tx) (local.get $tx)) (f64.mul (local.get $ty) (local.get $ty)))
      (f64.mul (local.get $tz) (local.get $tz)))))
    (local.set $cheap (f64.add
      (f64.mul (local.get $d) (f64.sqrt (f64.add (f64.add (local.get $m00) (local.get $m11)) (local.get $m22))))
      (local.get $move)))
    (if (f64.le (f64.mul (local.get $cheap) (f64.add (f64.const 1) (f64.const 1e-9))) (local.get $floor))
      (then (global.set $shell (local.get $cheap)))
      (else
        ;; The largest eigenvalue of DᵀD, closed form for symmetric 3 × 3 matrices.
        (local.set $m01 (f64.add (f64.add (f64.mul (local.get $d0) (local.get $d3)) (f64.mul (local.get $d1) (local.get $d4)))
          (f64.mul (local.get $d2) (local.get $d5))))
        (local.set $m02 (f64.add (f64.add (f64.mul (local.get $d0) (local.get $d6)) (f64.mul (local.get $d1) (local.get $d7)))
          (f64.mul (local.get $d2) (local.get $d8))))
        (local.set $m12 (f64.add (f64.add (f64.mul (local.get $d3) (local.get $d6)) (f64.mul (local.get $d4) (local.get $d7)))
          (f64.mul (local.get $d5) (local.get $d8))))
        (local.set $off (f64.add (f64.add (f64.mul (local.get $m01) (local.get $m01)) (f64.mul (local.get $m02) (local.get $m02)))
          (f64.mul (local.get $m12) (local.get $m12))))
        (local.set $q (f64.div (f64.add (f64.add (local.get $m00) (local.get $m11)) (local.get $m22)) (f64.const 3)))
        (if (f64.eq (local.get $off) (f64.const 0))
          (then (local.set $largest (f64.max (f64.max (local.get $m00) (local.get $m11)) (local.get $m22))))
          (else
            (local.set $a00 (f64.sub (local.get $m00) (local.get $q)))
            (local.set $a11 (f64.sub (local.get $m11) (local.get $q)))
            (local.set $a22 (f64.sub (local.get $m22) (local.get $q)))
            (local.set $p (f64.sqrt (f64.div
              (f64.add
                (f64.add (f64.add (f64.mul (local.get $a00) (local.get $a00)) (f64.mul (local.get $a11) (local.get $a11)))
                  (f64.mul (local.get $a22) (local.get $a22)))
                (f64.mul (f64.const 2) (local.get $off)))
              (f64.const 6))))
            (local.set $det (f64.add
              (f64.sub
                (f64.mul (local.get $a00)
                  (f64.sub (f64.mul (local.get $a11) (local.get $a22)) (f64.mul (local.get $m12) (local.get $m12))))
                (f64.mul (local.get $m01)
                  (f64.sub (f64.mul (local.get $m01) (local.get $a22)) (f64.mul (local.get $m12) (local.get $m02)))))
              (f64.mul (local.get $m02)
                (f64.sub (f64.mul (local.get $m01) (local.get $m12)) (f64.mul (local.get $a11) (local.get $m02))))))
            (local.set $r (f64.div (local.get $det)
              (f64.mul (f64.mul (f64.mul (f64.const 2) (local.get $p)) (local.get $p)) (local.get $p))))
            (if (f64.le (local.get $r) (f64.const -1))
              (then (local.set $phi (f64.div (f64.const 3.141592653589793) (f64.const 3))))
              (else
                (if (f64.ge (local.get $r) (f64.const 1))
                  (then (local.set $phi (f64.const 0)))
                  (else (local.set $phi (f64.div (call $acos (local.get $r)) (f64.const 3)))))))
            (local.set $largest (f64.add (local.get $q)
              (f64.mul (f64.mul (f64.const 2) (local.get $p)) (call $cos (local.get $phi)))))))
        ;; Rounding can put the closed form a little below trace / 3, which the largest eigenvalue never is.
        (local.set $third (f64.div (f64.add (f64.add (local.get $m00) (local.get $m11)) (local.get $m22)) (f64.const 3)))
        (global.set $shell (f64.add
          (f64.mul (local.get $d)
            (f64.sqrt (select (local.get $largest) (local.get $third) (f64.gt (local.get $largest) (local.get $third)))))
          (local.get $move)))))
    (if (f64.gt (local.get $e0) (local.get $worst)) (then (local.set $worst (local.get $e0))))
    (if (f64.gt (local.get $e1) (local.get $worst)) (then (local.set $worst (local.get $e1))))
    (if (f64.gt (local.get $e2) (local.get $worst)) (then (local.set $worst (local.get $e2))))
    (f64.sqrt (local.get $worst)))

  ;; IntervalChecks.measureAt against one reference: each of the `bones` bones' error between
  ;; the reference's object transforms at `ref` and the decoded ones at `dec`, at its shell
  ;; distance (`shells`, a float64 per bone), raised into its largest so far at `worst` (and,
  ;; where `fraction` is not 0, `alpha` written there as where). With `live` (not 0), only
  ;; the bones whose byte there is 1. `mode` 0: the vertex error, the whole-shell error raised
  ;; into `worstShell` from the floor max(worstShell, shellFloor / grow) (a float64 per bone
  ;; at `grow`); 1: the vertex error alone (virtualVertexError); 2: the whole-shell error
  ;; alone, no floor (shellBoundError).
  (func (export "measureBones") (param $ref i32) (param $dec i32) (param $bones i32) (param $live i32)
    (param $shells i32) (param $worst i32) (param $worstShell i32) (param $fraction i32) (param $grow i32)
    (param $shellFloor f64) (param $alpha f64) (param $mode i32)
    (local $b i32) (local $o i32) (local $e f64) (local $at i32) (local $floor f64)
    (block $done
      (loop $bone
        (br_if $done (i32.ge_s (local.get $b) (local.get $bones)))
        (block $skip
          (br_if $skip
            (i32.and
              (i32.ne (local.get $live) (i32.const 0))
              (i32.eqz (i32.load8_u (i32.add (local.get $live) (local.get $b))))))
          (local.set $o (i32.mul (local.get $b) (i32.const 96)))
          (local.set $at (i32.shl (local.get $b) (i32.const 3)))
          (local.set $floor
            (if (result f64) (i32.eqz (local.get $mode))
              (then
                (f64.max
                  (f64.load (i32.add (local.get $worstShell) (local.get $at)))
                  (f64.div (local.get $shellFloor) (f64.load (i32.add (local.get $grow) (local.get $at))))))
              (else (select (f64.const inf) (f64.const -1) (i32.eq (local.get $mode) (i32.const 1))))))
          (local.set $e (call $errors
            (i32.add (local.get $ref) (local.get $o))
            (i32.add (local.get $dec) (local.get $o))
            (f64.load (i32.add (local.get $shells) (local.get $at)))
            (local.get $floor)))
          (if (i32.eqz (local.get $mode))
            (then
              (if (f64.gt (global.get $shell) (f64.load (i32.add (local.get $worstShell) (local.get $at))))
                (then (f64.store (i32.add (local.get $worstShell) (local.get $at)) (global.get $shell))))))
          (if (i32.eq (local.get $mode) (i32.const 2)) (then (local.set $e (global.get $shell))))
          (if (f64.gt (local.get $e) (f64.load (i32.add (local.get $worst) (local.get $at))))
            (then
              (f64.store (i32.add (local.get $worst) (local.get $at)) (local.get $e))
              (if (local.get $fraction)
                (then (f64.store (i32.add (local.get $fraction) (local.get $at)) (local.get $alpha)))))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $bone))))

  ;; compress/between.ts `SampleReference.objectAt`: the object transforms of the reference
  ;; pose a fraction `alpha` of the way from sample `k` to k + 1 of a clip of `n` samples per
  ;; bone (float32 rotations at `rot`, translations at `trans`, scales at `scale`, bone-major)
  ;; into `out`: each rotation slerped with its weights at `wa` and `wb` (a float64 per bone)
  ;; and the sign at `sign`, then normalised; translations and scales lerped; `held` a byte
  ;; per bone (1: rotation, 2: translation, 4: scale held over the interval). `parents` and
  ;; `needed` as in poseToObject.
  (func (export "referenceObjects") (param $rot i32) (param $trans i32) (param $scale i32) (param $n i32)
    (param $k i32) (param $alpha f64) (param $wa i32) (param $wb i32) (param $sign i32) (param $held i32)
    (param $parents i32) (param $needed i32) (param $out i32) (param $bones i32)
    (local $b i32) (local $h i32) (local $a i32) (local $a3 i32) (local $o i32) (local $parent i32)
    (local $x f64) (local $y f64) (local $z f64) (local $w f64) (local $ka f64) (local $kb f64)
    (local $len f64) (local $inv f64)
    (block $done
      (loop $bone
        (br_if $done (i32.ge_s (local.get $b) (local.get $bones)))
        (block $skip
          (br_if $skip
            (i32.and
              (i32.ne (local.get $needed) (i32.const 0))
              (i32.eqz (i32.load8_u (i32.add (local.get $needed) (local.get $b))))))
          (local.set $h (i32.load8_u (i32.add (local.get $held) (local.get $b))))
          ;; Sample k of bone b: rotation at (b·n + k)·16 bytes, translation and scale at (b·n + k)·12.
          (local.set $a (i32.add (local.get $rot)
            (i32.shl (i32.add (i32.mul (local.get $b) (local.get $n)) (local.get $k)) (i32.const 4))))
          (local.set $x (f64.promote_f32 (f32.load (local.get $a))))
          (local.set $y (f64.promote_f32 (f32.load offset=4 (local.get $a))))
          (local.set $z (f64.promote_f32 (f32.load offset=8 (local.get $a))))
          (local.set $w (f64.promote_f32 (f32.load offset=12 (local.get $a))))
          (if (i32.eqz (i32.and (local.get $h) (i32.const 1)))
            (then
              (local.set $ka (f64.load (i32.add (local.get $wa) (i32.shl (local.get $b) (i32.const 3)))))
              (local.set $kb (f64.mul
                (f64.load (i32.add (local.get $wb) (i32.shl (local.get $b) (i32.const 3))))
                (f64.load (i32.add (local.get $sign) (i32.shl (local.get $b) (i32.const 3))))))
              (local.set $x (f64.add (f64.mul (local.get $x) (local.get $ka))
                (f64.mul (f64.promote_f32 (f32.load offset=16 (local.get $a))) (local.get $kb))))
              (local.set $y (f64.add (f64.mul (local.get $y) (local.get $ka))
                (f64.mul (f64.promote_f32 (f32.load offset=20 (local.get $a))) (local.get $kb))))
              (local.set $z (f64.add (f64.mul (local.get $z) (local.get $ka))
                (f64.mul (f64.promote_f32 (f32.load offset=24 (local.get $a))) (local.get $kb))))
              (local.set $w (f64.add (f64.mul (local.get $w) (local.get $ka))
                (f64.mul (f64.promote_f32 (f32.load offset=28 (local.get $a))) (local.get $kb))))
              (local.set $len (f64.add
                (f64.add
                  (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))
                  (f64.mul (local.get $z) (local.get $z)))
                (f64.mul (local.get $w) (local.get $w))))
              (local.set $inv (select
                (f64.div (f64.const 1) (f64.sqrt (local.get $len)))
                (f64.const 0)
                (f64.gt (local.get $len) (f64.const 0))))
              (local.set $x (f64.mul (local.get $x) (local.get $inv)))
              (local.set $y (f64.mul (local.get $y) (local.get $inv)))
              (local.set $z (f64.mul (local.get $z) (local.get $inv)))
              (local.set $w (f64.mul (local.get $w) (local.get $inv)))))
          (local.set $a3 (i32.mul (i32.add (i32.mul (local.get $b) (local.get $n)) (local.get $k)) (i32.const 12)))
          (local.set $o (i32.add (local.get $out) (i32.mul (local.get $b) (i32.const 96))))
          (call $affine
            (local.get $x) (local.get $y) (local.get $z) (local.get $w)
            (call $lerp (i32.add (local.get $trans) (local.get $a3)) (i32.and (local.get $h) (i32.const 2)) (local.get $alpha))
            (call $lerp (i32.add (local.get $trans) (i32.add (local.get $a3) (i32.const 4)))
              (i32.and (local.get $h) (i32.const 2)) (local.get $alpha))
            (call $lerp (i32.add (local.get $trans) (i32.add (local.get $a3) (i32.const 8)))
              (i32.and (local.get $h) (i32.const 2)) (local.get $alpha))
            (call $lerp (i32.add (local.get $scale) (local.get $a3)) (i32.and (local.get $h) (i32.const 4)) (local.get $alpha))
            (call $lerp (i32.add (local.get $scale) (i32.add (local.get $a3) (i32.const 4)))
              (i32.and (local.get $h) (i32.const 4)) (local.get $alpha))
            (call $lerp (i32.add (local.get $scale) (i32.add (local.get $a3) (i32.const 8)))
              (i32.and (local.get $h) (i32.const 4)) (local.get $alpha))
            (local.get $o))
          (local.set $parent (i32.load (i32.add (local.get $parents) (i32.shl (local.get $b) (i32.const 2)))))
          (if (i32.ge_s (local.get $parent) (i32.const 0))
            (then
              (call $compose
                (i32.add (local.get $out) (i32.mul (local.get $parent) (i32.const 96)))
                (local.get $o)
                (local.get $o)))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $bone))))

  ;; The float32 at `at` (held, `held` not 0), or lerped a fraction `alpha` to the next sample's,
  ;; 12 bytes on: v + (next − v) · alpha.
  (func $lerp (param $at i32) (param $held i32) (param $alpha f64) (result f64)
    (local $v f64)
    (local.set $v (f64.promote_f32 (f32.load (local.get $at))))
    (if (result f64) (local.get $held)
      (then (local.get $v))
      (else
        (f64.add (local.get $v)
          (f64.mul (f64.sub (f64.promote_f32 (f32.load offset=12 (local.get $at))) (local.get $v)) (local.get $alpha))))))

  ;; SegmentSearch.measureSubtree after its root: the bones at preorder[first .. end) (an i32
  ;; each at `preorder`; parents at `parents`), each over `keys` keys with `measure`, its
  ;; object transforms going to the buffer its `current` byte does not name (0: `object`, 1:
  ;; `trial`), its parent's read from the buffer the parent's byte does not name (the parent
  ;; was measured just before), its local matrices from the one its `side` byte names (0:
  ;; `local0`, 1: `local1`); `raw` the raw clip's, `shells` a float64 per bone, bones · 96
  ;; bytes from key to key. Each bone's largest error and key go to `peakError` (float64) and
  ;; `peakKey` (i32) at (1 − current) · bones + b. Returns the first key over `threshold` of
  ;; the first bone over it, or -1.
  (func (export "measureSubtree") (param $first i32) (param $end i32) (param $preorder i32) (param $parents i32)
    (param $current i32) (param $side i32) (param $object i32) (param $trial i32) (param $local0 i32)
    (param $local1 i32) (param $raw i32) (param $shells i32) (param $peakError i32) (param $peakKey i32)
    (param $bones i32) (param $keys i32) (param $threshold f64) (result i32)
    (local $i i32) (local $b i32) (local $p i32) (local $m i32) (local $failed i32) (local $at i32)
    (local.set $i (local.get $first))
    (block $done
      (loop $bone
        (br_if $done (i32.ge_s (local.get $i) (local.get $end)))
        (local.set $b (i32.load (i32.add (local.get $preorder) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $p (i32.load (i32.add (local.get $parents) (i32.shl (local.get $b) (i32.const 2)))))
        (local.set $m (i32.mul (local.get $b) (i32.const 96)))
        (local.set $failed (call $measure
          (i32.add
            (select (local.get $object) (local.get $trial) (i32.load8_u (i32.add (local.get $current) (local.get $p))))
            (i32.mul (local.get $p) (i32.const 96)))
          (i32.add (select (local.get $local1) (local.get $local0) (i32.load8_u (i32.add (local.get $side) (local.get $b))))
            (local.get $m))
          (i32.add
            (select (local.get $object) (local.get $trial) (i32.load8_u (i32.add (local.get $current) (local.get $b))))
            (local.get $m))
          (i32.add (local.get $raw) (local.get $m))
          (i32.mul (local.get $bones) (i32.const 96))
          (local.get $keys)
          (f64.load (i32.add (local.get $shells) (i32.shl (local.get $b) (i32.const 3))))
          (local.get $threshold)))
        (if (i32.ge_s (local.get $failed) (i32.const 0)) (then (return (local.get $failed))))
        (local.set $at (i32.add (local.get $b)
          (i32.mul (i32.sub (i32.const 1) (i32.load8_u (i32.add (local.get $current) (local.get $b)))) (local.get $bones))))
        (f64.store (i32.add (local.get $peakError) (i32.shl (local.get $at) (i32.const 3))) (f64.load (i32.const 0)))
        (i32.store (i32.add (local.get $peakKey) (i32.shl (local.get $at) (i32.const 2))) (i32.load (i32.const 8)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bone)))
    (i32.const -1))

  ;; SegmentSearch.failsAtKey after its root: the bones at preorder[first .. end) at one key,
  ;; each composed from its parent's transform in `spot` (a bone's at b · 96) and its local
  ;; matrix in the buffer its `side` byte names (`local0` or `local1`, at the key), into
  ;; `spot`, and measured against `raw` (at the key) at its shell distance. 1 at the first
  ;; bone over `threshold`, else 0.
  (func (export "spotSubtree") (param $first i32) (param $end i32) (param $preorder i32) (param $parents i32)
    (param $side i32) (param $spot i32) (param $local0 i32) (param $local1 i32) (param $raw i32) (param $shells i32)
    (param $threshold f64) (result i32)
    (local $i i32) (local $b i32) (local $m i32)
    (local.set $i (local.get $first))
    (block $done
      (loop $bone
        (br_if $done (i32.ge_s (local.get $i) (local.get $end)))
        (local.set $b (i32.load (i32.add (local.get $preorder) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $m (i32.mul (local.get $b) (i32.const 96)))
        (call $compose
          (i32.add (local.get $spot)
            (i32.mul (i32.load (i32.add (local.get $parents) (i32.shl (local.get $b) (i32.const 2)))) (i32.const 96)))
          (i32.add (select (local.get $local1) (local.get $local0) (i32.load8_u (i32.add (local.get $side) (local.get $b))))
            (local.get $m))
          (i32.add (local.get $spot) (local.get $m)))
        (if (f64.gt
              (call $vertex (i32.add (local.get $raw) (local.get $m)) (i32.add (local.get $spot) (local.get $m))
                (f64.load (i32.add (local.get $shells) (i32.shl (local.get $b) (i32.const 3)))))
              (local.get $threshold))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bone)))
    (i32.const 0))

  ;; reconstructTrackSegment of `count` keys of one track: its values at `values` (float32,
  ;; `width` a key: 4 for a rotation's delta, 3 for a vector), each stored component (x, y, z
  ;; but `drop`) mode 0: quantised to its code and rebuilt as offset + code · step, with the
  ;; float64 (offset, step, 1 / step, largest code) of its slot at `dq` + 32 · slot; mode 1:
  ;; the value itself; mode 2: the float64 at `dq` + 8 · slot. A vector's components go to
  ;; `out` (float32, `stride` bytes a key) as they are; a rotation's are rounded to float32
  ;; into three planes at `planes` (count rounded up to 4 floats each), and then rebuilt four
  ;; keys at a time as runtime/interpolate.ts decodeRotations rebuilds one key alone: the
  ;; dropped component √(1 − a² − b² − c²) (0 where that is not > 0), the product with the
  ;; reference (rx, ry, rz, rw: float32 numbers) and the normalisation (identity where the
  ;; squared length is not > 0). Each of those operations is decodeRotations' float64 operation
  ;; on float32 numbers rounded to float32, which is the float32 operation (a sum, difference,
  ;; product, quotient or square root of two float32s rounded once in float64 and once more to
  ;; float32 is rounded as float32 arithmetic rounds it): the same floats to the bit.
  (func (export "rebuild") (param $values i32) (param $width i32) (param $count i32) (param $drop i32)
    (param $mode i32) (param $dq i32) (param $rx f32) (param $ry f32) (param $rz f32) (param $rw f32)
    (param $planes i32) (param $out i32) (param $stride i32)
    (local $slot i32) (local $c i32) (local $k i32) (local $v f64) (local $at i32) (local $plane i32)
    (local $offset f64) (local $step f64) (local $inv f64) (local $max f64) (local $x f64) (local $r f64)
    (local $rotation i32)
    (local.set $rotation (i32.eq (local.get $width) (i32.const 4)))
    (local.set $plane (i32.shl (i32.and (i32.add (local.get $count) (i32.const 3)) (i32.const -4)) (i32.const 2)))
    (local.set $slot (i32.const 0))
    (loop $slots
      ;; The slot's stored component: slot, or slot + 1 from the dropped one on.
      (local.set $c (i32.add (local.get $slot) (i32.ge_u (local.get $slot) (local.get $drop))))
      (local.set $at (i32.add (local.get $dq) (i32.shl (local.get $slot) (i32.const 5))))
      (local.set $offset (f64.load (local.get $at)))
      (local.set $step (f64.load offset=8 (local.get $at)))
      (local.set $inv (f64.load offset=16 (local.get $at)))
      (local.set $max (f64.load offset=24 (local.get $at)))
      (local.set $k (i32.const 0))
      (block $done
        (loop $key
          (br_if $done (i32.ge_s (local.get $k) (local.get $count)))
          (local.set $v (f64.promote_f32 (f32.load
            (i32.add (local.get $values)
              (i32.shl (i32.add (i32.mul (local.get $k) (local.get $width)) (local.get $c)) (i32.const 2))))))
          (if (i32.eqz (local.get $mode))
            (then
              ;; quantize.ts codeOf: roundHalfUp((v − offset) · inv), clamped to 0 .. max.
              (local.set $x (f64.mul (f64.sub (local.get $v) (local.get $offset)) (local.get $inv)))
              (local.set $r (f64.floor (f64.add (local.get $x) (f64.const 0.5))))
              (if (f64.gt (f64.sub (local.get $r) (f64.const 0.5)) (local.get $x))
                (then (local.set $r (f64.sub (local.get $r) (f64.const 1)))))
              (if (f64.le (local.get $r) (f64.const 0))
                (then (local.set $r (f64.const 0)))
                (else (if (f64.gt (local.get $r) (local.get $max)) (then (local.set $r (local.get $max))))))
              (local.set $v (f64.add (local.get $offset) (f64.mul (local.get $r) (local.get $step))))))
          (if (i32.eq (local.get $mode) (i32.const 2))
            (then (local.set $v (f64.load (i32.add (local.get $dq) (i32.shl (local.get $slot) (i32.const 3)))))))
          (if (local.get $rotation)
            (then
              (f32.store
                (i32.add (i32.add (local.get $planes) (i32.mul (local.get $slot) (local.get $plane)))
                  (i32.shl (local.get $k) (i32.const 2)))
                (f32.demote_f64 (local.get $v))))
            (else
              (f32.store
                (i32.add (i32.add (local.get $out) (i32.mul (local.get $k) (local.get $stride)))
                  (i32.shl (local.get $slot) (i32.const 2)))
                (f32.demote_f64 (local.get $v)))))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br $key)))
      (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
      (br_if $slots (i32.lt_u (local.get $slot) (i32.const 3))))
    (if (local.get $rotation)
      (then (call $rotations (local.get $planes) (local.get $plane) (local.get $count) (local.get $drop)
        (local.get $rx) (local.get $ry) (local.get $rz) (local.get $rw) (local.get $out) (local.get $stride)))))

  ;; `rebuild`'s rotations, four keys at a time from the three planes of stored components at
  ;; `planes` (`plane` bytes apart): each key's dropped component rebuilt, its delta multiplied
  ;; by the reference and normalised, into `out` (xyzw float32, `stride` bytes a key).
  (func $rotations (param $planes i32) (param $plane i32) (param $count i32) (param $drop i32)
    (param $rx f32) (param $ry f32) (param $rz f32) (param $rw f32) (param $out i32) (param $stride i32)
    (local $k i32) (local $lane i32) (local $o i32)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128) (local $t v128)
    (local $x v128) (local $y v128) (local $z v128) (local $w v128)
    (local $px v128) (local $py v128) (local $pz v128) (local $pw v128) (local $len2 v128) (local $inv v128)
    (local $ok v128) (local $vx v128) (local $vy v128) (local $vz v128) (local $vw v128)
    (local.set $vx (f32x4.splat (local.get $rx)))
    (local.set $vy (f32x4.splat (local.get $ry)))
    (local.set $vz (f32x4.splat (local.get $rz)))
    (local.set $vw (f32x4.splat (local.get $rw)))
    (block $done
      (loop $keys
        (br_if $done (i32.ge_s (local.get $k) (local.get $count)))
        (local.set $a (v128.load (local.get $planes)))
        (local.set $b (v128.load (i32.add (local.get $planes) (local.get $plane))))
        (local.set $c (v128.load (i32.add (local.get $planes) (i32.shl (local.get $plane) (i32.const 1)))))
        ;; t = ((1 − a²) − b²) − c²; the dropped component √t where t > 0, else 0.
        (local.set $t (f32x4.sub (f32x4.sub (f32x4.sub (f32x4.splat (f32.const 1)) (f32x4.mul (local.get $a) (local.get $a)))
          (f32x4.mul (local.get $b) (local.get $b))) (f32x4.mul (local.get $c) (local.get $c))))
        (local.set $d (v128.and (f32x4.sqrt (local.get $t)) (f32x4.gt (local.get $t) (v128.const i32x4 0 0 0 0))))
        ;; x, y, z, w: the stored components in order, the rebuilt one in the dropped place.
        (local.set $x (local.get $a))
        (local.set $y (local.get $b))
        (local.set $z (local.get $c))
        (local.set $w (local.get $d))
        (if (i32.le_u (local.get $drop) (i32.const 2))
          (then
            (local.set $w (local.get $c))
            (local.set $z (local.get $d))
            (if (i32.le_u (local.get $drop) (i32.const 1))
              (then
                (local.set $z (local.get $b))
                (local.set $y (local.get $d))
                (if (i32.eqz (local.get $drop))
                  (then
                    (local.set $y (local.get $a))
                    (local.set $x (local.get $d))))))))
        ;; ref · delta, each product's terms left to right.
        (local.set $px (f32x4.sub (f32x4.add (f32x4.add (f32x4.mul (local.get $vw) (local.get $x))
          (f32x4.mul (local.get $vx) (local.get $w))) (f32x4.mul (local.get $vy) (local.get $z)))
          (f32x4.mul (local.get $vz) (local.get $y))))
        (local.set $py (f32x4.add (f32x4.add (f32x4.sub (f32x4.mul (local.get $vw) (local.get $y))
          (f32x4.mul (local.get $vx) (local.get $z))) (f32x4.mul (local.get $vy) (local.get $w)))
          (f32x4.mul (local.get $vz) (local.get $x))))
        (local.set $pz (f32x4.add (f32x4.sub (f32x4.add (f32x4.mul (local.get $vw) (local.get $z))
          (f32x4.mul (local.get $vx) (local.get $y))) (f32x4.mul (local.get $vy) (local.get $x)))
          (f32x4.mul (local.get $vz) (local.get $w))))
        (local.set $pw (f32x4.sub (f32x4.sub (f32x4.sub (f32x4.mul (local.get $vw) (local.get $w))
          (f32x4.mul (local.get $vx) (local.get $x))) (f32x4.mul (local.get $vy) (local.get $y)))
          (f32x4.mul (local.get $vz) (local.get $z))))
        (local.set $len2 (f32x4.add (f32x4.add (f32x4.add (f32x4.mul (local.get $px) (local.get $px))
          (f32x4.mul (local.get $py) (local.get $py))) (f32x4.mul (local.get $pz) (local.get $pz)))
          (f32x4.mul (local.get $pw) (local.get $pw))))
        (local.set $inv (f32x4.div (f32x4.splat (f32.const 1)) (f32x4.sqrt (local.get $len2))))
        ;; Identity where the squared length is not > 0.
        (local.set $ok (f32x4.gt (local.get $len2) (v128.const i32x4 0 0 0 0)))
        (local.set $px (v128.and (f32x4.mul (local.get $px) (local.get $inv)) (local.get $ok)))
        (local.set $py (v128.and (f32x4.mul (local.get $py) (local.get $inv)) (local.get $ok)))
        (local.set $pz (v128.and (f32x4.mul (local.get $pz) (local.get $inv)) (local.get $ok)))
        (local.set $pw (v128.bitselect (f32x4.mul (local.get $pw) (local.get $inv)) (f32x4.splat (f32.const 1))
          (local.get $ok)))
        ;; The keys of the four that are there, one lane each.
        (local.set $o (i32.add (local.get $out) (i32.mul (local.get $k) (local.get $stride))))
        (f32.store (local.get $o) (f32x4.extract_lane 0 (local.get $px)))
        (f32.store offset=4 (local.get $o) (f32x4.extract_lane 0 (local.get $py)))
        (f32.store offset=8 (local.get $o) (f32x4.extract_lane 0 (local.get $pz)))
        (f32.store offset=12 (local.get $o) (f32x4.extract_lane 0 (local.get $pw)))
        (if (i32.lt_s (i32.add (local.get $k) (i32.const 1)) (local.get $count))
          (then
            (local.set $o (i32.add (local.get $o) (local.get $stride)))
            (f32.store (local.get $o) (f32x4.extract_lane 1 (local.get $px)))
            (f32.store offset=4 (local.get $o) (f32x4.extract_lane 1 (local.get $py)))
            (f32.store offset=8 (local.get $o) (f32x4.extract_lane 1 (local.get $pz)))
            (f32.store offset=12 (local.get $o) (f32x4.extract_lane 1 (local.get $pw)))))
        (if (i32.lt_s (i32.add (local.get $k) (i32.const 2)) (local.get $count))
          (then
            (local.set $o (i32.add (local.get $o) (local.get $stride)))
            (f32.store (local.get $o) (f32x4.extract_lane 2 (local.get $px)))
            (f32.store offset=4 (local.get $o) (f32x4.extract_lane 2 (local.get $py)))
            (f32.store offset=8 (local.get $o) (f32x4.extract_lane 2 (local.get $pz)))
            (f32.store offset=12 (local.get $o) (f32x4.extract_lane 2 (local.get $pw)))))
        (if (i32.lt_s (i32.add (local.get $k) (i32.const 3)) (local.get $count))
          (then
            (local.set $o (i32.add (local.get $o) (local.get $stride)))
            (f32.store (local.get $o) (f32x4.extract_lane 3 (local.get $px)))
            (f32.store offset=4 (local.get $o) (f32x4.extract_lane 3 (local.get $py)))
            (f32.store offset=8 (local.get $o) (f32x4.extract_lane 3 (local.get $pz)))
            (f32.store offset=12 (local.get $o) (f32x4.extract_lane 3 (local.get $pw)))))
        (local.set $planes (i32.add (local.get $planes) (i32.const 16)))
        (local.set $k (i32.add (local.get $k) (i32.const 4)))
        (br $keys))))

  ;; compress/between.ts `LeverSums.largestAt` of every sample, the largest: the object
  ;; transforms of `samples` samples at `object` (sample-major, `bones` matrices a sample),
  ;; `parents` an i32 per bone, `turns` and `moves` a byte per bone, `shells` a float64 per
  ;; bone; `turning`, `turnSums` and `moveSums` a float64 per bone of scratch. Sums over at
  ;; most 64 ancestors exactly (between.ts LEVER_WALK), then bounded from the one reached.
  (func (export "leverSums") (param $object i32) (param $samples i32) (param $bones i32) (param $parents i32)
    (param $turns i32) (param $moves i32) (param $shells i32) (param $turning i32) (param $turnSums i32)
    (param $moveSums i32) (result f64)
    (local $s i32) (local $b i32) (local $base i32) (local $o i32) (local $parent i32) (local $a i32)
    (local $step i32) (local $lever f64) (local $sampleLever f64) (local $turnSum f64) (local $moveSum f64)
    (local $turningB f64) (local $scale f64) (local $sum f64) (local $c i32)
    (block $allDone
      (loop $sample
        (br_if $allDone (i32.ge_s (local.get $s) (local.get $samples)))
        (local.set $base (i32.add (local.get $object) (i32.mul (i32.mul (local.get $s) (local.get $bones)) (i32.const 96))))
        (local.set $sampleLever (f64.const 0))
        (local.set $b (i32.const 0))
        (block $bonesDone
          (loop $bone
            (br_if $bonesDone (i32.ge_s (local.get $b) (local.get $bones)))
            (local.set $o (i32.add (local.get $base) (i32.mul (local.get $b) (i32.const 96))))
            (local.set $parent (i32.load (i32.add (local.get $parents) (i32.shl (local.get $b) (i32.const 2)))))
            ;; turning[b] = turning[parent] (0 for a root) + turns[b].
            (local.set $turningB (f64.add
              (if (result f64) (i32.ge_s (local.get $parent) (i32.const 0))
                (then (f64.load (i32.add (local.get $turning) (i32.shl (local.get $parent) (i32.const 3)))))
                (else (f64.const 0)))
              (f64.convert_i32_u (i32.load8_u (i32.add (local.get $turns) (local.get $b))))))
            (f64.store (i32.add (local.get $turning) (i32.shl (local.get $b) (i32.const 3))) (local.get $turningB))
            ;; moveSums[b]: the parent's, plus the offset from it (from the origin for a root) where it moves.
            (local.set $moveSum
              (if (result f64) (i32.ge_s (local.get $parent) (i32.const 0))
                (then (f64.load (i32.add (local.get $moveSums) (i32.shl (local.get $parent) (i32.const 3)))))
                (else (f64.const 0))))
            (if (i32.load8_u (i32.add (local.get $moves) (local.get $b)))
              (then
                (local.set $moveSum (f64.add (local.get $moveSum)
                  (if (result f64) (i32.ge_s (local.get $parent) (i32.const 0))
                    (then (call $distance (local.get $o)
                      (i32.add (local.get $base) (i32.mul (local.get $parent) (i32.const 96)))))
                    (else (call $distanceToOrigin (local.get $o))))))))
            (f64.store (i32.add (local.get $moveSums) (i32.shl (local.get $b) (i32.const 3))) (local.get $moveSum))
            ;; turnSums[b]: the distances to its turning ancestors, the nearest 64 exactly.
            (local.set $turnSum (f64.const 0))
            (local.set $a (local.get $parent))
            (local.set $step (i32.const 0))
            (block $walked
              (loop $walk
                (br_if $walked (i32.lt_s (local.get $a) (i32.const 0)))
                (br_if $walked (i32.ge_s (local.get $step) (i32.const 64)))
                (if (i32.load8_u (i32.add (local.get $turns) (local.get $a)))
                  (then (local.set $turnSum (f64.add (local.get $turnSum)
                    (call $distance (local.get $o) (i32.add (local.get $base) (i32.mul (local.get $a) (i32.const 96))))))))
                (local.set $step (i32.add (local.get $step) (i32.const 1)))
                (local.set $a (i32.load (i32.add (local.get $parents) (i32.shl (local.get $a) (i32.const 2)))))
                (br $walk)))
            (if (i32.ge_s (local.get $a) (i32.const 0))
              (then (local.set $turnSum (f64.add (local.get $turnSum)
                (f64.add (f64.load (i32.add (local.get $turnSums) (i32.shl (local.get $a) (i32.const 3))))
                  (f64.mul (f64.load (i32.add (local.get $turning) (i32.shl (local.get $a) (i32.const 3))))
                    (call $distance (local.get $o) (i32.add (local.get $base) (i32.mul (local.get $a) (i32.const 96))))))))))
            (f64.store (i32.add (local.get $turnSums) (i32.shl (local.get $b) (i32.const 3))) (local.get $turnSum))
            ;; The largest column length of the 3 × 3 part: the vertices lie along the axes as scaled.
            (local.set $scale (f64.const 0))
            (local.set $c (i32.const 0))
            (loop $column
              (local.set $scale (f64.max (local.get $scale) (call $hypot3
                (f64.load (i32.add (local.get $o) (local.get $c)))
                (f64.load offset=8 (i32.add (local.get $o) (local.get $c)))
                (f64.load offset=16 (i32.add (local.get $o) (local.get $c))))))
              (local.set $c (i32.add (local.get $c) (i32.const 24)))
              (br_if $column (i32.lt_u (local.get $c) (i32.const 72))))
            (local.set $sum (f64.add (f64.add (local.get $turnSum) (local.get $moveSum))
              (f64.mul (f64.mul (local.get $turningB)
                (f64.load (i32.add (local.get $shells) (i32.shl (local.get $b) (i32.const 3)))))
                (local.get $scale))))
            (if (f64.gt (local.get $sum) (local.get $sampleLever)) (then (local.set $sampleLever (local.get $sum))))
            (local.set $b (i32.add (local.get $b) (i32.const 1)))
            (br $bone)))
        (local.set $lever (f64.max (local.get $lever) (local.get $sampleLever)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $sample)))
    (local.get $lever))

  ;; between.ts `distance` of the translations of the matrices at `a` and `b`.
  (func $distance (param $a i32) (param $b i32) (result f64)
    (local $x f64) (local $y f64) (local $z f64)
    (local.set $x (f64.sub (f64.load offset=72 (local.get $a)) (f64.load offset=72 (local.get $b))))
    (local.set $y (f64.sub (f64.load offset=80 (local.get $a)) (f64.load offset=80 (local.get $b))))
    (local.set $z (f64.sub (f64.load offset=88 (local.get $a)) (f64.load offset=88 (local.get $b))))
    (f64.sqrt (f64.add (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))
      (f64.mul (local.get $z) (local.get $z)))))

  ;; `distance` of the translation of the matrix at `a` from the origin.
  (func $distanceToOrigin (param $a i32) (result f64)
    (local $x f64) (local $y f64) (local $z f64)
    (local.set $x (f64.sub (f64.load offset=72 (local.get $a)) (f64.const 0)))
    (local.set $y (f64.sub (f64.load offset=80 (local.get $a)) (f64.const 0)))
    (local.set $z (f64.sub (f64.load offset=88 (local.get $a)) (f64.const 0)))
    (f64.sqrt (f64.add (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))
      (f64.mul (local.get $z) (local.get $z)))))

  ;; metric/error-metric.ts `hypot3`: Math.hypot's arithmetic for three numbers.
  (func $hypot3 (param $x f64) (param $y f64) (param $z f64) (result f64)
    (local $max f64) (local $a f64) (local $b f64) (local $c f64) (local $sum f64)
    (local.set $max (f64.max (f64.max (f64.abs (local.get $x)) (f64.abs (local.get $y))) (f64.abs (local.get $z))))
    (if (i32.or (f64.eq (local.get $max) (f64.const 0)) (f64.eq (local.get $max) (f64.const inf)))
      (then (return (local.get $max))))
    (local.set $a (f64.div (f64.abs (local.get $x)) (local.get $max)))
    (local.set $b (f64.div (f64.abs (local.get $y)) (local.get $max)))
    (local.set $c (f64.div (f64.abs (local.get $z)) (local.get $max)))
    (local.set $sum (f64.add (f64.mul (local.get $a) (local.get $a)) (f64.mul (local.get $b) (local.get $b))))
    (f64.mul
      (f64.sqrt (f64.add (local.get $sum)
        (f64.sub (f64.mul (local.get $c) (local.get $c))
          (f64.sub (f64.sub (local.get $sum) (f64.mul (local.get $a) (local.get $a))) (f64.mul (local.get $b) (local.get $b))))))
      (local.get $max)))
)
