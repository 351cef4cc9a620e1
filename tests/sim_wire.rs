//! The sim's ADB transport with a raw in-test client (our own framing, no adb binary):
//! handshake banner, refusal of unknown services, independence of concurrent streams,
//! flow control, shell v2 stdin, sync requests, garbage input and many connections.

use std::collections::HashMap;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use xagent_adb_sim::{self as sim, SimOptions};
use xagent_adb_wire::shell_v2::{self, ShellV2Decoder};
use xagent_adb_wire::sync_proto as sp;
use xagent_adb_wire::wire::{
    Message, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, MAX_PAYLOAD,
};

const HOST_BANNER: &[u8] = b"host::features=shell_v2,cmd,stat_v2,ls_v2";

struct Client {
    sock: TcpStream,
    /// Payloads received per host stream id.
    data: HashMap<u32, Vec<u8>>,
    /// Device id per host stream id.
    peer: HashMap<u32, u32>,
    closed: Vec<u32>,
}

async fn sim_addr(shutdown: &CancellationToken) -> std::net::SocketAddr {
    sim::start(SimOptions::default(), shutdown.clone())
        .await
        .unwrap()
        .adb_addr
}

impl Client {
    async fn connect(addr: std::net::SocketAddr) -> (Client, Message) {
        let mut sock = TcpStream::connect(addr).await.unwrap();
        Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, HOST_BANNER)
            .write_to(&mut sock)
            .await
            .unwrap();
        let cnxn = Message::read_from(&mut sock, MAX_PAYLOAD).await.unwrap();
        (
            Client {
                sock,
                data: HashMap::new(),
                peer: HashMap::new(),
                closed: Vec::new(),
            },
            cnxn,
        )
    }

    async fn send(&mut self, m: Message) {
        m.write_to(&mut self.sock).await.unwrap();
    }

    async fn open(&mut self, id: u32, service: &str) {
        self.send(Message::new(A_OPEN, id, 0, format!("{service}\0")))
            .await;
    }

    /// Handles one incoming message; WRTEs of streams in `hold` are not acknowledged.
    async fn pump(&mut self, hold: &[u32]) -> Message {
        let m = tokio::time::timeout(
            Duration::from_secs(10),
            Message::read_from(&mut self.sock, MAX_PAYLOAD),
        )
        .await
        .expect("sim answered in time")
        .unwrap();
        match m.command {
            A_OKAY => {
                self.peer.insert(m.arg1, m.arg0);
            }
            A_WRTE => {
                self.data
                    .entry(m.arg1)
                    .or_default()
                    .extend_from_slice(&m.payload);
                if !hold.contains(&m.arg1) {
                    self.send(Message::new(A_OKAY, m.arg1, m.arg0, Vec::new()))
                        .await;
                }
            }
            A_CLSE => self.closed.push(m.arg1),
            _ => {}
        }
        m
    }

    async fn until_closed(&mut self, id: u32, hold: &[u32]) -> Vec<u8> {
        while !self.closed.contains(&id) {
            self.pump(hold).await;
        }
        self.data.remove(&id).unwrap_or_default()
    }
}

fn decode_v2(bytes: &[u8]) -> (Vec<u8>, Vec<u8>, Option<u8>) {
    let mut d = ShellV2Decoder::default();
    d.push(bytes);
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
    while let Some((id, data)) = d.next_packet() {
        match id {
            shell_v2::ID_STDOUT => out.extend(data),
            shell_v2::ID_STDERR => err.extend(data),
            shell_v2::ID_EXIT => code = data.first().copied(),
            _ => {}
        }
    }
    (out, err, code)
}

#[tokio::test]
async fn banner_and_unknown_service() {
    let shutdown = CancellationToken::new();
    let (mut c, cnxn) = Client::connect(sim_addr(&shutdown).await).await;
    assert_eq!(
        (cnxn.command, cnxn.arg0, cnxn.arg1),
        (A_CNXN, A_VERSION, MAX_PAYLOAD)
    );
    assert_eq!(
        String::from_utf8(cnxn.payload).unwrap(),
        "device::ro.product.name=shiba;ro.product.model=Pixel 8;ro.product.device=shiba;features=shell_v2,cmd,stat_v2,ls_v2"
    );
    c.open(5, "jdwp:1234").await;
    let m = c.pump(&[]).await;
    assert_eq!((m.command, m.arg0, m.arg1), (A_CLSE, 0, 5));
    shutdown.cancel();
}

#[tokio::test]
async fn blocked_stream_does_not_block_others() {
    let shutdown = CancellationToken::new();
    let (mut c, _) = Client::connect(sim_addr(&shutdown).await).await;
    c.open(1, "shell,v2,raw:sleep 30").await;
    c.open(2, "exec:screencap").await;
    c.open(3, "shell,v2,raw:echo hi; echo err >&2; exit 4")
        .await;
    let out = c.until_closed(3, &[2]).await;
    assert_eq!(
        decode_v2(&out),
        (b"hi\n".to_vec(), b"err\n".to_vec(), Some(4))
    );
    assert!(!c.closed.contains(&1) && !c.closed.contains(&2));
    while !c.data.contains_key(&2) {
        c.pump(&[2]).await;
    }
    c.open(5, "exec:echo more").await;
    assert_eq!(c.until_closed(5, &[2]).await, b"more\n");
    assert_eq!(
        c.data[&2].len(),
        MAX_PAYLOAD as usize,
        "exactly one WRTE outstanding"
    );
    for id in [1, 2] {
        let dev = c.peer[&id];
        c.send(Message::new(A_CLSE, id, dev, Vec::new())).await;
    }
    c.open(4, "shell,v2,raw:echo still").await;
    assert_eq!(decode_v2(&c.until_closed(4, &[]).await).0, b"still\n");
    shutdown.cancel();
}

#[tokio::test]
async fn shell_v2_stdin_reaches_cat() {
    let shutdown = CancellationToken::new();
    let (mut c, _) = Client::connect(sim_addr(&shutdown).await).await;
    c.open(7, "shell,v2,raw:cat | grep b").await;
    while !c.peer.contains_key(&7) {
        c.pump(&[]).await;
    }
    let dev = c.peer[&7];
    let mut input = shell_v2::encode(shell_v2::ID_STDIN, b"a\nb\n");
    input.extend(shell_v2::encode(shell_v2::ID_CLOSE_STDIN, b""));
    c.send(Message::new(A_WRTE, 7, dev, input)).await;
    let (out, _, code) = decode_v2(&c.until_closed(7, &[]).await);
    assert_eq!((out.as_slice(), code), (&b"b\n"[..], Some(0)));
    shutdown.cancel();
}

#[tokio::test]
async fn sync_send_stat_list_recv() {
    let shutdown = CancellationToken::new();
    let (mut c, _) = Client::connect(sim_addr(&shutdown).await).await;
    c.open(9, "sync:").await;
    while !c.peer.contains_key(&9) {
        c.pump(&[]).await;
    }
    let dev = c.peer[&9];
    let mut req = sp::encode(sp::ID_SEND, b"/data/local/tmp/new/x.txt,33188");
    req.extend(sp::encode(sp::ID_DATA, b"hello"));
    req.extend(sp::encode_word(sp::ID_DONE, 1_700_000_000));
    req.extend(sp::encode(sp::ID_STAT, b"/data/local/tmp/new/x.txt"));
    req.extend(sp::encode(sp::ID_STA2, b"/nope"));
    req.extend(sp::encode(sp::ID_RECV, b"/data/local/tmp/new/x.txt"));
    req.extend(sp::encode_word(sp::ID_QUIT, 0));
    c.send(Message::new(A_WRTE, 9, dev, req)).await;
    let got = c.until_closed(9, &[]).await;
    let mut want = sp::encode_word(sp::ID_OKAY, 0);
    want.extend(sp::encode_stat_v1(0o100644, 5, 1_700_000_000));
    assert_eq!(&got[..24], &want[..]);
    assert_eq!(&got[24..28], b"STA2");
    assert_eq!(
        u32::from_le_bytes(got[28..32].try_into().unwrap()),
        2,
        "ENOENT"
    );
    let mut tail = sp::encode(sp::ID_DATA, b"hello");
    tail.extend(sp::encode_word(sp::ID_DONE, 0));
    assert_eq!(&got[24 + 72..], &tail[..]);
    shutdown.cancel();
}

#[tokio::test]
async fn garbage_drops_only_that_connection() {
    let shutdown = CancellationToken::new();
    let addr = sim_addr(&shutdown).await;
    let mut junk = TcpStream::connect(addr).await.unwrap();
    junk.write_all(&[0xde; 64]).await.unwrap();
    let (mut c, _) = Client::connect(addr).await;
    let mut bad = Message::new(A_WRTE, 1, 1, b"x".to_vec()).encode();
    bad[20] ^= 0xff;
    c.sock.write_all(&bad).await.unwrap();
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        Message::read_from(&mut c.sock, MAX_PAYLOAD),
    )
    .await;
    assert!(
        matches!(r, Ok(Err(_))),
        "connection with a bad magic is dropped"
    );
    let (mut c2, _) = Client::connect(addr).await;
    c2.open(1, "shell:echo ok").await;
    assert_eq!(c2.until_closed(1, &[]).await, b"ok\n");
    shutdown.cancel();
}

#[tokio::test]
async fn many_connections_at_once() {
    let shutdown = CancellationToken::new();
    let addr = sim_addr(&shutdown).await;
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            tokio::spawn(async move {
                let (mut c, _) = Client::connect(addr).await;
                for s in 1..=3u32 {
                    c.open(s, &format!("exec:echo {i}-{s}")).await;
                }
                let mut outs = Vec::new();
                for s in 1..=3u32 {
                    outs.push(String::from_utf8(c.until_closed(s, &[]).await).unwrap());
                }
                outs
            })
        })
        .collect();
    for (i, t) in tasks.into_iter().enumerate() {
        let outs = t.await.unwrap();
        assert_eq!(
            outs,
            (1..=3).map(|s| format!("{i}-{s}\n")).collect::<Vec<_>>()
        );
    }
    shutdown.cancel();
}

#[tokio::test]
async fn interactive_shell_runs_stdin_lines() {
    let shutdown = CancellationToken::new();
    let (mut c, _) = Client::connect(sim_addr(&shutdown).await).await;
    c.open(3, "shell,v2,TERM=xterm-256color,pty:").await;
    while !c.peer.contains_key(&3) {
        c.pump(&[]).await;
    }
    let dev = c.peer[&3];
    let input = shell_v2::encode(shell_v2::ID_STDIN, b"cd /sdcard\necho hi\nexit 5\n");
    c.send(Message::new(A_WRTE, 3, dev, input)).await;
    let (out, _, code) = decode_v2(&c.until_closed(3, &[]).await);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "shiba:/ $ shiba:/sdcard $ hi\nshiba:/sdcard $ "
    );
    assert_eq!(code, Some(5));
    shutdown.cancel();
}

#[tokio::test]
async fn persona_model_when_model_is_empty() {
    let shutdown = CancellationToken::new();
    let opts = SimOptions {
        persona: "samsung-android13".into(),
        model: String::new(),
        ..SimOptions::default()
    };
    let addr = sim::start(opts, shutdown.clone()).await.unwrap().adb_addr;
    let (_, cnxn) = Client::connect(addr).await;
    let banner = String::from_utf8(cnxn.payload).unwrap();
    assert!(
        banner.starts_with(
            "device::ro.product.name=dm1qxxx;ro.product.model=SM-S911B;ro.product.device=dm1q;"
        ),
        "{banner}"
    );
    let bad = SimOptions {
        persona: "nope".into(),
        ..SimOptions::default()
    };
    assert_eq!(
        sim::start(bad, shutdown.clone()).await.unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
    let public = SimOptions {
        control: Some("0.0.0.0:0".parse().unwrap()),
        ..SimOptions::default()
    };
    assert_eq!(
        sim::start(public, shutdown.clone())
            .await
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::PermissionDenied
    );
    shutdown.cancel();
}
