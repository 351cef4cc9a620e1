//! What a claim's `serial` names when several phones report one serial (field bug 50; their
//! names: [`crate::device::inventory::names`]). `SERIAL#N` names exactly that phone. The
//! bare serial names the phone bound to the claiming channel if it is one of them, else the
//! first free one (usable phones first, then in name order: `SERIAL`, `SERIAL#2`, …), so
//! claiming the serial on two channels binds the two phones. Under claim policy `code`, a
//! phone's code is `[claim_codes]` for its name, else the one for its serial: one code
//! issued for the serial opens each of its phones, and a `SERIAL#2` entry gives that phone its
//! own; with the bare serial, the first free phone the code opens is bound. Wrong codes count
//! per serial, whichever name was claimed.

use std::collections::HashSet;

use super::Connector;
use crate::device::inventory::AttachedPhone;
use crate::device::parse::devices::DeviceState;
use crate::protocol::descriptor::mask_serial;

impl Connector {
    /// The names `input` may bind for `channel_id`, in preference order: `[input]` unless it
    /// is a serial several phones report.
    pub(super) fn claim_candidates(&self, channel_id: &str, input: &str) -> Vec<String> {
        let sharing = self.inventory.sharing(input);
        if sharing.len() < 2 {
            return vec![input.to_string()];
        }
        let (own, bound) = {
            let state = self.state();
            let own = state.binding(channel_id).map(|b| b.serial.clone());
            let bound: HashSet<String> =
                state.binding_pairs().into_iter().map(|(_, s)| s).collect();
            (own, bound)
        };
        if let Some(own) = own.filter(|o| sharing.iter().any(|p| &p.serial == o)) {
            return vec![own];
        }
        let mut free: Vec<&AttachedPhone> = sharing
            .iter()
            .filter(|p| !bound.contains(&p.serial))
            .collect();
        // Stable: usable phones first, each group in name order.
        free.sort_by_key(|p| p.state != DeviceState::Device);
        if free.is_empty() {
            return vec![input.to_string()];
        }
        free.into_iter().map(|p| p.serial.clone()).collect()
    }

    /// The serial wrong claim codes are counted under: the phone's `ro.serialno` for a
    /// `SERIAL#N` name, else `name` itself.
    pub(super) fn claim_guard_key(&self, name: &str) -> String {
        self.inventory
            .get(name)
            .filter(|p| p.identified)
            .map_or_else(|| name.to_string(), |p| p.serialno)
    }

    /// Whether `code` opens the phone `name`: its own `[claim_codes]` entry, else its
    /// serial's.
    pub(super) fn claim_code_opens(&self, name: &str, code: &str) -> bool {
        let own = super::code_entry(
            &self.claim_codes.read().unwrap_or_else(|e| e.into_inner()),
            name,
        )
        .is_some();
        let serialno = self.claim_guard_key(name);
        if own || serialno == name {
            self.claim_code_matches(name, code)
        } else {
            self.claim_code_matches(&serialno, code)
        }
    }

    /// Why every phone reporting the serial `input` is taken, when it is shared and all are
    /// bound to other channels (`None` otherwise). The serial is masked.
    pub(super) fn all_taken(&self, input: &str) -> Option<String> {
        let sharing = self.inventory.sharing(input);
        (sharing.len() > 1).then(|| {
            format!(
                "all {} phones reporting this serial are bound to other channels (they are \
                 named {}); auth.logout one of them first",
                sharing.len(),
                names_hint(&sharing)
            )
        })
    }

    /// The warning of a channel bound to a phone whose serial other phones report too: for
    /// the claim's ack message and the descriptor (`target.warning`). Never the whole serial.
    pub fn serial_warning(&self, channel_id: &str) -> Option<String> {
        let bound = self.binding(channel_id)?;
        let phone = self.inventory.get(&bound.serial)?;
        let sharing = self.inventory.sharing(&phone.serialno);
        if sharing.len() < 2 {
            return None;
        }
        let suffix = phone.serial.strip_prefix(&phone.serialno).unwrap_or("");
        let this = if suffix.is_empty() {
            "the one named by the serial alone".to_string()
        } else {
            format!("the one named by the serial followed by `{suffix}`")
        };
        let place = match (&phone.adb_server, phone.transport_id) {
            (Some(server), Some(id)) => format!(" (adb server {server}, transport_id {id})"),
            (Some(server), None) => format!(" (adb server {server})"),
            (None, _) => String::new(),
        };
        Some(format!(
            "the serial {} is not unique: {} phones on this connector report it ({}), told \
             apart by their Android ID and reached by transport id; this channel is bound to \
             {this}{place}",
            mask_serial(&phone.serialno),
            sharing.len(),
            names_hint(&sharing)
        ))
    }
}

/// The names of phones sharing a serial, masked: `012…CDEF, 012…CDEF#2`.
fn names_hint(sharing: &[AttachedPhone]) -> String {
    sharing
        .iter()
        .map(|p| {
            let suffix = p.serial.strip_prefix(&p.serialno).unwrap_or("");
            format!("{}{suffix}", mask_serial(&p.serialno))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
