//! Real etcd servers for the fleet tests and bench (issue 22): Debian's `etcd-server`
//! (`/usr/bin/etcd`, installed by `.ci/install-test-deps`), on loopback ports chosen by
//! [`free_port`], each member with a temporary data dir; a single node or a three-member
//! cluster. A member can be killed (SIGKILL) and started again on the same ports and data dir,
//! or frozen (SIGSTOP) and thawed (SIGCONT) to cut it off from its clients and peers.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::adb_server::free_port;
use super::procs::TempDir;

/// The etcd binary (`XAGENT_TEST_ETCD` overrides).
pub fn etcd_bin() -> String {
    std::env::var("XAGENT_TEST_ETCD").unwrap_or_else(|_| "/usr/bin/etcd".into())
}

/// One etcd member process.
pub struct Member {
    /// Its name in the cluster.
    pub name: String,
    /// `http://127.0.0.1:PORT` of its client port.
    pub client_url: String,
    peer_url: String,
    cluster: String,
    /// Flags beyond the cluster's (the TLS ones of [`Etcd::single_tls`]).
    extra: Vec<String>,
    dir: TempDir,
    child: Option<Child>,
}

impl Member {
    fn spawn(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("etcd.log")).expect("etcd log");
        let child = Command::new(etcd_bin())
            .args(["--name", &self.name])
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .args(["--listen-client-urls", &self.client_url])
            .args(["--advertise-client-urls", &self.client_url])
            .args(["--listen-peer-urls", &self.peer_url])
            .args(["--initial-advertise-peer-urls", &self.peer_url])
            .args(["--initial-cluster", &self.cluster])
            .args(["--initial-cluster-token", "xagent-fleet-test"])
            .args(["--initial-cluster-state", "new"])
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start /usr/bin/etcd (apt-get install etcd-server)");
        self.child = Some(child);
    }

    /// SIGKILL (data dir kept).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the member again on its ports and data dir.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.as_ref().expect("running member").id();
        let ok = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill {sig} {pid}");
    }

    /// SIGSTOP: the member stops answering clients and peers (a partition of this member).
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after [`Member::freeze`].
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    /// Whether the member answers a linearizable read (it has a leader and quorum).
    pub fn answers(&self) -> bool {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(2)))
            .http_status_as_error(false)
            .build()
            .into();
        agent
            .post(&format!("{}/v3/kv/range", self.client_url))
            .header("Content-Type", "application/json")
            .send("{\"key\":\"AA==\"}".as_bytes())
            .is_ok_and(|r| r.status() == 200)
    }

    /// OS process id (0 when not running).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// The member's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Some(c) = &self.child {
            // A frozen member would ignore nothing, but SIGKILL works on stopped processes too.
            let _ = Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status();
        }
        self.kill();
    }
}

/// An etcd cluster of one or more members on loopback.
pub struct Etcd {
    /// The members, in start order.
    pub members: Vec<Member>,
}

impl Etcd {
    /// A single-node etcd, answering (≤ 30 s).
    pub fn single() -> Etcd {
        Self::cluster(1)
    }

    /// A cluster of `n` members, answering on every member (≤ 30 s).
    pub fn cluster(n: usize) -> Etcd {
        let ports: Vec<(u16, u16)> = (0..n).map(|_| (free_port(), free_port())).collect();
        let cluster = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut members: Vec<Member> = ports
            .iter()
            .enumerate()
            .map(|(i, (client, peer))| Member {
                name: format!("m{i}"),
                client_url: format!("http://127.0.0.1:{client}"),
                peer_url: format!("http://127.0.0.1:{peer}"),
                cluster: cluster.clone(),
                extra: Vec::new(),
                dir: TempDir::new(&format!("etcd-m{i}")),
                child: None,
            })
            .collect();
        for m in &mut members {
            m.spawn();
        }
        let etcd = Etcd { members };
        for i in 0..n {
            etcd.wait_answers(i);
        }
        etcd
    }

    /// A single-node etcd serving clients over TLS only (`https://127.0.0.1:PORT`) with
    /// `certs`' server certificate, and asking every client for a certificate signed by
    /// `certs`' CA (`--client-cert-auth`); ready when its log says it serves clients (≤ 30 s).
    pub fn single_tls(certs: &TlsFiles) -> Etcd {
        let (client, peer) = (free_port(), free_port());
        let path = |p: &std::path::Path| p.to_str().expect("UTF-8 path").to_string();
        let mut member = Member {
            name: "m0".into(),
            client_url: format!("https://127.0.0.1:{client}"),
            peer_url: format!("http://127.0.0.1:{peer}"),
            cluster: format!("m0=http://127.0.0.1:{peer}"),
            extra: vec![
                "--cert-file".into(),
                path(&certs.server_cert),
                "--key-file".into(),
                path(&certs.server_key),
                "--trusted-ca-file".into(),
                path(&certs.ca),
                "--client-cert-auth".into(),
            ],
            dir: TempDir::new("etcd-tls"),
            child: None,
        };
        member.spawn();
        let deadline = Instant::now() + Duration::from_secs(30);
        // etcd 3.4 logs this once its client listener (TLS) is up.
        while !member
            .log()
            .contains("serving client requests on 127.0.0.1")
        {
            assert!(
                Instant::now() < deadline,
                "etcd (TLS) does not serve clients: {}",
                member.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Etcd {
            members: vec![member],
        }
    }

    /// Waits (≤ 30 s) until member `i` answers; panics with its log otherwise.
    pub fn wait_answers(&self, i: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.members[i].answers() {
            assert!(
                Instant::now() < deadline,
                "etcd member {i} does not answer: {}",
                self.members[i].log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The client URL of member `i`.
    pub fn url(&self, i: usize) -> String {
        self.members[i].client_url.clone()
    }

    /// Deletes `key` through member 0's JSON gateway (as an operator's `etcdctl del` would);
    /// returns how many keys went. Panics when etcd does not answer.
    pub fn delete_key(&self, key: &str) -> u64 {
        use base64::Engine as _;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .into();
        let body = serde_json::json!({
            "key": base64::engine::general_purpose::STANDARD.encode(key.as_bytes())
        });
        let text = agent
            .post(&format!("{}/v3/kv/deleterange", self.url(0)))
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes())
            .expect("etcd deleterange")
            .body_mut()
            .read_to_string()
            .expect("deleterange answer");
        let answer: serde_json::Value = serde_json::from_str(&text).expect("deleterange JSON");
        answer["deleted"]
            .as_str()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

/// PEM files of a test PKI made with `rcgen` (`TlsFiles::issue`): a CA, etcd's server
/// certificate for 127.0.0.1 and `localhost`, a client certificate for a box, and a second,
/// unrelated CA (what a box configured with the wrong CA file trusts).
pub struct TlsFiles {
    /// The CA that signed the server and client certificates.
    pub ca: std::path::PathBuf,
    /// etcd's certificate (server and client use: etcd's JSON gateway dials etcd's own gRPC
    /// port with it when `--client-cert-auth` is on).
    pub server_cert: std::path::PathBuf,
    /// Its key.
    pub server_key: std::path::PathBuf,
    /// A box's client certificate.
    pub client_cert: std::path::PathBuf,
    /// Its key.
    pub client_key: std::path::PathBuf,
    /// Another CA, which signed none of these.
    pub wrong_ca: std::path::PathBuf,
}

impl TlsFiles {
    /// Issues the PKI into `dir`.
    pub fn issue(dir: &std::path::Path) -> TlsFiles {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose as Eku, IsCa,
            Issuer, KeyPair, SanType,
        };
        let ca = |name: &str| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
            params.distinguished_name.push(DnType::CommonName, name);
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let cert = params.self_signed(&key).unwrap();
            (cert, Issuer::new(params, key))
        };
        let (ca_cert, issuer) = ca("xagent fleet test CA");
        let (wrong_cert, _) = ca("some other CA");
        let leaf = |names: Vec<String>, usages: Vec<Eku>, cn: &str| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(names).unwrap();
            params.distinguished_name.push(DnType::CommonName, cn);
            params.extended_key_usages = usages;
            (params.signed_by(&key, &issuer).unwrap(), key)
        };
        let (server, server_key) = {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
            params
                .subject_alt_names
                .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
            params.distinguished_name.push(DnType::CommonName, "etcd");
            params.extended_key_usages = vec![Eku::ServerAuth, Eku::ClientAuth];
            (params.signed_by(&key, &issuer).unwrap(), key)
        };
        let (client, client_key) = leaf(vec![], vec![Eku::ClientAuth], "box A");
        let write = |name: &str, pem: String| {
            let path = dir.join(name);
            std::fs::write(&path, pem).unwrap();
            path
        };
        TlsFiles {
            ca: write("ca.pem", ca_cert.pem()),
            server_cert: write("server.pem", server.pem()),
            server_key: write("server-key.pem", server_key.serialize_pem()),
            client_cert: write("client.pem", client.pem()),
            client_key: write("client-key.pem", client_key.serialize_pem()),
            wrong_ca: write("wrong-ca.pem", wrong_cert.pem()),
        }
    }
}
