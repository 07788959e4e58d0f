// The real backend: libcamera's cameras, streams, requests and controls, and its camera manager,
// behind the C interface in shutter_libcamera.h. The fake camera and fake system behind the same
// interface are fake.cpp's; what both use is backend_internal.hpp's. Built against Debian 12's
// libcamera 0.0.3 through 0.7 (Debian trixie's 0.4, Raspberry Pi OS's own 0.5 to 0.7, Debian
// sid's 0.7); the differences are behind #if on <libcamera/version.h>, or written so that both
// APIs take them (string properties, std::string in 0.4 and std::string_view from 0.6; a
// buffer's planes, a vector in 0.4 and a Span from 0.6).
//
// Threads: libcamera completes requests on its own thread. The completion handler only moves
// the request into a locked queue and writes the eventfd; the event loop takes it from there
// (shutter_lc_next), so no Swift code ever runs on libcamera's thread. The camera manager
// belongs to one thread of the backend's own, for the life of the process (ManagerThread).
//
// Built as a plugin, libshutter-libcamera.so (the package's `shutter-libcamera` product), which
// shutter opens with dlopen only when a board's camera may be a libcamera one
// (CLibcameraLoader's loader.c): libcamera and what it links are not mapped otherwise.

#include "backend_internal.hpp"

#include <libcamera/version.h>

#include <cstdio>
#include <map>

#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <linux/media.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 4
// 0.4 added unsigned and point control types.
#define SHUTTER_LC_HAS_UNSIGNED_CONTROLS 1
#else
#define SHUTTER_LC_HAS_UNSIGNED_CONTROLS 0
#endif

using namespace libcamera;

/// A watch on cameras added (shutter_lc_watch_cameras).
struct shutter_lc_watch {
    void (*wake)(void *);   // the caller's, called under watch_lock
    void *context;
    unsigned added = 0;     // cameras added since the last take (guarded by watch_lock)
};

struct shutter_lc_buffers {
    std::shared_ptr<shutter_lc::BufferMemory> memory;
};

namespace shutter_lc {

namespace {

int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
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

std::mutex &watch_lock = *new std::mutex;
std::set<shutter_lc_watch *> &watches = *new std::set<shutter_lc_watch *>;

}  // namespace

/// A camera manager registered a camera (its cameraAdded signal: on libcamera's own thread,
/// where handlers must not block): counts it for every watch and calls each one's wake, which
/// only rings a loop's bell.
void camera_added() {
    {
        std::lock_guard<std::mutex> guard(stats_lock);
        cameras_added++;
    }
    std::lock_guard<std::mutex> guard(watch_lock);
    for (shutter_lc_watch *watch : watches) {
        watch->added++;
        watch->wake(watch->context);
    }
}

namespace {

// State of the manager thread's: read and written only there.

/// The process's one camera manager (libcamera allows one): started on first use, kept while
/// cameras come and go (hot-plug), replaced only after a stale camera (see camera_closed).
std::unique_ptr<ManagerBackend> &manager = *new std::unique_ptr<ManagerBackend>;
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

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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
        out->frame_duration_us = metadata.get(controls::FrameDuration).value_or(0);
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

std::unique_ptr<ManagerBackend> make_manager() {
    if (fake_system_installed()) return make_fake_manager();
    return std::make_unique<LibcameraManager>();
}

}  // namespace

}  // namespace shutter_lc

using namespace shutter_lc;

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

shutter_lc_watch *shutter_lc_watch_cameras(void (*wake)(void *), void *context) {
    auto *watch = new (std::nothrow) shutter_lc_watch;
    if (!watch) return nullptr;
    watch->wake = wake;
    watch->context = context;
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
