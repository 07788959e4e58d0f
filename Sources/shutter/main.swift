#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterGPIO
import ShutterAPI
import ShutterHTTP
import ShutterMQTT
import ShutterNode
import ShutterService
import ShutterSystem

/// Parses the command line, runs the command, and turns failures into messages and exit statuses.
func main() -> Int32 {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let first = arguments.first else {
        Console.error(mainHelp())
        return ExitStatus.usage
    }
    switch first {
    case "--help", "-h", "help":
        Console.out(mainHelp())
        return ExitStatus.success
    case "--version":
        Console.out("shutter \(shutterVersion) (\(LibGPIOD.summary))")
        return ExitStatus.success
    default:
        break
    }
    guard let command = commands.first(where: { $0.spec.name == first }) else {
        let kind = first.hasPrefix("-") ? "option" : "command"
        Console.error("shutter: unknown \(kind) '\(first)' (see 'shutter --help')")
        return ExitStatus.usage
    }
    do {
        let parsed = try ParsedArguments(Array(arguments.dropFirst()), spec: command.spec)
        if parsed.wantsHelp {
            Console.out(command.spec.help)
            return ExitStatus.success
        }
        return try command.run(parsed)
    } catch let error as UsageError {
        Console.error("shutter: \(error.message)")
        return ExitStatus.usage
    } catch {
        Console.error("shutter: \(error)")
        return ExitStatus.failure
    }
}

let status = main()
Console.flush()
exit(status)
