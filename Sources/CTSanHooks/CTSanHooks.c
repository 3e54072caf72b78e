#include "CTSanHooks.h"

// ThreadSanitizer's annotation interface (compiler-rt tsan_interface.h), linked in with the
// runtime when the build sanitizes threads.
#if defined(__SANITIZE_THREAD__)
#define CURLEW_TSAN_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CURLEW_TSAN_RUNTIME 1
#endif
#endif

#ifdef CURLEW_TSAN_RUNTIME
void __tsan_acquire(void *address);
void __tsan_release(void *address);

void curlew_tsan_acquire(void *address) { __tsan_acquire(address); }
void curlew_tsan_release(void *address) { __tsan_release(address); }
#else
void curlew_tsan_acquire(void *address) { (void)address; }
void curlew_tsan_release(void *address) { (void)address; }
#endif
