//! A stand-in adb server in front of a real one (Google adb 34) that lists some of its
//! transports under other serials, as USB phones show (field bug 50: two tablets both
//! `0123456789ABCDEF`), keeping adb's transport ids. A simulated phone is reached over TCP,
//! so adb 34 names it `127.0.0.1:PORT`; USB phones are named by their `iSerial`, and two
//! tablets with one serial are listed twice under it. Everything else is the real server:
//! `host:transport-id:N`, the device services, `host:connect` and the rest are passed through
//! byte for byte; `host:transport:SERIAL` and `host-serial:SERIAL:…` of a serial listed twice
//! are refused as adb refuses them ("more than one device with serial SERIAL", AOSP
//! `transport.cpp` `acquire_one_transport`; the text is the adb 34 binary's), of a serial
//! listed once rewritten to the real one. Device lists (`host:devices[-l]`,
//! `host:track-devices[-l]`) are asked of the real server in the long form (with transport
//! ids) and rewritten, in the form asked for.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The stand-in's renames: the real server's serial → the serial listed.
#[derive(Clone, Default)]
pub struct Renames(Arc<Mutex<Vec<(String, String)>>>);

impl Renames {
    /// Lists `real` (e.g. `127.0.0.1:40001`) as `shown` from now on.
    pub fn add(&self, real: &str, shown: &str) {
        self.0
            .lock()
            .unwrap()
            .push((real.to_string(), shown.to_string()));
    }

    fn shown(&self, real: &str) -> Option<String> {
        let map = self.0.lock().unwrap();
        map.iter().find(|(r, _)| r == real).map(|(_, s)| s.clone())
    }
}

/// Starts the stand-in on 127.0.0.1 in front of the adb server at `upstream`; its `HOST:PORT`.
/// It serves until the test's runtime ends.
pub async fn start(upstream: String, renames: Renames) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (upstream, renames) = (upstream.clone(), renames.clone());
            tokio::spawn(async move {
                let _ = serve(client, &upstream, &renames).await;
            });
        }
    });
    addr
}

async fn read_hex(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await?;
    let n = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("x"), 16)
        .map_err(|_| std::io::Error::other("bad length"))?;
    let mut body = vec![0u8; n];
    s.read_exact(&mut body).await?;
    Ok(body)
}

async fn write_hex(s: &mut TcpStream, body: &str) -> std::io::Result<()> {
    s.write_all(format!("{:04x}{body}", body.len()).as_bytes())
        .await
}

async fn request(upstream: &str, service: &str) -> std::io::Result<(TcpStream, [u8; 4])> {
    let mut up = TcpStream::connect(upstream).await?;
    write_hex(&mut up, service).await?;
    let mut status = [0u8; 4];
    up.read_exact(&mut status).await?;
    Ok((up, status))
}

/// The real server's `devices -l` list, rewritten (`long`: `%-22s` padding, else TAB form).
fn rewrite(list: &str, renames: &Renames, long: bool) -> String {
    let mut out = String::new();
    for line in list.lines().filter(|l| !l.trim().is_empty()) {
        let (serial, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim_start();
        let serial = renames.shown(serial).unwrap_or_else(|| serial.to_string());
        if long {
            out.push_str(&format!("{serial:<22} {rest}\n"));
        } else {
            let state = rest.split_whitespace().next().unwrap_or("");
            out.push_str(&format!("{serial}\t{state}\n"));
        }
    }
    out
}

/// The real serials listed as `shown` now.
async fn real_serials(upstream: &str, renames: &Renames, shown: &str) -> Vec<String> {
    let Ok((mut up, status)) = request(upstream, "host:devices-l").await else {
        return Vec::new();
    };
    if &status != b"OKAY" {
        return Vec::new();
    }
    let list = String::from_utf8_lossy(&read_hex(&mut up).await.unwrap_or_default()).to_string();
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|real| renames.shown(real).as_deref().unwrap_or(real) == shown)
        .map(str::to_string)
        .collect()
}

async fn serve(mut client: TcpStream, upstream: &str, renames: &Renames) -> std::io::Result<()> {
    let service = String::from_utf8_lossy(&read_hex(&mut client).await?).to_string();
    let list_kind = ["host:track-devices", "host:devices"]
        .iter()
        .find(|k| service == **k || service == format!("{k}-l"));
    if let Some(kind) = list_kind {
        let long = service.ends_with("-l");
        let (mut up, status) = request(upstream, &format!("{kind}-l")).await?;
        client.write_all(&status).await?;
        let tracking = kind.contains("track");
        loop {
            let list = String::from_utf8_lossy(&read_hex(&mut up).await?).to_string();
            write_hex(&mut client, &rewrite(&list, renames, long)).await?;
            if !tracking {
                return Ok(());
            }
        }
    }
    // `host:transport:S` and `host-serial:S:request` by a serial the stand-in lists.
    let by_serial = service
        .strip_prefix("host:transport:")
        .map(|s| (s.to_string(), String::new()))
        .or_else(|| {
            let rest = service.strip_prefix("host-serial:")?;
            let (serial, tail) = rest.rsplit_once(':')?;
            Some((serial.to_string(), tail.to_string()))
        });
    let forwarded = match by_serial {
        Some((shown, tail)) => {
            let real = real_serials(upstream, renames, &shown).await;
            if real.len() > 1 {
                let msg = format!("more than one device with serial {shown}");
                client.write_all(b"FAIL").await?;
                write_hex(&mut client, &msg).await?;
                return Ok(());
            }
            match (real.first(), tail.is_empty()) {
                (Some(r), true) => format!("host:transport:{r}"),
                (Some(r), false) => format!("host-serial:{r}:{tail}"),
                (None, _) => service.clone(),
            }
        }
        None => service.clone(),
    };
    let mut up = TcpStream::connect(upstream).await?;
    write_hex(&mut up, &forwarded).await?;
    tokio::io::copy_bidirectional(&mut client, &mut up).await?;
    Ok(())
}
