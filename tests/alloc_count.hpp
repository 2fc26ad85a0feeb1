// The heap-allocation counter of test_no_allocation.cpp, for every test file of the executable.
// test_no_allocation.cpp replaces malloc/operator new (and friends) and counts calls made on this
// thread while alloc_count::armed is set; PLUCKER_COUNT_ALLOCATIONS says whether it can (glibc,
// no ASan/TSan/MSan runtime owning malloc).
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define PLUCKER_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PLUCKER_TEST_SANITIZED 1
#endif
#if defined(__GLIBC__) && !defined(PLUCKER_TEST_SANITIZED)
#define PLUCKER_COUNT_ALLOCATIONS 1
#endif

namespace alloc_count {
extern thread_local bool armed;
extern thread_local long count;

/// Number of allocations made by f() on this thread.
template <class F>
long allocations(F&& f) {
  count = 0;
  armed = true;
  f();
  armed = false;
  return count;
}
}  // namespace alloc_count
