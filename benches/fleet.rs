//! Fleet benchmark (issue 22; a bench binary printing figures): `cargo bench --bench fleet --
//! [--boxes N] [--phones P] [--steady-secs S] [--ttl-secs T]`; defaults 50 boxes, 8 phones each,
//! 60 s, TTL 10 s.
//!
//! One real etcd (Debian's 3.4, single node, loopback, temp data dir) and N lightweight boxes in
//! this one process: each a [`Fleet`] with its own etcd client and presence loop
//! ([`presence::run`], the connector's own code) reporting P simulated phones. Printed:
//! registration (every box and phone in the fleet view), the steady store load over S seconds
//! (etcd requests/s, etcd's own revision count = KV writes, writes per phone per minute, etcd's
//! CPU % of one core), and claim latency p50/p99 (the fleet transaction of a claim,
//! [`Fleet::take`]): every phone claimed once by its box, sequentially and with all boxes at
//! once, and all boxes racing for one shared phone (one wins).

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use xagent_adb_connector::fleet::etcd::{Endpoint, EtcdClient};
use xagent_adb_connector::fleet::{presence, view, Fleet, FleetClaims, FleetConfig, TakeRefusal};

use common::etcd::Etcd;
use figures::{cpu_ms, load, summary};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn revision(client: &EtcdClient) -> i64 {
    let v = client
        .call(
            "/v3/kv/range",
            serde_json::json!({"key": "AA=="}),
            Duration::from_secs(2),
        )
        .await
        .expect("etcd answers");
    xagent_adb_connector::fleet::etcd::int(&v["header"]["revision"])
}

fn main() {
    let boxes = arg("--boxes", 50) as usize;
    let phones = arg("--phones", 8) as usize;
    let steady = arg("--steady-secs", 60);
    let ttl = arg("--ttl-secs", 10);
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let endpoint = Endpoint::parse(&url).expect("url");
        let probe = EtcdClient::new(vec![endpoint.clone()], None);
        let stop = CancellationToken::new();
        let mut fleets = Vec::new();
        let started = Instant::now();
        for b in 0..boxes {
            let fleet = Arc::new(Fleet::new(FleetConfig {
                endpoints: vec![endpoint.clone()],
                tls: None,
                box_name: format!("box{b:02}"),
                ttl: Duration::from_secs(ttl),
                claims: FleetClaims::Fleet,
            }));
            let list: Vec<presence::PhonePresence> = (0..phones)
                .map(|p| presence::PhonePresence {
                    serial: format!("SIM{b:02}P{p:02}"),
                    model: "Pixel 8".into(),
                    state: "device".into(),
                })
                .collect();
            let phone_list: presence::PhoneList = Arc::new(move || list.clone());
            let (_tx, rx) = tokio::sync::watch::channel(0u64);
            // The sender lives as long as the bench: the presence loop never sees it closed.
            std::mem::forget(_tx);
            tokio::spawn(presence::run(
                Arc::clone(&fleet),
                presence::BoxInfo {
                    base_url: format!("http://10.0.{b}.1:8787"),
                    version: "bench".into(),
                },
                phone_list,
                rx,
                stop.clone(),
            ));
            fleets.push(fleet);
        }
        let want = boxes * phones;
        loop {
            let seen = view::read(&probe).await.map(|v| v.len()).unwrap_or(0);
            if seen == want {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "registered {seen} of {want}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        println!(
            "fleet bench: {boxes} boxes x {phones} phones, TTL {ttl} s, etcd 3.4 single node on loopback; load {}",
            load()
        );
        println!(
            "registration: {} phones in the fleet view after {:.0} ms",
            want,
            started.elapsed().as_secs_f64() * 1000.0
        );

        // Steady state: no claims, no phone changes.
        let requests = |f: &[Arc<Fleet>]| f.iter().map(|f| f.client().requests_sent()).sum::<u64>();
        let (r0, rev0, cpu0, t0) = (
            requests(&fleets),
            revision(&probe).await,
            cpu_ms(etcd.members[0].pid()),
            Instant::now(),
        );
        tokio::time::sleep(Duration::from_secs(steady)).await;
        let secs = t0.elapsed().as_secs_f64();
        let (r1, rev1, cpu1) = (
            requests(&fleets),
            revision(&probe).await,
            cpu_ms(etcd.members[0].pid()),
        );
        let writes = (rev1 - rev0) as f64;
        println!(
            "steady {secs:.0} s: {:.1} etcd requests/s ({:.2}/box/s), {writes} KV writes ({:.3} per phone per minute), etcd CPU {:.1} % of one core",
            (r1 - r0) as f64 / secs,
            (r1 - r0) as f64 / secs / boxes as f64,
            writes / want as f64 / (secs / 60.0),
            (cpu1 - cpu0) / (secs * 1000.0) * 100.0
        );

        // Claims, one box after another.
        let rev_before = revision(&probe).await;
        let mut seq = Vec::new();
        for (b, fleet) in fleets.iter().enumerate() {
            for p in 0..phones / 2 {
                let t = Instant::now();
                fleet
                    .take(&format!("SIM{b:02}P{p:02}"), "chan_bench")
                    .await
                    .expect("claim");
                seq.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        summary("claim (fleet txn), sequential", seq);
        // Claims, every box at once.
        let mut tasks = Vec::new();
        for (b, fleet) in fleets.iter().enumerate() {
            let fleet = Arc::clone(fleet);
            tasks.push(tokio::spawn(async move {
                let mut ms = Vec::new();
                for p in phones / 2..phones {
                    let t = Instant::now();
                    fleet
                        .take(&format!("SIM{b:02}P{p:02}"), "chan_bench")
                        .await
                        .expect("claim");
                    ms.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                ms
            }));
        }
        let mut conc = Vec::new();
        for t in tasks {
            conc.extend(t.await.expect("task"));
        }
        summary(&format!("claim (fleet txn), {boxes} boxes at once"), conc);
        // One shared phone, every box racing for it.
        let mut tasks = Vec::new();
        for fleet in &fleets {
            let fleet = Arc::clone(fleet);
            tasks.push(tokio::spawn(async move {
                let t = Instant::now();
                let r = fleet.take("SHARED-WIFI", "chan_bench").await;
                (t.elapsed().as_secs_f64() * 1000.0, r)
            }));
        }
        let (mut race, mut won, mut refused) = (Vec::new(), 0, 0);
        for t in tasks {
            let (ms, r) = t.await.expect("task");
            race.push(ms);
            match r {
                Ok(()) => won += 1,
                Err(TakeRefusal::BoundElsewhere(_)) => refused += 1,
                Err(e) => panic!("race: {e:?}"),
            }
        }
        summary(&format!("one phone, {boxes} boxes racing"), race);
        println!("race: {won} won, {refused} refused phone_bound_elsewhere");
        assert_eq!(won, 1, "exactly one box binds the shared phone");
        let claims = boxes * phones + boxes;
        println!(
            "claims: {} KV writes for {claims} claims (a claim is one txn; a refused one writes nothing)",
            revision(&probe).await - rev_before
        );
        stop.cancel();
        tokio::time::sleep(Duration::from_millis(500)).await;
    });
}
