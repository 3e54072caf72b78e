// The brotli and zstd encoders, for tests only: fixtures are compressed when a test runs, as the
// gzip ones are with zlib. The library links only the decoders (Sources/CCurlShim).
#ifndef CURLEW_CTESTCOMPRESSION_H
#define CURLEW_CTESTCOMPRESSION_H

#include <brotli/encode.h>
#include <zstd.h>

#endif
