#include "CCurlShim.h"

CURLcode curlew_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode curlew_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode curlew_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode curlew_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode curlew_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode curlew_easy_setopt_data_callback(CURL *handle, CURLoption option, curlew_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode curlew_easy_setopt_xferinfo_callback(CURL *handle, curlew_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

CURLcode curlew_easy_setopt_seek_callback(CURL *handle, curlew_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

CURLcode curlew_easy_setopt_prereq_callback(CURL *handle, curlew_prereq_callback value) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}

CURLcode curlew_easy_setopt_socket_callbacks(CURL *handle, curlew_opensocket_callback open, curlew_closesocket_callback close, void *user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, user);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, close);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETDATA, user);
    return code;
}

CURLcode curlew_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode curlew_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode curlew_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode curlew_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode curlew_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode curlew_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

CURLSHcode curlew_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

CURLSHcode curlew_share_setopt_pointer(CURLSH *share, CURLSHoption option, void *value) {
    return curl_share_setopt(share, option, value);
}

CURLSHcode curlew_share_setopt_lock(CURLSH *share, curlew_lock_callback value) {
    return curl_share_setopt(share, CURLSHOPT_LOCKFUNC, value);
}

CURLSHcode curlew_share_setopt_unlock(CURLSH *share, curlew_unlock_callback value) {
    return curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, value);
}
