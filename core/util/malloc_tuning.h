#pragma once

namespace mt {

// glibc serves allocations above 128 KiB with mmap and returns them to the
// OS on free, so every step's 247 KB message buffers (gRPC slices, protobuf
// strings) cost fresh page faults, which are expensive on these machines.
// Keeping large blocks in the heap lets the steady state reuse them.
// Daemons call this first thing in main().
void KeepFreedMemoryForReuse();

}  // namespace mt
