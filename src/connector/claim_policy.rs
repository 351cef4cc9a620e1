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

impl ClaimPolicy {
    /// The spelling of the config key `claim_policy` and of `--claim-policy`: `open`, `code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimPolicy::Open => "open",
            ClaimPolicy::Code => "code",
        }
    }
}

impl std::fmt::Display for ClaimPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Each policy displays as the config file and the flag spell it, and reads back.
    #[test]
    fn display_is_the_config_spelling() {
        #[derive(Deserialize)]
        struct File {
            claim_policy: ClaimPolicy,
        }
        for policy in ClaimPolicy::value_variants() {
            let flag = policy.to_possible_value().unwrap();
            assert_eq!(policy.to_string(), flag.get_name());
            let text = format!("claim_policy = \"{policy}\"\n");
            let file: File = toml::from_str(&text).unwrap();
            assert_eq!(file.claim_policy, *policy);
        }
    }
}
