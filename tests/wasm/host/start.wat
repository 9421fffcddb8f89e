;; A command with a start function, which would run before the runner
;; caps memory: refused.
(module
  (memory (export "memory") 1)
  (func $init)
  (start $init)
  (func (export "_start")))
