// The one file that talks to libcamera: cameras, streams, requests and controls behind the C
// interface in shutter_libcamera.h. Built against Debian 12's libcamera 0.0.3 through 0.7
// (Debian trixie's 0.4, Raspberry Pi OS's own 0.5 to 0.7, Debian sid's 0.7); the differences
// are behind #if on <libcamera/version.h>, or written so that both APIs take them (string
// properties, std::string in 0.4 and std::string_view from 0.6; a buffer's planes, a vector in
// 0.4 and a Span from 0.6).
//
// Threads: libcamera completes requests on its own thread. The completion handler only moves
// the request into a locked queue and writes the eventfd; the event loop takes it from there
// (shutter_lc_next), so no Swift code ever runs on libcamera's thread. The camera manager
// belongs to one thread of the backend's own, for the life of the process (ManagerThread).
//
// Built as a plugin, libshutter-libcamera.so (the package's `shutter-libcamera` product), which
// shutter opens with dlopen only when a board's camera may be a libcamera one
// (CLibcameraLoader's loader.c): libcamera and what it links are not mapped otherwise.

#include "shutter_libcamera.h"

#include <libcamera/libcamera.h>
#include <libcamera/version.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <linux/dma-buf.h>
#include <linux/media.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 4
// 0.4 added unsigned and point control types.
#define SHUTTER_LC_HAS_UNSIGNED_CONTROLS 1
#else
#define SHUTTER_LC_HAS_UNSIGNED_CONTROLS 0
#endif

using namespace libcamera;

namespace {

/// A first-in, first-out queue of requests that allocates only to hold more than it ever held.
///
/// std::deque allocates a new block (and frees an old one) every few dozen pushes as it moves
/// through memory: with one push per frame, an allocation every second or two of streaming, on
/// libcamera's thread. The queues here never hold more than the requests there are, so this
/// ring grows a few times at the start and then only reuses its slots.
template <typename T> struct RequestFIFO {
    std::vector<T> slots;
    size_t head = 0, count = 0;

    bool empty() const { return count == 0; }
    T front() const { return slots[head]; }
    void pop_front() {
        head = (head + 1) % slots.size();
        count--;
    }
    void clear() { head = count = 0; }
    void push_back(T value) {
        if (count == slots.size()) {
            std::vector<T> grown(std::max<size_t>(8, slots.size() * 2));
            for (size_t index = 0; index < count; index++) grown[index] = slots[(head + index) % slots.size()];
            slots.swap(grown);
            head = 0;
        }
        slots[(head + count) % slots.size()] = value;
        count++;
    }
};

int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void copy_string(char *target, size_t size, const std::string &source) {
    size_t count = std::min(size - 1, source.size());
    memcpy(target, source.data(), count);
    target[count] = 0;
}

int stable_control(const ControlId *id) {
    unsigned int n = id->id();
    if (n == controls::SCALER_CROP) return SHUTTER_LC_CONTROL_SCALER_CROP;
    if (n == controls::EXPOSURE_VALUE) return SHUTTER_LC_CONTROL_EXPOSURE_VALUE;
    if (n == controls::AF_MODE) return SHUTTER_LC_CONTROL_AF_MODE;
    if (n == controls::AF_TRIGGER) return SHUTTER_LC_CONTROL_AF_TRIGGER;
    if (n == controls::LENS_POSITION) return SHUTTER_LC_CONTROL_LENS_POSITION;
    if (n == controls::AE_ENABLE) return SHUTTER_LC_CONTROL_AE_ENABLE;
    if (n == controls::BRIGHTNESS) return SHUTTER_LC_CONTROL_BRIGHTNESS;
    if (n == controls::CONTRAST) return SHUTTER_LC_CONTROL_CONTRAST;
    if (n == controls::SATURATION) return SHUTTER_LC_CONTROL_SATURATION;
    if (n == controls::FRAME_DURATION_LIMITS) return SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS;
    return SHUTTER_LC_CONTROL_OTHER;
}

const ControlId *libcamera_control(int control) {
    switch (control) {
    case SHUTTER_LC_CONTROL_SCALER_CROP: return &controls::ScalerCrop;
    case SHUTTER_LC_CONTROL_EXPOSURE_VALUE: return &controls::ExposureValue;
    case SHUTTER_LC_CONTROL_AF_MODE: return &controls::AfMode;
    case SHUTTER_LC_CONTROL_AF_TRIGGER: return &controls::AfTrigger;
    case SHUTTER_LC_CONTROL_LENS_POSITION: return &controls::LensPosition;
    case SHUTTER_LC_CONTROL_AE_ENABLE: return &controls::AeEnable;
    case SHUTTER_LC_CONTROL_BRIGHTNESS: return &controls::Brightness;
    case SHUTTER_LC_CONTROL_CONTRAST: return &controls::Contrast;
    case SHUTTER_LC_CONTROL_SATURATION: return &controls::Saturation;
    default: return nullptr;
    }
}

/// A scalar control value as a double; NaN for types that have none.
double scalar(const ControlValue &value) {
    if (value.isNone() || value.isArray()) return 0;
    switch (value.type()) {
    case ControlTypeBool: return value.get<bool>() ? 1 : 0;
    case ControlTypeByte: return value.get<uint8_t>();
    case ControlTypeInteger32: return value.get<int32_t>();
    case ControlTypeInteger64: return double(value.get<int64_t>());
    case ControlTypeFloat: return value.get<float>();
#if SHUTTER_LC_HAS_UNSIGNED_CONTROLS
    case ControlTypeUnsigned16: return value.get<uint16_t>();
    case ControlTypeUnsigned32: return value.get<uint32_t>();
#endif
    default: return 0;
    }
}

int value_type(ControlType type) {
    switch (type) {
    case ControlTypeBool: return SHUTTER_LC_TYPE_BOOL;
    case ControlTypeByte:
    case ControlTypeInteger32:
    case ControlTypeInteger64:
#if SHUTTER_LC_HAS_UNSIGNED_CONTROLS
    case ControlTypeUnsigned16:
    case ControlTypeUnsigned32:
#endif
        return SHUTTER_LC_TYPE_INT;
    case ControlTypeFloat: return SHUTTER_LC_TYPE_FLOAT;
    case ControlTypeRectangle: return SHUTTER_LC_TYPE_RECTANGLE;
    default: return SHUTTER_LC_TYPE_OTHER;
    }
}

/// `value` as a ControlValue of `type`; false for types shutter never sets.
bool make_value(ControlType type, double value, ControlValue &out) {
    switch (type) {
    case ControlTypeBool: out = ControlValue(value != 0); return true;
    case ControlTypeInteger32: out = ControlValue(int32_t(value)); return true;
    case ControlTypeInteger64: out = ControlValue(int64_t(value)); return true;
    case ControlTypeFloat: out = ControlValue(float(value)); return true;
    default: return false;
    }
}

/// A camera manager: libcamera's CameraManager (LibcameraManager), or the fake system's
/// (FakeManager, for tests). Destroying it stops it.
struct ManagerBackend {
    virtual ~ManagerBackend() = default;
    /// CameraManager::start: enumerates the cameras. 0 or a negative errno.
    virtual int start() = 0;
    /// The cameras listed now (CameraManager::cameras): each one's id and model.
    virtual std::vector<std::pair<std::string, std::string>> cameras() = 0;
    /// Finds the camera `wanted` names (its id, its model ignoring case, or the first when
    /// empty) and acquires it; NULL and *error as shutter_lc_open says.
    virtual shutter_lc_camera *open(const std::string &wanted, int *error) = 0;
};

// Objects below that live as long as the process are made with `new` and never destroyed (the
// references are to them): the manager thread may still use them while static destructors run
// at exit.

/// What tests read of the camera managers (shutter_lc_fake_system_stats), counted from the
/// fake system's install on (guarded by stats_lock).
std::mutex &stats_lock = *new std::mutex;
int managers_created = 0, managers_rebuilt = 0, duplicate_ids = 0, cameras_added = 0;
std::set<std::thread::id> &manager_threads = *new std::set<std::thread::id>;

/// Notes that a camera manager call runs on this thread (creating, starting, listing, getting,
/// acquiring, releasing, stopping, destroying).
void note_manager_call() {
    std::lock_guard<std::mutex> guard(stats_lock);
    manager_threads.insert(std::this_thread::get_id());
}

}  // namespace

/// A watch on cameras added (shutter_lc_watch_cameras).
struct shutter_lc_watch {
    int fd;                 // our own duplicate of the caller's wake descriptor
    unsigned added = 0;     // cameras added since the last take (guarded by watch_lock)
};

namespace {

std::mutex &watch_lock = *new std::mutex;
std::set<shutter_lc_watch *> &watches = *new std::set<shutter_lc_watch *>;

/// A camera manager registered a camera (its cameraAdded signal: on libcamera's own thread,
/// where handlers must not block): counts it for every watch and writes a byte to each one's
/// descriptor, non-blocking (a full pipe is readable already).
void camera_added() {
    {
        std::lock_guard<std::mutex> guard(stats_lock);
        cameras_added++;
    }
    std::lock_guard<std::mutex> guard(watch_lock);
    for (shutter_lc_watch *watch : watches) {
        watch->added++;
        uint8_t byte = 1;
        while (::write(watch->fd, &byte, 1) < 0 && errno == EINTR) {}
    }
}

/// The one thread that makes, uses and destroys the camera manager, for the life of the process:
/// other threads hand it jobs and wait for them.
///
/// Why one thread: a CameraManager is a libcamera Object, bound to the thread that created it
/// (base/thread.cpp, "Threads and Objects": an Object "lives" in the thread it was created in,
/// and a thread-bound function may only be called from there), and libcamera gives every thread
/// it did not start one shared identity, its "main thread" (ThreadData::current()), so it cannot
/// tell Dispatch's worker threads apart. Made and used from whichever Dispatch thread called, the
/// manager had no owner; here the calls that create, start, stop and destroy it, list its
/// cameras, and get, acquire and release a camera all run on this thread. A camera's own calls
/// (configure, start, queueRequest, stop) stay where they are, made from one thread at a time:
/// Camera hands each to its pipeline handler on the manager's internal thread (camera.cpp,
/// invokeMethod), and queueRequest and createRequest are documented thread-safe.
class ManagerThread {
public:
    /// The process's manager thread, started on first use.
    static ManagerThread &shared() {
        static ManagerThread *thread = new ManagerThread;  // never destroyed, see above
        return *thread;
    }

    /// Runs `work` on the manager thread and waits for it (at once when called there).
    void run(std::function<void()> work) { run_for(std::move(work), std::chrono::milliseconds::max()); }

    /// As run, waiting at most `timeout`: whether `work` ran (it still runs later otherwise).
    bool run_for(std::function<void()> work, std::chrono::milliseconds timeout) {
        if (std::this_thread::get_id() == id) {
            work();
            return true;
        }
        auto job = std::make_shared<Job>();
        job->work = std::move(work);
        std::unique_lock<std::mutex> guard(lock);
        jobs.push_back(job);
        wake.notify_one();
        auto ran = [&] { return job->finished; };
        if (timeout == std::chrono::milliseconds::max()) {
            finished.wait(guard, ran);
            return true;
        }
        return finished.wait_for(guard, timeout, ran);
    }

private:
    struct Job {
        std::function<void()> work;
        bool finished = false;
    };
    std::mutex lock;
    std::condition_variable wake, finished;
    std::deque<std::shared_ptr<Job>> jobs;
    std::thread::id id;

    ManagerThread() {
        // With every signal blocked, as libcamera's threads it starts inherit: SIGINT and SIGTERM
        // go to the daemon's signalfd, never to this thread's default action.
        sigset_t all, previous;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &previous);
        std::thread worker([this] { loop(); });
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        id = worker.get_id();
        worker.detach();
        // Before libcamera's own static objects are destroyed at exit (registered later, so run
        // earlier): stop the manager's thread while they still exist.
        atexit(retire_at_exit);
    }

    void loop() {
        std::unique_lock<std::mutex> guard(lock);
        while (true) {
            wake.wait(guard, [&] { return !jobs.empty(); });
            auto job = jobs.front();
            jobs.pop_front();
            guard.unlock();
            job->work();
            guard.lock();
            job->finished = true;
            finished.notify_all();
        }
    }

    static void retire_at_exit();
};

// State of the manager thread's: read and written only there.

/// The process's one camera manager (libcamera allows one): started on first use, kept while
/// cameras come and go (hot-plug), replaced only after a stale camera (see camera_closed).
std::unique_ptr<ManagerBackend> &manager = *new std::unique_ptr<ManagerBackend>;
/// Cameras opened through the manager and open now.
int open_cameras = 0;
/// A camera went away without the manager noticing: the manager still lists it.
bool manager_stale = false;
/// Descriptors of lost cameras' leaked libcamera objects, already replaced by the inert
/// descriptor (RealCamera::let_go_of_devices), to close once no camera manager thread could
/// poll them: when the manager goes.
std::vector<int> &orphaned_descriptors = *new std::vector<int>;

/// The read end of a pipe whose write end stays open: never readable, writable or in error.
int inert_descriptor() {
    static int fd = [] {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) < 0) return -1;
        return ends[0];  // ends[1] stays open for the life of the process, on purpose
    }();
    return fd;
}

/// Closes the orphaned descriptors that still are the inert descriptor (none was closed and
/// its number reused since). Call only with no camera manager running: then nothing polls or
/// uses them (their owners are leaked libcamera objects that never run again).
void close_orphaned_descriptors(std::vector<int> orphans) {
    struct stat inert;
    if (inert_descriptor() < 0 || fstat(inert_descriptor(), &inert) < 0) return;
    for (int fd : orphans) {
        struct stat info;
        if (fstat(fd, &info) == 0 && info.st_dev == inert.st_dev && info.st_ino == inert.st_ino) ::close(fd);
    }
}

/// Stops and destroys the camera manager (on the manager thread), then closes the orphaned
/// descriptors nothing polls any more. Every Camera shared_ptr must be dropped before.
void retire_manager() {
    if (!manager) return;
    manager.reset();  // ~CameraManager stops its thread
    std::vector<int> orphans;
    orphans.swap(orphaned_descriptors);
    close_orphaned_descriptors(std::move(orphans));
}

void ManagerThread::retire_at_exit() {
    // A job still running (an open stuck in a driver) leaves the manager to the exit.
    shared().run_for([] {
        if (open_cameras == 0) retire_manager();
    }, std::chrono::milliseconds(2000));
}

/// Whether libcamera's V4L2 compatibility layer (libcamerify's LD_PRELOAD `v4l2-compat.so`) is
/// loaded: it runs the process's camera manager itself, and a second one aborts the process
/// ("Multiple CameraManager objects are not allowed").
bool compatibility_layer_loaded() {
    return dl_iterate_phdr([](struct dl_phdr_info *info, size_t, void *) -> int {
        return info->dlpi_name && strstr(info->dlpi_name, "v4l2-compat") ? 1 : 0;
    }, nullptr) != 0;
}

/// A camera manager of the kind in use: libcamera's, or the fake system's (installed by a test).
std::unique_ptr<ManagerBackend> make_manager();
bool fake_system_installed();

/// The camera manager, started if it is not running (on the manager thread). -EALREADY under
/// libcamerify.
int started_manager(ManagerBackend **out) {
    if (!manager) {
        if (!fake_system_installed() && compatibility_layer_loaded()) return -EALREADY;
        auto candidate = make_manager();
        int result = candidate->start();
        if (result < 0) return result;
        manager = std::move(candidate);
    }
    *out = manager.get();
    return 0;
}

/// A camera opened through the manager was closed (on the manager thread, after its
/// Camera::release). `stale`: it went away without libcamera noticing, so the manager still
/// lists it; once no camera is open the manager is replaced, once, by a fresh one (started at
/// once, so that hot-plug keeps working while the camera is missing).
///
/// Why: libcamera unregisters a camera whose device goes away only when its pipeline handler
/// asked for hot-unplug with PipelineHandler::hotplugMediaDevice; only the uvcvideo pipeline
/// does (pipeline_handler.cpp and pipeline/*/ in 0.0.3, 0.4 and 0.5 alike), so the same holds
/// for every version and needs no #if. A vimc (or a CSI camera's) device unbound leaves its
/// camera listed, and when the device comes back the manager's hot-plug handler registers it
/// again: CameraManager::Private::addCamera refuses a second camera with the same id fatally
/// ("Trying to register a camera with a duplicated ID", camera_manager.cpp), aborting the
/// process. A fresh manager enumerates only what is there. shutter closes a camera that failed
/// before it looks for it again, so the replacement comes before the device is back (unless it
/// returns while the failed camera is still open, as it could before).
void camera_closed(bool stale) {
    open_cameras--;
    if (stale) manager_stale = true;
    if (open_cameras > 0 || !manager_stale) return;
    manager_stale = false;
    retire_manager();
    {
        std::lock_guard<std::mutex> guard(stats_lock);
        managers_rebuilt++;
    }
    ManagerBackend *fresh;
    started_manager(&fresh);  // when it fails, the next use tries again
}

/// A V4L2 or media device node this process holds open, and what it was when noted.
struct OpenNode {
    int fd;
    dev_t dev;      // the node's file identity (st_dev, st_ino): the descriptor still names it
    ino_t ino;
    dev_t rdev;     // the device number it opens
};

bool is_device_node_path(const std::string &path) {
    return path.rfind("/dev/video", 0) == 0 || path.rfind("/dev/media", 0) == 0 || path.rfind("/dev/v4l-subdev", 0) == 0;
}

bool ends_deleted(const std::string &path) {
    static const std::string suffix = " (deleted)";
    return path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Where /proc/self/fd/N points ("/dev/video3", or "/dev/video3 (deleted)" once removed).
std::string fd_target(int fd) {
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, target, sizeof target - 1);
    return length > 0 ? std::string(target, size_t(length)) : std::string();
}

/// Every V4L2 and media device node this process holds open, removed ones included.
std::vector<std::pair<OpenNode, std::string>> open_device_nodes() {
    std::vector<std::pair<OpenNode, std::string>> nodes;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return nodes;
    while (struct dirent *entry = readdir(dir)) {
        if (entry->d_name[0] == '.') continue;
        int fd = atoi(entry->d_name);
        std::string path = fd_target(fd);
        struct stat info;
        if (!is_device_node_path(path) || fstat(fd, &info) < 0 || !S_ISCHR(info.st_mode)) continue;
        nodes.push_back({ OpenNode{ fd, info.st_dev, info.st_ino, info.st_rdev }, path });
    }
    closedir(dir);
    return nodes;
}

/// Who holds a POSIX lock on the file `fd` opens: the holder's pid, 0 when none does, or a
/// negative errno when the kernel cannot say.
///
/// Asked with F_OFD_GETLK rather than read from /proc/locks, which systemd's ProcSubset=pid
/// hides (the unit sets it). An open file description lock's owner is the open file, a POSIX
/// lock's the process (fs/locks.c, posix_same_owner), so the query conflicts with this
/// process's own POSIX locks too and the kernel reports them, with their pid; F_GETLK would not
/// (a process's POSIX locks never conflict with its own query). The query covers the whole file,
/// as MediaDevice::lock's lockf(F_TLOCK, 0) from offset 0 does.
int lock_holder(int fd) {
    struct flock query;
    memset(&query, 0, sizeof query);
    query.l_type = F_WRLCK;
    query.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &query) < 0) return -errno;
    return query.l_type == F_UNLCK ? 0 : int(query.l_pid);
}

/// Adds to `files` the media device nodes (st_dev, st_ino) this process holds POSIX locks on.
/// 0, or the negative errno of the first node the kernel could not answer for.
int media_nodes_locked_here(std::set<std::pair<dev_t, ino_t>> &files) {
    pid_t self = getpid();
    for (const auto &[node, path] : open_device_nodes()) {
        if (path.rfind("/dev/media", 0) != 0 || ends_deleted(path)) continue;
        int holder = lock_holder(node.fd);
        if (holder < 0) return holder;
        if (holder == self) files.insert({ node.dev, node.ino });
    }
    return 0;
}

/// The device numbers of the nodes in media device `fd`'s graph (its video and subdevice
/// interfaces). The corresponding ioctl is MEDIA_IOC_G_TOPOLOGY.
void media_graph_nodes(int fd, std::set<dev_t> &out) {
    struct media_v2_topology topology;
    memset(&topology, 0, sizeof topology);
    if (ioctl(fd, MEDIA_IOC_G_TOPOLOGY, &topology) < 0 || topology.num_interfaces == 0) return;
    std::vector<struct media_v2_interface> interfaces(topology.num_interfaces + 8);
    memset(&topology, 0, sizeof topology);
    topology.num_interfaces = uint32_t(interfaces.size());
    topology.ptr_interfaces = uint64_t(uintptr_t(interfaces.data()));
    if (ioctl(fd, MEDIA_IOC_G_TOPOLOGY, &topology) < 0) return;
    for (uint32_t index = 0; index < topology.num_interfaces && index < interfaces.size(); index++)
        out.insert(makedev(interfaces[index].devnode.major, interfaces[index].devnode.minor));
}

/// Fills `camera` with the nodes the camera just acquired uses: the media devices its pipeline
/// locked on Camera::acquire (MediaDevice::lock takes a POSIX lock on each: the files locked now
/// and not `before`), and every node in their graphs that the process holds open (libcamera
/// opened them when the camera manager enumerated the cameras, so the descriptors cannot tell
/// cameras apart by when they appeared; the locks can). 0, or a negative errno when the kernel
/// could not say who holds the locks (`camera` stays empty).
int acquired_camera_nodes(const std::set<std::pair<dev_t, ino_t>> &before, std::vector<OpenNode> &camera) {
    std::set<std::pair<dev_t, ino_t>> after;
    if (int result = media_nodes_locked_here(after); result < 0) return result;
    auto nodes = open_device_nodes();
    std::set<dev_t> devices;
    for (const auto &[node, path] : nodes) {
        std::pair<dev_t, ino_t> identity{ node.dev, node.ino };
        if (path.rfind("/dev/media", 0) != 0 || !after.count(identity) || before.count(identity)) continue;
        devices.insert(node.rdev);
        media_graph_nodes(node.fd, devices);
    }
    for (const auto &[node, path] : nodes)
        if (devices.count(node.rdev) && !ends_deleted(path)) camera.push_back(node);
    return 0;
}

/// Whether one of the camera's device nodes was removed: its /proc/self/fd link reads
/// "/dev/video3 (deleted)" once the driver unregistered it. Without the camera's nodes (see
/// acquired_camera_nodes), any removed V4L2 or media node counts: a missed unplug would abort.
///
/// libcamera 0.0.3 does not always report such a camera as disconnected (vimc unbound: no
/// `disconnected` signal), and stopping it then aborts the process: the vimc pipeline's stop
/// cannot take its buffers back from the gone device and asserts ("data->queuedRequests_.empty()
/// failed in stop()"). So the backend looks before it stops a camera. Only its own nodes count,
/// so another camera (or a V4L2 camera in the same process) going away does not stop this one.
bool device_node_removed(const std::vector<OpenNode> &camera) {
    if (camera.empty()) {
        for (const auto &[node, path] : open_device_nodes())
            if (ends_deleted(path)) return true;
        return false;
    }
    for (const OpenNode &node : camera) {
        struct stat info;
        // The same descriptor still names the same node (not closed and reused since).
        if (fstat(node.fd, &info) < 0 || info.st_dev != node.dev || info.st_ino != node.ino) continue;
        if (ends_deleted(fd_target(node.fd))) return true;
    }
    return false;
}

std::string model_of(const std::shared_ptr<Camera> &camera) {
    // A std::string before 0.6, a std::string_view into the property list from 0.6 on.
    auto model = camera->properties().get(properties::Model);
    return model ? std::string(*model) : std::string();
}

/// The memory of one configuration's buffers, shared by the camera and every reference Swift
/// retains (shutter_lc_buffers): unmapped, or freed, when the last of them lets go.
///
/// Why not keep the camera open until then: a frame lent to a photo may still be encoding when
/// the camera closes (a reopen after an unplug, or shutdown), and the camera must close at once:
/// a camera that vanished unnoticed holds up the fresh camera manager its reopen needs
/// (camera_closed). The mappings do not need the camera: a mapping of a dmabuf keeps its memory
/// alive after the allocator closed the descriptor and the device let the buffer go.
struct BufferMemory {
    struct Planes {
        const uint8_t *planes[3] = {};
        uint32_t bytes[3] = {};
        uint32_t count = 0;
        const uint8_t *vf = nullptr;
        uint32_t vf_bytes = 0;
    };
    /// Per request: the still stream's planes and the viewfinder's first plane.
    std::vector<Planes> requests;
    /// The real camera's mappings (each dmabuf once), unmapped with the last reference.
    std::vector<std::pair<void *, size_t>> maps;
    /// The fake camera's memory.
    std::vector<std::vector<uint8_t>> owned;

    ~BufferMemory() {
        for (auto &[address, length] : maps) munmap(address, length);
        // The fake poisons what it frees, so that a test reading a frame after this sees it.
        for (auto &block : owned) std::fill(block.begin(), block.end(), uint8_t(0xdd));
    }
};

}  // namespace

struct shutter_lc_buffers {
    std::shared_ptr<BufferMemory> memory;
};

/// What both the real and the fake camera do; the C functions dispatch through it.
struct shutter_lc_camera {
    std::string id, model;
    int event_fd = -1;
    /// The current configuration's buffers; NULL before configure.
    std::shared_ptr<BufferMemory> memory;
    /// FrameDurationLimits (both limits) applied at each start, in microseconds; 0: the camera's default.
    int64_t frame_duration_us = 0;
    /// The crop the first frame since configure reported (its ScalerCrop metadata), while
    /// shutter had set none: the pipeline's own crop for the configured streams. Null until then.
    Rectangle reported_crop;
    /// Whether shutter set a ScalerCrop since configure: frames may report it from then on.
    bool crop_set = false;
    /// Per request: the distinct dmabuf descriptors of its planes, the still's and the
    /// viewfinder's, synchronised for CPU reads (DMA_BUF_IOCTL_SYNC) while shutter holds the
    /// request: the live view reads the viewfinder's from the same uncached ISP output.
    std::vector<std::vector<int>> request_fds;

    shutter_lc_camera() { event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
    virtual ~shutter_lc_camera() {
        if (event_fd >= 0) ::close(event_fd);
    }

    void signal() {
        uint64_t one = 1;
        while (::write(event_fd, &one, sizeof one) < 0 && errno == EINTR) {}
    }
    void drain() {
        uint64_t count;
        while (::read(event_fd, &count, sizeof count) < 0 && errno == EINTR) {}
    }

    virtual int formats(shutter_lc_format *formats, int capacity) = 0;
    virtual int sizes(uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity) = 0;
    virtual int control_list(shutter_lc_control_info *controls, int capacity) = 0;
    /// What libcamera states of ScalerCrop's limits: the control's maximum and the
    /// ScalerCropMaximum property (null rectangles when not stated); false without ScalerCrop.
    virtual bool scaler_crop_limits(Rectangle &control_maximum, Rectangle &property) = 0;
    virtual int configure(shutter_lc_stream_config *still, shutter_lc_stream_config *viewfinder, int buffer_count) = 0;
    virtual int start() = 0;
    virtual void stop() = 0;
    virtual int next(shutter_lc_completed *out) = 0;
    virtual int release(int request) = 0;
    virtual int set(int control, double value) = 0;
    virtual int set_named(const char *name, double value) = 0;
    virtual int set_crop(const Rectangle &crop) = 0;
    /// FrameDurationLimits' range in microseconds; false when the camera has no such control.
    virtual bool frame_duration_range(int64_t &minimum, int64_t &maximum) = 0;
    /// How many device nodes the unplug check knows as the camera's own, or the negative errno
    /// that kept it from telling them (see shutter_lc_device_nodes).
    virtual int own_device_nodes() { return 0; }
    /// ScalerCrop's default as the control states it (ControlInfo::def); null when not stated.
    virtual Rectangle scaler_crop_control_default() = 0;
    /// One DMA_BUF_IOCTL_SYNC with `flags` on dmabuf `fd` (the fake counts them instead).
    virtual void sync_dmabuf(int fd, uint64_t flags) = 0;

    /// Brackets CPU reads of a request's mapped planes (DMA_BUF_IOCTL_SYNC): `start` before
    /// shutter reads a completed request, its end when the request goes back to libcamera, so
    /// a cached mapping (the Pi's ISP buffers are not coherent with the CPU) shows the new frame.
    void sync_for_cpu(size_t cookie, bool start) {
        if (cookie >= request_fds.size()) return;
        uint64_t flags = (start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) | DMA_BUF_SYNC_READ;
        for (int fd : request_fds[cookie]) sync_dmabuf(fd, flags);
    }

    /// Notes the ScalerCrop a completed request's metadata reported.
    void crop_reported(const Rectangle &crop) {
        if (!crop_set && reported_crop.isNull()) reported_crop = crop;
    }

    /// The crop the pipeline takes unzoomed: ScalerCrop's default as the control states it (the
    /// Raspberry Pi pipeline from 0.1 on: PipelineHandlerBase::configure makes it the first
    /// stream's crop, fitted to its aspect), else the crop the first frame reported (0.0.3's
    /// raspberrypi.cpp states no default but reports its crop in every request's metadata, which
    /// is where picamera2's zoom example reads it). Unlike ScalerCropMaximum, which is the sensor
    /// mode's area, it has the output's aspect: a crop zoomed from it keeps the picture's shape.
    int scaler_crop_default(Rectangle &out) {
        Rectangle control, property;
        if (!scaler_crop_limits(control, property)) return -ENOTSUP;
        Rectangle stated = scaler_crop_control_default();
        // Before configure the Raspberry Pi IPA states a null default (ipa_base.cpp's ipaControls).
        if (!stated.isNull() && stated.width < 65535 && stated.height < 65535) {
            out = stated;
            return 0;
        }
        if (!reported_crop.isNull()) {
            out = reported_crop;
            return 0;
        }
        return -EAGAIN;
    }

    /// The largest ScalerCrop, from what libcamera states: the property first, as rpicam-apps
    /// reads it (PipelineHandlerBase::configure sets it to the mode's analogue crop and leaves it
    /// empty before), else the control's maximum unless it is the Raspberry Pi IPA's placeholder
    /// (ipa_base.cpp: Rectangle(65535, 65535, 65535, 65535), until configure).
    int scaler_crop_maximum(Rectangle &out) {
        Rectangle control, property;
        if (!scaler_crop_limits(control, property)) return -ENOTSUP;
        if (!property.isNull()) {
            out = property;
            return 0;
        }
        if (!control.isNull() && control.width < 65535 && control.height < 65535) {
            out = control;
            return 0;
        }
        return -EAGAIN;
    }

    int set_frame_rate(double fps, int64_t *duration_ns) {
        if (!(fps > 0)) return -EINVAL;
        int64_t minimum = 0, maximum = 0;
        if (!frame_duration_range(minimum, maximum)) return -ENOTSUP;
        int64_t wanted = int64_t(1e6 / fps + 0.5);
        if (minimum > 0) wanted = std::max(wanted, minimum);
        if (maximum > 0 && maximum >= minimum) wanted = std::min(wanted, maximum);
        frame_duration_us = wanted;
        if (duration_ns) *duration_ns = wanted * 1000;
        return 0;
    }
};

namespace {

/// A camera through libcamera.
struct RealCamera final : shutter_lc_camera {
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    std::unique_ptr<FrameBufferAllocator> allocator;
    Stream *still = nullptr, *viewfinder = nullptr;
    std::vector<std::unique_ptr<Request>> requests;
    /// Requests shutter holds (taken by next, not yet released): never queued, not even by start.
    std::vector<bool> held;
    /// The device nodes this camera uses (see acquired_camera_nodes); empty when unknown.
    std::vector<OpenNode> nodes;
    /// Why `nodes` is unknown: the negative errno of the lock query, or 0.
    int nodes_error = 0;
    std::mutex lock;                   // guards done, pending, disconnected, running, completed_ns, af_triggers_set, exposure_value_sets
    RequestFIFO<Request *> done;
    ControlList pending;
    bool running = false, disconnected = false;
    /// disconnected was set by shutter (device_node_removed), not by libcamera: the manager
    /// still lists the camera.
    bool vanished_unnoticed = false;
    /// Per request: CLOCK_MONOTONIC when libcamera completed it (stamped in the completion
    /// handler, not when the event loop gets to it).
    std::vector<int64_t> completed_ns;
    /// Per request: how many AfTrigger starts had been set when it was queued (see shutter_lc_completed).
    std::vector<uint32_t> request_af_triggers;
    /// AfTrigger starts set so far.
    uint32_t af_triggers_set = 0;
    /// Per request: how many ExposureValue changes had been set when it was queued.
    std::vector<uint32_t> request_exposure_value_sets;
    /// ExposureValue changes set so far.
    uint32_t exposure_value_sets = 0;

    RealCamera(std::shared_ptr<Camera> cam, std::vector<OpenNode> cameraNodes, int nodesError)
        : camera(std::move(cam)), nodes(std::move(cameraNodes)), nodes_error(nodesError), pending(controls::controls) {
        open_cameras++;  // made on the manager thread (LibcameraManager::open)
        id = camera->id();
        model = model_of(camera);
        camera->requestCompleted.connect(this, &RealCamera::completed);
        camera->disconnected.connect(this, &RealCamera::lost);
    }

    /// What a camera whose device vanished under it leaves behind, never freed: libcamera's
    /// pipeline may still point at its requests and buffers (it could not stop them), and
    /// freeing them or releasing the camera could touch the gone device. A few kilobytes of
    /// objects per unplug, against a crash; the kernel's side goes (see let_go_of_devices).
    struct Remains {
        std::shared_ptr<Camera> camera;
        std::unique_ptr<CameraConfiguration> config;
        std::unique_ptr<FrameBufferAllocator> allocator;
        std::vector<std::unique_ptr<Request>> requests;
    };

    ~RealCamera() override {
        stop();
        camera->requestCompleted.disconnect(this, &RealCamera::completed);
        camera->disconnected.disconnect(this, &RealCamera::lost);
        unmap();
        bool gone, stale;
        {
            std::lock_guard<std::mutex> guard(lock);
            gone = disconnected;
            // Gone without libcamera's `disconnected` (seen by stop, or now): still listed.
            stale = vanished_unnoticed || (!disconnected && device_node_removed(nodes));
        }
        std::vector<int> orphans;
        if (gone) {
            orphans = let_go_of_devices();
            new Remains{ std::move(camera), std::move(config), std::move(allocator), std::move(requests) };  // leaked on purpose
        } else {
            requests.clear();
            allocator.reset();
            config.reset();
        }
        ManagerThread::shared().run([&] {
            note_manager_call();
            if (camera) {
                camera->release();
                camera.reset();
            }
            orphaned_descriptors.insert(orphaned_descriptors.end(), orphans.begin(), orphans.end());
            camera_closed(stale);
        });
    }

    /// For a camera whose device vanished: closes the kernel objects its leaked remains hold,
    /// without freeing the objects. Each of the camera's device nodes and each of its buffers'
    /// dmabuf descriptors is replaced (dup2) by a descriptor that is never ready and answers
    /// every ioctl with ENOTTY. Closing the video node ends the kernel's stream on the gone
    /// device and lets go of its buffers; closing the dmabufs frees their memory (mappings of
    /// frames still lent keep theirs until dropped). While the camera manager's thread may
    /// still poll them, the numbers stay taken (by the inert descriptor, which never wakes
    /// it), so no new file can be mistaken for the gone device; once the manager is gone they
    /// are closed too (retire_manager). Returns them, for the manager thread to keep until then.
    std::vector<int> let_go_of_devices() {
        std::vector<int> orphans;
        int inert = inert_descriptor();
        if (inert < 0) return orphans;
        std::set<int> descriptors;
        for (const OpenNode &node : nodes) {
            struct stat info;
            if (fstat(node.fd, &info) == 0 && info.st_dev == node.dev && info.st_ino == node.ino) descriptors.insert(node.fd);
        }
        if (allocator) {
            for (Stream *stream : { still, viewfinder }) {
                if (!stream) continue;
                for (const auto &buffer : allocator->buffers(stream))
                    for (const FrameBuffer::Plane &plane : buffer->planes())
                        if (plane.fd.get() >= 0) descriptors.insert(plane.fd.get());
            }
        }
        for (int fd : descriptors)
            if (dup3(inert, fd, O_CLOEXEC) == fd) orphans.push_back(fd);
        return orphans;
    }

    // libcamera's thread: stamp, queue and wake the event loop, nothing else.
    void completed(Request *request) {
        int64_t now = monotonic_ns();
        {
            std::lock_guard<std::mutex> guard(lock);
            if (!running) return;
            if (request->cookie() < completed_ns.size()) completed_ns[request->cookie()] = now;
            done.push_back(request);
        }
        signal();
    }

    int own_device_nodes() override { return nodes_error < 0 ? nodes_error : int(nodes.size()); }

    void sync_dmabuf(int fd, uint64_t flags) override {
        struct dma_buf_sync sync;
        sync.flags = flags;
        while (ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) < 0 && errno == EINTR) {}
    }
    void lost() {
        {
            std::lock_guard<std::mutex> guard(lock);
            disconnected = true;
        }
        signal();
    }

    int formats(shutter_lc_format *formats, int capacity) override {
        auto generated = camera->generateConfiguration(std::vector<StreamRole>{ StreamRole::StillCapture });
        if (!generated || generated->empty()) return -ENOTSUP;
        auto pixelFormats = generated->at(0).formats().pixelformats();
        int count = 0;
        for (const PixelFormat &format : pixelFormats) {
            if (count < capacity) {
                formats[count].fourcc = format.fourcc();
                copy_string(formats[count].name, sizeof formats[count].name, format.toString());
                formats[count].size_count = uint32_t(generated->at(0).formats().sizes(format).size());
            }
            count++;
        }
        return count;
    }

    int sizes(uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity) override {
        auto generated = camera->generateConfiguration(std::vector<StreamRole>{ StreamRole::StillCapture });
        if (!generated || generated->empty()) return -ENOTSUP;
        auto list = generated->at(0).formats().sizes(PixelFormat(fourcc));
        std::sort(list.begin(), list.end(), [](const Size &a, const Size &b) { return a.width * a.height > b.width * b.height; });
        int count = 0;
        for (const Size &size : list) {
            if (count < capacity) {
                widths[count] = size.width;
                heights[count] = size.height;
            }
            count++;
        }
        return count;
    }

    int control_list(shutter_lc_control_info *out, int capacity) override {
        int count = 0;
        for (const auto &[controlId, info] : camera->controls()) {
            if (count < capacity) {
                shutter_lc_control_info &entry = out[count];
                entry.libcamera_id = controlId->id();
                entry.control = stable_control(controlId);
                entry.type = value_type(controlId->type());
                copy_string(entry.name, sizeof entry.name, controlId->name());
                entry.minimum = scalar(info.min());
                entry.maximum = scalar(info.max());
                entry.default_value = scalar(info.def());
            }
            count++;
        }
        return count;
    }

    bool scaler_crop_limits(Rectangle &control_maximum, Rectangle &property) override {
        auto found = camera->controls().find(&controls::ScalerCrop);
        if (found == camera->controls().end()) return false;
        const ControlValue &max = found->second.max();
        control_maximum = !max.isNone() && max.type() == ControlTypeRectangle ? max.get<Rectangle>() : Rectangle();
        property = camera->properties().get(properties::ScalerCropMaximum).value_or(Rectangle());
        return true;
    }

    static void fill(shutter_lc_stream_config *target, const StreamConfiguration &granted, bool adjusted) {
        target->fourcc = granted.pixelFormat.fourcc();
        target->width = granted.size.width;
        target->height = granted.size.height;
        target->stride = granted.stride;
        target->frame_size = granted.frameSize;
        target->adjusted = adjusted;
    }

    int configure(shutter_lc_stream_config *stillConfig, shutter_lc_stream_config *vfConfig, int buffer_count) override {
        if (running) return -EBUSY;
        unmap();
        held.clear();
        requests.clear();
        allocator.reset();
        std::vector<StreamRole> roles{ StreamRole::StillCapture };
        if (vfConfig) roles.push_back(StreamRole::Viewfinder);
        config = camera->generateConfiguration(roles);
        // A pipeline with one stream (vimc, uvcvideo) returns no configuration, or one with a
        // single stream, for two roles.
        if (vfConfig && (!config || config->size() < 2)) {
            // One stream only (vimc, uvcvideo): no viewfinder.
            vfConfig->width = vfConfig->height = vfConfig->fourcc = 0;
            vfConfig = nullptr;
            config = camera->generateConfiguration(std::vector<StreamRole>{ StreamRole::StillCapture });
        }
        if (!config || config->empty()) return -ENOTSUP;
        auto ask = [&](StreamConfiguration &stream, const shutter_lc_stream_config *wanted) {
            if (wanted->fourcc) stream.pixelFormat = PixelFormat(wanted->fourcc);
            if (wanted->width && wanted->height) stream.size = Size(wanted->width, wanted->height);
            stream.bufferCount = unsigned(std::max(buffer_count, 2));
        };
        ask(config->at(0), stillConfig);
        if (vfConfig) ask(config->at(1), vfConfig);
        CameraConfiguration::Status status = config->validate();
        if (status == CameraConfiguration::Invalid) return -EINVAL;
        bool adjusted = status == CameraConfiguration::Adjusted;
        int result = camera->configure(config.get());
        if (result < 0) return result;
        still = config->at(0).stream();
        fill(stillConfig, config->at(0), adjusted);
        if (vfConfig) {
            viewfinder = config->at(1).stream();
            fill(vfConfig, config->at(1), adjusted);
        } else {
            viewfinder = nullptr;
        }
        allocator = std::make_unique<FrameBufferAllocator>(camera);
        for (StreamConfiguration &stream : *config) {
            if (allocator->allocate(stream.stream()) < 0) return -ENOMEM;
        }
        const auto &stillBuffers = allocator->buffers(still);
        size_t count = stillBuffers.size();
        if (viewfinder) count = std::min(count, allocator->buffers(viewfinder).size());
        if (count < 2) return -ENOBUFS;
        auto mapped = std::make_shared<BufferMemory>();
        for (size_t index = 0; index < count; index++) {
            std::unique_ptr<Request> request = camera->createRequest(index);
            if (!request) return -ENOMEM;
            if (request->addBuffer(still, stillBuffers[index].get()) < 0) return -EINVAL;
            if (viewfinder && request->addBuffer(viewfinder, allocator->buffers(viewfinder)[index].get()) < 0) return -EINVAL;
            BufferMemory::Planes planes;
            if (!map(stillBuffers[index].get(), *mapped, planes, false)) return -errno;
            if (viewfinder && !map(allocator->buffers(viewfinder)[index].get(), *mapped, planes, true)) return -errno;
            mapped->requests.push_back(planes);
            requests.push_back(std::move(request));
        }
        memory = std::move(mapped);
        held.assign(requests.size(), false);
        completed_ns.assign(requests.size(), 0);
        request_af_triggers.assign(requests.size(), 0);
        request_exposure_value_sets.assign(requests.size(), 0);
        request_fds.assign(requests.size(), {});
        for (size_t index = 0; index < count; index++) {
            std::set<int> fds;
            for (const FrameBuffer::Plane &plane : stillBuffers[index]->planes()) fds.insert(plane.fd.get());
            if (viewfinder)
                for (const FrameBuffer::Plane &plane : allocator->buffers(viewfinder)[index]->planes()) fds.insert(plane.fd.get());
            request_fds[index].assign(fds.begin(), fds.end());
        }
        return 0;
    }

    /// Maps each dmabuf once (planes of one buffer usually share it) and records plane addresses.
    bool map(FrameBuffer *buffer, BufferMemory &memory, BufferMemory::Planes &mapping, bool isViewfinder) {
        std::map<int, std::pair<uint8_t *, size_t>> byFd;
        for (const FrameBuffer::Plane &plane : buffer->planes()) {
            size_t end = size_t(plane.offset) + plane.length;
            auto &entry = byFd[plane.fd.get()];
            entry.second = std::max(entry.second, end);
        }
        for (auto &[fd, entry] : byFd) {
            void *address = mmap(nullptr, entry.second, PROT_READ, MAP_SHARED, fd, 0);
            if (address == MAP_FAILED) return false;
            entry.first = static_cast<uint8_t *>(address);
            memory.maps.emplace_back(address, entry.second);
        }
        uint32_t index = 0;
        for (const FrameBuffer::Plane &plane : buffer->planes()) {
            const uint8_t *address = byFd[plane.fd.get()].first + plane.offset;
            if (isViewfinder) {
                // The live view reads the whole viewfinder frame from here: its planes when they
                // follow one another in one buffer (the Raspberry Pi's YUV420), else the first.
                mapping.vf = address;
                mapping.vf_bytes = plane.length;
                const auto &planes = buffer->planes();
                for (size_t next = 1; next < planes.size(); next++) {
                    const FrameBuffer::Plane &before = planes[next - 1], &after = planes[next];
                    if (after.fd.get() != plane.fd.get() || after.offset != before.offset + before.length) break;
                    mapping.vf_bytes += after.length;
                }
                break;
            }
            if (index < 3) {
                mapping.planes[index] = address;
                mapping.bytes[index] = plane.length;
                index++;
            }
        }
        if (!isViewfinder) mapping.count = index;
        return true;
    }

    /// Lets go of the camera's reference to the mappings (frames still lent keep them).
    void unmap() { memory.reset(); }

    Rectangle scaler_crop_control_default() override {
        auto found = camera->controls().find(&controls::ScalerCrop);
        if (found == camera->controls().end()) return Rectangle();
        const ControlValue &def = found->second.def();
        return !def.isNone() && !def.isArray() && def.type() == ControlTypeRectangle ? def.get<Rectangle>() : Rectangle();
    }

    bool frame_duration_range(int64_t &minimum, int64_t &maximum) override {
        auto found = camera->controls().find(&controls::FrameDurationLimits);
        if (found == camera->controls().end()) return false;
        // Pipelines state the limits as int64 scalars (µs); anything else leaves them open.
        const ControlValue &low = found->second.min(), &high = found->second.max();
        minimum = !low.isNone() && !low.isArray() && low.type() == ControlTypeInteger64 ? low.get<int64_t>() : 0;
        maximum = !high.isNone() && !high.isArray() && high.type() == ControlTypeInteger64 ? high.get<int64_t>() : 0;
        return true;
    }

    int start() override {
        if (requests.empty()) return -EINVAL;
        if (running) return 0;
        {
            std::lock_guard<std::mutex> guard(lock);
            if (disconnected) return -ENODEV;
        }
        // Controls set while stopped (zoom, exposure, an autofocus trigger) go to Camera::start()
        // itself, as rpicam-apps passes its controls: the pipeline applies them from the first
        // frame. On a request they would wait behind every request queued below.
        ControlList startControls(controls::controls);
        uint32_t triggers, evSets;
        {
            std::lock_guard<std::mutex> guard(lock);
            for (const auto &[key, value] : pending) startControls.set(key, value);
            pending.clear();
            triggers = af_triggers_set;
            evSets = exposure_value_sets;
        }
        if (frame_duration_us > 0)
            startControls.set(controls::FrameDurationLimits, { frame_duration_us, frame_duration_us });
        int result = camera->start(startControls.empty() ? nullptr : &startControls);
        if (result < 0) return result;
        {
            std::lock_guard<std::mutex> guard(lock);
            running = true;
        }
        for (size_t index = 0; index < requests.size(); index++) {
            if (held[index]) continue;  // queued when shutter releases it
            Request *request = requests[index].get();
            request->reuse(Request::ReuseBuffers);
            request_af_triggers[index] = triggers;
            request_exposure_value_sets[index] = evSets;
            result = camera->queueRequest(request);
            if (result < 0) {
                stop();
                return result;
            }
        }
        return 0;
    }

    void stop() override {
        bool wasRunning, gone;
        {
            std::lock_guard<std::mutex> guard(lock);
            wasRunning = running;
            running = false;
            done.clear();
            // A device that went away without libcamera noticing: Camera::stop would abort
            // the process (see device_node_removed); the camera is only closed from here on.
            if (wasRunning && !disconnected && device_node_removed(nodes)) disconnected = vanished_unnoticed = true;
            gone = disconnected;
        }
        if (wasRunning && !gone) camera->stop();
        drain();
    }

    int next(shutter_lc_completed *out) override {
        Request *request = nullptr;
        {
            std::lock_guard<std::mutex> guard(lock);
            if (disconnected) return -ENODEV;
            if (done.empty()) {
                drain();
                return 0;
            }
            request = done.front();
            done.pop_front();
        }
        memset(out, 0, sizeof *out);
        out->request = int(request->cookie());
        held[request->cookie()] = true;
        {
            std::lock_guard<std::mutex> guard(lock);
            out->completed_at = completed_ns[request->cookie()];
        }
        out->af_triggers = request_af_triggers[request->cookie()];
        out->exposure_value_sets = request_exposure_value_sets[request->cookie()];
        sync_for_cpu(request->cookie(), true);
        FrameBuffer *buffer = request->findBuffer(still);
        // Only FrameSuccess is a picture: from 0.5.1 the Raspberry Pi pipeline completes the
        // frames it used to drop while its IPA converges after a start as FrameStartup, and the
        // sensor's first invalid ones as FrameError (pipeline_base.cpp, handleStreamBuffer);
        // "applications are recommended to not consume these frames" (framebuffer.cpp).
        out->ok = request->status() == Request::RequestComplete && buffer
            && buffer->metadata().status == FrameMetadata::FrameSuccess;
        if (buffer) {
            out->sequence = buffer->metadata().sequence;
            out->buffer_timestamp = int64_t(buffer->metadata().timestamp);
        }
        const ControlList &metadata = request->metadata();
        out->sensor_timestamp = metadata.get(controls::SensorTimestamp).value_or(0);
        auto afState = metadata.get(controls::AfState);
        out->af_state = afState ? *afState : -1;
        out->lens_position = metadata.get(controls::LensPosition).value_or(-1.0f);
        out->exposure_time_us = metadata.get(controls::ExposureTime).value_or(0);
        out->analogue_gain = metadata.get(controls::AnalogueGain).value_or(0.0f);
        out->digital_gain = metadata.get(controls::DigitalGain).value_or(0.0f);
        out->colour_temperature = metadata.get(controls::ColourTemperature).value_or(0);
        if (auto crop = metadata.get(controls::ScalerCrop)) crop_reported(*crop);
        const BufferMemory::Planes &mapping = memory->requests[request->cookie()];
        out->plane_count = mapping.count;
        for (uint32_t index = 0; index < mapping.count; index++) {
            out->planes[index] = mapping.planes[index];
            out->plane_bytes[index] = mapping.bytes[index];
            // A plane may be filled less than its length (compressed formats); trust bytesused.
            if (buffer && index < buffer->metadata().planes().size()) {
                uint32_t used = buffer->metadata().planes()[index].bytesused;
                if (used > 0 && used < out->plane_bytes[index]) out->plane_bytes[index] = used;
            }
        }
        out->viewfinder = mapping.vf;
        out->viewfinder_bytes = mapping.vf_bytes;
        return 1;
    }

    int release(int cookie) override {
        if (cookie < 0 || size_t(cookie) >= requests.size()) return -EINVAL;
        if (!held[cookie]) return 0;  // queued already, or by the next start
        held[cookie] = false;
        sync_for_cpu(size_t(cookie), false);
        Request *request = requests[cookie].get();
        {
            std::lock_guard<std::mutex> guard(lock);
            if (!running) return 0;  // queued again by the next start
        }
        request->reuse(Request::ReuseBuffers);
        {
            std::lock_guard<std::mutex> guard(lock);
            for (const auto &[key, value] : pending) request->controls().set(key, value);
            pending.clear();
            request_af_triggers[cookie] = af_triggers_set;
            request_exposure_value_sets[cookie] = exposure_value_sets;
        }
        return camera->queueRequest(request);
    }

    int set(int control, double value) override {
        const ControlId *id = libcamera_control(control);
        if (!id || camera->controls().find(id) == camera->controls().end()) return -ENOTSUP;
        ControlValue converted;
        if (!make_value(id->type(), value, converted)) return -EINVAL;
        std::lock_guard<std::mutex> guard(lock);
        pending.set(id->id(), converted);
        if (control == SHUTTER_LC_CONTROL_AF_TRIGGER && int(value) == 0) af_triggers_set++;
        if (control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE) exposure_value_sets++;
        return 0;
    }

    int set_named(const char *name, double value) override {
        for (const auto &[controlId, info] : camera->controls()) {
            if (strcasecmp(controlId->name().c_str(), name) != 0) continue;
            ControlValue converted;
            if (!make_value(controlId->type(), value, converted)) return -EINVAL;
            std::lock_guard<std::mutex> guard(lock);
            pending.set(controlId->id(), converted);
            return 0;
        }
        return -ENOTSUP;
    }

    int set_crop(const Rectangle &crop) override {
        if (camera->controls().find(&controls::ScalerCrop) == camera->controls().end()) return -ENOTSUP;
        std::lock_guard<std::mutex> guard(lock);
        pending.set(controls::ScalerCrop, crop);
        return 0;
    }
};

/// The sizes libcamera offers for a format whose sizes are a range (StreamFormats::sizes in
/// src/libcamera/stream.cpp: the entries of its fixed list of common sizes that lie within the
/// range; the list's larger entries). A Raspberry Pi ISP output is such a range, up to the
/// sensor's size: Camera Module 3's 4608x2592 is not on the list, so the largest size listed
/// is 3840x2400.
const Size listed_sizes[] = {
    Size(640, 480), Size(800, 600), Size(1024, 768), Size(1280, 720), Size(1280, 960), Size(1600, 1200),
    Size(1920, 1080), Size(1920, 1200), Size(2048, 1536), Size(2560, 1440), Size(2560, 1600),
    Size(3200, 2400), Size(3840, 2160), Size(3840, 2400), Size(4096, 2160), Size(5120, 2880), Size(7680, 4320),
};

/// The Raspberry Pi AGC as an ExposureValue change meets it, in a scene whose light does not change
/// (src/ipa/rpi/controller/rpi/agc_channel.cpp and ipa_base.cpp at v0.7.1+rpt20260429):
/// - ExposureValue is a multiplier of 2^EV on the AGC's target (IpaBase::applyControls:
///   `agc->setEv(0, pow(2.0, ExposureValue))`), so the target total exposure is the converged
///   one at EV 0 times 2^EV.
/// - Every frame, AgcChannel::filterExposure moves the total exposure a fraction `speed` of the
///   way to the target: `speed` 0.2 (AgcConfig::read's default, which the PiSP tunings of imx708
///   and imx477 keep; vc4's imx708.json sets 0.15), its square root once within 0.8...1.2 of the
///   target, and no move within the `stable_region` of 2%. In the first `startup_frames` (default
///   10) after a start it adapts at once (speed 1, no stable region).
/// - AgcChannel::divideUpExposure splits the total into exposure time and analogue gain along the
///   exposure mode's stages ("normal" of the PiSP imx708.json: shutter 100, 10000, 30000, 50000,
///   66666 µs, gain 1.0, 1.5, 2.0, 4.0, 16.0), the analogue gain at most the sensor's 16, and the
///   rest as digital gain, at most `max_digital_gain` 4.0.
/// Until the first change the frames report the script's exposure time and an analogue gain of 2,
/// the AGC's converged state for the scene (a total the normal mode would divide otherwise).
struct FakeAgc {
    static constexpr double speed = 0.2, stableRegion = 0.02, maxAnalogueGain = 16.0, maxDigitalGain = 4.0;
    static constexpr unsigned startupFrames = 10;
    double base = 0;        // the converged total exposure at EV 0, µs × gain
    double target = 0, filtered = 0;
    unsigned frames = 0;    // frames since the start
    bool divided = false;   // the total has moved since the script's state: report the division
    int32_t exposure_us = 0;
    float analogue = 2.0f, digital = 1.0f;

    void reset(int32_t exposureTime) {
        exposure_us = exposureTime;
        base = target = filtered = double(exposureTime) * 2.0;
    }
    void set_ev(double ev) { target = base * std::pow(2.0, ev); }

    /// One frame's AgcChannel::process, as far as filterExposure and divideUpExposure go.
    void frame() {
        frames++;
        double rate = speed, stable = stableRegion;
        if (frames <= startupFrames) {
            rate = 1.0;
            stable = 0.0;
        }
        if (filtered * (1.0 - stable) < target && filtered * (1.0 + stable) > target) return;
        if (filtered < 1.2 * target && filtered > 0.8 * target) rate = std::sqrt(rate);
        double moved = rate * target + filtered * (1.0 - rate);
        if (moved == filtered) return;  // at the target already (a start-up frame)
        filtered = moved;
        divided = true;
        divide_up();
    }

    void divide_up() {
        static const double shutter[] = { 100, 10000, 30000, 50000, 66666 }, gain[] = { 1.0, 1.5, 2.0, 4.0, 16.0 };
        double exposure = shutter[0], g = gain[0];
        if (exposure * g < filtered) {
            for (size_t stage = 1; stage < sizeof shutter / sizeof shutter[0]; stage++) {
                if (shutter[stage] * g >= filtered) {
                    exposure = filtered / g;
                    break;
                }
                exposure = shutter[stage];
                if (gain[stage] * exposure >= filtered) {
                    g = filtered / exposure;
                    break;
                }
                g = gain[stage];
            }
        }
        double analogueGain = std::min(g, maxAnalogueGain);
        exposure_us = int32_t(exposure + 0.5);
        analogue = float(analogueGain);
        digital = float(std::min(filtered / (analogueGain * exposure), maxDigitalGain));
    }
};

/// The fake: one format, scripted autofocus, frames delivered by the test.
///
/// With `raspberrypi`, it behaves as libcamera's Raspberry Pi pipeline handler and IPA do
/// (raspberrypi/libcamera, src/libcamera/pipeline/rpi/common and src/ipa/rpi/common):
/// - Until configure, the controls have the IPA's placeholder ranges (ipa_base.cpp's ipaControls
///   and ipaAfControls: ScalerCrop up to Rectangle(65535, 65535, 65535, 65535), FrameDurationLimits
///   33333...120000 µs, LensPosition 0...32), and properties::ScalerCropMaximum is empty
///   (PipelineHandlerBase::registerCamera). IpaBase::configure states the mode's limits
///   (FrameDurationLimits, the lens's LensPosition: imx708.json maps 0...15 dioptres), and
///   PipelineHandlerBase::configure sets ScalerCrop's maximum and ScalerCropMaximum to the mode's
///   analogue crop (imx708: 4608x2592 at (16, 24) in the pixel array).
/// - The pipeline's own crop is the largest rectangle of the still's aspect centred in the mode
///   (pisp.cpp's configure: "Adjust aspect ratio by providing crops on the input image",
///   cfeFormat.size.boundedToAspectRatio(the stream's size); vc4.cpp does the same for its largest
///   output), scaled to sensor pixels (CameraData::scaleIspCrop). ScalerCrop's default states it
///   from 0.1 on (PipelineHandlerBase::configure; 0.0.3's raspberrypi.cpp states none), and every
///   request reports the crop in force as ScalerCrop (CameraData::fillRequestMetadata; 0.0.3's
///   raspberrypi.cpp too). A ScalerCrop set keeps the aspect it is given (applyScalerCrop).
/// - The still stream's sizes are a range (generateConfiguration: ispFormats up to the sensor's
///   size), so StreamFormats::sizes() lists only its fixed sizes; the StillCapture default is
///   YUV420 at the sensor's full size ("Return the largest sensor resolution").
/// - SensorTimestamp is the receiver's buffer timestamp (Unicam, rp1-cfe: the start-of-frame
///   interrupt, the start of readout), and each request reports ExposureTime, AnalogueGain,
///   DigitalGain, ColourTemperature and LensPosition (IpaBase::reportMetadata; DigitalGain from
///   the AGC's status, on every frame).
/// - Sensor controls (ExposureValue through AGC, FrameDurationLimits through VBLANK) reach the
///   frames through DelayedControls: `control_delay` frames after the request that carried them
///   (camera_sensor_properties.cpp: imx708's exposure and gain delays are 2). ScalerCrop applies
///   to the request's own frame (CameraData::applyScalerCrop, at the ISP).
/// - An ExposureValue change eases in over about ten frames, as the AGC filters its total exposure
///   toward the new target (FakeAgc below, from src/ipa/rpi/controller/rpi/agc_channel.cpp); the
///   frames report the ExposureTime, AnalogueGain and DigitalGain it divides the total into.
/// - Requests already queued when AfTrigger is set report the AfState of the cycle before: the
///   trigger is handled with the request that carries it (IpaBase::applyControls).
/// - YUV420's three planes lie in separate buffers.
/// - With a CMA budget (a Raspberry Pi 4): the requests' buffers come from CMA as configure
///   allocates them (FrameBufferAllocator::allocate → PipelineHandlerBase::exportFrameBuffers →
///   the ISP output's V4L2 buffers), and the first start allocates the vc4 pipeline's own
///   (PipelineHandlerVc4::allocateBuffers, min_unicam_buffers 2 and min_total_unicam_buffers 4
///   by default: 4 raw Unicam buffers of the sensor's mode, CSI-2 packed, at 12 bits (imx477,
///   imx708) 3 bytes per 2 pixels; one ISP Output0 buffer of the still's size; one Output1 buffer
///   of the viewfinder's). Beyond the budget either fails with -ENOMEM, and start fails with it
///   (PipelineHandlerBase::start returns allocateBuffers' error).
struct FakeCamera final : shutter_lc_camera {
    shutter_lc_fake_config script;
    struct Slot {
        std::map<int, float> controls;
        bool crop_set = false;
        Rectangle crop;
        int64_t timestamp = 0;
        uint32_t sequence = 0;
        int af_state = -1;
        float lens = -1;
        uint32_t af_triggers = 0;
        /// The crop in force for the frame, as its metadata reports it (null: not reported).
        Rectangle reported_crop;
        uint32_t exposure_value_sets = 0;
        int32_t exposure_us = 0;
        float analogue_gain = 0, digital_gain = 0;
        /// Completed as FrameStartup: not a picture.
        bool startup = false;
    };
    std::vector<Slot> slots;
    RequestFIFO<int> queued, done;
    /// Requests shutter holds (taken by next, not yet released): never queued.
    std::vector<bool> held;
    std::map<int, float> pending, applied;
    bool pending_crop = false, applied_crop_set = false;
    Rectangle pending_crop_rect, applied_crop;
    /// The pipeline's own crop for the configured still (raspberrypi only; see above).
    Rectangle default_crop;
    /// Per request: its buffers (still planes', then the viewfinder's), numbered by their block
    /// in the memory; they stand for dmabuf descriptors in request_fds.
    std::vector<std::vector<int>> request_buffers;
    /// Per buffer: the DMA_BUF_SYNC_START and DMA_BUF_SYNC_END syncs it saw.
    std::map<int, std::pair<int, int>> buffer_syncs;
    bool running = false, configured = false;
    uint32_t sequence = 0;
    int af_state = SHUTTER_LC_AF_IDLE, af_frames_left = 0, af_triggers = 0;
    /// AfTrigger starts set (see shutter_lc_completed::af_triggers).
    uint32_t af_triggers_set = 0;
    /// Frames still to complete as FrameStartup, and whether the camera started before.
    uint32_t startup_left = 0;
    bool started_once = false;
    /// ExposureValue changes set (see shutter_lc_completed::exposure_value_sets).
    uint32_t exposure_value_sets = 0;
    FakeAgc agc;
    /// How many controls the last start was given.
    int start_control_count = 0;
    /// Sensor controls on their way through DelayedControls: (the frame sequence they show in, control, value).
    std::vector<std::tuple<uint32_t, int, float>> delayed;
    float lens = 1.0f;
    uint32_t width = 0, height = 0;
    uint32_t stride = 0, frame_size = 0, planes = 1, vf_bytes = 0;
    uint32_t plane_offsets[3] = {}, plane_sizes[3] = {};
    /// CMA the requests' buffers took at configure; whether the pipeline's own are allocated.
    uint64_t cma_requests = 0;
    bool pipeline_buffers = false;

    /// Opened through the fake system's camera manager (shutter_lc_fake_system_install), not
    /// shutter_lc_open_fake: its close releases it there.
    bool through_manager = false;
    /// Its devices went away (shutter_lc_fake_system_unplug, on the test's thread): reads fail with -ENODEV.
    std::atomic<bool> vanished{false};

    explicit FakeCamera(const shutter_lc_fake_config &config) : script(config) {
        id = "fake/shutter-lc-fake";
        model = script.has_autofocus ? "fake-imx708" : "fake";
        if (script.raspberrypi && script.exposure_time_us == 0) script.exposure_time_us = 20000;  // ipa_base.cpp's defaultExposureTime
        if (script.id[0]) id = std::string(script.id, strnlen(script.id, sizeof script.id));
        if (script.model[0]) model = std::string(script.model, strnlen(script.model, sizeof script.model));
        agc.reset(script.exposure_time_us);
        layout(script.width, script.height);
    }

    static uint32_t align64(uint32_t bytes) { return (bytes + 63) & ~63u; }

    /// Plane sizes and offsets for frames of width x height.
    ///
    /// The Raspberry Pi personality pads its rows as the Pi 5's back end does: pisp.cpp's
    /// computeOptimalStride aligns each plane's stride to 64 bytes (libpisp's
    /// compute_optimal_stride, PISP_BACK_END_OUTPUT_MAX_ALIGN) and, for single-planar YUV420,
    /// makes the luma stride twice the chroma stride; the HQ camera's 4056-pixel rows are 4096
    /// bytes apart, imx219's 3280 are 3328. (A Pi 4's bcm2835-isp aligns YUV420 rows to 64
    /// bytes, bcm2835-isp-fmts.h's bytesperline_align: the same strides for these widths.) The
    /// planes lie back to back in one buffer, each `stride x rows` long
    /// (V4L2VideoDevice::createBuffer splits the one V4L2 plane of a single-planar format so,
    /// the chroma stride the luma's halved).
    void layout(uint32_t w, uint32_t h) {
        width = w;
        height = h;
        planes = 1;
        if (script.raspberrypi && script.fourcc == 0x32315559) {  // YUV420
            uint32_t chroma_stride = align64((w + 1) / 2);
            stride = 2 * chroma_stride;
            planes = 3;
            plane_sizes[0] = stride * h;
            plane_sizes[1] = plane_sizes[2] = chroma_stride * ((h + 1) / 2);
            plane_offsets[0] = 0;
            plane_offsets[1] = plane_sizes[0];
            plane_offsets[2] = plane_sizes[0] + plane_sizes[1];
            frame_size = plane_sizes[0] + 2 * plane_sizes[1];
            return;
        }
        switch (script.fourcc) {
        case 0x3231564e:  // NV12
            stride = w;
            planes = 2;
            plane_sizes[0] = w * h;
            plane_sizes[1] = w * ((h + 1) / 2);
            break;
        case 0x32315559:  // YUV420
            stride = w;
            planes = 3;
            plane_sizes[0] = w * h;
            plane_sizes[1] = plane_sizes[2] = (w / 2) * ((h + 1) / 2);
            break;
        default:          // RGB888 / BGR888
            stride = w * 3;
            plane_sizes[0] = stride * h;
        }
        plane_offsets[0] = 0;
        for (uint32_t index = 1; index < planes; index++)
            plane_offsets[index] = plane_offsets[index - 1] + plane_sizes[index - 1] + script.plane_gap;
        frame_size = 0;
        for (uint32_t index = 0; index < planes; index++) frame_size += plane_sizes[index];
    }

    /// The sensor's area, as the mode's analogue crop (imx708's pixel array offset, see above).
    Rectangle sensor_area() const {
        return script.raspberrypi ? Rectangle(16, 24, script.width, script.height) : Rectangle(0, 0, script.width, script.height);
    }

    bool placeholders() const { return script.raspberrypi && !configured; }

    int formats(shutter_lc_format *formats, int capacity) override {
        if (capacity > 0) {
            formats[0].fourcc = script.fourcc;
            copy_string(formats[0].name, sizeof formats[0].name, PixelFormat(script.fourcc).toString());
            formats[0].size_count = uint32_t(offered_sizes().size());
        }
        return 1;
    }

    std::vector<Size> offered_sizes() const {
        if (!script.raspberrypi) return { Size(script.width, script.height) };
        std::vector<Size> list;
        for (const Size &size : listed_sizes)
            if (size.width <= script.width && size.height <= script.height) list.push_back(size);
        return list;
    }

    int sizes(uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity) override {
        if (fourcc != script.fourcc) return 0;
        auto list = offered_sizes();
        std::sort(list.begin(), list.end(), [](const Size &a, const Size &b) { return a.width * a.height > b.width * b.height; });
        for (size_t index = 0; index < list.size() && int(index) < capacity; index++) {
            widths[index] = list[index].width;
            heights[index] = list[index].height;
        }
        return int(list.size());
    }

    int control_list(shutter_lc_control_info *out, int capacity) override {
        std::vector<shutter_lc_control_info> list;
        auto add = [&](const ControlId &id, int control, int type, double min, double max, double def) {
            shutter_lc_control_info entry{};
            entry.libcamera_id = id.id();
            entry.control = control;
            entry.type = type;
            copy_string(entry.name, sizeof entry.name, id.name());
            entry.minimum = min;
            entry.maximum = max;
            entry.default_value = def;
            list.push_back(entry);
        };
        add(controls::Brightness, SHUTTER_LC_CONTROL_BRIGHTNESS, SHUTTER_LC_TYPE_FLOAT, -1, 1, 0);
        if (script.has_scaler_crop) add(controls::ScalerCrop, SHUTTER_LC_CONTROL_SCALER_CROP, SHUTTER_LC_TYPE_RECTANGLE, 0, 0, 0);
        if (script.has_exposure_value) add(controls::ExposureValue, SHUTTER_LC_CONTROL_EXPOSURE_VALUE, SHUTTER_LC_TYPE_FLOAT, -8, 8, 0);
        int64_t low = 0, high = 0;
        if (frame_duration_range(low, high))
            add(controls::FrameDurationLimits, SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS, SHUTTER_LC_TYPE_INT,
                double(low), double(high), double(low));
        if (script.has_autofocus) {
            add(controls::AfMode, SHUTTER_LC_CONTROL_AF_MODE, SHUTTER_LC_TYPE_INT, 0, 2, 0);
            add(controls::AfTrigger, SHUTTER_LC_CONTROL_AF_TRIGGER, SHUTTER_LC_TYPE_INT, 0, 1, 0);
            add(controls::LensPosition, SHUTTER_LC_CONTROL_LENS_POSITION, SHUTTER_LC_TYPE_FLOAT, 0, placeholders() ? 32 : 15, 1);
        }
        for (size_t index = 0; index < list.size() && int(index) < capacity; index++) out[index] = list[index];
        return int(list.size());
    }

    bool scaler_crop_limits(Rectangle &control_maximum, Rectangle &property) override {
        if (!script.has_scaler_crop) return false;
        if (placeholders()) {
            control_maximum = Rectangle(65535, 65535, 65535, 65535);
            property = Rectangle();
        } else {
            control_maximum = property = sensor_area();
        }
        return true;
    }

    int configure(shutter_lc_stream_config *still, shutter_lc_stream_config *viewfinder, int buffer_count) override {
        if (running) return -EBUSY;
        if ((still->fourcc && still->fourcc != script.fourcc)) return -EINVAL;
        uint32_t w = script.width, h = script.height;
        bool adjusted = false;
        if (script.raspberrypi && still->width && still->height) {
            // Any size within the range, even (the ISP's alignment), at most the sensor's.
            w = std::min(still->width, script.width) & ~1u;
            h = std::min(still->height, script.height) & ~1u;
            adjusted = w != still->width || h != still->height;
        } else {
            adjusted = still->width && (still->width != script.width || still->height != script.height);
        }
        layout(w, h);
        configured = true;
        if (script.raspberrypi) {
            // The fake's mode reads out the whole analogue crop, so ISP and sensor pixels are
            // the same size and scaleIspCrop only moves the crop to the analogue crop's origin.
            Size mode(script.width, script.height);
            Rectangle crop = mode.boundedToAspectRatio(Size(w, h)).centeredTo(Rectangle(mode).center());
            crop.translateBy(sensor_area().topLeft());
            default_crop = crop;
        }
        still->fourcc = script.fourcc;
        still->width = w;
        still->height = h;
        still->stride = stride;
        still->frame_size = frame_size;
        still->adjusted = adjusted;
        // A viewfinder as the Raspberry Pi pipeline gives one: the size asked for (within the
        // still size, even), in the format asked for when the ISP has it (YUV420 or NV12 here;
        // pipeline_base.cpp's validate keeps a format ispFormats() lists), else NV12; with the
        // raspberrypi personality its rows padded as computeOptimalStride pads them (see
        // layout(); NV12's interleaved chroma rows as long as the luma's).
        vf_bytes = 0;
        if (viewfinder && viewfinder->width && viewfinder->height) {
            uint32_t vw = std::min(viewfinder->width, w) & ~1u, vh = std::min(viewfinder->height, h) & ~1u;
            bool planar = viewfinder->fourcc == 0x32315559;  // YUV420
            viewfinder->adjusted = vw != viewfinder->width || vh != viewfinder->height || (viewfinder->fourcc && !planar && viewfinder->fourcc != 0x3231564e);
            viewfinder->fourcc = planar ? 0x32315559 : 0x3231564e;
            viewfinder->width = vw;
            viewfinder->height = vh;
            viewfinder->stride = !script.raspberrypi ? vw : planar ? 2 * align64(vw / 2) : align64(vw);
            uint32_t chroma = planar ? 2 * (viewfinder->stride / 2) * (vh / 2) : viewfinder->stride * (vh / 2);
            viewfinder->frame_size = vf_bytes = viewfinder->stride * vh + chroma;
        } else if (viewfinder) {
            viewfinder->width = viewfinder->height = viewfinder->fourcc = 0;
        }
        size_t count = size_t(std::max(buffer_count, 2));
        cma_requests = uint64_t(count) * (frame_size + vf_bytes);
        pipeline_buffers = false;
        if (script.cma_budget > 0 && cma_requests > script.cma_budget) {
            memory.reset();
            slots.clear();
            return -ENOMEM;
        }
        slots.assign(count, Slot{});
        held.assign(slots.size(), false);
        // Each request's memory: the still planes (plane_gap apart, or in buffers of their own),
        // then the viewfinder's.
        bool separate = script.separate_planes && planes > 1;
        auto made = std::make_shared<BufferMemory>();
        uint32_t span = plane_offsets[planes - 1] + plane_sizes[planes - 1];
        request_buffers.assign(slots.size(), {});
        request_fds.assign(slots.size(), {});
        buffer_syncs.clear();
        for (size_t index = 0; index < slots.size(); index++) {
            BufferMemory::Planes request;
            request.count = planes;
            if (separate) {
                for (uint32_t plane = 0; plane < planes; plane++) {
                    request_buffers[index].push_back(int(made->owned.size()));
                    made->owned.emplace_back(plane_sizes[plane], 0);
                    request.planes[plane] = made->owned.back().data();
                    request.bytes[plane] = plane_sizes[plane];
                }
            } else {
                request_buffers[index].push_back(int(made->owned.size()));
                made->owned.emplace_back(span, 0);
                for (uint32_t plane = 0; plane < planes; plane++) {
                    request.planes[plane] = made->owned.back().data() + plane_offsets[plane];
                    request.bytes[plane] = plane_sizes[plane];
                }
            }
            if (vf_bytes) {
                request_buffers[index].push_back(int(made->owned.size()));
                made->owned.emplace_back(vf_bytes, 0);
                request.vf = made->owned.back().data();
                request.vf_bytes = vf_bytes;
            }
            // As the real camera's configure: every buffer of the request is synchronised.
            request_fds[index] = request_buffers[index];
            made->requests.push_back(request);
        }
        memory = std::move(made);
        return 0;
    }

    void sync_dmabuf(int fd, uint64_t flags) override {
        auto &counts = buffer_syncs[fd];
        if (flags & DMA_BUF_SYNC_END) counts.second++;
        else counts.first++;
    }

    Rectangle scaler_crop_control_default() override {
#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 1
        if (script.has_scaler_crop && configured) return default_crop;
#endif
        return Rectangle();
    }

    bool frame_duration_range(int64_t &minimum, int64_t &maximum) override {
        if (script.frame_duration_max_us <= 0) return false;
        if (placeholders()) {
            // ipa_base.cpp's ipaControls until IpaBase::configure states the mode's limits.
            minimum = 33333;
            maximum = 120000;
            return true;
        }
        minimum = script.frame_duration_min_us;
        maximum = script.frame_duration_max_us;
        return true;
    }

    int start() override {
        if (slots.empty()) return -EINVAL;
        if (running) return 0;
        if (script.cma_budget > 0 && !pipeline_buffers) {
            uint64_t raw = uint64_t(script.width) * 3 / 2 * script.height;
            uint64_t own = 4 * raw + frame_size + vf_bytes;
            if (cma_requests + own > script.cma_budget) return -ENOMEM;
            pipeline_buffers = true;
        }
        // As Camera::start(controls): the controls set while stopped, and the frame duration,
        // apply from the first frame.
        start_control_count = int(pending.size()) + (pending_crop ? 1 : 0) + (frame_duration_us > 0 ? 1 : 0);
        agc.frames = 0;
        // IpaBase::start gives a startupFrameCount only on the camera's first start
        // (firstStart_); pipeline_base.cpp marks that many frames FrameStartup.
        startup_left = started_once || !script.raspberrypi ? 0 : uint32_t(std::max(script.startup_frames, 0));
        started_once = true;
        if (frame_duration_us > 0) applied[SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS] = float(frame_duration_us);
        for (const auto &[control, value] : pending) apply(control, value);
        if (pending_crop) {
            applied_crop = pending_crop_rect;
            applied_crop_set = true;
        }
        pending.clear();
        pending_crop = false;
        running = true;
        queued.clear();
        done.clear();
        for (size_t index = 0; index < slots.size(); index++)
            if (!held[index]) queue(int(index));
        return 0;
    }

    void queue(int index) {
        Slot &slot = slots[index];
        slot.controls = pending;
        slot.crop_set = pending_crop;
        slot.crop = pending_crop_rect;
        slot.af_triggers = af_triggers_set;
        slot.exposure_value_sets = exposure_value_sets;
        pending.clear();
        pending_crop = false;
        queued.push_back(index);
    }

    void stop() override {
        running = false;
        queued.clear();
        done.clear();
        delayed.clear();
        drain();
    }

    /// Applies one control now; an AfTrigger start in AfModeAuto starts the autofocus script.
    void apply(int control, float value) {
        applied[control] = value;
        if (control == SHUTTER_LC_CONTROL_LENS_POSITION) lens = value;
        if (control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE) agc.set_ev(value);
        if (control == SHUTTER_LC_CONTROL_AF_MODE && int(value) == 2 && script.has_autofocus) {
            // AfModeContinuous: scans by itself, then holds focus.
            af_state = SHUTTER_LC_AF_SCANNING;
            af_frames_left = script.af_scan_frames;
        }
        bool autoMode = applied.count(SHUTTER_LC_CONTROL_AF_MODE) && int(applied[SHUTTER_LC_CONTROL_AF_MODE]) == 1;
        if (control == SHUTTER_LC_CONTROL_AF_TRIGGER && int(value) == 0 && script.has_autofocus && autoMode) {
            // af.cpp's Af::triggerScan takes a start only while the algorithm is idle (AfModeAuto,
            // no scan under way): one that comes mid-scan is ignored, the scan ends as it would.
            if (script.raspberrypi && af_state == SHUTTER_LC_AF_SCANNING) return;
            af_triggers++;
            af_state = SHUTTER_LC_AF_SCANNING;
            af_frames_left = script.af_scan_frames;
        }
    }

    static bool is_sensor_control(int control) {
        return control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE || control == SHUTTER_LC_CONTROL_FRAME_DURATION_LIMITS;
    }

    int deliver(int64_t timestamp, uint8_t fill) {
        if (!running || queued.empty()) return -EAGAIN;
        int index = queued.front();
        queued.pop_front();
        Slot &slot = slots[index];
        uint32_t frame = sequence;
        bool scanning = af_state == SHUTTER_LC_AF_SCANNING;
        // AfMode before AfTrigger, whatever order the map holds them in.
        if (auto mode = slot.controls.find(SHUTTER_LC_CONTROL_AF_MODE); mode != slot.controls.end()) apply(mode->first, mode->second);
        for (const auto &[control, value] : slot.controls) {
            if (control == SHUTTER_LC_CONTROL_AF_MODE) continue;
            if (script.raspberrypi && is_sensor_control(control) && script.control_delay > 0)
                delayed.emplace_back(frame + uint32_t(script.control_delay), control, value);
            else
                apply(control, value);
        }
        for (auto entry = delayed.begin(); entry != delayed.end();) {
            if (std::get<0>(*entry) > frame) { ++entry; continue; }
            apply(std::get<1>(*entry), std::get<2>(*entry));
            entry = delayed.erase(entry);
        }
        if (slot.crop_set) {
            applied_crop = slot.crop;
            applied_crop_set = true;
        }
        if (script.raspberrypi) {
            agc.frame();
            slot.exposure_us = agc.divided ? agc.exposure_us : script.exposure_time_us;
            slot.analogue_gain = agc.divided ? agc.analogue : 2.0f;
            slot.digital_gain = agc.divided ? agc.digital : 1.0f;
        }
        // The autofocus script: a cycle (a start in AfModeAuto, or continuous) scans for
        // af_scan_frames frames, then ends; a cycle started by this very request counts from here.
        if (af_state == SHUTTER_LC_AF_SCANNING && scanning) {
            if (af_frames_left > 0) af_frames_left--;
            if (af_frames_left == 0 && script.af_outcome != SHUTTER_LC_AF_SCANNING) af_state = script.af_outcome;
        }
        if (script.has_autofocus && af_state == SHUTTER_LC_AF_FOCUSED) lens = 2.5f;
        const BufferMemory::Planes &mapped = memory->requests[index];
        for (uint32_t plane = 0; plane < mapped.count && !script.keeps_planes; plane++)
            memset(const_cast<uint8_t *>(mapped.planes[plane]), fill, mapped.bytes[plane]);
        if (mapped.vf && !script.keeps_planes) memset(const_cast<uint8_t *>(mapped.vf), fill, mapped.vf_bytes);
        slot.timestamp = timestamp;
        slot.startup = startup_left > 0;
        if (startup_left > 0) startup_left--;
        slot.sequence = sequence++;
        slot.af_state = script.has_autofocus ? af_state : -1;
        slot.lens = script.has_autofocus ? lens : -1;
        slot.reported_crop = script.raspberrypi && script.has_scaler_crop ? (applied_crop_set ? applied_crop : default_crop) : Rectangle();
        done.push_back(index);
        signal();
        return 0;
    }

    ~FakeCamera() override;

    int next(shutter_lc_completed *out) override {
        if (vanished) return -ENODEV;
        if (done.empty()) {
            drain();
            return 0;
        }
        int index = done.front();
        done.pop_front();
        held[index] = true;
        sync_for_cpu(size_t(index), true);
        const Slot &slot = slots[index];
        const BufferMemory::Planes &mapped = memory->requests[index];
        memset(out, 0, sizeof *out);
        out->request = index;
        out->ok = !slot.startup;
        out->sequence = slot.sequence;
        out->sensor_timestamp = slot.timestamp;
        out->buffer_timestamp = slot.timestamp;
        // The fake runs on the test's virtual clock: it completes a frame the instant it is stamped.
        out->completed_at = slot.timestamp;
        out->af_state = slot.af_state;
        out->lens_position = slot.lens;
        out->af_triggers = slot.af_triggers;
        out->exposure_value_sets = slot.exposure_value_sets;
        if (script.raspberrypi) {
            out->exposure_time_us = slot.exposure_us;
            out->analogue_gain = slot.analogue_gain;
            out->digital_gain = slot.digital_gain;
            out->colour_temperature = 4500;
        }
        if (!slot.reported_crop.isNull()) crop_reported(slot.reported_crop);
        out->plane_count = mapped.count;
        for (uint32_t plane = 0; plane < mapped.count; plane++) {
            out->planes[plane] = mapped.planes[plane];
            out->plane_bytes[plane] = mapped.bytes[plane];
        }
        out->viewfinder = mapped.vf;
        out->viewfinder_bytes = mapped.vf_bytes;
        return 1;
    }

    int release(int index) override {
        if (index < 0 || size_t(index) >= slots.size()) return -EINVAL;
        if (!held[index]) return 0;  // queued already, or by the next start
        held[index] = false;
        sync_for_cpu(size_t(index), false);
        if (running) queue(index);
        return 0;
    }

    bool offers(int control) const {
        switch (control) {
        case SHUTTER_LC_CONTROL_BRIGHTNESS: return true;
        case SHUTTER_LC_CONTROL_EXPOSURE_VALUE: return script.has_exposure_value;
        case SHUTTER_LC_CONTROL_AF_MODE:
        case SHUTTER_LC_CONTROL_AF_TRIGGER:
        case SHUTTER_LC_CONTROL_LENS_POSITION: return script.has_autofocus;
        default: return false;
        }
    }

    int set(int control, double value) override {
        if (!offers(control)) return -ENOTSUP;
        pending[control] = float(value);
        if (control == SHUTTER_LC_CONTROL_AF_TRIGGER && int(value) == 0) af_triggers_set++;
        if (control == SHUTTER_LC_CONTROL_EXPOSURE_VALUE) exposure_value_sets++;
        return 0;
    }

    int set_named(const char *name, double value) override {
        if (strcasecmp(name, "Brightness") == 0) return set(SHUTTER_LC_CONTROL_BRIGHTNESS, value);
        return -ENOTSUP;
    }

    int set_crop(const Rectangle &crop) override {
        if (!script.has_scaler_crop) return -ENOTSUP;
        pending_crop = true;
        pending_crop_rect = crop;
        return 0;
    }
};

/// libcamera's own camera manager.
struct LibcameraManager final : ManagerBackend {
    CameraManager cameras_;

    LibcameraManager() {
        note_manager_call();
        {
            std::lock_guard<std::mutex> guard(stats_lock);
            managers_created++;
        }
        // Before start, which announces the cameras it enumerates too (camera_manager.cpp:
        // "The notification occurs alike for cameras detected when the manager is started ...
        // or when new cameras are later connected"). The handler is no Object, so libcamera
        // calls it directly on the manager's internal thread (base/thread.cpp, "Threads and
        // Signals"). A camera's removal needs no handler here: the open camera hears of it
        // through its own `disconnected` (RealCamera::lost), and a camera not open is simply
        // no longer listed.
        cameras_.cameraAdded.connect(this, &LibcameraManager::added);
    }
    ~LibcameraManager() override {
        note_manager_call();
        cameras_.cameraAdded.disconnect(this, &LibcameraManager::added);
    }

    void added(std::shared_ptr<Camera>) { camera_added(); }

    int start() override {
        note_manager_call();
        return cameras_.start();
    }

    std::vector<std::pair<std::string, std::string>> cameras() override {
        note_manager_call();
        std::vector<std::pair<std::string, std::string>> list;
        for (const auto &camera : cameras_.cameras()) list.emplace_back(camera->id(), model_of(camera));
        return list;
    }

    shutter_lc_camera *open(const std::string &wanted, int *error) override {
        note_manager_call();
        std::shared_ptr<Camera> found;
        for (const auto &camera : cameras_.cameras()) {
            if (wanted.empty() || camera->id() == wanted || strcasecmp(model_of(camera).c_str(), wanted.c_str()) == 0) {
                found = camera;
                break;
            }
        }
        // On the manager thread, one acquire at a time: the media devices newly locked are this camera's.
        std::set<std::pair<dev_t, ino_t>> lockedBefore;
        int nodesError = media_nodes_locked_here(lockedBefore);
        if (!found) {
            *error = -ENOENT;
            return nullptr;
        }
        if (int result = found->acquire(); result < 0) {
            *error = result;
            return nullptr;
        }
        *error = 0;
        std::vector<OpenNode> cameraNodes;
        if (nodesError == 0) nodesError = acquired_camera_nodes(lockedBefore, cameraNodes);
        try {
            return new RealCamera(found, std::move(cameraNodes), nodesError);
        } catch (...) {
            found->release();
            *error = -ENOMEM;
            return nullptr;
        }
    }
};

struct FakeManager;

/// The fake system (shutter_lc_fake_system_install): the fake cameras plugged in, and the fake
/// camera manager running now, if any (guarded by fake_lock).
struct FakeSystem {
    struct Plugged {
        std::string id;
        shutter_lc_fake_config script;
    };
    std::vector<Plugged> plugged;
    FakeManager *running = nullptr;
    /// The fake cameras opened through the fake manager, open now.
    std::set<FakeCamera *> open;
};
std::mutex &fake_lock = *new std::mutex;
std::unique_ptr<FakeSystem> &fake_system = *new std::unique_ptr<FakeSystem>;

bool fake_system_installed() {
    std::lock_guard<std::mutex> guard(fake_lock);
    return fake_system != nullptr;
}

/// A camera manager over the fake system, behaving as libcamera's does for hot-plug
/// (camera_manager.cpp): start() registers the cameras there are; a camera plugged in later is
/// registered and announced (cameraAdded), unless one with the same id is still registered,
/// which libcamera's CameraManager::Private::addCamera refuses fatally ("Trying to register a
/// camera with a duplicated ID": counted here); a camera unplugged is unregistered only when its
/// pipeline noticed (cameraRemoved).
struct FakeManager final : ManagerBackend {
    /// The ids registered (guarded by fake_lock).
    std::vector<std::string> registered;

    FakeManager() {
        note_manager_call();
        std::lock_guard<std::mutex> guard(stats_lock);
        managers_created++;
    }
    ~FakeManager() override {
        note_manager_call();
        std::lock_guard<std::mutex> guard(fake_lock);
        if (fake_system && fake_system->running == this) fake_system->running = nullptr;
    }

    int start() override {
        note_manager_call();
        std::lock_guard<std::mutex> guard(fake_lock);
        if (!fake_system) return -ENODEV;
        fake_system->running = this;
        for (const auto &camera : fake_system->plugged) add(camera.id);
        return 0;
    }

    /// A camera's devices appeared (guarded by fake_lock by the caller).
    void add(const std::string &id) {
        if (std::find(registered.begin(), registered.end(), id) != registered.end()) {
            std::lock_guard<std::mutex> guard(stats_lock);
            duplicate_ids++;
            return;
        }
        registered.push_back(id);
        camera_added();
    }

    std::vector<std::pair<std::string, std::string>> cameras() override {
        note_manager_call();
        std::lock_guard<std::mutex> guard(fake_lock);
        std::vector<std::pair<std::string, std::string>> list;
        for (const auto &id : registered) list.emplace_back(id, "fake");
        return list;
    }

    shutter_lc_camera *open(const std::string &wanted, int *error) override {
        note_manager_call();
        FakeCamera *camera = find_and_acquire(wanted, error);
        if (camera) open_cameras++;
        return camera;
    }

    FakeCamera *find_and_acquire(const std::string &wanted, int *error) {
        std::lock_guard<std::mutex> guard(fake_lock);
        auto found = std::find_if(registered.begin(), registered.end(), [&](const std::string &id) {
            return wanted.empty() || id == wanted || strcasecmp(wanted.c_str(), "fake") == 0;
        });
        if (found == registered.end()) {
            *error = -ENOENT;
            return nullptr;
        }
        auto present = std::find_if(fake_system->plugged.begin(), fake_system->plugged.end(),
                                    [&](const FakeSystem::Plugged &camera) { return camera.id == *found; });
        // A stale camera (its devices gone, still registered): acquiring it fails.
        if (present == fake_system->plugged.end()) {
            *error = -ENODEV;
            return nullptr;
        }
        for (FakeCamera *camera : fake_system->open) {
            if (camera->id == *found) {
                *error = -EBUSY;
                return nullptr;
            }
        }
        auto *camera = new FakeCamera(present->script);
        camera->id = present->id;
        camera->through_manager = true;
        fake_system->open.insert(camera);
        *error = 0;
        return camera;
    }
};

std::unique_ptr<ManagerBackend> make_manager() {
    if (fake_system_installed()) return std::make_unique<FakeManager>();
    return std::make_unique<LibcameraManager>();
}

FakeCamera::~FakeCamera() {
    if (!through_manager) return;
    ManagerThread::shared().run([this] {
        note_manager_call();  // Camera::release
        bool stale = false;
        {
            std::lock_guard<std::mutex> guard(fake_lock);
            if (fake_system) {
                fake_system->open.erase(this);
                // Gone, but still registered: the manager never saw it go.
                const FakeManager *running = fake_system->running;
                bool listed = running && std::find(running->registered.begin(), running->registered.end(), id) != running->registered.end();
                bool present = std::any_of(fake_system->plugged.begin(), fake_system->plugged.end(),
                                           [&](const FakeSystem::Plugged &camera) { return camera.id == id; });
                stale = listed && !present;
            }
        }
        camera_closed(stale);
    });
}

}  // namespace

// MARK: - The C interface

extern "C" {

const char *shutter_lc_header_version(void) {
#define SHUTTER_LC_STRING2(x) #x
#define SHUTTER_LC_STRING(x) SHUTTER_LC_STRING2(x)
    return SHUTTER_LC_STRING(LIBCAMERA_VERSION_MAJOR) "." SHUTTER_LC_STRING(LIBCAMERA_VERSION_MINOR) "." SHUTTER_LC_STRING(LIBCAMERA_VERSION_PATCH);
}

const char *shutter_lc_runtime_version(void) {
    static std::string version = CameraManager::version();
    return version.c_str();
}

int shutter_lc_list(shutter_lc_camera_entry *entries, int capacity) {
    int result;
    std::vector<std::pair<std::string, std::string>> list;
    ManagerThread::shared().run([&] {
        ManagerBackend *cameras = nullptr;
        result = started_manager(&cameras);
        if (result >= 0) list = cameras->cameras();
    });
    if (result < 0) return result;
    for (size_t index = 0; index < list.size() && int(index) < capacity; index++) {
        copy_string(entries[index].id, sizeof entries[index].id, list[index].first);
        copy_string(entries[index].model, sizeof entries[index].model, list[index].second);
    }
    return int(list.size());
}

shutter_lc_camera *shutter_lc_open(const char *name, int *error) {
    int ignored;
    if (!error) error = &ignored;
    std::string wanted = name ? name : "";
    shutter_lc_camera *opened = nullptr;
    ManagerThread::shared().run([&] {
        ManagerBackend *cameras = nullptr;
        *error = started_manager(&cameras);
        if (*error >= 0) opened = cameras->open(wanted, error);
    });
    return opened;
}

shutter_lc_camera *shutter_lc_open_fake(const shutter_lc_fake_config *config) {
    if (!config || config->width == 0 || config->height == 0) return nullptr;
    return new FakeCamera(*config);
}

int shutter_lc_fake_deliver(shutter_lc_camera *camera, int64_t timestamp_ns, uint8_t fill) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->deliver(timestamp_ns, fill) : -EINVAL;
}

int shutter_lc_fake_applied(shutter_lc_camera *camera, int control, float *value) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    auto found = fake->applied.find(control);
    if (found == fake->applied.end()) return -ENOENT;
    *value = found->second;
    return 0;
}

int shutter_lc_fake_scaler_crop(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    if (!fake->applied_crop_set) return -ENOENT;
    *x = fake->applied_crop.x;
    *y = fake->applied_crop.y;
    *width = fake->applied_crop.width;
    *height = fake->applied_crop.height;
    return 0;
}

int shutter_lc_fake_af_triggers(shutter_lc_camera *camera) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->af_triggers : -EINVAL;
}

int shutter_lc_fake_start_controls(shutter_lc_camera *camera) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    return fake ? fake->start_control_count : -EINVAL;
}

int shutter_lc_fake_buffer_syncs(shutter_lc_camera *camera, int request, int *starts, int *ends, int capacity) {
    auto *fake = dynamic_cast<FakeCamera *>(camera);
    if (!fake) return -EINVAL;
    if (request < 0 || size_t(request) >= fake->request_buffers.size()) return -ENOENT;
    const auto &buffers = fake->request_buffers[size_t(request)];
    for (size_t index = 0; index < buffers.size() && int(index) < capacity; index++) {
        auto found = fake->buffer_syncs.find(buffers[index]);
        starts[index] = found == fake->buffer_syncs.end() ? 0 : found->second.first;
        ends[index] = found == fake->buffer_syncs.end() ? 0 : found->second.second;
    }
    return int(buffers.size());
}

int shutter_lc_fake_system_install(void) {
    int result = 0;
    ManagerThread::shared().run([&] {
        if (open_cameras > 0) {
            result = -EBUSY;
            return;
        }
        retire_manager();  // libcamera's own, if it ran
        {
            std::lock_guard<std::mutex> guard(fake_lock);
            fake_system = std::make_unique<FakeSystem>();
        }
        std::lock_guard<std::mutex> guard(stats_lock);
        managers_created = managers_rebuilt = duplicate_ids = cameras_added = 0;
        manager_threads.clear();
    });
    return result;
}

void shutter_lc_fake_system_remove(void) {
    ManagerThread::shared().run([] {
        if (open_cameras > 0) return;  // still in use
        retire_manager();
        std::lock_guard<std::mutex> guard(fake_lock);
        fake_system.reset();
    });
}

int shutter_lc_fake_system_plug(const char *id, const shutter_lc_fake_config *config) {
    if (!id || !config || config->width == 0 || config->height == 0) return -EINVAL;
    std::lock_guard<std::mutex> guard(fake_lock);
    if (!fake_system) return -EINVAL;
    for (const auto &camera : fake_system->plugged)
        if (camera.id == id) return -EEXIST;
    fake_system->plugged.push_back({ id, *config });
    // The hot-plug: the running manager's enumerator sees the devices and its pipeline
    // handler registers the camera.
    if (fake_system->running) fake_system->running->add(id);
    return 0;
}

int shutter_lc_fake_system_unplug(const char *id, int noticed) {
    if (!id) return -EINVAL;
    std::lock_guard<std::mutex> guard(fake_lock);
    if (!fake_system) return -EINVAL;
    auto &plugged = fake_system->plugged;
    auto found = std::find_if(plugged.begin(), plugged.end(), [&](const FakeSystem::Plugged &camera) { return camera.id == id; });
    if (found == plugged.end()) return -ENOENT;
    plugged.erase(found);
    for (FakeCamera *camera : fake_system->open)
        if (camera->id == id) camera->vanished = true;
    if (noticed && fake_system->running) {
        auto &registered = fake_system->running->registered;
        registered.erase(std::remove(registered.begin(), registered.end(), std::string(id)), registered.end());
    }
    return 0;
}

void shutter_lc_fake_system_stats(shutter_lc_manager_stats *out) {
    std::lock_guard<std::mutex> guard(stats_lock);
    memset(out, 0, sizeof *out);
    out->managers_created = managers_created;
    out->managers_rebuilt = managers_rebuilt;
    out->manager_threads = int(manager_threads.size());
    out->duplicate_ids = duplicate_ids;
    out->cameras_added = cameras_added;
}

shutter_lc_watch *shutter_lc_watch_cameras(int wake_fd) {
    auto *watch = new (std::nothrow) shutter_lc_watch;
    if (!watch) return nullptr;
    watch->fd = fcntl(wake_fd, F_DUPFD_CLOEXEC, 0);
    if (watch->fd < 0) {
        delete watch;
        return nullptr;
    }
    std::lock_guard<std::mutex> guard(watch_lock);
    watches.insert(watch);
    return watch;
}

int shutter_lc_watch_take(shutter_lc_watch *watch) {
    std::lock_guard<std::mutex> guard(watch_lock);
    int added = int(watch->added);
    watch->added = 0;
    return added;
}

void shutter_lc_watch_close(shutter_lc_watch *watch) {
    if (!watch) return;
    {
        std::lock_guard<std::mutex> guard(watch_lock);
        watches.erase(watch);
    }
    ::close(watch->fd);
    delete watch;
}

void shutter_lc_close(shutter_lc_camera *camera) { delete camera; }

shutter_lc_buffers *shutter_lc_buffers_retain(shutter_lc_camera *camera) {
    if (!camera || !camera->memory) return nullptr;
    return new (std::nothrow) shutter_lc_buffers{ camera->memory };
}

void shutter_lc_buffers_release(shutter_lc_buffers *buffers) { delete buffers; }

int shutter_lc_buffers_count(const shutter_lc_buffers *buffers) { return int(buffers->memory->requests.size()); }

int shutter_lc_buffers_planes(const shutter_lc_buffers *buffers, int request, const uint8_t **planes, uint32_t *bytes, int capacity) {
    if (request < 0 || size_t(request) >= buffers->memory->requests.size()) return -EINVAL;
    const BufferMemory::Planes &mapped = buffers->memory->requests[size_t(request)];
    for (uint32_t plane = 0; plane < mapped.count && int(plane) < capacity; plane++) {
        planes[plane] = mapped.planes[plane];
        bytes[plane] = mapped.bytes[plane];
    }
    return int(mapped.count);
}

const char *shutter_lc_id(shutter_lc_camera *camera) { return camera->id.c_str(); }
const char *shutter_lc_model(shutter_lc_camera *camera) { return camera->model.c_str(); }

int shutter_lc_formats(shutter_lc_camera *camera, shutter_lc_format *formats, int capacity) {
    return camera->formats(formats, capacity);
}

int shutter_lc_sizes(shutter_lc_camera *camera, uint32_t fourcc, uint32_t *widths, uint32_t *heights, int capacity) {
    return camera->sizes(fourcc, widths, heights, capacity);
}

int shutter_lc_controls(shutter_lc_camera *camera, shutter_lc_control_info *controls, int capacity) {
    return camera->control_list(controls, capacity);
}

int shutter_lc_scaler_crop_maximum(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    Rectangle rectangle;
    int result = camera->scaler_crop_maximum(rectangle);
    if (result < 0) return result;
    *x = rectangle.x;
    *y = rectangle.y;
    *width = rectangle.width;
    *height = rectangle.height;
    return 0;
}

int shutter_lc_configure(shutter_lc_camera *camera, shutter_lc_stream_config *still,
                         shutter_lc_stream_config *viewfinder, int buffer_count) {
    if (!still) return -EINVAL;
    // The pipeline chooses its crop anew for the new streams.
    camera->reported_crop = Rectangle();
    camera->crop_set = false;
    return camera->configure(still, viewfinder, buffer_count);
}

int shutter_lc_scaler_crop_default(shutter_lc_camera *camera, int32_t *x, int32_t *y, uint32_t *width, uint32_t *height) {
    Rectangle rectangle;
    int result = camera->scaler_crop_default(rectangle);
    if (result < 0) return result;
    *x = rectangle.x;
    *y = rectangle.y;
    *width = rectangle.width;
    *height = rectangle.height;
    return 0;
}

int shutter_lc_device_nodes(shutter_lc_camera *camera) { return camera->own_device_nodes(); }

int shutter_lc_lock_holder(int fd) { return lock_holder(fd); }

int shutter_lc_set_frame_rate(shutter_lc_camera *camera, double fps, int64_t *frame_duration_ns) {
    return camera->set_frame_rate(fps, frame_duration_ns);
}

int shutter_lc_start(shutter_lc_camera *camera) { return camera->start(); }
void shutter_lc_stop(shutter_lc_camera *camera) { camera->stop(); }
int shutter_lc_poll_fd(shutter_lc_camera *camera) { return camera->event_fd; }
int shutter_lc_next(shutter_lc_camera *camera, shutter_lc_completed *out) { return camera->next(out); }
int shutter_lc_release(shutter_lc_camera *camera, int request) { return camera->release(request); }
int shutter_lc_set_float(shutter_lc_camera *camera, int control, float value) { return camera->set(control, value); }
int shutter_lc_set_int(shutter_lc_camera *camera, int control, int32_t value) { return camera->set(control, value); }
int shutter_lc_set_named(shutter_lc_camera *camera, const char *name, double value) { return camera->set_named(name, value); }

int shutter_lc_set_scaler_crop(shutter_lc_camera *camera, int32_t x, int32_t y, uint32_t width, uint32_t height) {
    int result = camera->set_crop(Rectangle(x, y, width, height));
    if (result == 0) camera->crop_set = true;
    return result;
}

}  // extern "C"
