;; Imports from a module the host does not provide.
(module
  (import "env" "foo" (func $foo))
  (memory (export "memory") 1)
  (func (export "_start") (call $foo)))
