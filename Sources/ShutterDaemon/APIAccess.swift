#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterGPIO

/// What an API client may do: everything, or only look.
public enum APIRole: String, Hashable, Sendable {
    /// Every command.
    case control
    /// `status` and `subscribe` only.
    case view
}

/// Who controls the daemon through its API, decided from a client's peer credentials.
///
/// With a control group, a client controls when it is root, the daemon's own user or a member
/// of that group; any other client that can connect (the socket file's permissions decide that)
/// may only look. Without one, every client that can connect controls.
public struct APIAccess: Hashable, Sendable {
    /// A group, by name (for messages) and id.
    public struct Group: Hashable, Sendable {
        public var name: String
        public var id: gid_t

        public init(name: String, id: gid_t) {
            self.name = name
            self.id = id
        }
    }

    /// The group whose members control; nil: everyone who can connect controls.
    public var controlGroup: Group?
    /// Users who control whatever their groups.
    public var privilegedUsers: Set<uid_t>

    /// - Parameters:
    ///   - controlGroup: the group whose members control; nil lets every client control.
    ///   - privilegedUsers: who controls whatever their groups; by default root and the
    ///     daemon's own user (its `shutter reload`, the unit's `ExecReload=`).
    public init(controlGroup: Group?, privilegedUsers: Set<uid_t> = [0, getuid()]) {
        self.controlGroup = controlGroup
        self.privilegedUsers = privilegedUsers
    }

    /// Every client controls (no control group: the behaviour before roles).
    public static let everyoneControls = APIAccess(controlGroup: nil)

    /// Control by the members of the group named `name` (`--control-group`).
    ///
    /// - Throws: ``CommandFailure`` when no group has that name.
    ///
    /// The corresponding C function is `getgrnam_r`.
    public init(controlGroupNamed name: String) throws {
        var entry = group()
        var found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        var result = getgrnam_r(name, &entry, &buffer, buffer.count, &found)
        // ERANGE: a group with many members needs a larger buffer for their names.
        while result == ERANGE, buffer.count < 1 << 22 {
            buffer = [CChar](repeating: 0, count: buffer.count * 4)
            result = getgrnam_r(name, &entry, &buffer, buffer.count, &found)
        }
        guard result == 0, found != nil else {
            throw CommandFailure("--control-group \(name): no such group"
                + (result != 0 ? " (\(Errno(rawValue: result)))" : "")
                + "; create it (groupadd --system \(name)) or leave --control-group out to let every client control")
        }
        self.init(controlGroup: Group(name: name, id: entry.gr_gid))
    }

    /// The role of a client with `peer`'s credentials; a client whose credentials are unknown
    /// only looks when there is a control group.
    public func role(of peer: UnixSocket.PeerCredentials?) -> APIRole {
        guard let controlGroup else { return .control }
        guard let peer else { return .view }
        if privilegedUsers.contains(peer.user) || peer.isMember(of: controlGroup.id) { return .control }
        return .view
    }

    /// Whether `role` may run `command`.
    public static func allows(_ role: APIRole, _ command: APICommand) -> Bool {
        switch (role, command) {
        case (.control, _), (.view, .status): true
        case (.view, _): false
        }
    }

    /// Why a client in `role` may not run `command`, or nil when it may.
    public func refusal(of command: APICommand, for role: APIRole) -> CommandRefusal? {
        guard !Self.allows(role, command) else { return nil }
        let group = controlGroup.map { " (group \($0.name))" } ?? ""
        return CommandRefusal(.forbidden, "permission denied: \(command.name) needs the control role\(group); this client may only status and subscribe")
    }
}

extension APICommand {
    /// The command's `cmd`, as a request names it.
    var name: String {
        switch self {
        case .status: "status"
        case .capture: "capture"
        case .set: "set"
        case .select: "select"
        case .enable: "enable"
        case .disable: "disable"
        case .reload: "reload"
        }
    }
}
