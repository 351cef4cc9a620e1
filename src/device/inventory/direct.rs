//! Direct-transport phones (`--device tcp:HOST:PORT`, and phones paired over Wi-Fi): each
//! watched by its own loop that dials it, identifies it and keeps its state current.

use std::collections::HashSet;

use tokio_util::sync::CancellationToken;

use super::identity::{place, probe};
use super::{
    AttachedPhone, Inventory, RouteKey, DIRECT_PROBE_PERIOD, DIRECT_RANK, LIVENESS_DEADLINE,
    LIVENESS_IDLE, REDIAL_GRACE,
};
use crate::adb::{AdbError, DeviceLink, HostKeyFile};
use crate::device::parse::devices::DeviceState;
#[cfg(doc)]
use crate::device::parse::devices::RouteKind;

/// Whether an online direct link still answers: connected, and either recently heard from or
/// answering a short `echo`. Otherwise the state to record: [`DeviceState::Gone`] when the
/// connection closed or failed (unplugged, off the network), [`DeviceState::Offline`] when it
/// stays open but silent (a frozen adbd: field bug 12). A silent link is dropped so the next
/// probe dials again.
async fn alive(link: &DeviceLink) -> Result<(), DeviceState> {
    if !link.is_connected().await {
        return Err(DeviceState::Gone);
    }
    if link
        .idle_for()
        .await
        .is_some_and(|idle| idle < LIVENESS_IDLE)
    {
        return Ok(());
    }
    let state = match link.shell("echo", LIVENESS_DEADLINE, 64).await {
        Ok(_) => return Ok(()),
        Err(AdbError::Timeout { .. }) => DeviceState::Offline,
        Err(_) => DeviceState::Gone,
    };
    link.reset().await;
    Err(state)
}

/// Identifies the phone behind a direct `link` (`getprop`, [`PROBE_DEADLINE`]) and records it
/// online under `transport` (`tcp:HOST:PORT`). Returns it. Errors: the link's ([`AdbError`]).
pub async fn attach_direct(
    inv: &Inventory,
    link: &DeviceLink,
    transport: &str,
) -> Result<AttachedPhone, AdbError> {
    attach(inv, link, transport, false).await
}

/// The `ro.serialno` of the phone behind a direct `link` (the identity probe,
/// [`super::PROBE_DEADLINE`]), recording nothing: whether an announced address is the phone
/// looked for. Errors: the link's ([`AdbError`]).
pub async fn identify(link: &DeviceLink) -> Result<String, AdbError> {
    Ok(probe(link).await?.serialno)
}

/// [`attach_direct`] for a phone the connector paired over Wi-Fi: its route is
/// [`RouteKind::WifiPaired`] (the Wi-Fi fixes in errors, as `check` gives them).
pub async fn attach_paired(
    inv: &Inventory,
    link: &DeviceLink,
    transport: &str,
) -> Result<AttachedPhone, AdbError> {
    attach(inv, link, transport, true).await
}

async fn attach(
    inv: &Inventory,
    link: &DeviceLink,
    transport: &str,
    wifi_paired: bool,
) -> Result<AttachedPhone, AdbError> {
    let identity = probe(link).await?;
    let key = RouteKey::direct(transport);
    let placed = place(inv, &identity.serialno, &key, link, &HashSet::new()).await;
    let phone = identity.route(placed, key, link.clone(), DIRECT_RANK, wifi_paired);
    inv.upsert(phone.clone());
    // After the upsert: a claim in between finds the phone under one name or the other.
    if inv.forget_unidentified(transport) {
        tracing::info!(
            transport,
            serial_hint = %crate::protocol::descriptor::mask_serial(&phone.serial),
            "direct phone accepted this connector's key: listed by its serial from now on"
        );
    }
    Ok(phone)
}

/// Keeps one direct-transport phone's state current until `shutdown`; the link answers `AUTH`
/// and `STLS` with the connector's adb key (`key`). A connection that closed is dialled again
/// at once (within [`REDIAL_GRACE`]), so the state recorded says why the phone cannot be used:
/// one that now refuses the key (`AUTH` not accepted, or a wireless-debugging port refusing it
/// over TLS) is `unauthorized`, never "address closed or refused" (a revoked key drops adbd's
/// connections first: AOSP `daemon/auth.cpp`, `adbd_auth_verify`; Developer options → Revoke
/// USB debugging authorisations).
pub async fn run_direct_watch(
    inv: Inventory,
    addr: String,
    key: HostKeyFile,
    shutdown: CancellationToken,
) {
    watch_direct(inv, addr, key, None, shutdown).await
}

/// [`run_direct_watch`] for a phone the connector paired over Wi-Fi (its route is
/// [`RouteKind::WifiPaired`]); `serial` is its `ro.serialno` from the pairing record, so a
/// phone that refuses the key from the watch's first connection (pairing revoked while the
/// connector was down) is still listed `unauthorized` under it ([`record_refusing`]).
pub async fn run_paired_watch(
    inv: Inventory,
    addr: String,
    serial: String,
    key: HostKeyFile,
    shutdown: CancellationToken,
) {
    watch_direct(inv, addr, key, Some(serial), shutdown).await
}

/// The loop of both watches; `paired`: the serial of a Wi-Fi-paired phone (`None` for a
/// `--device` phone).
async fn watch_direct(
    inv: Inventory,
    addr: String,
    key: HostKeyFile,
    paired: Option<String>,
    shutdown: CancellationToken,
) {
    let paired = paired.as_deref();
    let transport = format!("tcp:{addr}");
    let link = DeviceLink::direct_with_key(addr, key);
    let mut online = false;
    loop {
        online = if online {
            match alive(&link).await {
                Ok(()) => true,
                // Closed: what the phone says on a new connection is its state, when it says
                // it soon; past the grace the phone is gone and the next period dials again.
                Err(DeviceState::Gone) => {
                    match tokio::time::timeout(REDIAL_GRACE, dial(&inv, &link, &transport, paired))
                        .await
                    {
                        Ok(online) => online,
                        Err(_) => {
                            inv.set_state(&RouteKey::direct(&transport), DeviceState::Gone);
                            false
                        }
                    }
                }
                Err(state) => {
                    inv.set_state(&RouteKey::direct(&transport), state);
                    false
                }
            }
        } else {
            dial(&inv, &link, &transport, paired).await
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(DIRECT_PROBE_PERIOD) => {}
        }
    }
}

/// One attach attempt of [`run_direct_watch`] (`paired`: the serial of a Wi-Fi-paired phone):
/// `true` when the phone is online; otherwise a known phone's state follows why it cannot be
/// reached. A phone never attached is recorded only when it refuses the key
/// ([`record_refusing`]); one that does not answer at all stays unlisted, as `adb connect`
/// lists no phone it could not reach.
async fn dial(inv: &Inventory, link: &DeviceLink, transport: &str, paired: Option<&str>) -> bool {
    let Err(e) = attach(inv, link, transport, paired.is_some()).await else {
        return true;
    };
    match state_of_failed_dial(&e) {
        Some(DeviceState::Unauthorized) if !inv.has_route(&RouteKey::direct(transport)) => {
            record_refusing(inv, link, transport, paired);
        }
        Some(state) => inv.set_state(&RouteKey::direct(transport), state),
        None => {}
    }
    false
}

/// Records a direct phone that refused the connector's key before this process ever
/// identified it, `unauthorized`, so it is listed and a claim is told the fix; [`attach`]
/// replaces it once the phone accepts the key. A `--device` phone (`paired` `None`) sent no
/// `CNXN`, so no `ro.serialno`: it is recorded under its transport
/// ([`Inventory::unidentified_direct`]) and told to accept the prompt. A Wi-Fi-paired phone is
/// recorded under `paired`, the serial of its pairing record (the TLS port refusing the key:
/// pairing revoked or forgotten, AOSP `daemon/auth.cpp`), and told to pair again. Logged once,
/// with the fix (never the key; the serial masked).
fn record_refusing(inv: &Inventory, link: &DeviceLink, transport: &str, paired: Option<&str>) {
    let name = paired.unwrap_or(transport).to_string();
    let phone = AttachedPhone {
        serialno: name.clone(),
        serial: name,
        second: None,
        model: String::new(),
        manufacturer: String::new(),
        sdk: None,
        state: DeviceState::Unauthorized,
        link: link.clone(),
        transport: transport.to_string(),
        transport_id: None,
        adb_server: None,
        rank: DIRECT_RANK,
        wifi_paired: paired.is_some(),
        identified: false,
    };
    let fix = DeviceState::Unauthorized
        .remedy(phone.route_kind())
        .unwrap_or_default();
    match paired {
        Some(serial) => tracing::warn!(
            transport,
            serial_hint = %crate::protocol::descriptor::mask_serial(serial),
            "phone paired over Wi-Fi refuses this connector's key (unauthorized); {fix}"
        ),
        None => tracing::warn!(
            transport,
            "direct phone refuses this connector's key (unauthorized): listed by its address until it accepts; {fix}"
        ),
    }
    inv.upsert(phone);
}

/// The state of a direct phone whose connect failed with `e`; `None` when the failure says
/// nothing about the phone's state (a protocol error, a refused service).
fn state_of_failed_dial(e: &AdbError) -> Option<DeviceState> {
    match e {
        // Plain `AUTH` not accepted (the prompt waits on the phone), or the TLS port refusing
        // the key (pairing revoked or forgotten): both are the phone refusing this host.
        AdbError::DeviceUnauthorized | AdbError::NotPaired => Some(DeviceState::Unauthorized),
        AdbError::Timeout { .. } => Some(DeviceState::Offline),
        AdbError::Io(_) | AdbError::DeviceOffline => Some(DeviceState::Gone),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::inventory::tests::route;
    use crate::device::parse::devices::RouteKind;

    /// A `--device` phone refusing the key before it ever identified itself is listed
    /// `unauthorized` under its transport, and forgotten under that name once identified.
    #[test]
    fn an_unidentified_direct_phone_is_listed_by_its_transport_until_identified() {
        let inv = Inventory::default();
        let transport = "tcp:10.0.0.2:5555";
        record_refusing(&inv, &DeviceLink::direct("10.0.0.2:5555"), transport, None);
        let waiting = inv.unidentified_direct();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].serial, transport);
        assert_eq!(waiting[0].state, DeviceState::Unauthorized);
        assert_eq!(waiting[0].route_kind(), RouteKind::Direct);
        assert!(inv.get(transport).is_some());
        inv.upsert(route(transport, None, false));
        assert!(inv.forget_unidentified(transport));
        assert!(inv.unidentified_direct().is_empty());
        let listed = inv.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].serial, "R58N12ABCDEF");
        assert!(!inv.forget_unidentified(transport));
    }

    /// A Wi-Fi-paired phone refusing the key from the first connection is listed
    /// `unauthorized` under the serial of its pairing record (a Wi-Fi-paired route, so the
    /// fix is to pair again), never under its address; attaching it replaces that record.
    #[test]
    fn a_paired_phone_refusing_the_key_is_listed_by_its_stored_serial() {
        let inv = Inventory::default();
        let transport = "tcp:10.0.0.3:37000";
        let link = DeviceLink::direct("10.0.0.3:37000");
        record_refusing(&inv, &link, transport, Some("R58N12ABCDEF"));
        assert!(inv.unidentified_direct().is_empty());
        assert!(inv.get(transport).is_none());
        let phone = inv.get("R58N12ABCDEF").expect("listed by its serial");
        assert_eq!(phone.state, DeviceState::Unauthorized);
        assert_eq!(phone.route_kind(), RouteKind::WifiPaired);
        assert_eq!(phone.transport, transport);
        inv.upsert(route(transport, None, true));
        let listed = inv.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].state, DeviceState::Device);
        assert_eq!(inv.routes().len(), 1);
    }
}
