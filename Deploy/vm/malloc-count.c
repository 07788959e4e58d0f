/* malloc-count.so: counts heap allocations of a process (LD_PRELOAD), for the benchmarks'
 * "allocations per second while streaming idle". At exit it writes the count to
 * $MALLOC_COUNT_FILE. Build: gcc -O2 -shared -fPIC -o malloc-count.so malloc-count.c
 * Run two lengths of the same idle run and divide the difference by the extra seconds: that
 * cancels start-up and shutdown. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong count;
static inline void counted(void) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); }

void *malloc(size_t n) { counted(); return __libc_malloc(n); }
void *calloc(size_t n, size_t size) { counted(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { counted(); return __libc_realloc(p, n); }
void *memalign(size_t alignment, size_t n) { counted(); return __libc_memalign(alignment, n); }
void *aligned_alloc(size_t alignment, size_t n) { counted(); return __libc_memalign(alignment, n); }
int posix_memalign(void **out, size_t alignment, size_t n) {
	counted();
	void *p = __libc_memalign(alignment, n);
	if (!p) return 12; /* ENOMEM */
	*out = p;
	return 0;
}

__attribute__((destructor)) static void report(void) {
	const char *path = getenv("MALLOC_COUNT_FILE");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f) return;
	fprintf(f, "%lu\n", (unsigned long)atomic_load(&count));
	fclose(f);
}
