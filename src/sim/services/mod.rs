//! Device services reachable by `OPEN`: `shell:` (legacy), `shell,v2,…:`, `exec:`, `sync:`.
//! Anything else is refused with `CLSE(0, remote)` (research notes §3.7).

mod shell;
mod sync;

use crate::persona::Persona;
use crate::phone::Phone;
use crate::stream::{StreamReader, StreamWriter};

/// How shell output is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellMode {
    /// `shell:`: raw bytes, stderr merged, no exit status.
    Legacy,
    /// `shell,v2,…:`: shell protocol v2 packets with an exit status.
    V2,
    /// `exec:`: raw bytes, no PTY, no protocol (stderr shares the socket, as in AOSP
    /// `daemon/shell_service.cpp` for `SubprocessProtocol::kNone`).
    Exec,
}

/// A parsed service request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Service {
    /// A command line for the shell.
    Shell {
        /// Framing.
        mode: ShellMode,
        /// The command line (empty = interactive).
        command: String,
    },
    /// The file sync protocol.
    Sync,
}

/// Parses a service name (trailing NULs already stripped). `shell,v2` needs the `shell_v2`
/// feature, as on an adbd that lacks it.
pub fn parse(name: &str, persona: &Persona) -> Option<Service> {
    if name == "sync:" {
        return Some(Service::Sync);
    }
    if let Some(cmd) = name.strip_prefix("exec:") {
        return Some(Service::Shell {
            mode: ShellMode::Exec,
            command: cmd.to_string(),
        });
    }
    let rest = name.strip_prefix("shell")?;
    let (args, command) = rest.split_once(':')?;
    if !(args.is_empty() || args.starts_with(',')) {
        return None;
    }
    let v2 = args.split(',').any(|a| a == "v2");
    if v2 && !persona.shell_v2() {
        return None;
    }
    let mode = if v2 { ShellMode::V2 } else { ShellMode::Legacy };
    Some(Service::Shell {
        mode,
        command: command.to_string(),
    })
}

/// Runs a service on its stream to completion.
pub async fn run(service: Service, phone: Phone, reader: StreamReader, writer: StreamWriter) {
    match service {
        Service::Shell { mode, command } => shell::run(phone, mode, command, reader, writer).await,
        Service::Sync => sync::run(phone, reader, writer).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_names() {
        let p = Persona::load("pixel-android14").unwrap();
        assert_eq!(
            parse("shell,v2,TERM=xterm,raw:echo hi", &p),
            Some(Service::Shell {
                mode: ShellMode::V2,
                command: "echo hi".into()
            })
        );
        assert_eq!(
            parse("shell:echo hi", &p),
            Some(Service::Shell {
                mode: ShellMode::Legacy,
                command: "echo hi".into()
            })
        );
        assert_eq!(
            parse("exec:echo 'hi2'", &p),
            Some(Service::Shell {
                mode: ShellMode::Exec,
                command: "echo 'hi2'".into()
            })
        );
        assert_eq!(parse("sync:", &p), Some(Service::Sync));
        assert_eq!(parse("shellfoo:x", &p), None);
        assert_eq!(parse("tcp:5555", &p), None);
        let old = Persona::load("legacy-android6").unwrap();
        assert_eq!(parse("shell,v2,raw:ls", &old), None);
    }
}
