//! Typed, one-line errors that name the file and the line (or field) at fault.

/// Why a PHH file could not become a [`crate::HandHistory`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhhError {
    #[error("{origin}: cannot read: {message}")]
    Read { origin: String, message: String },
    #[error("{origin}:{line}: malformed TOML: {message}")]
    Toml { origin: String, line: u32, message: String },
    #[error("{origin}:{line}: field `{field}`: {message}")]
    Field { origin: String, line: u32, field: String, message: String },
    #[error("{origin}:{line}: action `{text}`: {message}")]
    Action { origin: String, line: u32, text: String, message: String },
    /// A variant code this crate does not replay (or does not know).
    #[error("{origin}: unsupported variant `{variant}`")]
    Unsupported { origin: String, variant: String },
    /// A well-formed hand this crate cannot represent (e.g. sub-cent amounts, unknown stacks).
    #[error("{origin}:{line}: unsupported hand: {reason}")]
    UnsupportedHand { origin: String, line: u32, reason: String },
}

impl PhhError {
    /// Unsupported (a valid file we do not replay) as opposed to malformed input.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, PhhError::Unsupported { .. } | PhhError::UnsupportedHand { .. })
    }
}

/// Keeps messages on one line whatever a dependency puts in them.
pub(crate) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
