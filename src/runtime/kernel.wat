;; The WebAssembly SIMD kernel: the whole-pose decode of sampler.ts ($decode); for crowds,
;; kernel-world.wat's module follows it with the object-space walk. Assembled at build time
;; by scripts/assemble-kernel.mjs (wabt, then binaryen's coalesce-locals) into
;; src/runtime/kernel-wasm.ts.
;;
;; It performs the TypeScript decoder's operations in the same order, lane by lane: a first
;; pass reads every track's keys (float64); where lane rows replace the rotations' records
;; (KERNEL_LANES) it reads the other tracks' and a lane pass the rotations', four at a time;
;; then animated rotations are rebuilt, slerped, multiplied by their references and
;; normalised four at a time, one per float32 lane (their arithmetic is float32 by
;; definition, docs/format.md). Nothing is fused or relaxed, so its poses are bit-identical
;; to the TypeScript decoder's (test/runtime/wasm-kernel.test.ts holds the two to that).
;;
;; Every address and offset below is a number of src/runtime/decode-layout.ts, named in a
;; comment where it is used; a change there is a change here:
;;   KERNEL_CLIP record words, by byte offset from $clip: 0 KEY_BYTES, 4 QUADS, 8 WINDOWS,
;;     12 RECORDS_BYTES, 16 COUNT, 20 STEPS, 24 CLIP_BYTES, 28 POSE_BYTES, 32 WINDOW_COUNT,
;;     36 LANE_ROTATIONS, 40 LANE_ROWS, 44 SEGMENTS, 48 SEGMENT_BYTES.
;;   TABLE track records (32 bytes): meta at 0 (pose offset: low 20 bits, 0xfffff; kind at
;;     bit 20; STEP 0x400000; RAW 0x1000000), bits at 4, then (offset, step) float32 pairs at
;;     8, 16, 24. A segment header is a record whose word 2 (byte 8) is 1 when every
;;     rotation drops w.
;;   KERNEL_KEY1, in $head's low two bits: 0 SAME, 1 NEXT, 2 NEXT_SEGMENT, 3 FIRST (bits 2..4:
;;     key 0's first bit within its first byte).
;;   KERNEL_QUAD rows (96 bytes): REFS 0 (x, y, z, w vectors), STEP 64, POSE 80.
;;   KERNEL_LANES rows (160 bytes): component c's OFFSET 0, STEP 16, BYTE 32, WIDTH 40 from
;;     COMPONENT 48 · c; DROP 144.
;;   The scratch, at address 0: eleven planes of PLANE_BYTES = 11888 bytes (plane p at
;;     p · 11888: K0 0..2 and DROP0 3, key 0's stored components and dropped index, rebuilt
;;     in place as Q0 0..3; K1 4..6 and DROP1 7, key 1's, as Q1 4..7; SIGN 8..10),
;;     KERNEL_MASKS 130816 ((1 << w) − 1 for w = 0..32), KERNEL_OWNER 131040,
;;     KERNEL_SINK 131056; the staging pose at KERNEL_STAGING 131072 (identity pattern of
;;     20 floats, shared/pose-layout.ts); kernel-world.wat's float64 matrices at KERNEL_WORLD 196608
;;     (96 bytes a bone) and its floats at KERNEL_WORLD_OUT 294912 (48 or 64 bytes a bone).
;;   Pose windows: 20 bytes, a staging address then four floats.
;; The slerp series' coefficients are interpolate.ts's SLERP_SERIES, its limit SERIES_LIMIT.
;;
;; Conventions: every load and store says align=1 (the decode tables promise no alignment);
;; comments before a run of instructions say what the run computes.
(module
  (type (;0;) (func (param f64) (result f64)))
  (type (;1;) (func (param i32 i32 i32 f64)))
  (import "env" "acos" (func $acos (type 0)))
  (import "env" "sin" (func $sin (type 0)))
  (import "env" "mem" (memory (;0;) 1))
  (func $decode (type 1) (param $clip i32) (param $head i32) (param $key i32) (param $alpha f64)
    (local $h0 i32)
    (local $h1 i32)
    (local $key1 i32)
    (local $key1Is i32)
    (local $sub0 i32)
    (local $sub1 i32)
    (local $keyBytes i32)
    (local $recordsBytes i32)
    (local $quads i32)
    (local $count i32)
    (local $single i32)
    (local $e i32)
    (local $r0 i32)
    (local $bit0 i32)
    (local $bit1 i32)
    (local $meta i32)
    (local $skip i32)
    (local $rec i32)
    (local $raw i32)
    (local $q i32)
    (local $bits0 i32)
    (local $bits1 i32)
    (local $a0 i32)
    (local $a1 i32)
    (local $a2 i32)
    (local $sum i32)
    (local $at i32)
    (local $o i32)
    (local $rot i32)
    (local $el i32)
    (local $dropsW i32)
    (local $quad i32)
    (local $steps i32)
    (local $touched i32)
    (local $lanes i32)
    (local $list i32)
    (local $row i32)
    (local $plane i32)
    (local $u f32)
    (local $t f32)
    (local $alpha32 f32)
    (local $beta f32)
    (local $c0 f64)
    (local $c1 f64)
    (local $c2 f64)
    (local $g0 f64)
    (local $g1 f64)
    (local $g2 f64)
    (local $v0 v128)
    (local $v1 v128)
    (local $v2 v128)
    (local $vt v128)
    (local $vd v128)
    (local $drops v128)
    (local $m0 v128)
    (local $m1 v128)
    (local $x0 v128)
    (local $y0 v128)
    (local $z0 v128)
    (local $w0 v128)
    (local $x1 v128)
    (local $y1 v128)
    (local $z1 v128)
    (local $w1 v128)
    (local $x v128)
    (local $y v128)
    (local $z v128)
    (local $w v128)
    (local $al v128)
    (local $be v128)
    (local $aa v128)
    (local $bb v128)
    (local $dot v128)
    (local $sign v128)
    (local $vu v128)
    (local $sa v128)
    (local $sb v128)
    (local $wa v128)
    (local $wb v128)
    (local $rx v128)
    (local $ry v128)
    (local $rz v128)
    (local $rw v128)
    (local $px v128)
    (local $py v128)
    (local $pz v128)
    (local $pw v128)
    (local $inv v128)
    (local $pos v128)
    (local $xy v128)
    (local $zw v128)
    (local $xy2 v128)
    (local $zw2 v128)
    (local $one v128)
    (local $zero v128)
    (local $minusOne v128)
    (local $two v128)
    (local $third v128)
    (local $fourOver45 v128)
    (local $over35 v128)
    (local $s1 v128)
    (local $s2 v128)
    (local $s3 v128)
    (local $s4 v128)
    (local $limit v128)
    (local $drop0 v128)
    (local $drop1 v128)
    (local $drop2 v128)
    (local $drop3 v128)
    (local $lmul v128)
    (local $lmask v128)
    (local $loffLo v128)
    (local $loffHi v128)
    (local $lstepLo v128)
    (local $lstepHi v128)
    (local $llo v128)
    (local $lhi v128)
    (local $lv v128)
    (local $i127 v128)
    (local $f2p23 v128)
    (local $i2p23 v128)
    (local $kmul0 v128)
    (local $kmul1 v128)
    ;; The decode function's body (see KernelDecode).
    local.get $clip
    i32.load offset=12 align=1 ;; KERNEL_CLIP.RECORDS_BYTES
    local.set $recordsBytes
    local.get $clip
    i32.load offset=4 align=1 ;; KERNEL_CLIP.QUADS
    local.set $quads
    local.get $clip
    i32.load offset=16 align=1 ;; KERNEL_CLIP.COUNT
    local.set $count
    local.get $clip
    i32.load offset=20 align=1 ;; KERNEL_CLIP.STEPS
    local.set $steps
    local.get $clip
    i32.load offset=36 align=1 ;; KERNEL_CLIP.LANE_ROTATIONS
    local.set $lanes
    local.get $clip
    i32.load align=1 ;; KERNEL_CLIP.KEY_BYTES
    local.set $keyBytes
    ;; Key 0's header, first byte and first bit within that byte come from the sampler; key
    ;; 1's (h1, key1, sub1) follow from where it is (KERNEL_KEY1): 0 SAME, key 0 itself; 1
    ;; NEXT, its segment's bits per key further; 2 NEXT_SEGMENT and 3 FIRST, the first key of
    ;; segment h1, at the byte address its header holds. Fields' bits count from each key's
    ;; first byte.
    local.get $head
    i32.const 3
    i32.and
    local.set $key1Is
    local.get $head
    i32.const 2
    i32.shr_u
    i32.const 7
    i32.and
    local.set $sub0
    local.get $head
    i32.const -32
    i32.and
    local.tee $h0
    local.get $h0
    local.get $clip
    i32.load offset=48 align=1 ;; KERNEL_CLIP.SEGMENT_BYTES
    i32.add
    local.get $clip
    i32.load offset=44 align=1 ;; KERNEL_CLIP.SEGMENTS
    local.get $key1Is
    i32.const 2
    i32.eq
    select
    local.get $key1Is
    i32.const 2
    i32.lt_u
    select
    local.set $h1
    ;; bit1: key 1's first bit from key 0's first byte when it is the next key.
    local.get $h0
    i32.load offset=4 align=1 ;; bits per key
    local.get $sub0
    i32.add
    local.set $bit1
    local.get $key
    local.get $key
    local.get $bit1
    i32.const 3
    i32.shr_u
    i32.add
    local.get $h1
    i32.load align=1 ;; the segment's packed keys
    local.get $key1Is
    i32.const 1
    i32.eq
    select
    local.get $key1Is
    i32.eqz
    select
    local.set $key1
    local.get $sub0
    local.get $bit1
    i32.const 7
    i32.and
    i32.const 0
    local.get $key1Is
    i32.const 1
    i32.eq
    select
    local.get $key1Is
    i32.eqz
    select
    local.set $sub1
    local.get $key1Is
    i32.eqz
    local.set $single
    ;; r0: key 0's first record (key 1's is as far from it as their segments' headers); a1
    ;; keeps the bytes a key's fields span (and the 8 a field read may pass), a0 those of both
    ;; keys when key 1 is the next, for the early loads.
    local.get $h0
    i32.const 32
    i32.add
    local.set $r0
    local.get $keyBytes
    i32.const 8
    i32.add
    local.set $a1
    local.get $keyBytes
    local.get $key1Is
    i32.const 1
    i32.eq
    i32.mul
    local.get $a1
    i32.add
    local.set $a0
    ;; The staging pose holds another clip's pose: this clip's data may be in no cache. Every
    ;; line of its keys, records, kernel record, windows and quad table is loaded first:
    ;; independent loads, so the misses overlap instead of coming one after another as the
    ;; passes reach them (nothing waits for the header). Then identity and the clip's windows.
    i32.const 131040 ;; KERNEL_OWNER
    i32.load align=1
    local.get $clip
    i32.ne
    if  ;; label = @1
      ;; Key 0's lines (and key 1's when it is the next) from the sampler's address, waiting for nothing.
      ;; Loads a word of every 64-byte line from start() for bytes() bytes (at least one), or-ed into local touched.
      local.get $key
      i32.const -64
      i32.and
      local.set $at
      local.get $key
      local.get $a0
      i32.add
      local.set $el
      loop  ;; label = @2
        local.get $touched
        local.get $at
        i32.load align=1
        i32.or
        local.set $touched
        local.get $at
        i32.const 64
        i32.add
        local.tee $at
        local.get $el
        i32.lt_u
        br_if 0 (;@2;)
      end
      local.get $key1Is
      i32.const 2
      i32.ge_u
      if  ;; label = @2
        ;; Loads a word of every 64-byte line from start() for bytes() bytes (at least one), or-ed into local touched.
        local.get $key1
        i32.const -64
        i32.and
        local.set $at
        local.get $key1
        local.get $a1
        i32.add
        local.set $el
        loop  ;; label = @3
          local.get $touched
          local.get $at
          i32.load align=1
          i32.or
          local.set $touched
          local.get $at
          i32.const 64
          i32.add
          local.tee $at
          local.get $el
          i32.lt_u
          br_if 0 (;@3;)
        end
      end
      ;; Loads a word of every 64-byte line from start() for bytes() bytes (at least one), or-ed into local touched.
      local.get $h0
      i32.const -64
      i32.and
      local.set $at
      local.get $h0
      local.get $recordsBytes
      i32.add
      local.set $el
      loop  ;; label = @2
        local.get $touched
        local.get $at
        i32.load align=1
        i32.or
        local.set $touched
        local.get $at
        i32.const 64
        i32.add
        local.tee $at
        local.get $el
        i32.lt_u
        br_if 0 (;@2;)
      end
      local.get $h1
      local.get $h0
      i32.ne
      if  ;; label = @2
        ;; Loads a word of every 64-byte line from start() for bytes() bytes (at least one), or-ed into local touched.
        local.get $h1
        i32.const -64
        i32.and
        local.set $at
        local.get $h1
        local.get $recordsBytes
        i32.add
        local.set $el
        loop  ;; label = @3
          local.get $touched
          local.get $at
          i32.load align=1
          i32.or
          local.set $touched
          local.get $at
          i32.const 64
          i32.add
          local.tee $at
          local.get $el
          i32.lt_u
          br_if 0 (;@3;)
        end
      end
      ;; Loads a word of every 64-byte line from start() for bytes() bytes (at least one), or-ed into local touched.
      local.get $clip
      i32.const -64
      i32.and
      local.set $at
      local.get $clip
      local.get $clip
      i32.load offset=24 align=1 ;; KERNEL_CLIP.CLIP_BYTES
      i32.add
      local.set $el
      loop  ;; label = @2
        local.get $touched
        local.get $at
        i32.load align=1
        i32.or
        local.set $touched
        local.get $at
        i32.const 64
        i32.add
        local.tee $at
        local.get $el
        i32.lt_u
        br_if 0 (;@2;)
      end
      ;; Stored once, so that no engine could drop the loads as unused.
      i32.const 131056 ;; KERNEL_SINK
      local.get $touched
      i32.store align=1
      i32.const 131072 ;; KERNEL_STAGING
      local.set $at
      local.get $clip
      i32.load offset=28 align=1 ;; KERNEL_CLIP.POSE_BYTES
      i32.const 131072 ;; KERNEL_STAGING
      i32.add
      local.set $el
      loop  ;; label = @2
        local.get $at
        v128.const i32x4 0x00000000 0x00000000 0x00000000 0x3f800000
        v128.store align=1
        local.get $at
        v128.const i32x4 0x00000000 0x00000000 0x00000000 0x3f800000
        v128.store offset=16 align=1
        local.get $at
        v128.const i32x4 0x3f800000 0x3f800000 0x00000000 0x00000000
        v128.store offset=32 align=1
        local.get $at
        v128.const i32x4 0x00000000 0x3f800000 0x00000000 0x00000000
        v128.store offset=48 align=1
        local.get $at
        v128.const i32x4 0x00000000 0x3f800000 0x3f800000 0x3f800000
        v128.store offset=64 align=1
        local.get $at
        i32.const 80
        i32.add
        local.tee $at
        local.get $el
        i32.lt_u
        br_if 0 (;@2;)
      end
      local.get $clip
      i32.load offset=8 align=1 ;; KERNEL_CLIP.WINDOWS
      local.set $at
      local.get $clip
      i32.load offset=32 align=1 ;; KERNEL_CLIP.WINDOW_COUNT
      i32.const 20
      i32.mul
      local.get $at
      i32.add
      local.set $el
      block  ;; label = @2
        local.get $at
        local.get $el
        i32.eq
        br_if 0 (;@2;)
        loop  ;; label = @3
          local.get $at
          i32.load align=1
          local.get $at
          v128.load offset=4 align=1
          v128.store align=1
          local.get $at
          i32.const 20
          i32.add
          local.tee $at
          local.get $el
          i32.lt_u
          br_if 0 (;@3;)
        end
      end
      i32.const 131040 ;; KERNEL_OWNER
      local.get $clip
      i32.store align=1
    end
    local.get $h0
    i32.load offset=8 align=1
    local.get $h1
    i32.load offset=8 align=1
    i32.and
    local.set $dropsW
    ;; Each key's cursor: its first bit from its first byte (key and key1), or with lane rows
    ;; the other tracks' first bits in a key after their records, from that.
    local.get $sub0
    local.set $bit0
    local.get $sub1
    local.set $bit1
    local.get $count
    i32.const 32
    i32.mul
    local.get $r0
    i32.add
    local.set $list
    ;; First pass, track by track: keys read; vectors interpolated and stored, rotations parked
    ;; (with lane rows, only the other tracks' records are here, each at its listed bit).
    block  ;; label = @1
      local.get $count
      i32.eqz
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get $lanes
        if  ;; label = @3
          local.get $sub0
          local.get $list
          i32.load align=1
          i32.add
          local.set $bit0
          local.get $sub1
          local.get $list
          local.get $h1
          i32.add
          local.get $h0
          i32.sub
          i32.load align=1
          i32.add
          local.set $bit1
          local.get $list
          i32.const 4
          i32.add
          local.set $list
        end
        ;; The track's meta word; rot: it is a rotation; skip: one key, or a STEP track, whose
        ;; key 1 is key 0 (its fields are still read, and its cursor moves past them).
        local.get $r0
        i32.load align=1
        local.tee $meta
        i32.const 3145728
        i32.and
        i32.eqz
        local.set $rot
        local.get $single
        local.get $meta
        i32.const 4194304 ;; STEP
        i32.and
        i32.or
        local.set $skip
        ;; Each field: the 64 bits from its first byte, shifted to its first bit and masked to its
        ;; width by the scratch's table (the low 32 bits sampler.ts joins from two words); a raw
        ;; field's float32, or offset + q · step (q converted as signed, one instruction fewer
        ;; than unsigned: a quantised field has at most MAX_QUANTIZED_BITS = 24 bits). The key's
        ;; cursor moves past it. Key 1's record is
        ;; as far from key 0's as their segments' headers (the one loop cursor is r0).
        local.get $r0
        local.get $h1
        i32.add
        local.get $h0
        i32.sub
        local.set $rec
        ;; Key 1 into g0..g2: widths a0..a2 from the bits word of its record (at rec), then each field.
        local.get $rec
        i32.load offset=4 align=1
        local.tee $bits1
        i32.const 255
        i32.and
        local.set $a0
        local.get $bits1
        i32.const 8
        i32.shr_u
        i32.const 255
        i32.and
        local.set $a1
        local.get $bits1
        i32.const 16
        i32.shr_u
        i32.const 255
        i32.and
        local.set $a2
        local.get $rec
        i32.load align=1
        i32.const 16777216 ;; RAW
        i32.and
        local.set $raw
        local.get $key1
        local.get $bit1
        i32.const 3
        i32.shr_u
        i32.add
        i64.load align=1
        local.get $bit1
        i32.const 7
        i32.and
        i64.extend_i32_u
        i64.shr_u
        i32.wrap_i64
        local.get $a0
        i32.const 2
        i32.shl
        i32.load offset=130816 align=1 ;; KERNEL_MASKS + 4 · width
        i32.and
        local.set $q
        local.get $q
        f32.reinterpret_i32
        f64.promote_f32
        local.get $rec
        f32.load offset=8 align=1
        f64.promote_f32
        local.get $q
        f64.convert_i32_s
        local.get $rec
        f32.load offset=12 align=1
        f64.promote_f32
        f64.mul
        f64.add
        local.get $raw
        select
        local.set $g0
        local.get $bit1
        local.get $a0
        i32.add
        local.set $bit1
        local.get $key1
        local.get $bit1
        i32.const 3
        i32.shr_u
        i32.add
        i64.load align=1
        local.get $bit1
        i32.const 7
        i32.and
        i64.extend_i32_u
        i64.shr_u
        i32.wrap_i64
        local.get $a1
        i32.const 2
        i32.shl
        i32.load offset=130816 align=1 ;; KERNEL_MASKS + 4 · width
        i32.and
        local.set $q
        local.get $q
        f32.reinterpret_i32
        f64.promote_f32
        local.get $rec
        f32.load offset=16 align=1
        f64.promote_f32
        local.get $q
        f64.convert_i32_s
        local.get $rec
        f32.load offset=20 align=1
        f64.promote_f32
        f64.mul
        f64.add
        local.get $raw
        select
        local.set $g1
        local.get $bit1
        local.get $a1
        i32.add
        local.set $bit1
        local.get $key1
        local.get $bit1
        i32.const 3
        i32.shr_u
        i32.add
        i64.load align=1
        local.get $bit1
        i32.const 7
        i32.and
        i64.extend_i32_u
        i64.shr_u
        i32.wrap_i64
        local.get $a2
        i32.const 2
        i32.shl
        i32.load offset=130816 align=1 ;; KERNEL_MASKS + 4 · width
        i32.and
        local.set $q
        local.get $q
        f32.reinterpret_i32
        f64.promote_f32
        local.get $rec
        f32.load offset=24 align=1
        f64.promote_f32
        local.get $q
        f64.convert_i32_s
        local.get $rec
        f32.load offset=28 align=1
        f64.promote_f32
        f64.mul
        f64.add
        local.get $raw
        select
        local.set $g2
        local.get $bit1
        local.get $a2
        i32.add
        local.set $bit1
        ;; Key 0 into c0..c2: widths a0..a2 from the bits word of its record (at r0), then each field.
        local.get $r0
        i32.load offset=4 align=1
        local.tee $bits0
        i32.const 255
        i32.and
        local.set $a0
        local.get $bits0
        i32.const 8
        i32.shr_u
        i32.const 255
        i32.and
        local.set $a1
        local.get $bits0
        i32.const 16
        i32.shr_u
        i32.const 255
        i32.and
        local.set $a2
        local.get $r0
        i32.load align=1
        i32.const 16777216 ;; RAW
        i32.and
        local.set $raw
        local.get $key
        local.get $bit0
        i32.const 3
        i32.shr_u
        i32.add
        i64.load align=1
        local.get $bit0
        i32.const 7
        i32.and
        i64.extend_i32_u
        i64.shr_u
        i32.wrap_i64
        local.get $a0
        i32.const 2
        i32.shl
        i32.load offset=130816 align=1 ;; KERNEL_MASKS + 4 · width
        i32.and
        local.set $q
        local.get $q
        f32.reinterpret_i32
        f64.promote_f32
        local.get $r0
        f32.load offset=8 align=1
        f64.promote_f32
        local.get $q
        f64.convert_i32_s
        local.get $r0
        f32.load offset=12 align=1
        f64.promote_f32
        f64.mul
        f64.add
        local.get $raw
        select
        local.set $c0
        local.get $bit0
        local.get $a0
        i32.add
        local.set $bit0
        local.get $key
        local.get $bit0
        i32.const 3
        i32.shr_u
        i32.add
        i64.load align=1
        local.get $bit0
        i32.const 7
        i32.and
        i64.extend_i32_u
        i64.shr_u
        i32.wrap_i64
        local.get $a1
        i32.const 2
        i32.shl
        i32.load offset=130816 align=1 ;; KERNEL_MASKS + 4 · width
        i32.and
        local.set $q
        local.get $q
        f32.reinterpret_i32
        f64.promote_f32
        local.get $r0
        f32.load offset=16 align=1
        f64.promote_f32
        local.get $q
        f64.convert_i32_s
        local.get $r0
        f32.load offset=20 align=1
        f64.promote_f32
        f64.mul
        f64.add
        local.get $raw
        select
        local.set $c1
        local.get $bit0
        local.get $a1
        i32.add
        local.set $bit0
        local.get $key
        local.get $bit0
        i32.const 3
        i32.shr_u
        i32.add
        i64.load align=1
        local.get $bit0
        i32.const 7
        i32.and
        i64.extend_i32_u
        i64.shr_u
        i32.wrap_i64
        local.get $a2
        i32.const 2
        i32.shl
        i32.load offset=130816 align=1 ;; KERNEL_MASKS + 4 · width
        i32.and
        local.set $q
        local.get $q
        f32.reinterpret_i32
        f64.promote_f32
        local.get $r0
        f32.load offset=24 align=1
        f64.promote_f32
        local.get $q
        f64.convert_i32_s
        local.get $r0
        f32.load offset=28 align=1
        f64.promote_f32
        f64.mul
        f64.add
        local.get $raw
        select
        local.set $c2
        local.get $bit0
        local.get $a2
        i32.add
        local.set $bit0
        local.get $rot
        if  ;; label = @3
          ;; Parks the rotation just read, rounded to float32, at rotation address e of the planes; e moves on.
          local.get $e
          local.get $c0
          f32.demote_f64
          f32.store align=1
          local.get $e
          local.get $c1
          f32.demote_f64
          f32.store offset=11888 align=1 ;; plane K0+1 / Q0+1
          local.get $e
          local.get $c2
          f32.demote_f64
          f32.store offset=23776 align=1 ;; plane K0+2 / Q0+2
          local.get $e
          local.get $g0
          f32.demote_f64
          f32.store offset=47552 align=1 ;; plane K1 / Q1
          local.get $e
          local.get $g1
          f32.demote_f64
          f32.store offset=59440 align=1 ;; plane K1+1 / Q1+1
          local.get $e
          local.get $g2
          f32.demote_f64
          f32.store offset=71328 align=1 ;; plane K1+2 / Q1+2
          ;; The dropped components, read only when a segment's rotations do not all drop w.
          local.get $dropsW
          i32.eqz
          if  ;; label = @4
            local.get $e
            local.get $bits0
            i32.const 24
            i32.shr_u
            i32.store offset=35664 align=1 ;; plane DROP0 / Q0+3
            local.get $e
            local.get $bits1
            i32.const 24
            i32.shr_u
            i32.store offset=83216 align=1 ;; plane DROP1 / Q1+3
          end
          local.get $e
          i32.const 4
          i32.add
          local.set $e
        else
          ;; Stores c + (g − c) · alpha (c alone when skip) at the track's pose offset as float32
          ;; (o = out + 4 · pose offset).
          local.get $meta
          i32.const 1048575
          i32.and
          i32.const 2
          i32.shl
          i32.const 131072 ;; KERNEL_STAGING
          i32.add
          local.set $o
          local.get $o
          local.get $c0
          local.get $c0
          local.get $g0
          local.get $c0
          f64.sub
          local.get $alpha
          f64.mul
          f64.add
          local.get $skip
          select
          f32.demote_f64
          f32.store align=1
          local.get $o
          local.get $c1
          local.get $c1
          local.get $g1
          local.get $c1
          f64.sub
          local.get $alpha
          f64.mul
          f64.add
          local.get $skip
          select
          f32.demote_f64
          f32.store offset=4 align=1
          local.get $o
          local.get $c2
          local.get $c2
          local.get $g2
          local.get $c2
          f64.sub
          local.get $alpha
          f64.mul
          f64.add
          local.get $skip
          select
          f32.demote_f64
          f32.store offset=8 align=1
        end
        local.get $r0
        i32.const 32
        i32.add
        local.set $r0
        local.get $count
        i32.const 1
        i32.sub
        local.tee $count
        br_if 0 (;@2;)
      end
    end
    ;; Then, with lane rows, the rotations, four at a time from the keys' first bits.
    local.get $lanes
    if  ;; label = @1
      local.get $clip
      i32.load offset=40 align=1 ;; KERNEL_CLIP.LANE_ROWS
      local.set $row
      ;; Each key's fields are read four bytes from their bytes and multiplied up to start at bit
      ;; 14 (by their lane's 2^(7 − first bit) and by kmul, 2^(7 − the key's first bit)), then
      ;; shifted down by 14: a shift by a constant.
      i32.const 128
      local.get $sub0
      i32.shr_u
      i32x4.splat
      local.set $kmul0
      i32.const 128
      local.get $sub1
      i32.shr_u
      i32x4.splat
      local.set $kmul1
      ;; The lane pass: fills planes K0 and K1 (and the dropped components) of every quad from the
      ;; lane rows (KERNEL_LANES) of the keys' segments, for keys starting at bit sub0 of byte
      ;; key and bit sub1 of byte key1, four rotations at a time. Each component is offset
      ;; + q · step in float64, rounded to float32, as readWindows computes it, so the planes
      ;; hold what the first pass would park there, to the bit. Key 1 is read only for two keys; its segment's
      ;; parameters only when it is another segment.
      ;; Component c's four fields' bytes (into a0, a1, a2, sum), multipliers 2^(7 − first bit)
      ;; (bytes of the row) and masks 2^w − 1 (2^w built as a float32 exponent; plus 2^23, its
      ;; bits are those of 2^23 plus 2^w, w ≤ LANE_MAX_BITS), offsets and steps, from the row at quad.
      i32.const 127
      i32x4.splat
      local.set $i127
      f32.const 0x1p+23 ;; 2^23
      f32x4.splat
      local.set $f2p23
      i32.const 0x4b000001 ;; its bits, plus 1
      i32x4.splat
      local.set $i2p23
      ;; quad: key 0's row; o: key 1's (as far from it as their segments' headers).
      i32.const 0
      local.set $at
      local.get $h0
      local.get $row
      i32.add
      local.set $quad
      local.get $lanes
      i32.const 2
      i32.shl
      i32.const 15
      i32.add
      i32.const -16
      i32.and
      local.set $el
      loop  ;; label = @2
        local.get $at
        local.set $plane
        ;; Component c (the same three times, c = 0, 1, 2): its part of key 0's row at quad, of key
        ;; 1's at o (KERNEL_LANES + 48 · c); its planes at plane, key 1's four planes on.
        local.get $quad
        i32.load16_u offset=32 align=1 ;; KERNEL_LANES.BYTE
        local.set $a0
        local.get $quad
        i32.load16_u offset=34 align=1
        local.set $a1
        local.get $quad
        i32.load16_u offset=36 align=1
        local.set $a2
        local.get $quad
        i32.load16_u offset=38 align=1
        local.set $sum
        local.get $quad
        v128.load64_zero offset=40 align=1 ;; KERNEL_LANES.WIDTH
        i16x8.extend_low_i8x16_u
        local.tee $lv
        i32x4.extend_high_i16x8_u
        local.set $lmul
        local.get $lv
        i32x4.extend_low_i16x8_u
        local.get $i127
        i32x4.add
        i32.const 23
        i32x4.shl
        local.get $f2p23
        f32x4.add
        local.get $i2p23
        i32x4.sub
        local.set $lmask
        local.get $quad
        v128.load align=1 ;; KERNEL_LANES.OFFSET
        local.tee $lv
        f64x2.promote_low_f32x4
        local.set $loffLo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.promote_low_f32x4
        local.set $loffHi
        local.get $quad
        v128.load offset=16 align=1 ;; KERNEL_LANES.STEP
        local.tee $lv
        f64x2.promote_low_f32x4
        local.set $lstepLo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.promote_low_f32x4
        local.set $lstepHi
        local.get $key
        local.get $a0
        i32.add
        v128.load32_zero align=1
        local.set $lv
        local.get $key
        local.get $a1
        i32.add
        local.get $lv
        v128.load32_lane align=1 1
        local.set $lv
        local.get $key
        local.get $a2
        i32.add
        local.get $lv
        v128.load32_lane align=1 2
        local.set $lv
        local.get $key
        local.get $sum
        i32.add
        local.get $lv
        v128.load32_lane align=1 3
        local.set $lv
        ;; The field's lowest bit to bit 14 (times 2^(7 − its first bit) · 2^(7 − the key's first
        ;; bit), a product of the row's and the key's, ready before the field), then down to bit 0,
        ;; the next fields' bits masked off.
        local.get $lv
        local.get $lmul
        local.get $kmul0
        i32x4.mul
        i32x4.mul
        i32.const 14
        i32x4.shr_u
        local.get $lmask
        v128.and
        local.tee $lv
        f64x2.convert_low_i32x4_s
        local.get $lstepLo
        f64x2.mul
        local.get $loffLo
        f64x2.add
        f32x4.demote_f64x2_zero
        local.set $llo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.convert_low_i32x4_s
        local.get $lstepHi
        f64x2.mul
        local.get $loffHi
        f64x2.add
        f32x4.demote_f64x2_zero
        local.set $lhi
        local.get $plane
        local.get $llo
        local.get $lhi
        i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
        v128.store align=1 ;; plane K0 + c / Q0 + c
        local.get $single
        i32.eqz
        if  ;; label = @3
          local.get $h0
          local.get $h1
          i32.ne
          if  ;; label = @4
            local.get $quad
            local.get $h1
            i32.add
            local.get $h0
            i32.sub
            local.tee $o
            i32.load16_u offset=32 align=1 ;; KERNEL_LANES.BYTE
            local.set $a0
            local.get $o
            i32.load16_u offset=34 align=1
            local.set $a1
            local.get $o
            i32.load16_u offset=36 align=1
            local.set $a2
            local.get $o
            i32.load16_u offset=38 align=1
            local.set $sum
            local.get $o
            v128.load64_zero offset=40 align=1 ;; KERNEL_LANES.WIDTH
            i16x8.extend_low_i8x16_u
            local.tee $lv
            i32x4.extend_high_i16x8_u
            local.set $lmul
            local.get $lv
            i32x4.extend_low_i16x8_u
            local.get $i127
            i32x4.add
            i32.const 23
            i32x4.shl
            local.get $f2p23
            f32x4.add
            local.get $i2p23
            i32x4.sub
            local.set $lmask
            local.get $o
            v128.load align=1
            local.tee $lv
            f64x2.promote_low_f32x4
            local.set $loffLo
            local.get $lv
            local.get $lv
            i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
            f64x2.promote_low_f32x4
            local.set $loffHi
            local.get $o
            v128.load offset=16 align=1
            local.tee $lv
            f64x2.promote_low_f32x4
            local.set $lstepLo
            local.get $lv
            local.get $lv
            i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
            f64x2.promote_low_f32x4
            local.set $lstepHi
          end
          local.get $key1
          local.get $a0
          i32.add
          v128.load32_zero align=1
          local.set $lv
          local.get $key1
          local.get $a1
          i32.add
          local.get $lv
          v128.load32_lane align=1 1
          local.set $lv
          local.get $key1
          local.get $a2
          i32.add
          local.get $lv
          v128.load32_lane align=1 2
          local.set $lv
          local.get $key1
          local.get $sum
          i32.add
          local.get $lv
          v128.load32_lane align=1 3
          local.set $lv
          ;; The field's lowest bit to bit 14 (times 2^(7 − its first bit) · 2^(7 − the key's first
          ;; bit), a product of the row's and the key's, ready before the field), then down to bit 0,
          ;; the next fields' bits masked off.
          local.get $lv
          local.get $lmul
          local.get $kmul1
          i32x4.mul
          i32x4.mul
          i32.const 14
          i32x4.shr_u
          local.get $lmask
          v128.and
          local.tee $lv
          f64x2.convert_low_i32x4_s
          local.get $lstepLo
          f64x2.mul
          local.get $loffLo
          f64x2.add
          f32x4.demote_f64x2_zero
          local.set $llo
          local.get $lv
          local.get $lv
          i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
          f64x2.convert_low_i32x4_s
          local.get $lstepHi
          f64x2.mul
          local.get $loffHi
          f64x2.add
          f32x4.demote_f64x2_zero
          local.set $lhi
          local.get $plane
          local.get $llo
          local.get $lhi
          i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
          v128.store offset=47552 align=1 ;; plane K1 + c / Q1 + c
        end
        local.get $quad
        i32.const 48
        i32.add
        local.set $quad
        local.get $plane
        i32.const 11888 ;; PLANE_BYTES
        i32.add
        local.set $plane
        ;; Component c (the same three times, c = 0, 1, 2): its part of key 0's row at quad, of key
        ;; 1's at o (KERNEL_LANES + 48 · c); its planes at plane, key 1's four planes on.
        local.get $quad
        i32.load16_u offset=32 align=1 ;; KERNEL_LANES.BYTE
        local.set $a0
        local.get $quad
        i32.load16_u offset=34 align=1
        local.set $a1
        local.get $quad
        i32.load16_u offset=36 align=1
        local.set $a2
        local.get $quad
        i32.load16_u offset=38 align=1
        local.set $sum
        local.get $quad
        v128.load64_zero offset=40 align=1 ;; KERNEL_LANES.WIDTH
        i16x8.extend_low_i8x16_u
        local.tee $lv
        i32x4.extend_high_i16x8_u
        local.set $lmul
        local.get $lv
        i32x4.extend_low_i16x8_u
        local.get $i127
        i32x4.add
        i32.const 23
        i32x4.shl
        local.get $f2p23
        f32x4.add
        local.get $i2p23
        i32x4.sub
        local.set $lmask
        local.get $quad
        v128.load align=1 ;; KERNEL_LANES.OFFSET
        local.tee $lv
        f64x2.promote_low_f32x4
        local.set $loffLo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.promote_low_f32x4
        local.set $loffHi
        local.get $quad
        v128.load offset=16 align=1 ;; KERNEL_LANES.STEP
        local.tee $lv
        f64x2.promote_low_f32x4
        local.set $lstepLo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.promote_low_f32x4
        local.set $lstepHi
        local.get $key
        local.get $a0
        i32.add
        v128.load32_zero align=1
        local.set $lv
        local.get $key
        local.get $a1
        i32.add
        local.get $lv
        v128.load32_lane align=1 1
        local.set $lv
        local.get $key
        local.get $a2
        i32.add
        local.get $lv
        v128.load32_lane align=1 2
        local.set $lv
        local.get $key
        local.get $sum
        i32.add
        local.get $lv
        v128.load32_lane align=1 3
        local.set $lv
        ;; The field's lowest bit to bit 14 (times 2^(7 − its first bit) · 2^(7 − the key's first
        ;; bit), a product of the row's and the key's, ready before the field), then down to bit 0,
        ;; the next fields' bits masked off.
        local.get $lv
        local.get $lmul
        local.get $kmul0
        i32x4.mul
        i32x4.mul
        i32.const 14
        i32x4.shr_u
        local.get $lmask
        v128.and
        local.tee $lv
        f64x2.convert_low_i32x4_s
        local.get $lstepLo
        f64x2.mul
        local.get $loffLo
        f64x2.add
        f32x4.demote_f64x2_zero
        local.set $llo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.convert_low_i32x4_s
        local.get $lstepHi
        f64x2.mul
        local.get $loffHi
        f64x2.add
        f32x4.demote_f64x2_zero
        local.set $lhi
        local.get $plane
        local.get $llo
        local.get $lhi
        i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
        v128.store align=1 ;; plane K0 + c / Q0 + c
        local.get $single
        i32.eqz
        if  ;; label = @3
          local.get $h0
          local.get $h1
          i32.ne
          if  ;; label = @4
            local.get $quad
            local.get $h1
            i32.add
            local.get $h0
            i32.sub
            local.tee $o
            i32.load16_u offset=32 align=1 ;; KERNEL_LANES.BYTE
            local.set $a0
            local.get $o
            i32.load16_u offset=34 align=1
            local.set $a1
            local.get $o
            i32.load16_u offset=36 align=1
            local.set $a2
            local.get $o
            i32.load16_u offset=38 align=1
            local.set $sum
            local.get $o
            v128.load64_zero offset=40 align=1 ;; KERNEL_LANES.WIDTH
            i16x8.extend_low_i8x16_u
            local.tee $lv
            i32x4.extend_high_i16x8_u
            local.set $lmul
            local.get $lv
            i32x4.extend_low_i16x8_u
            local.get $i127
            i32x4.add
            i32.const 23
            i32x4.shl
            local.get $f2p23
            f32x4.add
            local.get $i2p23
            i32x4.sub
            local.set $lmask
            local.get $o
            v128.load align=1
            local.tee $lv
            f64x2.promote_low_f32x4
            local.set $loffLo
            local.get $lv
            local.get $lv
            i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
            f64x2.promote_low_f32x4
            local.set $loffHi
            local.get $o
            v128.load offset=16 align=1
            local.tee $lv
            f64x2.promote_low_f32x4
            local.set $lstepLo
            local.get $lv
            local.get $lv
            i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
            f64x2.promote_low_f32x4
            local.set $lstepHi
          end
          local.get $key1
          local.get $a0
          i32.add
          v128.load32_zero align=1
          local.set $lv
          local.get $key1
          local.get $a1
          i32.add
          local.get $lv
          v128.load32_lane align=1 1
          local.set $lv
          local.get $key1
          local.get $a2
          i32.add
          local.get $lv
          v128.load32_lane align=1 2
          local.set $lv
          local.get $key1
          local.get $sum
          i32.add
          local.get $lv
          v128.load32_lane align=1 3
          local.set $lv
          ;; The field's lowest bit to bit 14 (times 2^(7 − its first bit) · 2^(7 − the key's first
          ;; bit), a product of the row's and the key's, ready before the field), then down to bit 0,
          ;; the next fields' bits masked off.
          local.get $lv
          local.get $lmul
          local.get $kmul1
          i32x4.mul
          i32x4.mul
          i32.const 14
          i32x4.shr_u
          local.get $lmask
          v128.and
          local.tee $lv
          f64x2.convert_low_i32x4_s
          local.get $lstepLo
          f64x2.mul
          local.get $loffLo
          f64x2.add
          f32x4.demote_f64x2_zero
          local.set $llo
          local.get $lv
          local.get $lv
          i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
          f64x2.convert_low_i32x4_s
          local.get $lstepHi
          f64x2.mul
          local.get $loffHi
          f64x2.add
          f32x4.demote_f64x2_zero
          local.set $lhi
          local.get $plane
          local.get $llo
          local.get $lhi
          i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
          v128.store offset=47552 align=1 ;; plane K1 + c / Q1 + c
        end
        local.get $quad
        i32.const 48
        i32.add
        local.set $quad
        local.get $plane
        i32.const 11888 ;; PLANE_BYTES
        i32.add
        local.set $plane
        ;; Component c (the same three times, c = 0, 1, 2): its part of key 0's row at quad, of key
        ;; 1's at o (KERNEL_LANES + 48 · c); its planes at plane, key 1's four planes on.
        local.get $quad
        i32.load16_u offset=32 align=1 ;; KERNEL_LANES.BYTE
        local.set $a0
        local.get $quad
        i32.load16_u offset=34 align=1
        local.set $a1
        local.get $quad
        i32.load16_u offset=36 align=1
        local.set $a2
        local.get $quad
        i32.load16_u offset=38 align=1
        local.set $sum
        local.get $quad
        v128.load64_zero offset=40 align=1 ;; KERNEL_LANES.WIDTH
        i16x8.extend_low_i8x16_u
        local.tee $lv
        i32x4.extend_high_i16x8_u
        local.set $lmul
        local.get $lv
        i32x4.extend_low_i16x8_u
        local.get $i127
        i32x4.add
        i32.const 23
        i32x4.shl
        local.get $f2p23
        f32x4.add
        local.get $i2p23
        i32x4.sub
        local.set $lmask
        local.get $quad
        v128.load align=1 ;; KERNEL_LANES.OFFSET
        local.tee $lv
        f64x2.promote_low_f32x4
        local.set $loffLo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.promote_low_f32x4
        local.set $loffHi
        local.get $quad
        v128.load offset=16 align=1 ;; KERNEL_LANES.STEP
        local.tee $lv
        f64x2.promote_low_f32x4
        local.set $lstepLo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.promote_low_f32x4
        local.set $lstepHi
        local.get $key
        local.get $a0
        i32.add
        v128.load32_zero align=1
        local.set $lv
        local.get $key
        local.get $a1
        i32.add
        local.get $lv
        v128.load32_lane align=1 1
        local.set $lv
        local.get $key
        local.get $a2
        i32.add
        local.get $lv
        v128.load32_lane align=1 2
        local.set $lv
        local.get $key
        local.get $sum
        i32.add
        local.get $lv
        v128.load32_lane align=1 3
        local.set $lv
        ;; The field's lowest bit to bit 14 (times 2^(7 − its first bit) · 2^(7 − the key's first
        ;; bit), a product of the row's and the key's, ready before the field), then down to bit 0,
        ;; the next fields' bits masked off.
        local.get $lv
        local.get $lmul
        local.get $kmul0
        i32x4.mul
        i32x4.mul
        i32.const 14
        i32x4.shr_u
        local.get $lmask
        v128.and
        local.tee $lv
        f64x2.convert_low_i32x4_s
        local.get $lstepLo
        f64x2.mul
        local.get $loffLo
        f64x2.add
        f32x4.demote_f64x2_zero
        local.set $llo
        local.get $lv
        local.get $lv
        i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
        f64x2.convert_low_i32x4_s
        local.get $lstepHi
        f64x2.mul
        local.get $loffHi
        f64x2.add
        f32x4.demote_f64x2_zero
        local.set $lhi
        local.get $plane
        local.get $llo
        local.get $lhi
        i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
        v128.store align=1 ;; plane K0 + c / Q0 + c
        local.get $single
        i32.eqz
        if  ;; label = @3
          local.get $h0
          local.get $h1
          i32.ne
          if  ;; label = @4
            local.get $quad
            local.get $h1
            i32.add
            local.get $h0
            i32.sub
            local.tee $o
            i32.load16_u offset=32 align=1 ;; KERNEL_LANES.BYTE
            local.set $a0
            local.get $o
            i32.load16_u offset=34 align=1
            local.set $a1
            local.get $o
            i32.load16_u offset=36 align=1
            local.set $a2
            local.get $o
            i32.load16_u offset=38 align=1
            local.set $sum
            local.get $o
            v128.load64_zero offset=40 align=1 ;; KERNEL_LANES.WIDTH
            i16x8.extend_low_i8x16_u
            local.tee $lv
            i32x4.extend_high_i16x8_u
            local.set $lmul
            local.get $lv
            i32x4.extend_low_i16x8_u
            local.get $i127
            i32x4.add
            i32.const 23
            i32x4.shl
            local.get $f2p23
            f32x4.add
            local.get $i2p23
            i32x4.sub
            local.set $lmask
            local.get $o
            v128.load align=1
            local.tee $lv
            f64x2.promote_low_f32x4
            local.set $loffLo
            local.get $lv
            local.get $lv
            i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
            f64x2.promote_low_f32x4
            local.set $loffHi
            local.get $o
            v128.load offset=16 align=1
            local.tee $lv
            f64x2.promote_low_f32x4
            local.set $lstepLo
            local.get $lv
            local.get $lv
            i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
            f64x2.promote_low_f32x4
            local.set $lstepHi
          end
          local.get $key1
          local.get $a0
          i32.add
          v128.load32_zero align=1
          local.set $lv
          local.get $key1
          local.get $a1
          i32.add
          local.get $lv
          v128.load32_lane align=1 1
          local.set $lv
          local.get $key1
          local.get $a2
          i32.add
          local.get $lv
          v128.load32_lane align=1 2
          local.set $lv
          local.get $key1
          local.get $sum
          i32.add
          local.get $lv
          v128.load32_lane align=1 3
          local.set $lv
          ;; The field's lowest bit to bit 14 (times 2^(7 − its first bit) · 2^(7 − the key's first
          ;; bit), a product of the row's and the key's, ready before the field), then down to bit 0,
          ;; the next fields' bits masked off.
          local.get $lv
          local.get $lmul
          local.get $kmul1
          i32x4.mul
          i32x4.mul
          i32.const 14
          i32x4.shr_u
          local.get $lmask
          v128.and
          local.tee $lv
          f64x2.convert_low_i32x4_s
          local.get $lstepLo
          f64x2.mul
          local.get $loffLo
          f64x2.add
          f32x4.demote_f64x2_zero
          local.set $llo
          local.get $lv
          local.get $lv
          i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15
          f64x2.convert_low_i32x4_s
          local.get $lstepHi
          f64x2.mul
          local.get $loffHi
          f64x2.add
          f32x4.demote_f64x2_zero
          local.set $lhi
          local.get $plane
          local.get $llo
          local.get $lhi
          i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
          v128.store offset=47552 align=1 ;; plane K1 + c / Q1 + c
        end
        local.get $quad
        i32.const 48
        i32.add
        local.set $quad
        local.get $plane
        i32.const 11888 ;; PLANE_BYTES
        i32.add
        local.set $plane
        local.get $dropsW
        i32.eqz
        if  ;; label = @3
          local.get $at
          local.get $quad
          v128.load32_zero align=1 ;; KERNEL_LANES.DROP
          i16x8.extend_low_i8x16_u
          i32x4.extend_low_i16x8_u
          v128.store offset=35664 align=1 ;; plane DROP0 / Q0+3
          local.get $at
          local.get $quad
          local.get $h1
          i32.add
          local.get $h0
          i32.sub
          v128.load32_zero align=1 ;; key 1's
          i16x8.extend_low_i8x16_u
          i32x4.extend_low_i16x8_u
          v128.store offset=83216 align=1 ;; plane DROP1 / Q1+3
        end
        ;; The next row, past the dropped components.
        local.get $quad
        i32.const 16
        i32.add
        local.set $quad
        local.get $at
        i32.const 16
        i32.add
        local.tee $at
        local.get $el
        i32.lt_u
        br_if 0 (;@2;)
      end
      ;; The rows' dummy lanes were read as zeros (offset and step 0) dropping w (3), as below.
      local.get $el
      local.set $e
    end
    ;; The last quad's lanes past the last rotation (dummies) get zeros, not a previous decode's leftovers.
    local.get $e
    i32.const 15
    i32.and
    if  ;; label = @1
      loop  ;; label = @2
        local.get $e
        f32.const 0x0p+0 (;=0;)
        f32.store align=1
        local.get $e
        f32.const 0x0p+0 (;=0;)
        f32.store offset=11888 align=1 ;; plane K0+1 / Q0+1
        local.get $e
        f32.const 0x0p+0 (;=0;)
        f32.store offset=23776 align=1 ;; plane K0+2 / Q0+2
        local.get $e
        f32.const 0x0p+0 (;=0;)
        f32.store offset=47552 align=1 ;; plane K1 / Q1
        local.get $e
        f32.const 0x0p+0 (;=0;)
        f32.store offset=59440 align=1 ;; plane K1+1 / Q1+1
        local.get $e
        f32.const 0x0p+0 (;=0;)
        f32.store offset=71328 align=1 ;; plane K1+2 / Q1+2
        local.get $e
        i32.const 3
        i32.store offset=35664 align=1 ;; plane DROP0 / Q0+3
        local.get $e
        i32.const 3
        i32.store offset=83216 align=1 ;; plane DROP1 / Q1+3
        local.get $e
        i32.const 4
        i32.add
        local.tee $e
        i32.const 15
        i32.and
        br_if 0 (;@2;)
      end
    end
    ;; Then quad by quad: four lanes' rotations rebuilt, slerped, multiplied by their references and stored.
    f32.const 0x1p+0 ;; 1
    f32x4.splat
    local.set $one
    f32.const -0x1p+0 ;; −1
    f32x4.splat
    local.set $minusOne
    f32.const 0x1p+1 ;; 2
    f32x4.splat
    local.set $two
    f32.const 0x1.555556p-2 ;; 1/3
    f32x4.splat
    local.set $third
    f32.const 0x1.6c16c2p-4 ;; 4/45
    f32x4.splat
    local.set $fourOver45
    f32.const 0x1.d41d42p-6 ;; 1/35
    f32x4.splat
    local.set $over35
    f32.const -0x1.555556p-3 ;; −1/6
    f32x4.splat
    local.set $s1
    f32.const 0x1.111112p-7 ;; 1/120
    f32x4.splat
    local.set $s2
    f32.const -0x1.a01a02p-13 ;; −1/5040
    f32x4.splat
    local.set $s3
    f32.const 0x1.71de3ap-19 ;; 1/362880
    f32x4.splat
    local.set $s4
    f32.const 0x1p-3 ;; SERIES_LIMIT
    f32x4.splat
    local.set $limit
    ;; zero and drop0 (all bits 0) are the initial values of their locals.
    i32.const 1
    i32x4.splat
    local.set $drop1
    i32.const 2
    i32x4.splat
    local.set $drop2
    i32.const 3
    i32x4.splat
    local.set $drop3
    local.get $alpha
    f32.demote_f64
    local.tee $alpha32
    f32x4.splat
    local.set $al
    f32.const 0x1p+0 (;=1;)
    local.get $alpha32
    f32.sub
    local.tee $beta
    f32x4.splat
    local.set $be
    local.get $alpha32
    local.get $alpha32
    f32.mul
    f32x4.splat
    local.set $aa
    local.get $beta
    local.get $beta
    f32.mul
    f32x4.splat
    local.set $bb
    ;; Each step is its own loop over the quads, so the processor overlaps the quads' short
    ;; chains of dependent operations instead of waiting on one long chain per quad.
    ;; Each key's rotations rebuilt in place, quad by quad: key 0's in planes 0..3, then (two
    ;; keys) key 1's in planes 4..7, from their stored components (planes K0 and K1) and
    ;; dropped indices (DROP0 and DROP1, the fourth plane of each), lane by lane
    ;; emitRotation's first lines. el: the end of the current key's quads.
    i32.const 0
    local.set $at
    local.get $e
    local.set $el
    block  ;; label = @1
      local.get $e
      i32.eqz
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get $at
        v128.load align=1
        local.set $v0
        local.get $at
        v128.load offset=11888 align=1 ;; plane K0+1 / Q0+1
        local.set $v1
        local.get $at
        v128.load offset=23776 align=1 ;; plane K0+2 / Q0+2
        local.set $v2
        ;; t = 1 − c0² − c1² − c2², left to right; d = t > 0 ? √t : 0
        local.get $one
        local.get $v0
        local.get $v0
        f32x4.mul
        f32x4.sub
        local.get $v1
        local.get $v1
        f32x4.mul
        f32x4.sub
        local.get $v2
        local.get $v2
        f32x4.mul
        f32x4.sub
        local.tee $vt
        f32x4.sqrt
        local.get $zero
        local.get $vt
        local.get $zero
        f32x4.gt
        v128.bitselect
        local.set $vd
        ;; Both keys' segments drop w from every rotation (nearly always): (c0, c1, c2, d), the
        ;; first three already in place.
        local.get $dropsW
        if  ;; label = @3
          local.get $at
          local.get $vd
          v128.store offset=35664 align=1 ;; plane DROP0 / Q0+3
        else
          local.get $at
          v128.load offset=35664 align=1 ;; plane DROP0 / Q0+3
          local.tee $drops
          local.get $drop0
          i32x4.eq
          local.set $m0
          local.get $drops
          local.get $drop1
          i32x4.eq
          local.set $m1
          ;; x = drop == 0 ? d : c0
          local.get $at
          local.get $vd
          local.get $v0
          local.get $m0
          v128.bitselect
          v128.store align=1
          ;; y = drop == 0 ? c0 : drop == 1 ? d : c1
          local.get $at
          local.get $v0
          local.get $vd
          local.get $v1
          local.get $m1
          v128.bitselect
          local.get $m0
          v128.bitselect
          v128.store offset=11888 align=1 ;; plane K0+1 / Q0+1
          ;; z = drop <= 1 ? c1 : drop == 2 ? d : c2
          local.get $at
          local.get $v1
          local.get $vd
          local.get $v2
          local.get $drops
          local.get $drop2
          i32x4.eq
          v128.bitselect
          local.get $m0
          local.get $m1
          v128.or
          v128.bitselect
          v128.store offset=23776 align=1 ;; plane K0+2 / Q0+2
          ;; w = drop == 3 ? d : c2
          local.get $at
          local.get $vd
          local.get $v2
          local.get $drops
          local.get $drop3
          i32x4.eq
          v128.bitselect
          v128.store offset=35664 align=1 ;; plane DROP0 / Q0+3
        end
        local.get $at
        i32.const 16
        i32.add
        local.tee $at
        local.get $el
        i32.ne
        br_if 0 (;@2;)
        ;; Key 0's quads done: key 1's, four planes on, where there are two keys (once: el
        ;; then moves on).
        local.get $el
        local.get $e
        i32.eq
        local.get $single
        i32.eqz
        i32.and
        if  ;; label = @3
          i32.const 47552 ;; plane K1
          local.tee $at
          local.get $e
          i32.add
          local.set $el
          br 1 (;@2;)
        end
      end
    end
    local.get $single
    i32.eqz
    if  ;; label = @1
      ;; The slerp in three loops (theta², weights, blend), each a shorter chain per quad, so
      ;; more quads overlap (one loop measured about a tenth slower, bench/notes.md).
      ;; Emits body once per quad, local at at its vectors' offset in the planes (16 · quad).
      i32.const 0
      local.set $at
      block  ;; label = @2
        local.get $e
        i32.eqz
        br_if 0 (;@2;)
        loop  ;; label = @3
          local.get $at
          v128.load align=1
          local.set $x0
          local.get $at
          v128.load offset=11888 align=1 ;; plane Q0+1
          local.set $y0
          local.get $at
          v128.load offset=23776 align=1 ;; plane Q0+2
          local.set $z0
          local.get $at
          v128.load offset=35664 align=1 ;; plane Q0+3
          local.set $w0
          local.get $at
          v128.load offset=47552 align=1 ;; plane Q1
          local.set $x1
          local.get $at
          v128.load offset=59440 align=1 ;; plane Q1+1
          local.set $y1
          local.get $at
          v128.load offset=71328 align=1 ;; plane Q1+2
          local.set $z1
          local.get $at
          v128.load offset=83216 align=1 ;; plane Q1+3
          local.set $w1
          ;; dot = x0x1 + y0y1 + z0z1 + w0w1, left to right
          local.get $x0
          local.get $x1
          f32x4.mul
          local.get $y0
          local.get $y1
          f32x4.mul
          f32x4.add
          local.get $z0
          local.get $z1
          f32x4.mul
          f32x4.add
          local.get $w0
          local.get $w1
          f32x4.mul
          f32x4.add
          local.set $dot
          ;; The first half of the slerp weights of the four lanes (slerpWeights lane by lane), from
          ;; dot in dot: sign, u = 1 − dot · sign into vu, and theta² by its series into vt.
          ;; sign = dot < 0 ? −1 : 1; u = 1 − dot · sign
          local.get $minusOne
          local.get $one
          local.get $dot
          local.get $zero
          f32x4.lt
          v128.bitselect
          local.set $sign
          local.get $one
          local.get $dot
          local.get $sign
          f32x4.mul
          f32x4.sub
          local.set $vu
          ;; theta2 = u · (2 + u · (1/3 + u · (4/45 + u · 1/35)))
          local.get $vu
          local.get $two
          local.get $vu
          local.get $third
          local.get $vu
          local.get $fourOver45
          local.get $vu
          local.get $over35
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          local.set $vt
          local.get $at
          local.get $sign
          v128.store offset=95104 align=1 ;; plane SIGN
          local.get $at
          local.get $vu
          v128.store offset=118880 align=1 ;; plane SIGN+2
          local.get $at
          local.get $vt
          v128.store offset=106992 align=1 ;; plane SIGN+1
          local.get $at
          i32.const 16
          i32.add
          local.tee $at
          local.get $e
          i32.ne
          br_if 0 (;@3;)
        end
      end
      ;; Emits body once per quad, local at at its vectors' offset in the planes (16 · quad).
      i32.const 0
      local.set $at
      block  ;; label = @2
        local.get $e
        i32.eqz
        br_if 0 (;@2;)
        loop  ;; label = @3
          local.get $at
          v128.load offset=95104 align=1 ;; plane SIGN
          local.set $sign
          local.get $at
          v128.load offset=118880 align=1 ;; plane SIGN+2
          local.set $vu
          local.get $at
          v128.load offset=106992 align=1 ;; plane SIGN+1
          local.set $vt
          ;; The second half: the slerp weights into wa, wb from sign, vu and theta² in vt: the
          ;; series on the common path, Math.acos and Math.sin (imported, on the float32 numbers,
          ;; results rounded to float32) for a lane past SERIES_LIMIT.
          ;; sa = alpha² · theta2, sb = beta² · theta2
          local.get $aa
          local.get $vt
          f32x4.mul
          local.set $sa
          local.get $bb
          local.get $vt
          f32x4.mul
          local.set $sb
          ;; w = x · (1 + s · (−1/6 + s · (1/120 + s · (−1/5040 + s · 1/362880))))
          local.get $al
          local.get $one
          local.get $sa
          local.get $s1
          local.get $sa
          local.get $s2
          local.get $sa
          local.get $s3
          local.get $sa
          local.get $s4
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          local.set $wb
          local.get $be
          local.get $one
          local.get $sb
          local.get $s1
          local.get $sb
          local.get $s2
          local.get $sb
          local.get $s3
          local.get $sb
          local.get $s4
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          f32x4.add
          f32x4.mul
          local.set $wa
          ;; A lane with u ≥ SERIES_LIMIT (or NaN): theta = acos(u > 1 ? 0 : 1 − u), wa =
          ;; sin(beta·theta), wb = sin(alpha·theta). Rare, so such lanes are redone one by one in
          ;; the weights' planes (o at the lane's float, u from plane SIGN+2).
          local.get $vu
          local.get $limit
          f32x4.lt
          i32x4.all_true
          i32.eqz
          if  ;; label = @4
            local.get $at
            local.get $wa
            v128.store offset=95104 align=1 ;; plane SIGN
            local.get $at
            local.get $wb
            v128.store offset=106992 align=1 ;; plane SIGN+1
            local.get $at
            local.set $o
            loop  ;; label = @5
              local.get $o
              f32.load offset=118880 align=1 ;; plane SIGN+2
              local.tee $u
              f32.const 0x1p-3 (;=0.125;)
              f32.lt
              i32.eqz
              if  ;; label = @6
                f32.const 0x0p+0 (;=0;)
                f32.const 0x1p+0 (;=1;)
                local.get $u
                f32.sub
                local.get $u
                f32.const 0x1p+0 (;=1;)
                f32.gt
                select
                f64.promote_f32
                call $acos
                f32.demote_f64
                local.set $t
                local.get $o
                local.get $beta
                local.get $t
                f32.mul
                f64.promote_f32
                call $sin
                f32.demote_f64
                f32.store offset=95104 align=1 ;; plane SIGN
                local.get $o
                local.get $alpha32
                local.get $t
                f32.mul
                f64.promote_f32
                call $sin
                f32.demote_f64
                f32.store offset=106992 align=1 ;; plane SIGN+1
              end
              local.get $o
              i32.const 4
              i32.add
              local.tee $o
              i32.const 15
              i32.and
              br_if 0 (;@5;)
            end
            local.get $at
            v128.load offset=95104 align=1 ;; plane SIGN
            local.set $wa
            local.get $at
            v128.load offset=106992 align=1 ;; plane SIGN+1
            local.set $wb
          end
          local.get $wb
          local.get $sign
          f32x4.mul
          local.set $wb
          local.get $at
          local.get $wa
          v128.store offset=95104 align=1 ;; plane SIGN
          local.get $at
          local.get $wb
          v128.store offset=106992 align=1 ;; plane SIGN+1
          local.get $at
          i32.const 16
          i32.add
          local.tee $at
          local.get $e
          i32.ne
          br_if 0 (;@3;)
        end
      end
      ;; Emits body once per quad, local at at its vectors' offset in the planes (16 · quad) and quad at its row of the quad table.
      i32.const 0
      local.set $at
      local.get $quads
      local.set $quad
      block  ;; label = @2
        local.get $e
        i32.eqz
        br_if 0 (;@2;)
        loop  ;; label = @3
          local.get $at
          v128.load offset=95104 align=1 ;; plane SIGN
          local.set $wa
          local.get $at
          v128.load offset=106992 align=1 ;; plane SIGN+1
          local.set $wb
          local.get $at
          v128.load align=1
          local.set $x0
          local.get $at
          v128.load offset=11888 align=1 ;; plane Q0+1
          local.set $y0
          local.get $at
          v128.load offset=23776 align=1 ;; plane Q0+2
          local.set $z0
          local.get $at
          v128.load offset=35664 align=1 ;; plane Q0+3
          local.set $w0
          local.get $at
          v128.load offset=47552 align=1 ;; plane Q1
          local.set $x1
          local.get $at
          v128.load offset=59440 align=1 ;; plane Q1+1
          local.set $y1
          local.get $at
          v128.load offset=71328 align=1 ;; plane Q1+2
          local.set $z1
          local.get $at
          v128.load offset=83216 align=1 ;; plane Q1+3
          local.set $w1
          ;; q = q0 · wa + q1 · wb, or q0 for a STEP track
          local.get $x0
          local.get $wa
          f32x4.mul
          local.get $x1
          local.get $wb
          f32x4.mul
          f32x4.add
          local.set $x
          local.get $y0
          local.get $wa
          f32x4.mul
          local.get $y1
          local.get $wb
          f32x4.mul
          f32x4.add
          local.set $y
          local.get $z0
          local.get $wa
          f32x4.mul
          local.get $z1
          local.get $wb
          f32x4.mul
          f32x4.add
          local.set $z
          local.get $w0
          local.get $wa
          f32x4.mul
          local.get $w1
          local.get $wb
          f32x4.mul
          f32x4.add
          local.set $w
          local.get $steps
          if  ;; label = @4
            local.get $quad
            v128.load offset=64 align=1 ;; KERNEL_QUAD.STEP
            local.set $m0
            local.get $x0
            local.get $x
            local.get $m0
            v128.bitselect
            local.set $x
            local.get $y0
            local.get $y
            local.get $m0
            v128.bitselect
            local.set $y
            local.get $z0
            local.get $z
            local.get $m0
            v128.bitselect
            local.set $z
            local.get $w0
            local.get $w
            local.get $m0
            v128.bitselect
            local.set $w
          end
          local.get $at
          local.get $x
          v128.store align=1
          local.get $at
          local.get $y
          v128.store offset=11888 align=1 ;; plane Q0+1
          local.get $at
          local.get $z
          v128.store offset=23776 align=1 ;; plane Q0+2
          local.get $at
          local.get $w
          v128.store offset=35664 align=1 ;; plane Q0+3
          local.get $quad
          i32.const 96
          i32.add
          local.set $quad
          local.get $at
          i32.const 16
          i32.add
          local.tee $at
          local.get $e
          i32.ne
          br_if 0 (;@3;)
        end
      end
    end
    ;; Emits body once per quad, local at at its vectors' offset in the planes (16 · quad) and quad at its row of the quad table.
    i32.const 0
    local.set $at
    local.get $quads
    local.set $quad
    block  ;; label = @1
      local.get $e
      i32.eqz
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get $at
        v128.load align=1
        local.set $x
        local.get $at
        v128.load offset=11888 align=1 ;; plane Q0+1
        local.set $y
        local.get $at
        v128.load offset=23776 align=1 ;; plane Q0+2
        local.set $z
        local.get $at
        v128.load offset=35664 align=1 ;; plane Q0+3
        local.set $w
        ;; normalise(ref · q) of the four lanes for q = (x, y, z, w), written at each lane's pose
        ;; address. Lane by lane the terms and their order are sampler.ts's.
        ;; The four lanes' references, (rx, ry, rz, rw).
        local.get $quad
        v128.load align=1 ;; KERNEL_QUAD.REFS x
        local.set $rx
        local.get $quad
        v128.load offset=16 align=1 ;; KERNEL_QUAD.REFS y
        local.set $ry
        local.get $quad
        v128.load offset=32 align=1 ;; KERNEL_QUAD.REFS z
        local.set $rz
        local.get $quad
        v128.load offset=48 align=1 ;; KERNEL_QUAD.REFS w
        local.set $rw
        ;; px = rw·x + rx·w + ry·z − rz·y, and so on, left to right.
        local.get $rw
        local.get $x
        f32x4.mul
        local.get $rx
        local.get $w
        f32x4.mul
        f32x4.add
        local.get $ry
        local.get $z
        f32x4.mul
        f32x4.add
        local.get $rz
        local.get $y
        f32x4.mul
        f32x4.sub
        local.set $px
        local.get $rw
        local.get $y
        f32x4.mul
        local.get $rx
        local.get $z
        f32x4.mul
        f32x4.sub
        local.get $ry
        local.get $w
        f32x4.mul
        f32x4.add
        local.get $rz
        local.get $x
        f32x4.mul
        f32x4.add
        local.set $py
        local.get $rw
        local.get $z
        f32x4.mul
        local.get $rx
        local.get $y
        f32x4.mul
        f32x4.add
        local.get $ry
        local.get $x
        f32x4.mul
        f32x4.sub
        local.get $rz
        local.get $w
        f32x4.mul
        f32x4.add
        local.set $pz
        local.get $rw
        local.get $w
        f32x4.mul
        local.get $rx
        local.get $x
        f32x4.mul
        f32x4.sub
        local.get $ry
        local.get $y
        f32x4.mul
        f32x4.sub
        local.get $rz
        local.get $z
        f32x4.mul
        f32x4.sub
        local.set $pw
        ;; len2 = px² + py² + pz² + pw², left to right; inv = 1 / √len2; a lane with len2 ≤ 0 writes identity.
        local.get $px
        local.get $px
        f32x4.mul
        local.get $py
        local.get $py
        f32x4.mul
        f32x4.add
        local.get $pz
        local.get $pz
        f32x4.mul
        f32x4.add
        local.get $pw
        local.get $pw
        f32x4.mul
        f32x4.add
        local.set $vt
        local.get $one
        local.get $vt
        f32x4.sqrt
        f32x4.div
        local.set $inv
        local.get $px
        local.get $inv
        f32x4.mul
        local.set $px
        local.get $py
        local.get $inv
        f32x4.mul
        local.set $py
        local.get $pz
        local.get $inv
        f32x4.mul
        local.set $pz
        local.get $pw
        local.get $inv
        f32x4.mul
        local.set $pw
        ;; The selects of identity only when a lane's len2 is not > 0 (a zero or NaN blend).
        local.get $vt
        local.get $zero
        f32x4.gt
        local.tee $pos
        i32x4.all_true
        i32.eqz
        if  ;; label = @3
          local.get $px
          local.get $zero
          local.get $pos
          v128.bitselect
          local.set $px
          local.get $py
          local.get $zero
          local.get $pos
          v128.bitselect
          local.set $py
          local.get $pz
          local.get $zero
          local.get $pos
          v128.bitselect
          local.set $pz
          local.get $pw
          local.get $one
          local.get $pos
          v128.bitselect
          local.set $pw
        end
        ;; Transposed to each lane's (x, y, z, w): (x0, y0, x1, y1), (x2, y2, x3, y3) and the same
        ;; of z, w, then halves of those.
        local.get $px
        local.get $py
        i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23
        local.set $xy
        local.get $px
        local.get $py
        i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31
        local.set $xy2
        local.get $pz
        local.get $pw
        i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23
        local.set $zw
        local.get $pz
        local.get $pw
        i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31
        local.set $zw2
        local.get $quad
        i32.load offset=80 align=1 ;; KERNEL_QUAD.POSE lane 0
        local.get $xy
        local.get $zw
        i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
        v128.store align=1
        local.get $quad
        i32.load offset=84 align=1 ;; KERNEL_QUAD.POSE lane 1
        local.get $xy
        local.get $zw
        i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31
        v128.store align=1
        local.get $quad
        i32.load offset=88 align=1 ;; KERNEL_QUAD.POSE lane 2
        local.get $xy2
        local.get $zw2
        i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
        v128.store align=1
        local.get $quad
        i32.load offset=92 align=1 ;; KERNEL_QUAD.POSE lane 3
        local.get $xy2
        local.get $zw2
        i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31
        v128.store align=1
        local.get $quad
        i32.const 96
        i32.add
        local.set $quad
        local.get $at
        i32.const 16
        i32.add
        local.tee $at
        local.get $e
        i32.ne
        br_if 0 (;@2;)
      end
    end)
  (export "decode" (func $decode)))
