//! The end both pairing flows share: finding where the phone just paired listens, then the
//! bind. A successful pairing gives the phone's GUID, and the GUID is what finds it: the
//! connect port a person typed is often stale (the phone moved it after pairing: field bug 35),
//! missing, or another port (the pairing port, 5555: field bug 36), so the addresses given are
//! tried first and then every `_adb-tls-connect._tcp` announcement naming the GUID — conflict
//! renames `<GUID> (N)` included, freshest first, each checked to be this phone — from mDNS on
//! the configured interfaces and the adb server's `host:mdns:services` where there is one
//! (AOSP `client/adb_wifi.cpp`: `adb pair` connects by the GUID it received the same way).
//! The pairing is remembered on the channel until it is bound ([`super::runtime::PairedPhone`]): a later
//! attempt connects with it, no second code.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::claim_error::{refuse, ClaimError};
use super::Connector;
use crate::adb::host_key::retry_until_key_recorded;
use crate::adb::mdns::{find_each, Browser, CONNECT_SERVICE};
use crate::adb::{AdbError, AdbServerClient, DeviceLink, HostKeyFile};
use crate::device::inventory::{self, AttachedPhone, Inventory};
use crate::protocol::{now_ms, ErrorCode};
use crate::store::WirelessPhoneRecord;

/// How long the phone's announcements are looked for once the addresses given did not answer
/// ("a few seconds": a phone announces its connect port at once while wireless debugging is
/// on; mdns-sd asks at once and answers come within a second on one link).
pub const LOOKUP_DEADLINE: Duration = Duration::from_secs(5);
/// Bound on one address given (connect, `STLS`, identity; a refusal of the key is retried for
/// [`crate::adb::host_key::PAIRED_KEY_GRACE`] first).
const ADDRESS_DEADLINE: Duration = Duration::from_secs(8);

/// Why the connect after pairing did not bind.
#[derive(Debug)]
pub(super) enum ConnectFailure {
    /// The phone answered but refused the connector's key (the pairing was undone).
    KeyRefused,
    /// No address given and nothing announced under the GUID answered as this phone within
    /// [`LOOKUP_DEADLINE`].
    NotFound,
    /// The store or the bind refused, in words.
    Refused(ClaimError),
}

/// Whether `serial` can be the phone named `guid`: a GUID of AOSP's form `adb-<serial>-<6
/// alnum>` (`GenerateDeviceGuid`, `daemon/mdns.cpp`) names exactly that serial; a GUID of any
/// other form names no serial and is not checked.
fn guid_names_serial(guid: &str, serial: &str) -> bool {
    let Some(middle) = guid.strip_prefix("adb-").and_then(|rest| {
        let (middle, tail) = rest.rsplit_once('-')?;
        (tail.len() == 6 && tail.chars().all(|c| c.is_ascii_alphanumeric())).then_some(middle)
    }) else {
        return true;
    };
    middle == serial
}

/// Attaches the phone `guid` at `addr` over `STLS` with the connector's key, as
/// [`RouteKind::WifiPaired`](crate::device::parse::devices::RouteKind); a phone of another
/// serial there is not this one (its route is dropped again): `Ok(None)`. Errors: the link's.
async fn attach_at(
    inv: &Inventory,
    key: &HostKeyFile,
    guid: &str,
    addr: &str,
) -> Result<Option<AttachedPhone>, AdbError> {
    let link = DeviceLink::direct_with_key(addr.to_string(), key.clone());
    let transport = format!("tcp:{addr}");
    let phone =
        retry_until_key_recorded(|| inventory::attach_paired(inv, &link, &transport)).await?;
    if guid_names_serial(guid, &phone.serial) {
        return Ok(Some(phone));
    }
    inv.remove_route(None, &transport);
    link.reset().await;
    Ok(None)
}

impl Connector {
    /// The first address in `given` where the phone `guid` answers (each within 8 s); a
    /// refusal of the key is noted in `refused`.
    async fn attach_given(
        &self,
        key_file: &HostKeyFile,
        guid: &str,
        given: &[String],
        refused: &AtomicBool,
    ) -> Option<(AttachedPhone, String)> {
        for addr in given {
            let attached = attach_at(&self.inventory, key_file, guid, addr);
            match tokio::time::timeout(ADDRESS_DEADLINE, attached).await {
                Ok(Ok(Some(phone))) => return Some((phone, addr.clone())),
                Ok(Err(AdbError::NotPaired)) => refused.store(true, Ordering::SeqCst),
                _ => {}
            }
        }
        None
    }

    /// Where the phone `guid`, paired just now with `key_file`, answers: each address in
    /// `given` (`HOST:PORT`), then its announcements (see the module). Returns the phone (in
    /// the inventory from now on) and its address. Errors: [`ConnectFailure::KeyRefused`]
    /// when some address refused the key and none accepted it, else
    /// [`ConnectFailure::NotFound`].
    async fn locate_paired(
        &self,
        key_file: &HostKeyFile,
        guid: &str,
        given: &[String],
    ) -> Result<(AttachedPhone, String), ConnectFailure> {
        let refused = Arc::new(AtomicBool::new(false));
        if let Some(found) = self.attach_given(key_file, guid, given, &refused).await {
            return Ok(found);
        }
        let interfaces = self.qr_config.mdns_interfaces.clone();
        let browser = match tokio::task::spawn_blocking(move || Browser::start(&interfaces)).await {
            Ok(Ok(b)) => Some(b),
            _ => {
                tracing::warn!("mDNS browsing unavailable: a paired phone is looked up in the adb server's list only");
                None
            }
        };
        let adb_server = self
            .qr_config
            .adb_server
            .as_deref()
            .map(AdbServerClient::new);
        let attempt = |addr: std::net::SocketAddr| {
            let (inv, key, refused) = (self.inventory.clone(), key_file.clone(), refused.clone());
            let addr = addr.to_string();
            let skip = given.contains(&addr);
            let guid = guid.to_string();
            async move {
                if skip {
                    return None;
                }
                match attach_at(&inv, &key, &guid, &addr).await {
                    Ok(Some(phone)) => Some((phone, addr)),
                    Ok(None) => None,
                    Err(e) => {
                        refused.fetch_or(matches!(e, AdbError::NotPaired), Ordering::SeqCst);
                        None
                    }
                }
            }
        };
        let shutdown = self.lifecycle.shutdown();
        let found = find_each(
            browser.as_ref(),
            CONNECT_SERVICE,
            guid,
            LOOKUP_DEADLINE,
            shutdown,
            adb_server.as_ref(),
            attempt,
        )
        .await;
        match found {
            Some(found) => Ok(found),
            None if refused.load(Ordering::SeqCst) => Err(ConnectFailure::KeyRefused),
            None => Err(ConnectFailure::NotFound),
        }
    }

    /// The shared end of both pairing flows: finds the paired phone `guid` (the addresses in
    /// `given` first: [`Connector::locate_paired`]), remembers (serial, `guid`, address) for
    /// restarts, follows it from then on, and binds `channel_id` unless an `auth.logout` was
    /// answered there since the flow began (`logouts`). Returns the serial. The channel's
    /// [`PairedPhone`] is dropped once bound or when the key is refused. Errors:
    /// [`ConnectFailure`].
    pub(super) async fn connect_and_bind(
        &self,
        channel_id: &str,
        key_file: HostKeyFile,
        guid: &str,
        given: &[String],
        logouts: u64,
    ) -> Result<String, ConnectFailure> {
        let located = self.connect_and_remember(&key_file, guid, given).await;
        if matches!(located, Err(ConnectFailure::KeyRefused)) {
            *super::lock(&self.runtime(channel_id).paired) = None;
        }
        let phone = located?;
        let _gate = self.writes.lock().await;
        if self.logouts(channel_id) != logouts {
            return Err(ConnectFailure::Refused(refuse(
                ErrorCode::AuthFailed,
                "auth.logout ended this pairing before it finished: the phone is paired but not bound; auth.start again to bind it",
            )));
        }
        self.bind_phone(channel_id, &phone.serial, &phone.model)
            .await
            .map_err(ConnectFailure::Refused)?;
        *super::lock(&self.runtime(channel_id).paired) = None;
        Ok(phone.serial)
    }

    /// Finds the phone `guid` paired just now ([`Connector::locate_paired`]), remembers
    /// (serial, `guid`, address) for restarts and follows it from then on, bound to no channel
    /// (the end of the console's own pairing, and the first half of
    /// [`Connector::connect_and_bind`]). Returns the phone. Errors: [`ConnectFailure`].
    pub(super) async fn connect_and_remember(
        &self,
        key_file: &HostKeyFile,
        guid: &str,
        given: &[String],
    ) -> Result<AttachedPhone, ConnectFailure> {
        let (phone, addr) = self.locate_paired(key_file, guid, given).await?;
        // Remembered before the bind: a restart follows the phone again whatever the bind says.
        let record = WirelessPhoneRecord {
            serial: phone.serial.clone(),
            guid: guid.to_string(),
            addr,
            paired_ms: now_ms(),
        };
        let stored = self.store.wireless_phone_upsert(record.clone()).await;
        stored.map_err(|e| {
            ConnectFailure::Refused(refuse(
                ErrorCode::InternalError,
                &format!("could not store the paired phone: {e}"),
            ))
        })?;
        // From now on the phone is followed (watched, re-found by GUID, second to USB), as
        // after a restart, whatever the bind says: the inventory never keeps an unwatched route.
        self.follow_wireless_phone(record);
        Ok(phone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aosp_guid_names_its_serial_and_other_forms_name_none() {
        assert!(guid_names_serial("adb-R58N12ABCDEF-Xy9QzT", "R58N12ABCDEF"));
        assert!(guid_names_serial("adb-SER-IAL-Xy9QzT", "SER-IAL"));
        assert!(!guid_names_serial("adb-R58N12ABCDEF-Xy9QzT", "OTHER"));
        assert!(guid_names_serial("studio-1234", "anything"));
        assert!(guid_names_serial("adb-R58N12ABCDEF-toolong", "x"));
    }
}
