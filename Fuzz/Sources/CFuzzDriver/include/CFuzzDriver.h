#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
#include <stddef.h>

/// libFuzzer's driver (compiler-rt FuzzerInterface.h, linked by -sanitize=fuzzer): parses the
/// command line and fuzzes `callback`. Called from each target's entry point, because SwiftPM
/// gives every executable its own `main` and libFuzzer's would otherwise be left out.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const void *data, size_t size));

#endif
