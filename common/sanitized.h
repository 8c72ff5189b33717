/* UMW_SANITIZED: defined in a build with AddressSanitizer (GCC's or
 * clang's), whose allocator and reports need system calls a confined
 * process's seccomp filter otherwise refuses: a test build's concession. */
#ifndef UMW_SANITIZED_H
#define UMW_SANITIZED_H

#if defined(__SANITIZE_ADDRESS__)
#define UMW_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UMW_SANITIZED 1
#endif
#endif

#endif
