;; A WASI reactor (no _start): not runnable as a command.
(module
  (memory (export "memory") 1)
  (func (export "_initialize")))
