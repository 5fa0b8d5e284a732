// Loaded with `--import` into a process under a benchmark (bench/readiness-gc.ts): node 20 refuses
// --trace-gc-nvp in NODE_OPTIONS, so this sets it at start. Every garbage collection then writes one
// line of name=value pairs to stdout (pause, allocated, new_space_survived, promoted, …).
import v8 from 'node:v8';

v8.setFlagsFromString('--trace-gc-nvp');
