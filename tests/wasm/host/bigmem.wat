;; No imports at all, and 100 pages (6.25 MiB) of initial memory.
(module
  (memory (export "memory") 100)
  (func (export "_start")))
