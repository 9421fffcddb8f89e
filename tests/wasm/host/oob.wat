;; Out-of-bounds memory access, chosen by the argument count (argc):
;;   1 load just past the end    2 store across the end
;;   3 load at 0xffffffff + offset 0xffffffff (as far as wasm reaches)
;;   4 memory.copy from beyond the end   5 memory.fill beyond the end
;;   6 load just past the end after memory.grow
;;   7 store and load the last word (in bounds): exit code 7
;; Each out-of-bounds case exits 0 if the access did not trap.
(module
  (import "wasi_snapshot_preview1" "args_sizes_get"
    (func $args_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1 4)
  (func (export "_start")
    (drop (call $args_sizes (i32.const 0) (i32.const 4)))
    (block $done
      (block $c7 (block $c6 (block $c5 (block $c4 (block $c3 (block $c2
        (block $c1
          (br_table $c1 $c1 $c2 $c3 $c4 $c5 $c6 $c7 $done
            (i32.load (i32.const 0))))
        (drop (i32.load (i32.const 65536))) (br $done))
        (i32.store (i32.const 65534) (i32.const -1)) (br $done))
        (drop (i64.load offset=0xffffffff (i32.const 0xffffffff)))
        (br $done))
        (memory.copy (i32.const 0) (i32.const 65000) (i32.const 1000))
        (br $done))
        (memory.fill (i32.const 65535) (i32.const 0) (i32.const 2))
        (br $done))
        (drop (memory.grow (i32.const 1)))
        (drop (i32.load (i32.const 131072))) (br $done))
      (i32.store (i32.const 65532) (i32.const 7))
      (call $exit (i32.load (i32.const 65532))))
    (call $exit (i32.const 0))))
