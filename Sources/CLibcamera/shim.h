// libcamera is a C++ library: Swift never imports its headers. This system-library target
// only carries `pkg-config libcamera` (include path and -lcamera -lcamera-base) to the C++
// backend, CLibcameraBackend, which is the one place that includes <libcamera/...>.
