//! Network namespaces a test creates (`ip netns add`, `lo` up with multicast on and a
//! `224.0.0.0/4` route) and always deletes, for tests with real multicast (mDNS): the test's
//! thread enters the namespace (`setns`), so every socket it opens and every process it spawns
//! lives there, and no packet reaches the machine's own interfaces. Needs root.

use std::os::fd::AsRawFd;
use std::process::Command;

/// A network namespace, deleted on drop.
pub struct Netns(pub String);

impl Netns {
    /// A new namespace named after `tag` and this process, with multicast on its `lo`.
    pub fn create(tag: &str) -> Netns {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("xagent-{tag}-{}-{n}", std::process::id());
        let ns = Netns(name.clone());
        for args in [
            vec!["netns", "add", &name],
            vec!["-n", &name, "link", "set", "lo", "up", "multicast", "on"],
            vec!["-n", &name, "route", "add", "224.0.0.0/4", "dev", "lo"],
        ] {
            let out = Command::new("ip").args(&args).output().expect("run ip");
            assert!(
                out.status.success(),
                "ip {args:?} (network namespaces need root): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        ns
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Whether the test runs as root (creating namespaces needs it).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// Runs `body` on a new thread that first enters `ns` (sockets and children follow the thread),
/// with a current-thread runtime so no task hops to a thread outside the namespace.
pub fn inside<F, Fut>(ns: &Netns, body: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let path = format!("/var/run/netns/{}", ns.0);
    let joined = std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("netns file");
        // SAFETY: setns on this thread only, with a valid namespace fd we hold open.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(body());
    })
    .join();
    if let Err(panic) = joined {
        std::panic::resume_unwind(panic);
    }
}

/// Runs `ip ARGS…`, asserting it succeeds.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Joins namespaces `a` and `b` with a veth pair that exists only inside them (`a_dev` with
/// `a_addr`, `b_dev` with `b_addr`, CIDR form), both up with multicast on and multicast routed
/// through them. For peers that ignore loopback (adb's Openscreen mDNS backend).
pub fn veth(a: &Netns, a_dev: &str, a_addr: &str, b: &Netns, b_dev: &str, b_addr: &str) {
    ip(&[
        "link", "add", a_dev, "netns", &a.0, "type", "veth", "peer", "name", b_dev, "netns", &b.0,
    ]);
    for (ns, dev, addr) in [(a, a_dev, a_addr), (b, b_dev, b_addr)] {
        ip(&["-n", &ns.0, "addr", "add", addr, "dev", dev]);
        ip(&["-n", &ns.0, "link", "set", dev, "up", "multicast", "on"]);
        ip(&["-n", &ns.0, "route", "replace", "224.0.0.0/4", "dev", dev]);
    }
}

/// `POST` of a JSON `body` to `path` of an HTTP server at `addr` (`HOST:PORT`) inside namespace `ns`
/// (a sim's control API listens on that namespace's loopback), with bash's `/dev/tcp`: the
/// raw answer, headers included.
pub fn post_inside(ns: &str, addr: &str, path: &str, body: &str) -> String {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let script = format!(
        "exec 3<>/dev/tcp/{host}/{port}; printf 'POST {path} HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: {}\\r\\nConnection: close\\r\\n\\r\\n%s' '{body}' >&3; cat <&3",
        body.len()
    );
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "bash", "-c", &script])
        .output()
        .expect("bash");
    String::from_utf8_lossy(&out.stdout).to_string()
}
