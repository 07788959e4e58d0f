/// A command-line option a command accepts.
public struct OptionSpec: Sendable {
    /// `--board`.
    public var name: String
    /// `BOARD` for an option that takes a value; `nil` for a flag.
    public var valueName: String?
    public var help: String

    public init(name: String, valueName: String?, help: String) {
        self.name = name
        self.valueName = valueName
        self.help = help
    }
}

/// A command: its name, what it does, and what it accepts. The parser of `shutter`'s commands and
/// of the other tools' (`shutter-bench`, `shutter-capture-check`, `shutter-daemon-bench`).
public struct CommandSpec: Sendable {
    /// The program: `shutter`, `shutter-bench`.
    public var program: String
    /// The command after the program (`run`); empty for a program without commands.
    public var name: String
    public var summary: String
    /// The synopsis after the ``invocation``, e.g. `--board BOARD [--out FILE]`.
    public var synopsis: String
    public var details: String
    public var options: [OptionSpec]
    /// Names of positional arguments, in order (`BOARD`).
    public var positionals: [String]
    /// Names of positional arguments that may be left out, after ``positionals``.
    public var optionalPositionals: [String]
    /// Options that must be given.
    public var required: [String]
    /// Takes any number of words after the options (`ctl set exposure -1`); from the first word on,
    /// nothing is read as an option.
    public var takesWords: Bool

    public init(program: String = "shutter", name: String, summary: String, synopsis: String, details: String = "",
                options: [OptionSpec], positionals: [String] = [], optionalPositionals: [String] = [],
                required: [String] = [], takesWords: Bool = false) {
        self.program = program
        self.name = name
        self.summary = summary
        self.synopsis = synopsis
        self.details = details
        self.options = options
        self.positionals = positionals
        self.optionalPositionals = optionalPositionals
        self.required = required
        self.takesWords = takesWords
    }

    /// What is typed to run it: `shutter run`, `shutter-bench`.
    public var invocation: String { name.isEmpty ? program : program + " " + name }

    /// The command as usage errors name it: `run`, or the program when it has no commands.
    var title: String { name.isEmpty ? program : name }

    public var help: String {
        var text = "usage: \(invocation) \(synopsis)\n\n\(summary)\n"
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
public struct UsageError: Error, Sendable {
    public var message: String

    public init(message: String) {
        self.message = message
    }
}

/// What was given on the command line for one command.
public struct ParsedArguments: Sendable {
    /// Each option's value; the last one given when it is given more than once.
    public var values: [String: String] = [:]
    /// Every value of each option, in the order given (`--bind A=x --bind B=y`).
    public var allValues: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []
    public var wantsHelp = false
    /// The program, for the hint in a usage error.
    private let program: String

    public func value(_ name: String) -> String? { values[name] }
    /// Every value given for `name`, in order; empty when it is not given.
    public func values(_ name: String) -> [String] { allValues[name] ?? [] }
    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The value of `name` as a positive number, or a usage error naming the option.
    public func number(_ name: String, command: String) throws -> Double? {
        guard let text = values[name] else { return nil }
        guard let number = Double(text), number.isFinite, number > 0 else {
            throw UsageError(message: "\(name) needs a positive number, not '\(text)' (see '\(program) \(command) --help')")
        }
        return number
    }

    /// Parses `arguments` (after the command name, or the program's for a program without
    /// commands) against `spec`.
    public init(_ arguments: [String], spec: CommandSpec) throws {
        program = spec.program
        var index = 0
        let hint = "(see '\(spec.invocation) --help')"
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
                    throw UsageError(message: "unknown option '\(name)' for '\(spec.title)' \(hint)")
                }
                if let valueName = option.valueName {
                    if let inlineValue {
                        values[name] = inlineValue
                        allValues[name, default: []].append(inlineValue)
                    } else if index < arguments.count, !(arguments[index].hasPrefix("--") && arguments[index].count > 2) {
                        values[name] = arguments[index]
                        allValues[name, default: []].append(arguments[index])
                        index += 1
                    } else {
                        throw UsageError(message: "\(name) needs a value (\(name) \(valueName)) \(hint)")
                    }
                } else {
                    guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value \(hint)") }
                    flags.insert(name)
                }
            } else if argument.hasPrefix("-") && argument != "-" {
                throw UsageError(message: "unknown option '\(argument)' for '\(spec.title)' \(hint)")
            } else {
                positionals.append(argument)
            }
        }
        if wantsHelp { return }
        let most = spec.positionals.count + spec.optionalPositionals.count
        if positionals.count > most, !spec.takesWords {
            throw UsageError(message: "unexpected argument '\(positionals[most])' for '\(spec.title)' \(hint)")
        }
        if positionals.count < spec.positionals.count, !spec.takesWords {
            throw UsageError(message: "'\(spec.title)' needs \(spec.positionals[positionals.count]) \(hint)")
        }
        for name in spec.required where values[name] == nil {
            let valueName = spec.options.first { $0.name == name }?.valueName ?? "VALUE"
            throw UsageError(message: "'\(spec.title)' needs \(name) \(valueName) \(hint)")
        }
    }
}
