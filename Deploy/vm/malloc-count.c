/* malloc-count.so: counts heap allocations of a process (LD_PRELOAD), for the benchmarks'
 * "allocations per second while streaming idle". At exit it writes the count to
 * $MALLOC_COUNT_FILE. Build: gcc -O2 -shared -fPIC -o malloc-count.so malloc-count.c
 * With $MALLOC_COUNT_LIVE set, the count is also kept live in the 8-byte file
 * $MALLOC_COUNT_LIVE.<pid> (read it with `od -An -t u8 -N8`), so a benchmark can count exactly
 * the allocations of a window (two readings) instead of subtracting whole runs, whose start-up
 * varies (a camera that answers late is enumerated again). The calling thread's own count is
 * malloc_count_this_thread() (found with dlsym): a test counts exactly the allocations of the
 * code it runs, whatever the runner's other threads do meanwhile. */
#include <fcntl.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong count;
static atomic_ulong *live;
/* Initial-exec: the library is preloaded, so its TLS is static and reading it never calls malloc. */
static __thread unsigned long this_thread __attribute__((tls_model("initial-exec")));
static inline void counted(void) {
	this_thread++;
	atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
	atomic_ulong *shared = live;
	if (shared) atomic_fetch_add_explicit(shared, 1, memory_order_relaxed);
}

__attribute__((constructor)) static void open_live(void) {
	const char *base = getenv("MALLOC_COUNT_LIVE");
	char path[512];
	if (!base) return;
	snprintf(path, sizeof path, "%s.%d", base, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) return;
	if (ftruncate(fd, sizeof(atomic_ulong)) == 0) {
		void *map = mmap(NULL, sizeof(atomic_ulong), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED) {
			atomic_store((atomic_ulong *)map, atomic_load(&count));
			live = map;
		}
	}
	close(fd);
}

unsigned long malloc_count_this_thread(void) { return this_thread; }

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
	const char *base = getenv("MALLOC_COUNT_FILE");
	char path[512];
	if (!base) return;
	snprintf(path, sizeof path, "%s.%d", base, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f) return;
	fprintf(f, "%lu\n", (unsigned long)atomic_load(&count));
	fclose(f);
}
