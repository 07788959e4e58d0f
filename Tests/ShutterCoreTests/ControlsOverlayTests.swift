import Testing
@testable import ShutterCore

/// The terminal's overlay: the control over a scale as the phone draws it, the chooser,
/// the status line, never wider than the terminal.
@Suite("Controls overlay in a terminal")
struct ControlsOverlayTests {
    /// The simulator board's controls (zoom, exposure in thirds, the filter picker), shown with a
    /// light press and then `select`ed to `control` when given.
    static func shown(_ control: String? = nil, value: ControlValue? = nil) throws -> ControlsSnapshot {
        let board = Rigs.simulator
        var controls = ControlsStateMachine(controls: board.controls, padCount: 6, timings: board.gestures, initialValues: nil)
        var actions: [ControlsStateMachine.Action] = []
        controls.lightPress(at: .zero, into: &actions)
        if let control { try controls.select(control, at: .zero, into: &actions) }
        if let control, let value { try controls.set(control, to: value, at: .zero, into: &actions) }
        return controls.snapshot
    }

    static let width = 80
    static let half = 30

    @Test func hiddenControlsAreTheStatusLineAlone() {
        let board = Rigs.simulator
        let controls = ControlsStateMachine(controls: board.controls, padCount: 6, timings: board.gestures, initialValues: nil)
        #expect(ControlsOverlay.lines(controls.snapshot, photos: 2, lastPhoto: "photos/a.jpg", width: Self.width)
            == ["controls hidden (light press shows them) │ photos: 2, last photos/a.jpg"])
    }

    @Test func aStatusLineTooWideKeepsTheLastPhotosNameAndDropsItsDirectory() {
        let board = Rigs.simulator
        let controls = ControlsStateMachine(controls: board.controls, padCount: 6, timings: board.gestures, initialValues: nil)
        let path = "/home/someone/rigs/bookscanner/photos/IMG_20261207_230914_490_0001.jpg"
        let lines = ControlsOverlay.lines(controls.snapshot, photos: 12, lastPhoto: path, width: 100)
        #expect(lines == ["controls hidden (light press shows them) │ photos: 12, last …/IMG_20261207_230914_490_0001.jpg"])
        // One that fits keeps its directory.
        #expect(ControlsOverlay.lines(controls.snapshot, photos: 12, lastPhoto: path, width: 140).last?.contains(path) == true)
    }

    @Test func aSliderAtItsLowEndHasNoTicksLeftOfTheMark() throws {
        let lines = ControlsOverlay.lines(try Self.shown(), photos: 0, lastPhoto: nil, width: Self.width)
        try #require(lines.count == 4)
        #expect(lines[0].trimmingCharacters(in: .whitespaces) == "Zoom  1.0×")
        let scale = Array(lines[1])
        // Zoom at 1.0× sits at the range's low end: nothing beyond it, the end's long tick on the mark.
        #expect(scale.prefix(Self.half).allSatisfy { $0 == " " })
        #expect(scale[Self.half] == "|")
        #expect(scale[(Self.half + 1)...].contains("·"))
        #expect(lines[2] == String(repeating: " ", count: Self.half) + "▲")
        #expect(lines[3] == "● Zoom 1.0× │ photos: 0")
    }

    @Test func exposureInThirdsHasALongTickAtEachWholeEV() throws {
        let lines = ControlsOverlay.lines(try Self.shown("exposure"), photos: 0, lastPhoto: nil, width: Self.width)
        try #require(lines.count == 4)
        let scale = Array(lines[1])
        // ±2 EV in thirds is 12 units: 4 columns a unit, so a whole EV (3 units) is 12 columns.
        #expect(scale[Self.half] == "|")
        #expect(scale[Self.half + 4] == "·")
        #expect(scale[Self.half + 8] == "·")
        #expect(scale[Self.half + 12] == "|")
        #expect(scale[Self.half - 12] == "|")
        #expect(scale[Self.half + 2] == " ")
        // Both ends of the range are in view, with nothing beyond them.
        #expect(scale[Self.half + 24] == "|")
        #expect(scale.count == 2 * Self.half + 1)
        #expect(scale[Self.half + 25] == " ")
    }

    @Test func aPickerCentresItsCurrentTitleUnderTheMark() throws {
        let lines = ControlsOverlay.lines(try Self.shown("filter", value: .index(2)), photos: 0, lastPhoto: nil, width: Self.width)
        try #require(lines.count == 4)
        #expect(lines[1].contains("None  Mono  [Vivid]  Warm"))
        let open = try #require(lines[1].firstIndex(of: "["))
        let start = lines[1].distance(from: lines[1].startIndex, to: open)
        #expect(start + "[Vivid]".count / 2 == Self.half)
    }

    @Test func theChooserListsTheEnabledControlsWithTheHighlight() throws {
        let board = Rigs.simulator
        var controls = ControlsStateMachine(controls: board.controls, padCount: 6, timings: board.gestures, initialValues: nil)
        var actions: [ControlsStateMachine.Action] = []
        controls.doubleLightPress(at: .zero, into: &actions)
        try controls.setEnabled("exposure", false, at: .zero, into: &actions)
        #expect(ControlsOverlay.lines(controls.snapshot, photos: 0, lastPhoto: nil, width: Self.width)
            == ["chooser: [Zoom] Filter │ photos: 0"])
    }

    @Test(arguments: [1, 20, 33, 80, 200])
    func noLineIsAsWideAsTheTerminal(width: Int) throws {
        for snapshot in [try Self.shown(), try Self.shown("exposure"), try Self.shown("filter")] {
            let lines = ControlsOverlay.lines(snapshot, photos: 123, lastPhoto: "photos/IMG_20261203_182842_971_0001.jpg", width: width)
            // A line as wide as the terminal wraps and the redraw would climb too few lines.
            #expect(lines.allSatisfy { $0.count < max(width, 20) })
        }
    }
}
