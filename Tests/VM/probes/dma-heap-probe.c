// dma-heap-probe: what libcamera's Raspberry Pi pipeline asks of the system in a sandbox.
// Allocates a buffer from a DMA heap as libcamera's DmaBufAllocator does (open the heap,
// DMA_HEAP_IOCTL_ALLOC, then map the dma-buf: src/libcamera/dma_buf_allocator.cpp), and opens
// the udev netlink socket its device enumerator listens on for hot-plug
// (udev_monitor_new_from_netlink: AF_NETLINK, NETLINK_KOBJECT_UEVENT, src/libcamera/
// device_enumerator_udev.cpp). Then makes its thread batch work (SCHED_BATCH), as shutter's
// photo encode threads do (Sources/ShutterCapture/BatchWorker.swift). Prints one line per step;
// exits 1 at the first refusal, with the errno's name, so a test can tell EPERM (the sandbox)
// from ENOENT (no heap).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-heap.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int refused(const char *what) {
    printf("%s: %s (errno %d)\n", what, strerror(errno), errno);
    return 1;
}

int main(int argc, char **argv) {
    const char *heap = argc > 1 ? argv[1] : "/dev/dma_heap/system";
    int heap_fd = open(heap, O_RDWR | O_CLOEXEC);
    if (heap_fd < 0) return refused("open heap");
    struct dma_heap_allocation_data alloc = { .len = 1 << 20, .fd_flags = O_RDWR | O_CLOEXEC };
    if (ioctl(heap_fd, DMA_HEAP_IOCTL_ALLOC, &alloc) < 0) return refused("DMA_HEAP_IOCTL_ALLOC");
    unsigned char *bytes = mmap(NULL, alloc.len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)alloc.fd, 0);
    if (bytes == MAP_FAILED) return refused("mmap dma-buf");
    memset(bytes, 0xa5, alloc.len);
    printf("allocated %llu bytes from %s and wrote them\n", (unsigned long long)alloc.len, heap);
    int uevents = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (uevents < 0) return refused("socket AF_NETLINK");
    struct sockaddr_nl address = { .nl_family = AF_NETLINK, .nl_groups = 2 };  // udev's group
    if (bind(uevents, (struct sockaddr *)&address, sizeof address) < 0) return refused("bind netlink");
    printf("udev netlink socket open\n");
    struct sched_param parameters = { .sched_priority = 0 };
    if (syscall(SYS_sched_setscheduler, 0, SCHED_BATCH, &parameters) < 0) return refused("sched_setscheduler SCHED_BATCH");
    printf("thread made SCHED_BATCH (policy %ld)\n", syscall(SYS_sched_getscheduler, 0));
    return 0;
}
