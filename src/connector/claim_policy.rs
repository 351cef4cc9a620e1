//! Who may bind a channel to a phone through `adb_device_claim` (`--claim-policy`, config key
//! `claim_policy`).

use serde::Deserialize;

/// The claim policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ClaimPolicy {
    /// Any attached phone may be claimed (demos, tests, single-tenant boxes).
    Open,
    /// A phone is claimed only with the admin-issued code for its serial (`[claim_codes]`).
    Code,
}
