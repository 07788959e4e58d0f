// What the libcamera backend's two sources share: backend.cpp (libcamera's own cameras and
// camera manager, and the C interface) and fake.cpp (the fake camera and fake system that tests
// and `shutter run --simulate` use, and their C functions). Not in include/: SwiftPM exports that
// folder to Swift, which sees only shutter_libcamera.h.
//
// In the namespace shutter_lc, hidden: the plugin exports only the C interface's functions.

#ifndef SHUTTER_LC_BACKEND_INTERNAL_HPP
#define SHUTTER_LC_BACKEND_INTERNAL_HPP

#include "shutter_libcamera.h"

#include <libcamera/libcamera.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <linux/dma-buf.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

namespace shutter_lc __attribute__((visibility("hidden"))) {


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

inline void copy_string(char *target, size_t size, const std::string &source) {
    size_t count = std::min(size - 1, source.size());
    memcpy(target, source.data(), count);
    target[count] = 0;
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
inline std::mutex &stats_lock = *new std::mutex;
inline int managers_created = 0, managers_rebuilt = 0, duplicate_ids = 0, cameras_added = 0;
inline std::set<std::thread::id> &manager_threads = *new std::set<std::thread::id>;

/// Notes that a camera manager call runs on this thread (creating, starting, listing, getting,
/// acquiring, releasing, stopping, destroying).
inline void note_manager_call() {
    std::lock_guard<std::mutex> guard(stats_lock);
    manager_threads.insert(std::this_thread::get_id());
}

/// A camera manager registered a camera: counts it and wakes every watch (shutter_lc_watch_cameras).
void camera_added();

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

/// Cameras opened through the manager and open now (the manager thread's).
inline int open_cameras = 0;

/// Stops and destroys the camera manager (on the manager thread), then closes the orphaned
/// descriptors nothing polls any more. Every Camera shared_ptr must be dropped before.
void retire_manager();

/// A camera opened through the manager was closed (on the manager thread, after its
/// Camera::release); `stale`: it went away without libcamera noticing.
void camera_closed(bool stale);

/// Whether the fake system is installed (shutter_lc_fake_system_install): the camera manager is then the fake's.
bool fake_system_installed();
/// A camera manager over the fake system.
std::unique_ptr<ManagerBackend> make_fake_manager();

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

}  // namespace shutter_lc

/// What both the real and the fake camera do; the C functions dispatch through it.
struct shutter_lc_camera {
    std::string id, model;
    int event_fd = -1;
    /// The current configuration's buffers; NULL before configure.
    std::shared_ptr<shutter_lc::BufferMemory> memory;
    /// FrameDurationLimits (both limits) applied at each start, in microseconds; 0: the camera's default.
    int64_t frame_duration_us = 0;
    /// The crop the first frame since configure reported (its ScalerCrop metadata), while
    /// shutter had set none: the pipeline's own crop for the configured streams. Null until then.
    libcamera::Rectangle reported_crop;
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
    virtual bool scaler_crop_limits(libcamera::Rectangle &control_maximum, libcamera::Rectangle &property) = 0;
    virtual int configure(shutter_lc_stream_config *still, shutter_lc_stream_config *viewfinder, int buffer_count) = 0;
    virtual int start() = 0;
    virtual void stop() = 0;
    virtual int next(shutter_lc_completed *out) = 0;
    virtual int release(int request) = 0;
    virtual int set(int control, double value) = 0;
    virtual int set_named(const char *name, double value) = 0;
    virtual int set_crop(const libcamera::Rectangle &crop) = 0;
    /// FrameDurationLimits' range in microseconds; false when the camera has no such control.
    virtual bool frame_duration_range(int64_t &minimum, int64_t &maximum) = 0;
    /// How many device nodes the unplug check knows as the camera's own, or the negative errno
    /// that kept it from telling them (see shutter_lc_device_nodes).
    virtual int own_device_nodes() { return 0; }
    /// ScalerCrop's default as the control states it (ControlInfo::def); null when not stated.
    virtual libcamera::Rectangle scaler_crop_control_default() = 0;
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
    void crop_reported(const libcamera::Rectangle &crop) {
        if (!crop_set && reported_crop.isNull()) reported_crop = crop;
    }

    /// The crop the pipeline takes unzoomed: ScalerCrop's default as the control states it (the
    /// Raspberry Pi pipeline from 0.1 on: PipelineHandlerBase::configure makes it the first
    /// stream's crop, fitted to its aspect), else the crop the first frame reported (0.0.3's
    /// raspberrypi.cpp states no default but reports its crop in every request's metadata, which
    /// is where picamera2's zoom example reads it). Unlike ScalerCropMaximum, which is the sensor
    /// mode's area, it has the output's aspect: a crop zoomed from it keeps the picture's shape.
    int scaler_crop_default(libcamera::Rectangle &out) {
        libcamera::Rectangle control, property;
        if (!scaler_crop_limits(control, property)) return -ENOTSUP;
        libcamera::Rectangle stated = scaler_crop_control_default();
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
    int scaler_crop_maximum(libcamera::Rectangle &out) {
        libcamera::Rectangle control, property;
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

#endif
