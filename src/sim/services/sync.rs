//! The `sync:` service over the VFS: `STAT`, `STA2`/`LST2`, `LIST`/`LIS2`, `RECV`, `SEND`,
//! `QUIT`. A failure answers `FAIL` + message and ends the session, as adbd does.
//! Source: AOSP `daemon/file_sync_service.cpp`, `file_sync_protocol.h`; research notes §3.6.
//! Injected refusals ([`crate::sync_fault`]) answer adbd's own `FAIL` texts; a failed `SEND`
//! leaves no file (adbd's `do_unlink`).

use crate::phone::{now_secs, Phone};
use crate::stream::{StreamReader, StreamWriter};
use crate::sync_fault::{self, FaultKind, SyncOp};
use crate::vfs::{Entry, VfsError};
use xagent_adb_wire::sync_proto::{
    encode, encode_stat_v1, encode_word, ID_DATA, ID_DENT, ID_DNT2, ID_DONE, ID_FAIL, ID_LIS2,
    ID_LIST, ID_LST2, ID_OKAY, ID_QUIT, ID_RECV, ID_SEND, ID_STA2, ID_STAT, SYNC_DATA_MAX,
    SYNC_PATH_MAX,
};

/// Buffers host bytes so requests may span `WRTE`s.
struct Input {
    rd: StreamReader,
    buf: Vec<u8>,
}

impl Input {
    async fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            let more = self.rd.read().await?;
            self.buf.extend_from_slice(&more);
        }
        Some(self.buf.drain(..n).collect())
    }

    async fn header(&mut self) -> Option<(u32, u32)> {
        let h = self.take(8).await?;
        Some((
            u32::from_le_bytes([h[0], h[1], h[2], h[3]]),
            u32::from_le_bytes([h[4], h[5], h[6], h[7]]),
        ))
    }
}

fn fail(msg: &str) -> Vec<u8> {
    encode(ID_FAIL, msg.as_bytes())
}

/// `STA2`/`LST2` body (72 bytes) or the `DNT2` prefix: `error, dev, ino, mode, nlink, uid, gid,
/// size, atime, mtime, ctime`.
fn stat_v2(id: u32, entry: Result<&Entry, VfsError>) -> Vec<u8> {
    let mut out = id.to_le_bytes().to_vec();
    match entry {
        Err(e) => {
            out.extend_from_slice(&e.errno().to_le_bytes());
            out.resize(72, 0);
        }
        Ok(e) => {
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&0xfd00u64.to_le_bytes());
            out.extend_from_slice(&1u64.to_le_bytes());
            for w in [e.mode, 1, 0, 1015] {
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(&e.size().to_le_bytes());
            for _ in 0..3 {
                out.extend_from_slice(&i64::from(e.mtime).to_le_bytes());
            }
        }
    }
    out
}

fn stat_v1(entry: Result<&Entry, VfsError>) -> Vec<u8> {
    match entry {
        Ok(e) => encode_stat_v1(e.mode, e.size() as u32, e.mtime),
        Err(_) => encode_stat_v1(0, 0, 0),
    }
}

fn list(phone: &Phone, path: &str, v2: bool) -> Vec<u8> {
    let entries = phone.with(|s| s.vfs.list(path)).unwrap_or_default();
    let mut out = Vec::new();
    for (name, e) in entries {
        if v2 {
            out.extend_from_slice(&stat_v2(ID_DNT2, Ok(&e)));
        } else {
            for w in [ID_DENT, e.mode, e.size() as u32, e.mtime] {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    let mut done = ID_DONE.to_le_bytes().to_vec();
    done.resize(if v2 { 76 } else { 20 }, 0);
    out.extend_from_slice(&done);
    out
}

fn recv(phone: &Phone, path: &str) -> (Vec<u8>, bool) {
    let fault = phone.with(|s| sync_fault::take(&mut s.sync_faults, SyncOp::Recv, path));
    if let Some(f) = fault.as_ref().filter(|f| f.fault == FaultKind::Denied) {
        return (fail(f.message()), false);
    }
    match phone.with(|s| s.vfs.read(path).map(|b| b.to_vec())) {
        // adbd opens a directory O_RDONLY without error; its first read fails with EISDIR
        // (AOSP `file_sync_service.cpp` `do_recv`: `open failed` / `read failed`).
        Err(VfsError::IsDir) => (fail("read failed: Is a directory"), false),
        Err(e) => (fail(&format!("open failed: {}", e.message())), false),
        Ok(bytes) => {
            let cut = fault
                .as_ref()
                .map(|f| (f.after_bytes as usize).min(bytes.len()));
            let sent = &bytes[..cut.unwrap_or(bytes.len())];
            let mut out = Vec::with_capacity(sent.len() + 16);
            for chunk in sent.chunks(SYNC_DATA_MAX) {
                out.extend_from_slice(&encode(ID_DATA, chunk));
            }
            if let Some(f) = fault {
                out.extend_from_slice(&fail(f.message()));
                return (out, false);
            }
            out.extend_from_slice(&encode_word(ID_DONE, 0));
            (out, true)
        }
    }
}

/// `SEND path,mode`: reads `DATA`… `DONE{mtime}`, then stores the file (parents created).
async fn send(phone: &Phone, input: &mut Input, spec: &str) -> (Vec<u8>, bool) {
    let (path, mode) = match spec.rsplit_once(',') {
        Some((p, m)) => (p.to_string(), m.parse::<u32>().unwrap_or(0o644)),
        None => (spec.to_string(), 0o644),
    };
    let mut data = Vec::new();
    let mtime = loop {
        let Some((id, len)) = input.header().await else {
            return (Vec::new(), false);
        };
        match id {
            ID_DATA if len as usize <= SYNC_DATA_MAX => match input.take(len as usize).await {
                Some(b) => data.extend_from_slice(&b),
                None => return (Vec::new(), false),
            },
            ID_DONE => break len,
            _ => return (fail("invalid data message"), false),
        }
    };
    if let Some(f) = phone.with(|s| sync_fault::take(&mut s.sync_faults, SyncOp::Send, &path)) {
        // adbd unlinked a regular file it replaces before writing, and removes what it wrote.
        phone.with(|s| {
            if s.vfs.stat(&path).is_ok_and(|e| !e.is_dir()) {
                let _ = s.vfs.remove(&path, false);
            }
        });
        return (fail(f.message()), false);
    }
    // adbd's steps and their FAIL prefixes (`handle_send_file`): `secure_mkdirs failed` for the
    // parents, `couldn't create file` for the file itself.
    let stored = phone.with(|s| {
        let parent = path
            .rsplit_once('/')
            .map_or("/", |(p, _)| if p.is_empty() { "/" } else { p });
        s.vfs
            .mkdir(parent, true, now_secs())
            .map_err(|e| format!("secure_mkdirs failed: {}", e.message()))?;
        s.vfs
            .write(&path, &data, false, now_secs())
            .map_err(|e| format!("couldn't create file: {}", e.message()))?;
        s.vfs.set_meta(&path, mode, mtime);
        Ok::<(), String>(())
    });
    match stored {
        Ok(()) => (encode_word(ID_OKAY, 0), true),
        Err(line) => (fail(&line), false),
    }
}

/// Serves a sync session until `QUIT`, a failure, or the host closing.
pub async fn run(phone: Phone, rd: StreamReader, mut wr: StreamWriter) {
    let mut input = Input {
        rd,
        buf: Vec::new(),
    };
    while let Some((id, len)) = input.header().await {
        if id == ID_QUIT {
            break;
        }
        if len as usize > SYNC_PATH_MAX {
            let _ = wr.write(&fail("path too long")).await;
            break;
        }
        let Some(path) = input.take(len as usize).await else {
            break;
        };
        let path = String::from_utf8_lossy(&path).to_string();
        let (reply, keep_going) = match id {
            ID_STAT => (phone.with(|s| stat_v1(s.vfs.stat(&path))), true),
            ID_STA2 | ID_LST2 => (phone.with(|s| stat_v2(id, s.vfs.stat(&path))), true),
            ID_LIST | ID_LIS2 => (list(&phone, &path, id == ID_LIS2), true),
            ID_RECV => recv(&phone, &path),
            ID_SEND => send(&phone, &mut input, &path).await,
            _ => (fail("unknown command"), false),
        };
        if wr.write(&reply).await.is_err() {
            return;
        }
        if !keep_going {
            break;
        }
    }
    wr.close().await;
}
