//! Reconciliation when the box (re)joins the fleet: the releases etcd missed are sent, and every
//! binding this box holds takes its key again under the current lease ([`super::binding::take`]
//! keeps the token of a key still this box's). A key another box took meanwhile — a local claim
//! made while etcd was down (`--fleet-claims local`), or a binding whose lease expired while this
//! box was cut off — goes to the earlier revision, which is the other box's (it is in etcd,
//! this one is not): this box's binding is marked lost and its channel is told through its
//! descriptor (`fleet_binding_lost`).

use std::sync::Arc;

use super::binding::{self, TakeError};
use super::{binding_key, lock, Fleet};

/// Runs one reconciliation (etcd answered; the lease is set).
pub async fn run(fleet: &Arc<Fleet>) {
    let releases = std::mem::take(&mut lock(&fleet.inner).releases);
    for (serial, token) in releases {
        if let Err(e) = binding::release(&fleet.client, &binding_key(&serial), token).await {
            fleet.set_offline(&e);
            lock(&fleet.inner).releases.push((serial, token));
        }
    }
    let Some(lease) = lock(&fleet.inner).lease else {
        return;
    };
    let held: Vec<(String, String)> = lock(&fleet.inner)
        .held
        .iter()
        .filter(|(_, h)| h.lost.is_none())
        .map(|(s, h)| (s.clone(), h.channel.clone()))
        .collect();
    for (serial, channel) in held {
        match binding::take(
            &fleet.client,
            &binding_key(&serial),
            fleet.box_name(),
            &channel,
            lease,
        )
        .await
        {
            Ok(token) => {
                let mut inner = lock(&fleet.inner);
                // Released meanwhile (logout): the key just taken goes again below.
                match inner.held.get_mut(&serial) {
                    Some(h) if h.channel == channel => h.token = Some(token),
                    _ => inner.releases.push((serial, token)),
                }
            }
            Err(TakeError::Elsewhere(holder)) => {
                fleet.mark_lost(&serial, Some(&holder), None);
            }
            Err(TakeError::Store(e)) => {
                fleet.set_offline(&e);
                return;
            }
        }
    }
}
