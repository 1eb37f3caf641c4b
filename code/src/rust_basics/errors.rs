//! `Option`, `Result`, `?` and `thiserror`, as the crate uses them: reading a tensor shape
//! such as `"64x128"` from text (a command-line option, a line of a configuration file).
//!
//! Each way the text can be wrong is a variant of one error type, and each variant's
//! message is written for the person who typed the text.

use std::num::ParseIntError;

// ANCHOR: error_type
/// Why a shape could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeParseError {
    #[error("a shape is written rows×columns, such as 64x128, but {0:?} has no 'x'")]
    MissingSeparator(String),
    #[error("{part} {text:?} is not a whole number: {source}")]
    NotANumber {
        part: &'static str,
        text: String,
        source: ParseIntError,
    },
    #[error("a shape needs at least one row and one column, but {0:?} has none")]
    Empty(String),
}
// ANCHOR_END: error_type

// ANCHOR: parse_shape
/// Reads `"rows x columns"` (an `x` or `×` between them, spaces allowed).
pub fn parse_shape(text: &str) -> Result<(usize, usize), ShapeParseError> {
    // `split_once` returns an Option; `ok_or_else` turns its None into our error, and `?`
    // returns that error to the caller at once.
    let (rows, columns) = text
        .split_once(['x', '×'])
        .ok_or_else(|| ShapeParseError::MissingSeparator(text.to_string()))?;
    let rows = parse_count("the row count", rows)?;
    let columns = parse_count("the column count", columns)?;
    if rows == 0 || columns == 0 {
        return Err(ShapeParseError::Empty(text.to_string()));
    }
    Ok((rows, columns))
}

fn parse_count(part: &'static str, text: &str) -> Result<usize, ShapeParseError> {
    let text = text.trim();
    text.parse().map_err(|source| ShapeParseError::NotANumber {
        part,
        text: text.to_string(),
        source,
    })
}
// ANCHOR_END: parse_shape

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_separators_and_ignores_spaces() {
        assert_eq!(parse_shape("64x128"), Ok((64, 128)));
        assert_eq!(parse_shape(" 3 × 5 "), Ok((3, 5)));
    }

    #[test]
    fn each_mistake_has_its_own_variant_and_a_message_for_a_person() {
        let missing = parse_shape("64,128").unwrap_err();
        assert_eq!(missing, ShapeParseError::MissingSeparator("64,128".into()));
        assert!(missing.to_string().contains("such as 64x128"));

        let not_a_number = parse_shape("64xmany").unwrap_err();
        assert!(matches!(
            not_a_number,
            ShapeParseError::NotANumber {
                part: "the column count",
                ..
            }
        ));
        assert_eq!(
            not_a_number.to_string(),
            "the column count \"many\" is not a whole number: invalid digit found in string"
        );

        assert_eq!(
            parse_shape("0x5"),
            Err(ShapeParseError::Empty("0x5".into()))
        );
    }

    #[test]
    fn a_negative_count_is_not_a_number_of_rows() {
        assert!(matches!(
            parse_shape("-1x4"),
            Err(ShapeParseError::NotANumber {
                part: "the row count",
                ..
            })
        ));
    }
}
