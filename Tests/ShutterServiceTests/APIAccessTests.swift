#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterAPI
@testable import ShutterNode
@testable import ShutterService
@testable import ShutterSystem

/// The process's own groups: its primary group and its supplementary ones.
func ownGroups() -> Set<gid_t> {
    var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
    let count = getgroups(CInt(groups.count), &groups)
    return Set(groups.prefix(Int(max(count, 0)))).union([getgid()])
}

/// A group id this process is not in (the group need not exist: the policy only compares ids).
func foreignGroup() -> gid_t {
    let own = ownGroups()
    return (60_000..<65_000).first { !own.contains(gid_t($0)) }.map { gid_t($0) }!
}

@Suite struct APIAccessTests {
    static let shutter = APIAccess.Group(name: "shutter", id: 990)
    static let access = APIAccess(controlGroup: shutter, privilegedUsers: [0, 1000])

    @Test(arguments: [
        (UnixSocket.PeerCredentials(user: 0, group: 0), APIRole.control),
        (UnixSocket.PeerCredentials(user: 1000, group: 1000), .control),
        (UnixSocket.PeerCredentials(user: 1001, group: 990), .control),
        (UnixSocket.PeerCredentials(user: 1001, group: 100, groups: [27, 990]), .control),
        (UnixSocket.PeerCredentials(user: 1001, group: 100, groups: [27, 44]), .view),
        (UnixSocket.PeerCredentials(user: 1001, group: 991, groups: []), .view),
    ])
    func aControlGroupDecidesTheRole(peer: UnixSocket.PeerCredentials, role: APIRole) {
        #expect(Self.access.role(of: peer) == role)
    }

    @Test func unknownCredentialsOnlyLookWhenThereIsAControlGroup() {
        #expect(Self.access.role(of: nil) == .view)
        #expect(APIAccess.everyoneControls.role(of: nil) == .control)
    }

    @Test func withoutAControlGroupEveryoneControls() {
        let stranger = UnixSocket.PeerCredentials(user: 4242, group: 4242, groups: [1, 2, 3])
        #expect(APIAccess.everyoneControls.role(of: stranger) == .control)
        #expect(APIAccess(controlGroup: nil, privilegedUsers: []).role(of: stranger) == .control)
    }

    static let everyCommand: [APICommand] = [
        .status, .capture, .set(control: "zoom", to: .value(2)), .select(control: "zoom"),
        .enable(.capture), .disable(.control("zoom")), .reload,
    ]

    @Test(arguments: everyCommand)
    func aViewerMayOnlyAskAndListen(command: APICommand) {
        #expect(APIAccess.allows(.control, command))
        // (subscribe is the socket's own, open to every role: APIRoleServerTests)
        let looks = command == .status
        #expect(APIAccess.allows(.view, command) == looks)
        #expect((Self.access.refusal(of: command, for: .view) == nil) == looks)
        #expect(Self.access.refusal(of: command, for: .control) == nil)
    }

    @Test func theRefusalSaysWhatIsNeededAndWhatIsLeft() {
        #expect(Self.access.refusal(of: .capture, for: .view)
            == CommandRefusal(.forbidden, "permission denied: capture needs the control role (group shutter); this client may only status and subscribe"))
        #expect(Self.access.refusal(of: .set(control: "zoom", to: .index(1)), for: .view)?.message.hasPrefix("permission denied: set needs") == true)
    }

    static let withViewers = APIAccess(controlGroup: shutter, viewGroup: .init(name: "shutter-view", id: 991),
                                       privilegedUsers: [0, 1000])

    @Test(arguments: [
        (UnixSocket.PeerCredentials(user: 0, group: 0), APIRole?.some(.control)),
        (UnixSocket.PeerCredentials(user: 1001, group: 100, groups: [990]), .control),
        (UnixSocket.PeerCredentials(user: 1001, group: 100, groups: [27, 991]), .view),
        (UnixSocket.PeerCredentials(user: 1001, group: 991, groups: []), .view),
        (UnixSocket.PeerCredentials(user: 1001, group: 100, groups: [27, 44]), nil),
    ])
    func withAViewGroupOnlyItsMembersLook(peer: UnixSocket.PeerCredentials, role: APIRole?) {
        #expect(Self.withViewers.role(of: peer) == role)
    }

    @Test func withAViewGroupUnknownCredentialsAreRefusedAndTheSocketIsOpenToAll() {
        #expect(Self.withViewers.role(of: nil) == nil)
        #expect(Self.withViewers.socketMode == 0o666)
        #expect(Self.access.socketMode == 0o660)
        #expect(APIAccess.everyoneControls.socketMode == 0o660)
        #expect(Self.withViewers.refusalToConnect(UnixSocket.PeerCredentials(user: 1001, group: 100))
            == CommandRefusal(.forbidden, "permission denied: user 1001 is in neither group shutter nor shutter-view; ask to be added to one"))
    }

    @Test func aViewGroupWithoutAControlGroupIsRefused() {
        #expect(APIAccess(controlGroup: nil, viewGroup: .init(name: "shutter-view", id: 991)).viewGroup == nil)
        #expect {
            try APIAccess(controlGroupNamed: nil, viewGroupNamed: "root")
        } throws: { error in
            "\(error)".contains("--view-group root needs --control-group")
        }
    }

    @Test func aControlGroupIsFoundByName() throws {
        let root = try APIAccess(controlGroupNamed: "root")
        #expect(root.controlGroup == APIAccess.Group(name: "root", id: 0))
        #expect(root.privilegedUsers == [0, getuid()])
        #expect(root.viewGroup == nil)
        #expect(try APIAccess(controlGroupNamed: "root", viewGroupNamed: "root").viewGroup == APIAccess.Group(name: "root", id: 0))
        #expect {
            try APIAccess(controlGroupNamed: "no-such-shutter-group")
        } throws: { error in
            "\(error)".contains("--control-group no-such-shutter-group: no such group")
        }
        #expect {
            try APIAccess(controlGroupNamed: "root", viewGroupNamed: "no-such-shutter-group")
        } throws: { error in
            "\(error)".contains("--view-group no-such-shutter-group: no such group")
        }
    }
}

@Suite struct PeerCredentialsTests {
    /// Both ends of a Unix socket pair: the peer is this process.
    @Test func thePeerOfASocketPairIsThisProcessWithItsGroups() throws {
        var ends: [CInt] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let peer = try #require(UnixSocket.peerCredentials(ends[0]))
        #expect(peer.pid == getpid())
        #expect(peer.user == getuid())
        #expect(peer.group == getgid())
        #expect(Set(peer.groups).union([peer.group]) == ownGroups())
        // SO_PEERGROUPS answers on any kernel since 4.13.
        let groups = try #require(UnixSocket.peerGroups(ends[0]))
        #expect(Set(groups).isSubset(of: ownGroups()))
    }

    @Test func theGroupDatabaseFallbackIncludesThePrimaryGroup() throws {
        let groups = try #require(UnixSocket.groups(ofUser: getuid(), primaryGroup: getgid()))
        #expect(groups.contains(getgid()))
        #expect(UnixSocket.groups(ofUser: 4_000_000_000, primaryGroup: 0) == nil)
        #expect(UnixSocket.userName(0) == "root")
        #expect(UnixSocket.userName(4_000_000_000) == nil)
    }
}

/// The roles on the real socket. Tests run as root or as the daemon's user, who always control,
/// so the policy is given without that exception.
@Suite(.serialized) struct APIRoleServerTests {
    func options(controlGroup: gid_t) -> NodeOptions {
        var options = NodeOptions()
        options.apiAccess = APIAccess(controlGroup: .init(name: "shutter-test", id: controlGroup), privilegedUsers: [])
        return options
    }

    @Test func aClientOutsideTheControlGroupMayOnlyAskAndListen() throws {
        let rig = try TestRig(options: options(controlGroup: foreignGroup()), api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        let status = try client.call("{\"id\":1,\"cmd\":\"status\"}")
        #expect(status["ok"] == .bool(true))
        #expect(status["board"] == .string("test"))
        let capture = try client.call("{\"id\":2,\"cmd\":\"capture\"}")
        #expect(capture["id"] == .number(2, text: "2"))
        #expect(capture["ok"] == .bool(false))
        #expect(capture["error"] == .string("permission denied: capture needs the control role (group shutter-test); this client may only status and subscribe"))
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2}")["ok"] == .bool(false))
        #expect(try client.call("{\"cmd\":\"reload\"}")["ok"] == .bool(false))
        #expect(try client.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
        #expect(!rig.names.contains("capture"))
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(1))
        // The connection stays open after a refusal.
        #expect(try client.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
    }

    @Test func aClientInTheControlGroupControls() throws {
        let rig = try TestRig(options: options(controlGroup: getgid()), api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2}")["ok"] == .bool(true))
        #expect(try client.call("{\"cmd\":\"capture\"}")["ok"] == .bool(true))
        #expect(rig.lines.contains { $0.name == "capture" && $0.line.contains("\"action\": \"remote\"") })
    }

    @Test func withAViewGroupAClientInNeitherGroupIsRefusedAtOnceAndTheSocketIsOpenToAll() throws {
        var options = NodeOptions()
        options.apiAccess = APIAccess(controlGroup: .init(name: "shutter-test", id: foreignGroup()),
                                      viewGroup: .init(name: "shutter-test-view", id: foreignGroup() + 1), privilegedUsers: [])
        let rig = try TestRig(options: options, api: true)
        defer { rig.close() }
        var info = stat()
        #expect(stat(rig.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666)
        let client = try TestClient(rig)
        let refusal = try client.call("{\"cmd\":\"status\"}")
        #expect(refusal["ok"] == .bool(false))
        #expect(refusal["kind"] == .string("forbidden"))
        #expect(refusal["error"] == .string("permission denied: user \(getuid()) is in neither group shutter-test nor shutter-test-view; ask to be added to one"))
    }

    @Test func withAViewGroupItsMemberMayOnlyAskAndListen() throws {
        var options = NodeOptions()
        options.apiAccess = APIAccess(controlGroup: .init(name: "shutter-test", id: foreignGroup()),
                                      viewGroup: .init(name: "shutter-test-view", id: getgid()), privilegedUsers: [])
        let rig = try TestRig(options: options, api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
        #expect(try client.call("{\"cmd\":\"capture\"}")["kind"] == .string("forbidden"))
        #expect(try client.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
    }

    @Test func anUnknownControlGroupStopsTheDaemonFromStarting() throws {
        var options = NodeOptions()
        options.controlGroup = "no-such-shutter-group"
        #expect {
            _ = try TestRig(options: options, api: true)
        } throws: { error in
            "\(error)".contains("no such group")
        }
    }
}
