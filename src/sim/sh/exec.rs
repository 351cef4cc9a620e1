//! Runs parsed command lines: `&&`/`||`/`;`, pipelines (each stage's stdout buffered into the
//! next stage's stdin), redirections applied left to right, assignments, builtins
//! (`exit`, `cd`, `export`, `sh -c`), and the programs of [`crate::programs`].
//! Unknown programs: `/system/bin/sh: X: inaccessible or not found`, status 127 (mksh).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use super::lexer::{Part, RedirOp, Word};
use super::parser::{parse, AndOr, Command, Join, List};
use super::{Fd, Sink, Stdin, SH};
use crate::phone::{now_secs, Phone};
use crate::programs::{self, Output};
use crate::vfs::normalize;

/// Where a file descriptor points while a command runs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Sink(Fd),
    Pipe,
    Null,
    File(String),
    /// An input device node (`/dev/input/eventN`, [`crate::evdev`]).
    Device(String),
}

/// One shell process: variables, cwd, last status, output sink.
pub struct Shell {
    pub(super) phone: Phone,
    pub(super) vars: HashMap<String, String>,
    /// `$?`.
    pub status: i32,
    pub(super) pid: u32,
    /// Working directory.
    pub cwd: String,
    sink: Sink,
    stdin: Stdin,
    exited: Option<i32>,
}

impl Shell {
    /// A shell at `/` with Android's default environment.
    pub fn new(phone: Phone, sink: Sink, stdin: Stdin) -> Shell {
        let vars = [
            ("PATH", "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin"),
            ("HOME", "/"),
            ("SHELL", "/system/bin/sh"),
            ("USER", "shell"),
            ("HOSTNAME", "localhost"),
            ("EXTERNAL_STORAGE", "/sdcard"),
            ("ANDROID_DATA", "/data"),
            ("ANDROID_ROOT", "/system"),
            ("TMPDIR", "/data/local/tmp"),
        ];
        Shell {
            phone,
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            status: 0,
            pid: 4000 + (now_secs() % 20000),
            cwd: "/".into(),
            sink,
            stdin,
            exited: None,
        }
    }

    /// Sends output to the sink (ignored once the reader is gone).
    pub(super) fn emit(&self, fd: Fd, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            let _ = self.sink.send((fd, bytes));
        }
    }

    /// Parses and runs one command line; returns the final status (`exit N` wins).
    pub async fn run_line(&mut self, line: &str) -> i32 {
        match parse(line) {
            Err(e) => {
                self.emit(Fd::Err, format!("{SH}: {e}\n").into_bytes());
                self.status = 1;
            }
            Ok(list) => {
                self.run_list(&list).await;
            }
        }
        self.exited.unwrap_or(self.status)
    }

    /// Interactive mode (`adb shell` without a command): prints the prompt
    /// (`<device>:<cwd> $ `, mksh's Android `PS1`), runs each stdin line, ends at EOF or `exit`.
    pub async fn interactive(&mut self, device: &str) -> i32 {
        let mut pending: Vec<u8> = Vec::new();
        loop {
            self.emit(Fd::Out, format!("{device}:{} $ ", self.cwd).into_bytes());
            let line = loop {
                if let Some(i) = pending.iter().position(|b| *b == b'\n' || *b == b'\r') {
                    let raw: Vec<u8> = pending.drain(..=i).collect();
                    break Some(String::from_utf8_lossy(&raw[..i]).to_string());
                }
                let chunk = match &mut self.stdin {
                    Stdin::Stream(rx) => rx.recv().await,
                    Stdin::Empty => None,
                };
                match chunk {
                    Some(c) => pending.extend_from_slice(&c),
                    None => break None,
                }
            };
            let Some(line) = line else { return self.status };
            let code = self.run_line(&line).await;
            if self.exited.is_some() {
                return code;
            }
        }
    }

    fn run_list<'a>(&'a mut self, list: &'a List) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            for and_or in list {
                self.run_and_or(and_or).await;
                if self.exited.is_some() {
                    return;
                }
            }
        })
    }

    async fn run_and_or(&mut self, and_or: &AndOr) {
        self.run_pipeline(&and_or.first).await;
        for (join, pipeline) in &and_or.rest {
            if self.exited.is_some() {
                return;
            }
            let run = match join {
                Join::And => self.status == 0,
                Join::Or => self.status != 0,
            };
            if run {
                self.run_pipeline(pipeline).await;
            }
        }
    }

    async fn run_pipeline(&mut self, pipeline: &[Command]) {
        let mut input: Option<Vec<u8>> = None;
        let last = pipeline.len().saturating_sub(1);
        for (i, cmd) in pipeline.iter().enumerate() {
            let (status, piped) = self.run_command(cmd, input.take(), i < last).await;
            self.status = status;
            input = Some(piped);
            if self.exited.is_some() {
                return;
            }
        }
    }

    /// Runs one simple command; returns its status and, when `to_pipe`, its stdout.
    async fn run_command(
        &mut self,
        cmd: &Command,
        input: Option<Vec<u8>>,
        to_pipe: bool,
    ) -> (i32, Vec<u8>) {
        let mut assigns = Vec::new();
        let mut argv = Vec::new();
        for word in &cmd.words {
            match assignment(word) {
                Some((name, rest)) if argv.is_empty() => {
                    let value = self.expand_one(&rest).await;
                    assigns.push((name, value));
                }
                _ => argv.extend(self.expand(word).await),
            }
        }
        let first = if to_pipe {
            Target::Pipe
        } else {
            Target::Sink(Fd::Out)
        };
        let mut fds = [Target::Null, first, Target::Sink(Fd::Err)];
        let file_in = match self.apply_redirs(cmd, &mut fds).await {
            Ok(file_in) => file_in,
            Err(msg) => {
                self.emit(Fd::Err, msg.into_bytes());
                return (1, Vec::new());
            }
        };
        if argv.is_empty() {
            self.vars.extend(assigns);
            return (0, Vec::new());
        }
        // `cat > /dev/input/eventN` with stdin from the host: every read of the stream is
        // written to the node as it comes (the long-lived touch stream, [`crate::evdev`]).
        if let (Target::Device(node), None, None) = (&fds[1], &file_in, &input) {
            if argv[0].rsplit('/').next() == Some("cat") && argv[1..].iter().all(|a| a == "-") {
                let code = self.cat_to_node(node.clone()).await;
                self.phone.log(&argv, code);
                return (code, Vec::new());
            }
        }
        let stdin = match (file_in, input) {
            (Some(bytes), _) | (None, Some(bytes)) => bytes,
            (None, None) if programs::stdin_size(&argv).is_some() => {
                let n = programs::stdin_size(&argv).unwrap_or(0);
                self.read_stdin_n(n).await
            }
            (None, None) if programs::wants_stdin(&argv) => self.read_stdin().await,
            _ => Vec::new(),
        };
        let out = self.execute(&argv, stdin).await;
        self.phone.log(&argv, out.code);
        let mut piped = Vec::new();
        let mut streams = [(&fds[1], out.stdout), (&fds[2], out.stderr)];
        if out.stderr_first {
            streams.reverse();
        }
        for (target, bytes) in streams {
            self.route(target, bytes, &mut piped);
        }
        (out.code, piped)
    }

    /// Applies redirections left to right; returns stdin file contents for `<`.
    async fn apply_redirs(
        &mut self,
        cmd: &Command,
        fds: &mut [Target; 3],
    ) -> Result<Option<Vec<u8>>, String> {
        let mut file_in = None;
        for r in &cmd.redirs {
            match r.op {
                RedirOp::Dup { fd, to } if fd <= 2 && to <= 2 => {
                    fds[fd as usize] = fds[to as usize].clone()
                }
                RedirOp::Dup { to, .. } => {
                    return Err(format!("{SH}: {to}: bad file descriptor\n"))
                }
                RedirOp::Out { fd, append } => {
                    let target = self.expand_one(&r.target).await;
                    let path = normalize(&self.cwd, &target);
                    let node = self
                        .phone
                        .with(|s| s.is_input_node(&path).then_some(s.input_writable));
                    let t = if path == "/dev/null" {
                        Target::Null
                    } else if let Some(writable) = node {
                        if !writable {
                            return Err(format!(
                                "{SH}: can't create {target}: Permission denied\n"
                            ));
                        }
                        Target::Device(path)
                    } else {
                        self.phone
                            .with(|s| s.vfs.write(&path, b"", append, now_secs()))
                            .map_err(|e| {
                                format!("{SH}: can't create {target}: {}\n", e.message())
                            })?;
                        Target::File(path)
                    };
                    if fd <= 2 {
                        fds[fd as usize] = t;
                    }
                }
                RedirOp::In { .. } => {
                    let target = self.expand_one(&r.target).await;
                    let path = normalize(&self.cwd, &target);
                    let bytes = self
                        .phone
                        .with(|s| s.vfs.read(&path).map(|b| b.to_vec()))
                        .map_err(|e| format!("{SH}: can't open {target}: {}\n", e.message()))?;
                    file_in = Some(bytes);
                }
            }
        }
        Ok(file_in)
    }

    fn route(&self, target: &Target, bytes: Vec<u8>, piped: &mut Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        match target {
            Target::Sink(fd) => self.emit(*fd, bytes),
            Target::Pipe => piped.extend_from_slice(&bytes),
            Target::Null => {}
            Target::Device(path) => {
                let _ = self.phone.with(|s| programs::write_node(s, path, &bytes));
            }
            Target::File(path) => {
                let _ = self
                    .phone
                    .with(|s| s.vfs.write(path, &bytes, true, now_secs()));
            }
        }
    }

    /// toybox `cat` from stdin into an input node until EOF: each read (at most 4096 bytes,
    /// toybox's `toybuf`) is one `write(2)`; a short write is retried with the rest, and
    /// `EINVAL` (less than one record) ends `cat` with `cat: xwrite: Invalid argument`, 1.
    async fn cat_to_node(&mut self, node: String) -> i32 {
        const TOYBUF: usize = 4096;
        loop {
            let chunk = match &mut self.stdin {
                Stdin::Stream(rx) => rx.recv().await,
                Stdin::Empty => None,
            };
            let Some(chunk) = chunk else { return 0 };
            for read in chunk.chunks(TOYBUF) {
                let mut rest = read;
                while !rest.is_empty() {
                    let cost = self.phone.with(|s| s.timing.map(|m| m.evdev_write()));
                    if let Some(d) = cost {
                        tokio::time::sleep(d).await;
                    }
                    match self.phone.with(|s| programs::write_node(s, &node, rest)) {
                        Ok(n) => rest = &rest[n..],
                        Err(crate::evdev::Einval) => {
                            self.emit(Fd::Err, b"cat: xwrite: Invalid argument\n".to_vec());
                            return 1;
                        }
                    }
                }
            }
        }
    }

    /// Reads exactly `n` stdin bytes (or until EOF), leaving the stream open.
    async fn read_stdin_n(&mut self, n: usize) -> Vec<u8> {
        let mut all = Vec::with_capacity(n.min(256 << 20));
        if let Stdin::Stream(rx) = &mut self.stdin {
            while all.len() < n {
                match rx.recv().await {
                    Some(chunk) => all.extend_from_slice(&chunk),
                    None => break,
                }
            }
        }
        all
    }

    async fn read_stdin(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        if let Stdin::Stream(rx) = &mut self.stdin {
            while let Some(chunk) = rx.recv().await {
                all.extend_from_slice(&chunk);
            }
        }
        self.stdin = Stdin::Empty;
        all
    }

    /// A per-command script first (see [`crate::script`]), then builtins, then programs, else
    /// "inaccessible or not found".
    async fn execute(&mut self, argv: &[String], stdin: Vec<u8>) -> Output {
        let scripted = self.phone.with(|s| s.take_script(&argv.join(" ")));
        if let Some(answer) = scripted {
            answer.wait().await;
            return Output {
                stdout: answer.stdout,
                stderr: answer.stderr,
                code: answer.exit_code,
                stderr_first: false,
            };
        }
        let name = argv[0].rsplit('/').next().unwrap_or_default().to_string();
        match name.as_str() {
            "exit" => {
                let code = argv
                    .get(1)
                    .and_then(|a| a.parse::<i32>().ok())
                    .unwrap_or(self.status);
                self.exited = Some(code & 0xff);
                return Output::code(code & 0xff);
            }
            "cd" => return self.cd(argv.get(1).map(String::as_str).unwrap_or("/")),
            "export" => {
                for kv in &argv[1..] {
                    if let Some((k, v)) = kv.split_once('=') {
                        self.vars.insert(k.into(), v.into());
                    }
                }
                return Output::code(0);
            }
            "sh" | "mksh" => return self.sub_shell(argv, stdin).await,
            _ => {}
        }
        // A bare name resolves through $PATH (/system/bin here), a path must exist as given.
        let path = if argv[0].contains('/') {
            argv[0].clone()
        } else {
            format!("/system/bin/{name}")
        };
        let known = self.phone.with(|s| s.vfs.stat(&path).is_ok());
        match programs::run(&self.phone, &self.cwd, &name, argv, stdin).await {
            Some(out) if known => out,
            _ => Output::err(
                127,
                format!("{SH}: {}: inaccessible or not found\n", argv[0]),
            ),
        }
    }

    fn cd(&mut self, dir: &str) -> Output {
        let path = normalize(&self.cwd, dir);
        match self.phone.with(|s| s.vfs.stat(&path).map(|e| e.is_dir())) {
            Ok(true) => {
                self.cwd = path;
                Output::code(0)
            }
            Ok(false) => Output::err(2, format!("{SH}: cd: {path}: Not a directory\n")),
            Err(e) => Output::err(2, format!("{SH}: cd: {path}: {}\n", e.message())),
        }
    }

    /// `sh -c CMD`, or `sh` reading the script from stdin.
    async fn sub_shell(&mut self, argv: &[String], stdin: Vec<u8>) -> Output {
        let script = match argv.get(1).map(String::as_str) {
            Some("-c") => argv.get(2).cloned().unwrap_or_default(),
            _ => String::from_utf8_lossy(&stdin).to_string(),
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut sub = Shell::new(self.phone.clone(), tx, Stdin::Empty);
        sub.cwd = self.cwd.clone();
        let code = Box::pin(sub.run_line(&script)).await;
        drop(sub);
        let mut out = Output::code(code);
        while let Ok((fd, bytes)) = rx.try_recv() {
            match fd {
                Fd::Out => out.stdout.extend_from_slice(&bytes),
                Fd::Err => out.stderr.extend_from_slice(&bytes),
            }
        }
        out
    }
}

/// `NAME=value` at the start of an unquoted word: `(NAME, value word)`.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let first = word.0.first()?;
    let Part::Lit(text) = &first.part else {
        return None;
    };
    if first.quoted {
        return None;
    }
    let (name, value) = text.split_once('=')?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid {
        return None;
    }
    let mut rest = word.clone();
    rest.0[0].part = Part::Lit(value.to_string());
    Some((name.to_string(), rest))
}
