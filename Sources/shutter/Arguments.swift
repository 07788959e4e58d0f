/// A command-line option a command accepts.
struct OptionSpec: Sendable {
    /// `--board`.
    var name: String
    /// `BOARD` for an option that takes a value; `nil` for a flag.
    var valueName: String?
    var help: String
}

/// A command: its name, what it does, and what it accepts.
struct CommandSpec: Sendable {
    var name: String
    var summary: String
    /// The synopsis after `shutter NAME`, e.g. `--board BOARD [--out FILE]`.
    var synopsis: String
    var details: String = ""
    var options: [OptionSpec]
    /// Names of positional arguments, in order (`BOARD`).
    var positionals: [String] = []
    /// Options that must be given.
    var required: [String] = []
    /// Takes any number of words after the options (`ctl set exposure -1`); from the first word on,
    /// nothing is read as an option.
    var takesWords = false

    var help: String {
        var text = "usage: shutter \(name) \(synopsis)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        let all = options + [OptionSpec(name: "--help", valueName: nil, help: "show this help")]
        text += "\noptions:\n"
        let width = all.map { $0.name.count + ($0.valueName.map { $0.count + 1 } ?? 0) }.max() ?? 0
        for option in all {
            let left = option.name + (option.valueName.map { " \($0)" } ?? "")
            text += "  " + left + String(repeating: " ", count: width - left.count + 2) + option.help + "\n"
        }
        return text
    }
}

/// A usage mistake: printed as one line, exit status 2.
struct UsageError: Error {
    var message: String
}

/// What was given on the command line for one command.
struct ParsedArguments {
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var wantsHelp = false

    func value(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The value of `name` as a positive number, or a usage error naming the option.
    func number(_ name: String, command: String) throws -> Double? {
        guard let text = values[name] else { return nil }
        guard let number = Double(text), number.isFinite, number > 0 else {
            throw UsageError(message: "\(name) needs a positive number, not '\(text)' (see 'shutter \(command) --help')")
        }
        return number
    }

    /// Parses `arguments` (after the command name) against `spec`.
    init(_ arguments: [String], spec: CommandSpec) throws {
        var index = 0
        let hint = "(see 'shutter \(spec.name) --help')"
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if spec.takesWords, !positionals.isEmpty {
                positionals.append(argument)
                continue
            }
            if argument == "--help" || argument == "-h" {
                wantsHelp = true
                continue
            }
            if argument.hasPrefix("--") {
                var name = argument
                var inlineValue: String?
                if let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    inlineValue = String(argument[argument.index(after: equals)...])
                }
                guard let option = spec.options.first(where: { $0.name == name }) else {
                    throw UsageError(message: "unknown option '\(name)' for '\(spec.name)' \(hint)")
                }
                if let valueName = option.valueName {
                    if let inlineValue {
                        values[name] = inlineValue
                    } else if index < arguments.count, !(arguments[index].hasPrefix("--") && arguments[index].count > 2) {
                        values[name] = arguments[index]
                        index += 1
                    } else {
                        throw UsageError(message: "\(name) needs a value (\(name) \(valueName)) \(hint)")
                    }
                } else {
                    guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value \(hint)") }
                    flags.insert(name)
                }
            } else if argument.hasPrefix("-") && argument != "-" {
                throw UsageError(message: "unknown option '\(argument)' for '\(spec.name)' \(hint)")
            } else {
                positionals.append(argument)
            }
        }
        if wantsHelp { return }
        if positionals.count > spec.positionals.count, !spec.takesWords {
            throw UsageError(message: "unexpected argument '\(positionals[spec.positionals.count])' for '\(spec.name)' \(hint)")
        }
        if positionals.count < spec.positionals.count, !spec.takesWords {
            throw UsageError(message: "'\(spec.name)' needs \(spec.positionals[positionals.count]) \(hint)")
        }
        for name in spec.required where values[name] == nil {
            let valueName = spec.options.first { $0.name == name }?.valueName ?? "VALUE"
            throw UsageError(message: "'\(spec.name)' needs \(name) \(valueName) \(hint)")
        }
    }
}
