#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService

/// The photos the HTTP server lists and sends: regular files of the output directory, never
/// anything a symbolic link or a hidden (temporary) name leads to.
enum HTTPPhotos {
    /// One photo as the list shows it.
    struct Entry: Sendable, Equatable {
        var name: String
        var size: Int64
        /// Seconds since 1970.
        var modified: Double
    }

    /// The photos of an output directory, newest first (by modification time, then name).
    struct Listing: Sendable {
        var entries: [Entry]
        /// The scan stopped at ``entryLimit`` directory entries: older photos may be left out.
        var truncated: Bool
    }

    /// The most directory entries one scan reads (photos, shot folders and what they hold): a
    /// directory past this is listed in part, and says so, rather than hold the scan for long.
    static let entryLimit = 100_000

    /// Scans `directory` and its shot folders (off the loop: at 20,000 photos this takes most
    /// of a second); an output directory not made yet lists none.
    ///
    /// The corresponding C functions are `opendir`, `readdir` and `fstatat` (`AT_SYMLINK_NOFOLLOW`).
    static func scan(_ directory: String, entryLimit: Int = entryLimit) -> Listing {
        var photos: [Entry] = []
        var budget = entryLimit
        collect(in: directory, prefix: "", into: &photos, budget: &budget)
        photos.sort { $0.modified != $1.modified ? $0.modified > $1.modified : $0.name > $1.name }
        return Listing(entries: photos, truncated: budget <= 0)
    }

    /// `{"ok":true,"total":…,"photos":[{"name":…,"size":…,"modified":…,"thumbnail":…}],"next":…}`:
    /// `limit` photos of `listing` from `offset`. `modified` is in seconds since 1970;
    /// `thumbnail` is the path of its thumbnail (`/thumbs/NAME`); `next` is the path of the next
    /// page, left out on the last; `truncated` is there when the scan stopped at its limit.
    static func page(of listing: Listing, offset: Int, limit: Int) -> String {
        let start = min(max(0, offset), listing.entries.count)
        let end = min(listing.entries.count, start + max(0, limit))
        let items = listing.entries[start..<end].map { photo -> String in
            var line = JSONLine()
            line.add("name", photo.name)
            line.add("size", Int(photo.size))
            line.add("modified", photo.modified, decimals: 3)
            line.add("thumbnail", "/thumbs/" + percentEncoded(photo.name))
            return line.description
        }
        var line = JSONLine()
        line.add("ok", true)
        line.add("total", listing.entries.count)
        if listing.truncated { line.add("truncated", true) }
        line.add("photos", json: "[" + items.joined(separator: ",") + "]")
        if end < listing.entries.count { line.add("next", "/photos/?offset=\(end)&limit=\(limit)") }
        return line.description
    }

    /// Adds the photos of `directory` to `photos`, and (at the top only) those of its folders: a
    /// rig's shots, `SHOT/NODE.jpg`. A symbolic link is never followed. Each entry read costs
    /// one of `budget`.
    private static func collect(in directory: String, prefix: String, into photos: inout [Entry], budget: inout Int) {
        guard let stream = opendir(directory) else { return }
        defer { closedir(stream) }
        let descriptor = dirfd(stream)
        while budget > 0, let entry = readdir(stream) {
            budget -= 1
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            guard HTTPRoute.refusal(ofPhotoName: name) == nil, !name.contains("/") else { continue }
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                photos.append(Entry(name: prefix + name, size: Int64(info.st_size),
                                    modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9))
            case S_IFDIR where prefix.isEmpty:
                collect(in: directory + "/" + name, prefix: name + "/", into: &photos, budget: &budget)
            default:
                break
            }
        }
    }

    /// The regular file `name` (a plain file name, or a folder and a file) in `directory`, opened for reading, or nil.
    /// A symbolic link is refused by the kernel (`O_NOFOLLOW`), a directory or device by `fstat`.
    ///
    /// The corresponding C functions are `open` (the directory) and `openat` (the file).
    static func open(_ name: String, in directory: String) -> CInt? {
        guard HTTPRoute.refusal(ofPhotoName: name) == nil else { return nil }
        var directoryDescriptor = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryDescriptor >= 0 else { return nil }
        defer { close(directoryDescriptor) }
        var file = name
        if let slash = name.firstIndex(of: "/") {
            // The shot's folder, opened without following a link, then the file in it.
            let folder = openat(directoryDescriptor, String(name[..<slash]), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard folder >= 0 else { return nil }
            close(directoryDescriptor)
            directoryDescriptor = folder
            file = String(name[name.index(after: slash)...])
        }
        let descriptor = openat(directoryDescriptor, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    static func contentType(of name: String) -> String {
        let lowered = name.lowercased()
        if lowered.hasSuffix(".jpg") || lowered.hasSuffix(".jpeg") { return "image/jpeg" }
        if lowered.hasSuffix(".png") { return "image/png" }
        return "application/octet-stream"
    }
}

/// The pages served from the binary (no CDN, nothing fetched).
enum HTTPPages {
    /// The only page served without the token: asks for it, in the live view's dark colours
    /// (black, glass grey, the Camera Control yellow), so opening the link does not flash white.
    static func login(wrongToken: Bool, slowed: Bool = false) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="dark">
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <title>shutter: token</title>
        <style>
        html{background:#000;color:#fff}
        body{font:16px -apple-system,system-ui,"Segoe UI",Roboto,sans-serif;margin:0 auto;padding:1em;max-width:30em}
        h1{font-size:22px}
        p{color:rgba(255,255,255,.8)}
        code{color:#ffd60a}
        input{font:inherit;width:100%;box-sizing:border-box;padding:10px 12px;border-radius:10px;border:1px solid rgba(255,255,255,.25);background:rgba(28,28,30,.9);color:#fff}
        input:focus{outline:2px solid #ffd60a;outline-offset:1px}
        button{font:inherit;font-weight:600;padding:8px 22px;border:0;border-radius:18px;background:#ffd60a;color:#000;cursor:pointer}
        </style>
        </head><body>
        <h1>shutter</h1>
        <p>\(slowed ? "Too many wrong tokens in the last minute: wait a minute, then try again. " : wrongToken ? "That token is not this rig's. " : "")Open the link <code>shutter run</code> printed, or enter the rig's token
        (in the state directory, file <code>http-token</code>).</p>
        <form method="post" action="/login"><input name="token" autocomplete="off" autofocus><p><button>Open</button></p></form>
        </body></html>

        """
    }

    /// `/favicon.svg`: a shutter button (a white ring round a white disc) on the viewfinder's
    /// black, with the Camera Control's yellow mark above it; drawn here, so it needs no file.
    static let favicon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
        <rect width="64" height="64" rx="14" fill="#000"/>
        <rect x="29" y="6" width="6" height="10" rx="3" fill="#ffd60a"/>
        <circle cx="32" cy="38" r="19" fill="none" stroke="#fff" stroke-width="4"/>
        <circle cx="32" cy="38" r="13" fill="#fff"/>
        </svg>

        """
}
