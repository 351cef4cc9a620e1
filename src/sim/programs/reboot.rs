//! `reboot`: the phone goes down with its transport and boots again.

use std::time::Duration;

use super::Output;
use crate::phone::Phone;

/// How long a rebooting phone is gone (no transport) before adbd is back.
pub const REBOOT_DOWN: Duration = Duration::from_secs(2);
/// How long adbd answers with `sys.boot_completed` still 0 after it is back.
pub const REBOOT_BOOTING: Duration = Duration::from_secs(1);

/// `reboot [REASON]` as the shell user (AOSP `system/core/reboot/reboot.c`, allowed to the
/// shell uid by sepolicy `shell.te` `set_prop(shell, powerctl_prop)`): sets `sys.powerctl`
/// to `reboot,REASON` (`shell` when none is given) and never returns — the phone goes down
/// with the transport ([`REBOOT_DOWN`]), adbd comes back with `sys.boot_completed` 0
/// ([`REBOOT_BOOTING`]), then 1, and `sys.boot.reason` names the reboot (`reboot,shell`, as
/// `bootstat` records it). `-p` (power off) is refused: a simulated phone cannot be powered
/// on again.
pub async fn reboot(phone: &Phone, args: &[String]) -> Output {
    if args.iter().any(|a| a.starts_with('-')) {
        return Output::err(
            1,
            "usage: reboot [-n] [-p] [-f] [REASON]\n  (the simulated phone only reboots)\n",
        );
    }
    let reason = args
        .first()
        .filter(|r| !r.is_empty())
        .map_or("shell", String::as_str);
    let powerctl = format!("reboot,{reason}");
    phone.with(|s| {
        s.props.insert("sys.powerctl".into(), powerctl.clone());
        s.props.insert("sys.boot_completed".into(), "0".into());
    });
    phone.set_transport_mode(crate::phone::TransportMode::Unplugged);
    let back = phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(REBOOT_DOWN).await;
        back.with(|s| {
            s.props.remove("sys.powerctl");
            s.props.insert("sys.boot.reason".into(), powerctl);
        });
        back.set_transport_mode(crate::phone::TransportMode::Online);
        tokio::time::sleep(REBOOT_BOOTING).await;
        back.with(|s| s.props.insert("sys.boot_completed".into(), "1".into()));
    });
    // Never returns (`reboot.c` waits to be killed): the stream goes down with the transport.
    // Logged now, as ordered, since it never finishes.
    let mut argv = vec!["reboot".to_string()];
    argv.extend_from_slice(args);
    phone.log(&argv, 0);
    std::future::pending::<Output>().await
}
