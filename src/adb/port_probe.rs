//! What answers at a phone's port when pairing there failed before its first exchange (field row
//! 58): people give the wireless-debugging connect port ("IP address & Port" on the Wireless
//! debugging screen) or `adb tcpip`'s 5555 where the pairing dialog's port belongs
//! (sameerasw/airsync-android#7; MuntashirAkon/AppManager#562). A pairing server is a TLS server
//! (the host speaks first, a ClientHello); adbd's ports instead wait for a plaintext `CNXN` and
//! close on anything else, so the pairing attempt only sees the peer close. This module sends
//! that `CNXN` (no key, nothing the phone could prompt for) and reads the first answer: `STLS`
//! is the wireless-debugging connect port (AOSP `adb.cpp handle_new_connection`, `daemon/
//! adb_wifi.cpp`), `CNXN` or `AUTH` plain adbd (`adb tcpip`).

use std::time::Duration;

use tokio::net::TcpStream;

use super::wire::{Message, A_AUTH, A_CNXN, A_STLS, A_VERSION, MAX_PAYLOAD};

/// How long the probe waits for the connect and the first answer.
pub const PROBE_WAIT: Duration = Duration::from_secs(3);

/// Which adbd port answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdbdPort {
    /// Wireless debugging's connect port: it answered `STLS`.
    WirelessConnect,
    /// adbd over plain TCP (`adb tcpip`): it answered `CNXN` or `AUTH`.
    Tcpip,
}

/// The adbd port at `addr`, or `None` when nothing answers as adbd within [`PROBE_WAIT`]
/// (closed, silent, another protocol).
pub async fn probe_adbd(addr: &str) -> Option<AdbdPort> {
    let probe = async {
        let mut tcp = TcpStream::connect(addr).await.ok()?;
        Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, b"host::".to_vec())
            .write_to(&mut tcp)
            .await
            .ok()?;
        let reply = Message::read_from(&mut tcp, MAX_PAYLOAD).await.ok()?;
        match reply.command {
            A_STLS => Some(AdbdPort::WirelessConnect),
            A_CNXN | A_AUTH => Some(AdbdPort::Tcpip),
            _ => None,
        }
    };
    tokio::time::timeout(PROBE_WAIT, probe).await.ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    /// A listener that answers its first connection's bytes with `answer`.
    async fn answering(answer: Option<Message>) -> String {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let _ = Message::read_from(&mut s, MAX_PAYLOAD).await;
            match answer {
                Some(m) => m.write_to(&mut s).await.unwrap(),
                None => s
                    .write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                    .await
                    .unwrap(),
            }
        });
        addr
    }

    #[tokio::test]
    async fn each_answer_names_its_port() {
        let stls = answering(Some(Message::new(A_STLS, 0x0100_0000, 0, Vec::new()))).await;
        assert_eq!(probe_adbd(&stls).await, Some(AdbdPort::WirelessConnect));
        let auth = answering(Some(Message::new(A_AUTH, 1, 0, vec![7; 20]))).await;
        assert_eq!(probe_adbd(&auth).await, Some(AdbdPort::Tcpip));
        let http = answering(None).await;
        assert_eq!(probe_adbd(&http).await, None);
        // Nothing listening.
        let closed = {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            l.local_addr().unwrap().to_string()
        };
        assert_eq!(probe_adbd(&closed).await, None);
    }
}
