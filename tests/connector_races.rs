//! Issue 8 (one owner for connector state): the rules that span channels, routes, bindings, auth
//! sessions and the lease hold under concurrency. A real `Store` on a temp dir and a simulated
//! phone in-process; every test races the operations with `tokio::join!` or many tasks and then
//! checks the invariants and that memory and database agree.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use xagent_adb_connector::config::ClaimPolicy;
use xagent_adb_connector::connector::{Connector, ConnectorConfig};
use xagent_adb_connector::device::inventory::{self, Inventory};
use xagent_adb_connector::device::parse::devices::DeviceState;
use xagent_adb_connector::device::policy::Profiles;
use xagent_adb_connector::file_cache::FileCache;
use xagent_adb_connector::lifecycle::Lifecycle;
use xagent_adb_connector::protocol::payloads::AuthStartPayload;
use xagent_adb_connector::store::Store;
use xagent_adb_sim::{self as sim, SimOptions};

use common::procs::TempDir;

/// A connector on `dir` whose inventory watches a simulated phone `serial` (when given).
async fn connector(
    dir: &TempDir,
    serial: Option<&str>,
    stop: &CancellationToken,
) -> Arc<Connector> {
    let store = Store::open(&dir.path().join("connector.sqlite3")).expect("store");
    let files = FileCache::open(
        store.clone(),
        dir.path().join("files"),
        Duration::from_secs(900),
        1 << 20,
    )
    .await
    .expect("file cache");
    let inventory = Inventory::default();
    if let Some(serial) = serial {
        let handle = sim::start(
            SimOptions {
                serial: serial.into(),
                ..Default::default()
            },
            stop.clone(),
        )
        .await
        .expect("sim");
        tokio::spawn(inventory::run_direct_watch(
            inventory.clone(),
            handle.adb_addr.to_string(),
            xagent_adb_connector::adb::HostKeyFile::new(dir.path().join("adbkey")),
            stop.clone(),
        ));
        for _ in 0..200 {
            if inventory
                .get(serial)
                .is_some_and(|p| p.state == DeviceState::Device)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(inventory.get(serial).is_some(), "the phone is visible");
    }
    let config = ConnectorConfig {
        claim_policy: ClaimPolicy::Open,
        claim_codes: Default::default(),
        lease_grace: Duration::from_secs(3600),
        profiles: Profiles::builtin(),
    };
    let c = Connector::load(
        store,
        files,
        inventory,
        config,
        Lifecycle::new(stop.clone()),
    )
    .await
    .expect("connector");
    Arc::new(c)
}

fn claim_payload(serial: &str) -> AuthStartPayload {
    serde_json::from_value(json!({"flow_id": "adb_device_claim", "input": {"serial": serial}}))
        .unwrap()
}

/// Memory and database agree on channels and bindings, and the state's invariants hold.
async fn assert_consistent(c: &Connector) {
    c.inspect(|s| s.check_invariants()).expect("invariants");
    let stored: HashSet<String> = c.store().channel_ids().await.unwrap().into_iter().collect();
    assert_eq!(
        c.inspect(|s| s.channel_ids()),
        stored,
        "channels: memory = store"
    );
    let bound: HashSet<(String, String)> = c
        .store()
        .binding_all()
        .await
        .unwrap()
        .into_iter()
        .map(|b| (b.channel_id, b.serial))
        .collect();
    assert_eq!(
        c.inspect(|s| s.binding_pairs()),
        bound,
        "bindings: memory = store"
    );
    let id = c
        .store()
        .connector_id_or_init("unused".into())
        .await
        .unwrap();
    assert_eq!(c.connector_id(), id, "connector id: memory = store");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_open_vs_lease_expiry_leaves_no_channel_of_a_deregistered_connector() {
    let stop = CancellationToken::new();
    let dir = TempDir::new("race-open-expiry");
    let c = connector(&dir, None, &stop).await;
    for round in 0..30u64 {
        let session = 100 + round;
        let before = c.connector_id();
        let generation = c.begin_grace_period();
        let opens = (0..4).map(|i| {
            let c = Arc::clone(&c);
            async move {
                let on = session * 10 + i;
                (on, c.open_channel(None, on).await.unwrap())
            }
        });
        let (opened, expired) = tokio::join!(
            futures_util::future::join_all(opens),
            c.expire_lease(generation)
        );
        let expired = expired.unwrap();
        assert!(expired, "nobody held the lease");
        assert_ne!(c.connector_id(), before);
        for (on, o) in &opened {
            // Opened before the expiry: gone with it entirely; after: known, routed, and
            // persisted under the new id. Never half of each.
            let known = c.channel_known(&o.channel_id);
            assert_eq!(c.is_open_on(&o.channel_id, *on), known, "round {round}");
            if known {
                let d = c.descriptor(&o.channel_id);
                assert_eq!(d.connection.connector_id, c.connector_id());
            }
        }
        assert_consistent(&c).await;
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hello_during_expiry_either_voids_it_or_sees_the_new_id() {
    let stop = CancellationToken::new();
    let dir = TempDir::new("race-hello-expiry");
    let c = connector(&dir, None, &stop).await;
    for round in 0..30u64 {
        let generation = c.begin_grace_period();
        let c2 = Arc::clone(&c);
        let (acked, expired) = tokio::join!(
            async move {
                tokio::task::yield_now().await;
                c2.lease_hold(round)
            },
            c.expire_lease(generation)
        );
        // Whatever the order, the hello was acknowledged with the id now in force.
        assert_eq!(acked, c.connector_id(), "expired: {expired:?}");
        c.lease_release(round);
        assert_consistent(&c).await;
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_claims_of_one_phone_bind_it_to_exactly_one_channel() {
    let stop = CancellationToken::new();
    let dir = TempDir::new("race-two-claims");
    let serial = "SIMRACE000001";
    let c = connector(&dir, Some(serial), &stop).await;
    for round in 0..10u64 {
        let mut channels = Vec::new();
        for i in 0..6 {
            channels.push(
                c.open_channel(None, round * 10 + i)
                    .await
                    .unwrap()
                    .channel_id,
            );
        }
        let claims = channels.iter().map(|ch| {
            let c = Arc::clone(&c);
            let ch = ch.clone();
            tokio::spawn(async move { c.claim(&ch, &claim_payload(serial)).await.1.is_ok() })
        });
        let won: usize = futures_util::future::join_all(claims)
            .await
            .into_iter()
            .map(|r| usize::from(r.unwrap()))
            .sum();
        assert_eq!(won, 1, "exactly one channel got the phone");
        assert_consistent(&c).await;
        let winner = channels
            .iter()
            .find(|ch| c.binding(ch).is_some())
            .unwrap()
            .clone();
        c.logout(&winner).await.unwrap();
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logout_during_claim_leaves_memory_and_store_agreeing() {
    let stop = CancellationToken::new();
    let dir = TempDir::new("race-claim-logout");
    let serial = "SIMRACE000002";
    let c = connector(&dir, Some(serial), &stop).await;
    let ch = c.open_channel(None, 1).await.unwrap().channel_id;
    for _ in 0..30 {
        let c1 = Arc::clone(&c);
        let ch1 = ch.clone();
        let (claimed, logged_out) = tokio::join!(
            tokio::spawn(async move { c1.claim(&ch1, &claim_payload(serial)).await }),
            c.logout(&ch)
        );
        let (auth_session, result) = claimed.unwrap();
        assert!(result.is_ok(), "{result:?}");
        logged_out.unwrap();
        assert_consistent(&c).await;
        // auth.status reports the claim; `binding` tells whether the logout came after it.
        assert!(c.auth_session(&ch, &auth_session).is_some());
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicting_idle_channels_under_concurrent_opens_keeps_open_and_bound_ones() {
    let stop = CancellationToken::new();
    let dir = TempDir::new("race-evict");
    let serial = "SIMRACE000003";
    let c = connector(&dir, Some(serial), &stop).await;
    let c = Arc::new(
        Arc::try_unwrap(c)
            .ok()
            .expect("sole owner")
            .with_channel_cap(8),
    );
    let bound = c.open_channel(None, 1).await.unwrap().channel_id;
    assert!(c.claim(&bound, &claim_payload(serial)).await.1.is_ok());
    c.close_channel(&bound, 1);
    let kept_open = c.open_channel(None, 2).await.unwrap().channel_id;
    let opens = (0..40u64).map(|i| {
        let c = Arc::clone(&c);
        tokio::spawn(async move {
            let session = 1000 + i;
            let ch = c.open_channel(None, session).await.unwrap().channel_id;
            c.close_channel(&ch, session);
            ch
        })
    });
    futures_util::future::join_all(opens).await;
    assert!(c.channel_known(&bound), "a bound channel is never evicted");
    assert!(
        c.is_open_on(&kept_open, 2),
        "an open channel is never evicted"
    );
    assert!(c.inspect(|s| s.channel_count()) <= 8);
    assert_consistent(&c).await;
    stop.cancel();
}
