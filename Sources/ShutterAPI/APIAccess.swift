#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// What an API client may do: everything, or only look.
public enum APIRole: String, Hashable, Sendable {
    /// Every command.
    case control
    /// `status` and `subscribe` only.
    case view
}

/// Who may use the daemon's API, and how, decided from a client's peer credentials.
///
/// With a control group, a client controls when it is root, the daemon's own user or a member
/// of that group. With a view group too, a member of the view group may only look and any other
/// client is refused when it connects (the socket file is then open to every user: the
/// credentials decide, so one file serves both groups); without one, any other client that can
/// connect (the socket file's permissions decide that) may only look. Without a control group,
/// every client that can connect controls.
public struct APIAccess: Hashable, Sendable {
    /// A group, by name (for messages) and id.
    public struct Group: Hashable, Sendable {
        public var name: String
        public var id: gid_t

        public init(name: String, id: gid_t) {
            self.name = name
            self.id = id
        }

        /// The group called `name`, for the command-line option `option`.
        ///
        /// - Throws: ``CommandFailure`` when no group has that name.
        ///
        /// The corresponding C function is `getgrnam_r`.
        public init(named name: String, option: String) throws {
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
                throw CommandFailure("\(option) \(name): no such group"
                    + (result != 0 ? " (\(Errno(rawValue: result)))" : "")
                    + "; create it (groupadd --system \(name)) or leave \(option) out")
            }
            self.init(name: name, id: entry.gr_gid)
        }
    }

    /// The group whose members control; nil: everyone who can connect controls.
    public var controlGroup: Group?
    /// The group whose members may only look; nil: everyone else who can connect looks.
    /// Only with a control group.
    public var viewGroup: Group?
    /// Users who control whatever their groups.
    public var privilegedUsers: Set<uid_t>

    /// - Parameters:
    ///   - controlGroup: the group whose members control; nil lets every client control.
    ///   - viewGroup: the group whose members may look, the rest being refused; nil lets every
    ///     other client look. Ignored without a control group.
    ///   - privilegedUsers: who controls whatever their groups; by default root and the
    ///     daemon's own user (its `shutter reload`, the unit's `ExecReload=`).
    public init(controlGroup: Group?, viewGroup: Group? = nil, privilegedUsers: Set<uid_t> = [0, getuid()]) {
        self.controlGroup = controlGroup
        self.viewGroup = controlGroup == nil ? nil : viewGroup
        self.privilegedUsers = privilegedUsers
    }

    /// Every client controls (no control group: the behaviour before roles).
    public static let everyoneControls = APIAccess(controlGroup: nil)

    /// Control by the members of the group named `controlGroup` (`--control-group`), looking by
    /// those of `viewGroup` (`--view-group`) when given.
    ///
    /// - Throws: ``CommandFailure`` when a group does not exist, or a view group comes without
    ///   a control group.
    public init(controlGroupNamed controlGroup: String?, viewGroupNamed viewGroup: String? = nil) throws {
        guard let controlGroup else {
            if let viewGroup {
                throw CommandFailure("--view-group \(viewGroup) needs --control-group: without one, every client that can connect controls")
            }
            self.init(controlGroup: nil)
            return
        }
        self.init(controlGroup: try Group(named: controlGroup, option: "--control-group"),
                  viewGroup: try viewGroup.map { try Group(named: $0, option: "--view-group") })
    }

    /// The permissions of the socket file: open to every user when the view group decides who
    /// looks (the daemon refuses the rest by their credentials), else the daemon's group only.
    public var socketMode: mode_t { viewGroup == nil ? 0o660 : 0o666 }

    /// The role of a client with `peer`'s credentials, or nil when it may not use the API at all.
    /// A client whose credentials are unknown only looks when there is a control group, and is
    /// refused when there is a view group too.
    public func role(of peer: UnixSocket.PeerCredentials?) -> APIRole? {
        guard let controlGroup else { return .control }
        guard let peer else { return viewGroup == nil ? .view : nil }
        if privilegedUsers.contains(peer.user) || peer.isMember(of: controlGroup.id) { return .control }
        guard let viewGroup else { return .view }
        return peer.isMember(of: viewGroup.id) ? .view : nil
    }

    /// Why a client with `peer`'s credentials is refused when it connects (its role is nil).
    public func refusalToConnect(_ peer: UnixSocket.PeerCredentials?) -> CommandRefusal {
        let groups = [controlGroup, viewGroup].compactMap { $0?.name }.joined(separator: " nor ")
        let who = peer.map { "user \($0.user)" } ?? "a client whose credentials are unknown"
        return CommandRefusal(.forbidden, "permission denied: \(who) is in neither group \(groups); ask to be added to one")
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
        case .capture, .rigCapture: "capture"
        case .set: "set"
        case .select: "select"
        case .enable: "enable"
        case .disable: "disable"
        case .reload: "reload"
        }
    }
}
