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
/// Makes the handle do on the wire what a Curlew request does, and nothing in Swift: the same two
/// header lines (`User-Agent: Curlew`, `Accept-Encoding: gzip, deflate`, from `list`, which the
/// caller keeps alive), a header callback that counts the header bytes into `*headerCounter`,
/// Curlew's default timeouts and body limit, and no decoding by libcurl.
CURLcode bench_easy_like_curlew(CURL *handle, struct curl_slist *list, size_t *headerCounter);
CURLcode bench_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode bench_easy_getinfo_pointer(CURL *handle, CURLINFO info, void *_Nullable *_Nonnull value);
CURLMcode bench_multi_setopt_long(CURLM *handle, CURLMoption option, long value);

#pragma clang assume_nonnull end

#endif
