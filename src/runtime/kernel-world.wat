;; The kernel's world pass, for crowds: kernel.wat's decode (imported from the kernel's
;; instance on the same memory), then the object-space walk of crowd.ts. A module of its own
;; so a page that plays clips without a crowd does not download it (crowd.ts alone holds its
;; bytes). Assembled at build time by scripts/assemble-kernel.mjs (wabt) into
;; src/runtime/kernel-wasm.ts.
;;
;; It reads the pose the decode wrote at KERNEL_STAGING 131072 and writes its float64
;; matrices at KERNEL_WORLD 196608 (96 bytes a bone) and its floats at KERNEL_WORLD_OUT
;; 294912 (48 or 64 bytes a bone), numbers of src/runtime/decode-layout.ts; it performs
;; pose.ts's objectSpace operations in their order (float64), so its floats are that
;; function's to the bit.
;;
;; Conventions: as kernel.wat's.
(module
  (type (;0;) (func (param i32 i32 i32 f64)))
  (type (;1;) (func (param i32 i32 i32 f64 i32 i32 i32)))
  (import "env" "decode" (func $decode (type 0)))
  (import "env" "mem" (memory (;0;) 1))
  (func $world (type 1) (param $clip i32) (param $head i32) (param $key i32) (param $alpha f64) (param $parents i32) (param $bones i32) (param $rows i32)
    (local $bone i32)
    (local $q i32)
    (local $r i32)
    (local $x f64)
    (local $y f64)
    (local $z f64)
    (local $w f64)
    (local $sx f64)
    (local $sy f64)
    (local $sz f64)
    (local $x2 f64)
    (local $y2 f64)
    (local $z2 f64)
    (local $xx f64)
    (local $xy f64)
    (local $xz f64)
    (local $yy f64)
    (local $yz f64)
    (local $zz f64)
    (local $wx f64)
    (local $wy f64)
    (local $wz f64)
    (local $m0 f64)
    (local $m1 f64)
    (local $m2 f64)
    (local $m3 f64)
    (local $m4 f64)
    (local $m5 f64)
    (local $m6 f64)
    (local $m7 f64)
    (local $m8 f64)
    (local $tx f64)
    (local $ty f64)
    (local $tz f64)
    (local $n0 f64)
    (local $n1 f64)
    (local $n2 f64)
    (local $n3 f64)
    (local $n4 f64)
    (local $n5 f64)
    (local $n6 f64)
    (local $n7 f64)
    (local $n8 f64)
    (local $ux f64)
    (local $uy f64)
    (local $uz f64)
    ;; The world function's body (see KernelWorld).
    ;; The decode's parameters 0..3, then 4..6, then i32 locals 7..9, then f64 locals.
    local.get $clip
    local.get $head
    local.get $key
    local.get $alpha
    call $decode
    block  ;; label = @1
      local.get $bones
      i32.eqz
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131072 align=1
        f64.promote_f32
        local.set $x
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131076 align=1
        f64.promote_f32
        local.set $y
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131080 align=1
        f64.promote_f32
        local.set $z
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131084 align=1
        f64.promote_f32
        local.set $w
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131100 align=1
        f64.promote_f32
        local.set $sx
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131104 align=1
        f64.promote_f32
        local.set $sy
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131108 align=1
        f64.promote_f32
        local.set $sz
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131088 align=1
        f64.promote_f32
        local.set $tx
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131092 align=1
        f64.promote_f32
        local.set $ty
        local.get $bone
        i32.const 40
        i32.mul
        f32.load offset=131096 align=1
        f64.promote_f32
        local.set $tz
        local.get $x
        local.get $x
        f64.add
        local.set $x2
        local.get $y
        local.get $y
        f64.add
        local.set $y2
        local.get $z
        local.get $z
        f64.add
        local.set $z2
        local.get $x
        local.get $x2
        f64.mul
        local.set $xx
        local.get $x
        local.get $y2
        f64.mul
        local.set $xy
        local.get $x
        local.get $z2
        f64.mul
        local.set $xz
        local.get $y
        local.get $y2
        f64.mul
        local.set $yy
        local.get $y
        local.get $z2
        f64.mul
        local.set $yz
        local.get $z
        local.get $z2
        f64.mul
        local.set $zz
        local.get $w
        local.get $x2
        f64.mul
        local.set $wx
        local.get $w
        local.get $y2
        f64.mul
        local.set $wy
        local.get $w
        local.get $z2
        f64.mul
        local.set $wz
        ;; Local R · S, column by column: (1 − (a + c)) · s or (a ± c) · s.
        f64.const 0x1p+0 (;=1;)
        local.get $yy
        local.get $zz
        f64.add
        f64.sub
        local.get $sx
        f64.mul
        local.set $m0
        local.get $xy
        local.get $wz
        f64.add
        local.get $sx
        f64.mul
        local.set $m1
        local.get $xz
        local.get $wy
        f64.sub
        local.get $sx
        f64.mul
        local.set $m2
        local.get $xy
        local.get $wz
        f64.sub
        local.get $sy
        f64.mul
        local.set $m3
        f64.const 0x1p+0 (;=1;)
        local.get $xx
        local.get $zz
        f64.add
        f64.sub
        local.get $sy
        f64.mul
        local.set $m4
        local.get $yz
        local.get $wx
        f64.add
        local.get $sy
        f64.mul
        local.set $m5
        local.get $xz
        local.get $wy
        f64.add
        local.get $sz
        f64.mul
        local.set $m6
        local.get $yz
        local.get $wx
        f64.sub
        local.get $sz
        f64.mul
        local.set $m7
        f64.const 0x1p+0 (;=1;)
        local.get $xx
        local.get $yy
        f64.add
        f64.sub
        local.get $sz
        f64.mul
        local.set $m8
        ;; A child: M[parent] · local, each sum left to right.
        local.get $bone
        i32.const 2
        i32.shl
        local.get $parents
        i32.add
        i32.load align=1
        local.set $q
        local.get $q
        i32.const 0
        i32.ge_s
        if  ;; label = @3
          local.get $q
          i32.const 96
          i32.mul
          local.set $q
          local.get $q
          f64.load offset=196608 align=1
          local.get $m0
          f64.mul
          local.get $q
          f64.load offset=196632 align=1
          local.get $m1
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196656 align=1
          local.get $m2
          f64.mul
          f64.add
          local.set $n0
          local.get $q
          f64.load offset=196616 align=1
          local.get $m0
          f64.mul
          local.get $q
          f64.load offset=196640 align=1
          local.get $m1
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196664 align=1
          local.get $m2
          f64.mul
          f64.add
          local.set $n1
          local.get $q
          f64.load offset=196624 align=1
          local.get $m0
          f64.mul
          local.get $q
          f64.load offset=196648 align=1
          local.get $m1
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196672 align=1
          local.get $m2
          f64.mul
          f64.add
          local.set $n2
          local.get $q
          f64.load offset=196608 align=1
          local.get $m3
          f64.mul
          local.get $q
          f64.load offset=196632 align=1
          local.get $m4
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196656 align=1
          local.get $m5
          f64.mul
          f64.add
          local.set $n3
          local.get $q
          f64.load offset=196616 align=1
          local.get $m3
          f64.mul
          local.get $q
          f64.load offset=196640 align=1
          local.get $m4
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196664 align=1
          local.get $m5
          f64.mul
          f64.add
          local.set $n4
          local.get $q
          f64.load offset=196624 align=1
          local.get $m3
          f64.mul
          local.get $q
          f64.load offset=196648 align=1
          local.get $m4
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196672 align=1
          local.get $m5
          f64.mul
          f64.add
          local.set $n5
          local.get $q
          f64.load offset=196608 align=1
          local.get $m6
          f64.mul
          local.get $q
          f64.load offset=196632 align=1
          local.get $m7
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196656 align=1
          local.get $m8
          f64.mul
          f64.add
          local.set $n6
          local.get $q
          f64.load offset=196616 align=1
          local.get $m6
          f64.mul
          local.get $q
          f64.load offset=196640 align=1
          local.get $m7
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196664 align=1
          local.get $m8
          f64.mul
          f64.add
          local.set $n7
          local.get $q
          f64.load offset=196624 align=1
          local.get $m6
          f64.mul
          local.get $q
          f64.load offset=196648 align=1
          local.get $m7
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196672 align=1
          local.get $m8
          f64.mul
          f64.add
          local.set $n8
          local.get $q
          f64.load offset=196608 align=1
          local.get $tx
          f64.mul
          local.get $q
          f64.load offset=196632 align=1
          local.get $ty
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196656 align=1
          local.get $tz
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196680 align=1
          f64.add
          local.set $ux
          local.get $q
          f64.load offset=196616 align=1
          local.get $tx
          f64.mul
          local.get $q
          f64.load offset=196640 align=1
          local.get $ty
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196664 align=1
          local.get $tz
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196688 align=1
          f64.add
          local.set $uy
          local.get $q
          f64.load offset=196624 align=1
          local.get $tx
          f64.mul
          local.get $q
          f64.load offset=196648 align=1
          local.get $ty
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196672 align=1
          local.get $tz
          f64.mul
          f64.add
          local.get $q
          f64.load offset=196696 align=1
          f64.add
          local.set $uz
          local.get $n0
          local.set $m0
          local.get $n1
          local.set $m1
          local.get $n2
          local.set $m2
          local.get $n3
          local.set $m3
          local.get $n4
          local.set $m4
          local.get $n5
          local.set $m5
          local.get $n6
          local.set $m6
          local.get $n7
          local.set $m7
          local.get $n8
          local.set $m8
          local.get $ux
          local.set $tx
          local.get $uy
          local.set $ty
          local.get $uz
          local.set $tz
        end
        ;; The bone's unrounded matrix, then its floats.
        local.get $bone
        i32.const 96
        i32.mul
        local.set $q
        local.get $q
        local.get $m0
        f64.store offset=196608 align=1
        local.get $q
        local.get $m1
        f64.store offset=196616 align=1
        local.get $q
        local.get $m2
        f64.store offset=196624 align=1
        local.get $q
        local.get $m3
        f64.store offset=196632 align=1
        local.get $q
        local.get $m4
        f64.store offset=196640 align=1
        local.get $q
        local.get $m5
        f64.store offset=196648 align=1
        local.get $q
        local.get $m6
        f64.store offset=196656 align=1
        local.get $q
        local.get $m7
        f64.store offset=196664 align=1
        local.get $q
        local.get $m8
        f64.store offset=196672 align=1
        local.get $q
        local.get $tx
        f64.store offset=196680 align=1
        local.get $q
        local.get $ty
        f64.store offset=196688 align=1
        local.get $q
        local.get $tz
        f64.store offset=196696 align=1
        ;; Float i of the bone's output: a local rounded to float32, or a constant 0 or 1.
        local.get $rows
        if  ;; label = @3
          local.get $bone
          i32.const 48
          i32.mul
          local.set $r
          local.get $r
          local.get $m0
          f32.demote_f64
          f32.store offset=294912 align=1
          local.get $r
          local.get $m3
          f32.demote_f64
          f32.store offset=294916 align=1
          local.get $r
          local.get $m6
          f32.demote_f64
          f32.store offset=294920 align=1
          local.get $r
          local.get $tx
          f32.demote_f64
          f32.store offset=294924 align=1
          local.get $r
          local.get $m1
          f32.demote_f64
          f32.store offset=294928 align=1
          local.get $r
          local.get $m4
          f32.demote_f64
          f32.store offset=294932 align=1
          local.get $r
          local.get $m7
          f32.demote_f64
          f32.store offset=294936 align=1
          local.get $r
          local.get $ty
          f32.demote_f64
          f32.store offset=294940 align=1
          local.get $r
          local.get $m2
          f32.demote_f64
          f32.store offset=294944 align=1
          local.get $r
          local.get $m5
          f32.demote_f64
          f32.store offset=294948 align=1
          local.get $r
          local.get $m8
          f32.demote_f64
          f32.store offset=294952 align=1
          local.get $r
          local.get $tz
          f32.demote_f64
          f32.store offset=294956 align=1
        else
          local.get $bone
          i32.const 64
          i32.mul
          local.set $r
          local.get $r
          local.get $m0
          f32.demote_f64
          f32.store offset=294912 align=1
          local.get $r
          local.get $m1
          f32.demote_f64
          f32.store offset=294916 align=1
          local.get $r
          local.get $m2
          f32.demote_f64
          f32.store offset=294920 align=1
          local.get $r
          f32.const 0x0p+0 (;=0;)
          f32.store offset=294924 align=1
          local.get $r
          local.get $m3
          f32.demote_f64
          f32.store offset=294928 align=1
          local.get $r
          local.get $m4
          f32.demote_f64
          f32.store offset=294932 align=1
          local.get $r
          local.get $m5
          f32.demote_f64
          f32.store offset=294936 align=1
          local.get $r
          f32.const 0x0p+0 (;=0;)
          f32.store offset=294940 align=1
          local.get $r
          local.get $m6
          f32.demote_f64
          f32.store offset=294944 align=1
          local.get $r
          local.get $m7
          f32.demote_f64
          f32.store offset=294948 align=1
          local.get $r
          local.get $m8
          f32.demote_f64
          f32.store offset=294952 align=1
          local.get $r
          f32.const 0x0p+0 (;=0;)
          f32.store offset=294956 align=1
          local.get $r
          local.get $tx
          f32.demote_f64
          f32.store offset=294960 align=1
          local.get $r
          local.get $ty
          f32.demote_f64
          f32.store offset=294964 align=1
          local.get $r
          local.get $tz
          f32.demote_f64
          f32.store offset=294968 align=1
          local.get $r
          f32.const 0x1p+0 (;=1;)
          f32.store offset=294972 align=1
        end
        local.get $bone
        i32.const 1
        i32.add
        local.set $bone
        local.get $bone
        local.get $bones
        i32.lt_u
        br_if 0 (;@2;)
      end
    end)
  (export "world" (func $world)))
