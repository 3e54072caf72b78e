// Typed, non-variadic wrappers over libcurl's variadic option and info functions.
// Swift cannot call C variadic functions, so each argument kind gets one wrapper here.
// This target narrows types and does nothing else: no logic lives in C.
#ifndef CURLEW_CCURLSHIM_H
#define CURLEW_CCURLSHIM_H

#include <curl/curl.h>
// zlib, brotli's decoder and zstd (linked by Package.swift): Curlew decodes gzip, deflate, br
// and zstd bodies itself, to tell a complete compressed stream from a truncated one (libcurl
// 7.88 does not) and to bound what a body may make it allocate.
#include <zlib.h>
#include <brotli/decode.h>
// ZSTD_getFrameHeader (exported by libzstd.so, declared only for static linking): Curlew reads
// each frame header itself before libzstd's streaming decoder sees it (ZstdDecompressor.swift).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#if defined(__GLIBC__)
// malloc_trim: the engine hands freed memory back to the system after its idle timeout
// (Connections/ConnectionUpkeep.swift); Swift's Glibc module does not declare it.
#include <malloc.h>
#endif

#pragma clang assume_nonnull begin

/// The signature libcurl uses for CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION and CURLOPT_READFUNCTION.
typedef size_t (*curlew_data_callback)(char *_Nonnull bytes, size_t size, size_t count, void *_Nullable user);
/// The signature libcurl uses for CURLOPT_XFERINFOFUNCTION.
typedef int (*curlew_xferinfo_callback)(void *_Nullable user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

/// The signature libcurl uses for CURLOPT_SEEKFUNCTION.
typedef int (*curlew_seek_callback)(void *_Nullable user, curl_off_t offset, int origin);

/// The signature libcurl uses for CURLOPT_PREREQFUNCTION (libcurl 7.80 and later).
typedef int (*curlew_prereq_callback)(void *_Nullable user, char *_Nullable primaryIP, char *_Nullable localIP, int primaryPort, int localPort);

CURLcode curlew_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode curlew_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode curlew_easy_setopt_string(CURL *handle, CURLoption option, const char *_Nullable value);
CURLcode curlew_easy_setopt_pointer(CURL *handle, CURLoption option, void *_Nullable value);
CURLcode curlew_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *_Nullable value);
CURLcode curlew_easy_setopt_data_callback(CURL *handle, CURLoption option, curlew_data_callback _Nullable value);
CURLcode curlew_easy_setopt_xferinfo_callback(CURL *handle, curlew_xferinfo_callback _Nullable value);
CURLcode curlew_easy_setopt_seek_callback(CURL *handle, curlew_seek_callback _Nullable value);
CURLcode curlew_easy_setopt_prereq_callback(CURL *handle, curlew_prereq_callback _Nullable value);

/// The signatures libcurl uses for CURLOPT_OPENSOCKETFUNCTION and CURLOPT_CLOSESOCKETFUNCTION.
typedef curl_socket_t (*curlew_opensocket_callback)(void *_Nullable user, curlsocktype purpose, struct curl_sockaddr *_Nonnull address);
typedef int (*curlew_closesocket_callback)(void *_Nullable user, curl_socket_t item);
/// Sets both socket callbacks and their shared user pointer (nil callbacks: libcurl's own).
CURLcode curlew_easy_setopt_socket_callbacks(CURL *handle, curlew_opensocket_callback _Nullable open, curlew_closesocket_callback _Nullable close, void *_Nullable user);

CURLcode curlew_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode curlew_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode curlew_easy_getinfo_pointer(CURL *handle, CURLINFO info, void *_Nullable *_Nonnull value);
CURLcode curlew_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value);
CURLcode curlew_easy_getinfo_string(CURL *handle, CURLINFO info, const char *_Nullable *_Nonnull value);

CURLMcode curlew_multi_setopt_long(CURLM *handle, CURLMoption option, long value);

/// The signatures libcurl uses for CURLSHOPT_LOCKFUNC and CURLSHOPT_UNLOCKFUNC.
typedef void (*curlew_lock_callback)(CURL *_Nullable handle, curl_lock_data data, curl_lock_access access, void *_Nullable user);
typedef void (*curlew_unlock_callback)(CURL *_Nullable handle, curl_lock_data data, void *_Nullable user);

CURLSHcode curlew_share_setopt_long(CURLSH *share, CURLSHoption option, long value);
CURLSHcode curlew_share_setopt_pointer(CURLSH *share, CURLSHoption option, void *_Nullable value);
CURLSHcode curlew_share_setopt_lock(CURLSH *share, curlew_lock_callback _Nullable value);
CURLSHcode curlew_share_setopt_unlock(CURLSH *share, curlew_unlock_callback _Nullable value);

#pragma clang assume_nonnull end

#endif
