//! Spec §8.2 connector lease: the grace timer starts when the last authenticated socket closes;
//! a re-hello within the grace keeps everything; expiry deregisters the connector id and removes
//! its channels; channels restored at start with no hello are cleaned the same way.

mod common;

use std::time::Duration;

use common::procs::{ConnectorProc, Phones, TempDir};
use common::xagent::connect;

fn start(dir: &TempDir) -> ConnectorProc {
    ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![]),
        &["--claim-policy", "open", "--lease-grace", "1500ms"],
    )
}

#[tokio::test]
async fn spec_8_2_rehello_within_grace_keeps_channels() {
    let dir = TempDir::new("lease-keep");
    let conn = start(&dir);
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    x.close().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut y = connect(&conn.addr).await;
    assert_eq!(y.hello(&id).await["payload"]["connector_id"], id.as_str());
    // Hold past the original expiry: the re-hello cancelled it.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let (ch2, _) = y.open(Some(&ch)).await;
    assert_eq!(ch2, ch);
}

#[tokio::test]
async fn spec_8_2_expiry_deregisters_and_cascades() {
    let dir = TempDir::new("lease-expire");
    let conn = start(&dir);
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    x.close().await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let mut y = connect(&conn.addr).await;
    let new_id = y.hello(&id).await["payload"]["connector_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(new_id, id, "an expired connector id is replaced");
    let (ch2, _) = y.open(Some(&ch)).await;
    assert_ne!(ch2, ch, "the old channel was removed");
}

#[tokio::test]
async fn spec_8_2_restored_channels_without_hello_are_cleaned() {
    let dir = TempDir::new("lease-restart");
    let mut conn = start(&dir);
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    drop(x);
    conn.restart();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let mut y = connect(&conn.addr).await;
    assert_ne!(y.hello(&id).await["payload"]["connector_id"], id.as_str());
    let (ch2, _) = y.open(Some(&ch)).await;
    assert_ne!(ch2, ch);
}
