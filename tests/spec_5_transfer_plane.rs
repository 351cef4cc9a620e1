//! Spec §5 transfer plane: `POST /files/uploads` (Bearer, channel header, multipart `file`,
//! streamed with a size limit → 413) and the returned channel-bound `file_ref`.

mod common;

use std::time::Duration;

use serde_json::Value;

use common::procs::{ConnectorProc, Phones, TempDir};
use common::xagent::{connect, http_get};
use common::API_KEY;

fn multipart(filename: &str, mime: &str, data: &[u8]) -> (String, Vec<u8>) {
    let boundary = "xagentBoundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n").as_bytes());
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn post(
    url: &str,
    bearer: Option<&str>,
    channel: Option<&str>,
    ctype: &str,
    body: &[u8],
) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut req = agent.post(url).header("Content-Type", ctype);
    if let Some(b) = bearer {
        req = req.header("Authorization", &format!("Bearer {b}"));
    }
    if let Some(c) = channel {
        req = req.header("X-XAgent-Connector-Channel-ID", c);
    }
    let mut resp = req.send(body).expect("post");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    let v = serde_json::from_str(&text).unwrap_or(Value::Null);
    (status, v)
}

#[tokio::test]
async fn spec_5_1_uploads_are_authenticated_channel_bound_and_limited() {
    let dir = TempDir::new("upload");
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![]),
        &["--claim-policy", "open", "--upload-max-bytes", "100000"],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let url = format!("{}/files/uploads", conn.base);
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let (ctype, body) = multipart(
        "../../evil/app.apk",
        "application/vnd.android.package-archive",
        &data,
    );

    assert_eq!(post(&url, None, Some(&ch), &ctype, &body).0, 401);
    // Not multipart: the key is still checked first, then a documented JSON error.
    let raw = b"just bytes";
    assert_eq!(
        post(&url, None, Some(&ch), "application/octet-stream", raw).0,
        401
    );
    let (st, v) = post(
        &url,
        Some(API_KEY),
        Some(&ch),
        "application/octet-stream",
        raw,
    );
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("invalid_upload")),
        "{v}"
    );
    assert_eq!(post(&url, Some(API_KEY), None, &ctype, &body).0, 400);
    assert_eq!(
        post(&url, Some(API_KEY), Some("cch_not_ours"), &ctype, &body).0,
        403
    );

    let (st, v) = post(&url, Some(API_KEY), Some(&ch), &ctype, &body);
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["byte_size"], 50_000);
    assert_eq!(v["filename"], "app.apk");
    assert_eq!(v["file_type"], "file");
    assert!(v["expires_at"].as_i64().unwrap() > 1_700_000_000_000);
    let file_ref = v["file_ref"].as_str().unwrap();
    let (st, _, got) = http_get(&format!("{}/files/refs/{file_ref}", conn.base), None);
    assert_eq!(st, 200);
    assert_eq!(got, data, "bytes round-trip exactly");

    let big = vec![7u8; 150_000];
    let (ctype, body) = multipart("big.bin", "application/octet-stream", &big);
    let (st, v) = post(&url, Some(API_KEY), Some(&ch), &ctype, &body);
    assert_eq!(st, 413, "{v}");
    assert_eq!(v["error"]["code"], "upload_too_large");
    let leftover: Vec<_> = std::fs::read_dir(dir.path().join("files"))
        .unwrap()
        .collect();
    assert_eq!(leftover.len(), 1, "the refused upload left no file behind");
}

#[tokio::test]
async fn spec_5_2_file_cache_has_a_finite_ttl_and_capacity() {
    let dir = TempDir::new("cache");
    let cfg = dir.path().join("cache.toml");
    std::fs::write(&cfg, "file_ttl_secs = 2\nfile_cache_max_bytes = 100000\n").unwrap();
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![]),
        &["--claim-policy", "open", "--config", cfg.to_str().unwrap()],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let url = format!("{}/files/uploads", conn.base);
    let mut refs = Vec::new();
    for i in 0..3u8 {
        let (ctype, body) = multipart(
            &format!("f{i}.bin"),
            "application/octet-stream",
            &[i; 40_000],
        );
        let (st, v) = post(&url, Some(API_KEY), Some(&ch), &ctype, &body);
        assert_eq!(st, 200, "{v}");
        refs.push(format!(
            "{}/files/refs/{}",
            conn.base,
            v["file_ref"].as_str().unwrap()
        ));
    }
    // 3 × 40 kB > 100 kB: the oldest was evicted, the newer two remain.
    assert_eq!(http_get(&refs[0], None).0, 404);
    assert_eq!(http_get(&refs[1], None).0, 200);
    assert_eq!(http_get(&refs[2], None).0, 200);
    // After the TTL nothing is served.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(http_get(&refs[2], None).0, 404);
}
