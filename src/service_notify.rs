//! systemd's service notification protocol (sd_notify(3)) for `serve` under `Type=notify`
//! (systemd/xagent-adb-connector.service): `READY=1` once the listener is bound and the store is
//! open, `WATCHDOG=1` every half of `WATCHDOG_USEC` (sd_watchdog_enabled(3)) while the runtime
//! answers, `STOPPING=1` when the SIGTERM drain starts. Outside systemd (`NOTIFY_SOCKET` unset)
//! nothing is sent. The datagrams are written by the `sd-notify` crate on the blocking pool, so
//! a stalled notify socket never holds a runtime worker; a failed send is logged, never fatal.

use std::net::SocketAddr;
use std::time::Duration;

use sd_notify::NotifyState;

use crate::lifecycle::Lifecycle;

/// Tells systemd the service is ready (with a `STATUS=` line naming `addr`), then spawns on
/// `lifecycle` the task that pings the watchdog (when systemd set one for this process) until
/// shutdown and sends `STOPPING=1` when it starts. Call once, after bind and store open.
pub async fn start(addr: SocketAddr, lifecycle: &Lifecycle) {
    if std::env::var_os("NOTIFY_SOCKET").is_none() {
        return;
    }
    send(NotifyState::Ready, Some(format!("listening on {addr}"))).await;
    let period = sd_notify::watchdog_enabled().map(|usec| usec / 2);
    let shutdown = lifecycle.shutdown().clone();
    lifecycle.spawn(async move {
        if let Some(period) = period {
            ping_until_shutdown(period, &shutdown).await;
        } else {
            shutdown.cancelled().await;
        }
        send(NotifyState::Stopping, Some("draining".to_string())).await;
    });
}

/// Sends `WATCHDOG=1` every `period` (half the watchdog timeout, as sd_watchdog_enabled(3)
/// advises) from a runtime task, so a wedged runtime stops the pings and systemd restarts the
/// service.
async fn ping_until_shutdown(period: Duration, shutdown: &tokio_util::sync::CancellationToken) {
    let mut tick = tokio::time::interval(period.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => send(NotifyState::Watchdog, None).await,
        }
    }
}

/// One datagram to `NOTIFY_SOCKET`: `state`, and a `STATUS=` line when given.
async fn send(state: NotifyState<'static>, status: Option<String>) {
    let sent = tokio::task::spawn_blocking(move || {
        let mut states = vec![state];
        if let Some(text) = &status {
            states.push(NotifyState::Status(text));
        }
        sd_notify::notify(&states)
    })
    .await;
    match sent {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "systemd notification failed"),
        Err(e) => tracing::warn!(error = %e, "systemd notification task failed"),
    }
}
