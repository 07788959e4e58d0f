import Testing
import ShutterCore

@Suite("Shot desk: each shot made once, answered once, by its id")
struct ShotDeskTests {
    static let rigShot = RigShot(id: "d4abe817-adb1-4ecb-9166-b47f8ea689e8", at: 1_000, origin: "cam-b")
    static let ownRigShot = RigShot(id: "0b1c2d3e-4f50-4172-8394-a5b6c7d8e9f0", at: 1_000, origin: "cam-a")

    @Test func everyShotGetsAnIdOfItsOwnAndNoneIsTheUnnumberedOne() {
        var desk = ShotDesk()
        let shots = (0..<10).map { _ in desk.shot(pressedAt: .seconds(1)) }
        #expect(Set(shots.map(\.id)).count == 10)
        #expect(!shots.contains { $0.id == .unnumbered })
        #expect(desk.inFlight == shots)
    }

    @Test func aRemoteRequestsIdComesBackWithTheShotItsPhotoAnswers() {
        var desk = ShotDesk()
        let request = JSONValue.string("shot-1")
        let asked = desk.shot(pressedAt: .seconds(2), request: request)
        let press = desk.shot(pressedAt: .seconds(2))
        // The photo carries its shot back; the desk gives the shot in flight, once.
        let answered = desk.answer(asked.id)
        #expect(answered?.request == request)
        #expect(answered?.pressedAt == .seconds(2))
        #expect(desk.answer(asked.id) == nil)
        #expect(desk.answer(press.id)?.request == nil)
        #expect(desk.inFlight.isEmpty)
    }

    @Test func twoRigShotsOfOneInstantAreTwoShotsEachAnsweredByItsOwnPhoto() {
        var desk = ShotDesk()
        let own = desk.shot(pressedAt: .seconds(3), rigShot: Self.ownRigShot, fileName: "own/cam-a.jpg", digest: true)
        let other = desk.shot(pressedAt: .seconds(3), rigShot: Self.rigShot, fileName: "other/cam-a.jpg", digest: true)
        #expect(own.id != other.id)
        #expect(own.takesSavedFrame && other.takesSavedFrame)
        #expect(desk.answer(other.id)?.rigShot == Self.rigShot)
        #expect(desk.answer(own.id)?.rigShot == Self.ownRigShot)
        #expect(desk.answer(own.id) == nil)
    }

    @Test func anotherNodesShotOfAnInstantThisNodeShootsForTheRigIsRefusedUntilThatShotIsAnswered() {
        var desk = ShotDesk()
        #expect(desk.refusal(ofRigShotAt: .seconds(4)) == nil)
        let press = desk.shot(pressedAt: .seconds(4))
        // A press of no rig shot refuses nothing: only rig shots are one per instant.
        #expect(desk.refusal(ofRigShotAt: .seconds(4)) == nil)
        let taking = desk.shot(pressedAt: .seconds(4), rigShot: Self.rigShot)
        #expect(desk.refusal(ofRigShotAt: .seconds(4))
                == "this node is taking shot \(Self.rigShot.id) of the same instant; one photo answers one shot")
        #expect(desk.refusal(ofRigShotAt: .seconds(5)) == nil)
        _ = desk.answer(taking.id)
        _ = desk.answer(press.id)
        #expect(desk.refusal(ofRigShotAt: .seconds(4)) == nil)
    }

    @Test func pastTheLimitTheOldestShotIsForgotten() {
        var desk = ShotDesk()
        let shots = (0...ShotDesk.limit).map { desk.shot(pressedAt: .seconds(Double($0))) }
        #expect(desk.inFlight.count == ShotDesk.limit)
        #expect(desk.answer(shots[0].id) == nil)
        #expect(desk.answer(shots[1].id) == shots[1])
        #expect(desk.answer(shots[ShotDesk.limit].id) == shots[ShotDesk.limit])
        #expect(desk.inFlight.count == ShotDesk.limit - 2)
    }

    @Test func aShotMadeByNoDeskIsUnnumberedAndTakesASavedFrameOnlyForTheRig() {
        let plain = Shot(pressedAt: .seconds(1))
        #expect(plain.id == .unnumbered && !plain.takesSavedFrame && !plain.digest && plain.fileName == nil)
        #expect(Shot(pressedAt: .seconds(1), rigShot: Self.rigShot).takesSavedFrame)
    }
}
