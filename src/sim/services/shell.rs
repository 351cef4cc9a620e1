//! The shell services: run a command line through [`crate::sh`] (or a scripted answer),
//! streaming output as it is produced, framed per [`ShellMode`]; host stdin is fed to the
//! shell. The host closing the stream drops (cancels) the running command.
//! Source: AOSP `daemon/shell_service.cpp`, `shell_protocol.h`; research notes §3.5, §5.2.

use tokio::sync::mpsc;

use super::ShellMode;
use crate::phone::Phone;
use crate::sh::{Fd, Shell, Sink, Stdin};
use crate::stream::{Closed, StreamReader, StreamWriter};
use xagent_adb_wire::shell_v2::{
    encode, ShellV2Decoder, ID_CLOSE_STDIN, ID_EXIT, ID_STDERR, ID_STDIN, ID_STDOUT,
};

/// Runs one command line (a script matching the whole line answers instead; scripts matching
/// one simple command answer inside the shell); returns the exit status.
pub async fn execute(phone: Phone, line: String, sink: Sink, stdin: Stdin) -> i32 {
    let scripted = phone.with(|s| s.take_script(&line));
    if let Some(answer) = scripted {
        phone.log(&[line], answer.exit_code);
        answer.wait().await;
        let _ = sink.send((Fd::Out, answer.stdout));
        let _ = sink.send((Fd::Err, answer.stderr));
        return answer.exit_code;
    }
    let device = phone.with(|s| s.persona.device.clone());
    let mut shell = Shell::new(phone, sink, stdin);
    if line.trim().is_empty() {
        return shell.interactive(&device).await;
    }
    shell.run_line(&line).await
}

async fn send(
    wr: &mut StreamWriter,
    mode: ShellMode,
    fd: Fd,
    bytes: Vec<u8>,
) -> Result<(), Closed> {
    if bytes.is_empty() {
        return Ok(());
    }
    match mode {
        ShellMode::V2 => {
            wr.write(&encode(
                if fd == Fd::Out { ID_STDOUT } else { ID_STDERR },
                &bytes,
            ))
            .await
        }
        ShellMode::Legacy | ShellMode::Exec => wr.write(&bytes).await,
    }
}

/// Host bytes → shell stdin; `false` once stdin is closed.
fn feed(
    mode: ShellMode,
    decoder: &mut ShellV2Decoder,
    data: Vec<u8>,
    stdin: &mut Option<mpsc::UnboundedSender<Vec<u8>>>,
) {
    if mode != ShellMode::V2 {
        if let Some(tx) = stdin {
            let _ = tx.send(data);
        }
        return;
    }
    decoder.push(&data);
    while let Some((id, payload)) = decoder.next_packet() {
        match id {
            ID_STDIN => {
                if let Some(tx) = stdin {
                    let _ = tx.send(payload);
                }
            }
            ID_CLOSE_STDIN => *stdin = None,
            _ => {}
        }
    }
    // A header past 1 MiB is not shell v2: stop taking stdin, as adbd drops such a stream.
    if decoder.oversized().is_some() {
        *stdin = None;
    }
}

/// Serves a shell stream to completion.
pub async fn run(
    phone: Phone,
    mode: ShellMode,
    command: String,
    mut rd: StreamReader,
    mut wr: StreamWriter,
) {
    let (sink, mut output) = mpsc::unbounded_channel();
    let (stdin_tx, stdin_rx) = mpsc::unbounded_channel();
    let exec = execute(phone, command, sink, Stdin::Stream(stdin_rx));
    tokio::pin!(exec);
    let mut stdin = Some(stdin_tx);
    let mut decoder = ShellV2Decoder::default();
    let mut host_open = true;
    let code = loop {
        tokio::select! {
            biased;
            Some((fd, bytes)) = output.recv() => {
                if send(&mut wr, mode, fd, bytes).await.is_err() { return; }
            }
            code = &mut exec => break code,
            data = rd.read(), if host_open => match data {
                Some(d) => feed(mode, &mut decoder, d, &mut stdin),
                None if wr.is_closed() => return,
                None => host_open = false,
            },
        }
    };
    while let Ok((fd, bytes)) = output.try_recv() {
        if send(&mut wr, mode, fd, bytes).await.is_err() {
            return;
        }
    }
    if mode == ShellMode::V2
        && wr
            .write(&encode(ID_EXIT, &[(code & 0xff) as u8]))
            .await
            .is_err()
    {
        return;
    }
    wr.close().await;
}
