#include "CLibcurlShim.h"

CURLcode bench_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode bench_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode bench_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static size_t bench_count_bytes(char *bytes, size_t size, size_t count, void *user) {
    (void)bytes;
    *(size_t *)user += size * count;
    return size * count;
}

CURLcode bench_easy_count_body(CURL *handle, size_t *counter) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, bench_count_bytes);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_WRITEDATA, (void *)counter);
}

CURLcode bench_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode bench_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode bench_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

CURLcode bench_easy_like_curlew(CURL *handle, struct curl_slist *list, size_t *headerCounter) {
    CURLcode code;
    if ((code = curl_easy_setopt(handle, CURLOPT_HTTPHEADER, list)) != CURLE_OK) return code;
    if ((code = curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, bench_count_bytes)) != CURLE_OK) return code;
    if ((code = curl_easy_setopt(handle, CURLOPT_HEADERDATA, (void *)headerCounter)) != CURLE_OK) return code;
    if ((code = curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https")) != CURLE_OK) return code;
    if ((code = curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, 10000L)) != CURLE_OK) return code;
    if ((code = curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, 60000L)) != CURLE_OK) return code;
    if ((code = curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(16 * 1024 * 1024))) != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_HTTP_CONTENT_DECODING, 0L);
}
