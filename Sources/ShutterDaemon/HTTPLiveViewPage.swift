extension HTTPPages {
    /// The live-view page (the placeholder until the page lands on branch r21-page).
    static let liveView = placeholder
}
