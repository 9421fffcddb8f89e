;; Imports a WASI function with the wrong signature.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $w (i32.const 0))))
