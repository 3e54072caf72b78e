#ifndef CTSANHOOKS_H
#define CTSANHOOKS_H

/// Announces to ThreadSanitizer that the lock whose protected value lives at `address` was just
/// acquired: everything the last releaser did happens before what follows. A no-op unless this
/// file was compiled with -fsanitize=thread (`swift build --sanitize=thread`).
void curlew_tsan_acquire(void *address);

/// Announces that the lock at `address` is about to be released (see curlew_tsan_acquire).
void curlew_tsan_release(void *address);

#endif
