//! Rejections (R-AUDIT-3): a stable reason code, the rule id, and the numbers involved.

use serde::Serialize;

use crate::money::Cents;

/// A stable reason: SCREAMING_SNAKE_CASE code plus the rule id it enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Reason {
    pub code: &'static str,
    pub rule: &'static str,
}

impl Reason {
    pub const fn new(code: &'static str, rule: &'static str) -> Reason {
        Reason { code, rule }
    }
}

/// Why a command was refused. It moves no chips; the caller records the attempt for auditors.
/// `numbers` carry unit-suffixed names, e.g. `("min_raise_to_cents", 1900)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{} ({}): {detail}", reason.code, reason.rule)]
pub struct Rejection {
    pub reason: Reason,
    pub numbers: Vec<(&'static str, Cents)>,
    pub detail: String,
}

impl Rejection {
    /// Cold and never inlined, like [`Rejection::with`]: a refusal is the rare way out of a
    /// decider, so building it (a text, a vector) stays out of the code of the accepted path.
    #[cold]
    #[inline(never)]
    pub fn new(reason: Reason, detail: impl Into<String>) -> Rejection {
        Rejection { reason, numbers: Vec::new(), detail: detail.into() }
    }

    /// Add one figure involved in the refusal.
    #[cold]
    #[inline(never)]
    pub fn with(mut self, name: &'static str, value: Cents) -> Rejection {
        self.numbers.push((name, value));
        self
    }

    /// The figure named `name`, if present.
    pub fn number(&self, name: &str) -> Option<Cents> {
        self.numbers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    pub fn code(&self) -> &'static str {
        self.reason.code
    }
}

/// Shorthand used by deciders: `reject(REASON, "detail")`.
pub fn reject(reason: Reason, detail: impl Into<String>) -> Rejection {
    Rejection::new(reason, detail)
}
