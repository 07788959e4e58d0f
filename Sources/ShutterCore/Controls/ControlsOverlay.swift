/// The controls as text for a terminal: what the live-view page draws over the picture.
///
/// Drawn as the phone draws Camera Control: the control's label and value centred, above a scale
/// that moves under a fixed centre mark (ticks for a slider, the neighbouring titles for a picker
/// or a list of values); the chooser's list with the highlighted control; then one status line.
public enum ControlsOverlay {
    /// The overlay's lines for `snapshot`, each at most `width` characters, the status line last.
    public static func lines(_ snapshot: ControlsSnapshot, photos: Int, lastPhoto: String?, width: Int) -> [String] {
        let width = max(width, 20)
        var lines: [String] = []
        if snapshot.state == "active" || snapshot.state == "adjusting",
           let current = snapshot.controls.first(where: { $0.spec.id == snapshot.current }) {
            let display = ControlDisplay(current.value, of: current.spec)
            // One column short of the width, so a line never wraps and the redraw stays in place.
            let half = min((width - 1) / 2, 30)
            lines.append(centred("\(current.spec.label)  \(display.text)", half: half))
            lines.append(scale(current.spec, current.value, half: half))
            lines.append(String(repeating: " ", count: half) + "▲")
        }
        var status = statusLine(snapshot, photos: photos, lastPhoto: lastPhoto)
        if status.count > width - 1, let lastPhoto, let slash = lastPhoto.lastIndex(of: "/") {
            // The file's name is what tells one photo from the last: its directory goes first.
            status = statusLine(snapshot, photos: photos, lastPhoto: "…" + lastPhoto[slash...])
        }
        lines.append(status)
        return lines.map { clipped($0, to: width - 1) }
    }

    /// The status line: the active control and its value, the chooser when open, the last photo.
    public static func statusLine(_ snapshot: ControlsSnapshot, photos: Int, lastPhoto: String?) -> String {
        var parts: [String] = []
        switch snapshot.state {
        case "choosing":
            // Disabled controls are not in the list: the chooser skips them.
            let items = snapshot.controls.filter(\.spec.enabled)
                .map { $0.spec.id == snapshot.highlighted ? "[\($0.spec.label)]" : $0.spec.label }
            parts.append("chooser: " + items.joined(separator: " "))
        case "inactive":
            parts.append(snapshot.controls.isEmpty ? "no controls" : "controls hidden (light press shows them)")
        default:
            if let current = snapshot.controls.first(where: { $0.spec.id == snapshot.current }) {
                let marker = snapshot.state == "adjusting" ? "◆" : "●"
                parts.append("\(marker) \(current.spec.label) \(ControlDisplay(current.value, of: current.spec).text)")
            }
        }
        parts.append("photos: \(photos)" + (lastPhoto.map { ", last \($0)" } ?? ""))
        return parts.joined(separator: " │ ")
    }

    /// The scale under the centre mark: `half` columns either side of the current value.
    static func scale(_ spec: ControlSpec, _ value: ControlValue, half: Int) -> String {
        switch spec.kind {
        case .picker(let count, _):
            guard case .index(let index) = value else { return "" }
            return titles((0..<count).map { ControlDisplay(.index($0), of: spec).text }, current: index, half: half)
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            if case .list(let list) = values {
                let current = ControlScale(spec: spec, padSpan: 1).position(of: value)
                return titles(list.map { ControlDisplay(.number($0), of: spec).text },
                              current: Int(current.rounded()), half: half)
            }
            return ticks(ControlScale(spec: spec, padSpan: 1), spec, value, half: half)
        }
    }

    /// A tick per unit of the slider (a step, or a 40th of a continuous range), spaced so the
    /// range fills the scale; longer ticks at the ends and at every fifth unit (every whole EV for
    /// exposure in thirds); nothing beyond the ends.
    private static func ticks(_ scale: ControlScale, _ spec: ControlSpec, _ value: ControlValue, half: Int) -> String {
        guard scale.units > 0, scale.units.isFinite else { return String(repeating: " ", count: half) + "┃" }
        let position = scale.position(of: value)
        let columnsPerUnit = max(1, min(4, Int(Double(2 * half) / scale.units)))
        var text = ""
        for column in -half...half {
            let place = position + Double(column) / Double(columnsPerUnit)
            let unit = place.rounded()
            guard unit >= 0, unit <= scale.units, abs(place - unit) < 0.5 / Double(columnsPerUnit) else {
                text.append(" ")
                continue
            }
            text.append(isMajor(unit, of: scale, spec) ? "|" : "·")
        }
        return text
    }

    private static func isMajor(_ unit: Double, of scale: ControlScale, _ spec: ControlSpec) -> Bool {
        if unit == 0 || unit == scale.units.rounded() { return true }
        if case .systemExposureBias = spec.kind, case .number(let ev) = scale.value(at: unit) {
            return abs(ev - ev.rounded()) < 1e-6
        }
        return Int(unit) % 5 == 0
    }

    /// The titles around the current one, the current one in brackets under the centre mark.
    private static func titles(_ all: [String], current: Int, half: Int) -> String {
        guard all.indices.contains(current) else { return "" }
        let centre = "[\(all[current])]"
        let left = all[..<current].joined(separator: "  ")
        let right = all[(current + 1)...].joined(separator: "  ")
        // The bracketed title is centred on the mark: what sits left of its middle fills `half`.
        let leftRoom = half - centre.count / 2
        var leftText = left.isEmpty ? "" : left + "  "
        if leftText.count > leftRoom { leftText = String(leftText.suffix(max(leftRoom, 0))) }
        let padded = String(repeating: " ", count: max(leftRoom - leftText.count, 0)) + leftText
        return padded + centre + (right.isEmpty ? "" : "  " + right)
    }

    private static func centred(_ text: String, half: Int) -> String {
        String(repeating: " ", count: max(half - text.count / 2, 0)) + text
    }

    private static func clipped(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width))
    }
}
