// Non-variadic wrappers over the few libcurl calls the raw-libcurl column needs.
// Swift cannot call C variadic functions; this narrows types and does nothing else.
#ifndef BENCH_CLIBCURLSHIM_H
#define BENCH_CLIBCURLSHIM_H

#include <curl/curl.h>

#pragma clang assume_nonnull begin

CURLcode bench_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode bench_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode bench_easy_setopt_pointer(CURL *handle, CURLoption option, void *_Nullable value);
/// Makes the handle add every body byte count to `*counter` and discard the bytes.
CURLcode bench_easy_count_body(CURL *handle, size_t *counter);
CURLcode bench_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode bench_easy_getinfo_pointer(CURL *handle, CURLINFO info, void *_Nullable *_Nonnull value);
CURLMcode bench_multi_setopt_long(CURLM *handle, CURLMoption option, long value);

#pragma clang assume_nonnull end

#endif
