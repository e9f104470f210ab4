//! Parsers the tables share: from a raw [`Value`] to a setting, or the problem
//! as a phrase that reads after the source's name ("must be a whole number of
//! at least 1, not 0").

use crate::value::Value;

/// Text, trimmed.
pub fn text(value: &Value) -> Result<String, String> {
    match value {
        Value::Text(text) => Ok(text.trim().to_owned()),
        other => Err(format!("must be text, not {other}")),
    }
}

/// Text, trimmed; blank text is `None`.
pub fn optional_text(value: &Value) -> Result<Option<String>, String> {
    let text = text(value)?;
    Ok((!text.is_empty()).then_some(text))
}

/// A whole number of at least `MIN` that fits an `N`. Text (from a flag, a
/// variable or git config) is read as a decimal number.
pub fn whole<N: TryFrom<i64>, const MIN: i64>(value: &Value) -> Result<N, String> {
    let problem = || format!("must be a whole number of at least {MIN}, not {value}");
    let number = match value {
        Value::Int(n) => *n,
        Value::Text(text) => text.trim().parse::<i64>().map_err(|_| problem())?,
        _ => return Err(problem()),
    };
    if number < MIN {
        return Err(problem());
    }
    N::try_from(number).map_err(|_| problem())
}

/// `true` or `false`.
pub fn boolean(value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Text(text) => match text.trim() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("must be true or false, not {value}")),
        },
        other => Err(format!("must be true or false, not {other}")),
    }
}

/// A list of text entries, each trimmed.
pub fn text_list(value: &Value) -> Result<Vec<String>, String> {
    let problem = || format!("must be a list of text, not {value}");
    match value {
        Value::List(items) => items
            .iter()
            .map(|item| {
                item.as_text()
                    .map(|t| t.trim().to_owned())
                    .ok_or_else(problem)
            })
            .collect(),
        _ => Err(problem()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_value(text: &str) -> Value {
        Value::Text(text.to_owned())
    }

    #[test]
    fn whole_numbers_have_a_floor_and_the_type_as_ceiling() {
        assert_eq!(whole::<u32, 1>(&Value::Int(7)), Ok(7));
        assert_eq!(whole::<u32, 0>(&text_value(" 12 ")), Ok(12));
        assert_eq!(
            whole::<u32, 1>(&Value::Int(0)),
            Err("must be a whole number of at least 1, not 0".to_owned())
        );
        assert_eq!(
            whole::<u32, 1>(&Value::Int(i64::from(u32::MAX) + 1)),
            Err("must be a whole number of at least 1, not 4294967296".to_owned())
        );
        assert_eq!(
            whole::<u64, 1>(&text_value("lots")),
            Err("must be a whole number of at least 1, not \"lots\"".to_owned())
        );
        assert!(whole::<u32, 1>(&Value::Float(3.0)).is_err());
    }

    #[test]
    fn text_booleans_and_lists() {
        assert_eq!(text(&text_value("  m  ")), Ok("m".to_owned()));
        assert_eq!(text(&Value::Int(3)), Err("must be text, not 3".to_owned()));
        assert_eq!(optional_text(&text_value(" ")), Ok(None));
        assert_eq!(boolean(&Value::Bool(false)), Ok(false));
        assert_eq!(boolean(&text_value("true")), Ok(true));
        assert_eq!(
            boolean(&text_value("yes")),
            Err("must be true or false, not \"yes\"".to_owned())
        );
        assert_eq!(
            text_list(&Value::List(vec![text_value(" /a "), text_value("/b")])),
            Ok(vec!["/a".to_owned(), "/b".to_owned()])
        );
        assert_eq!(
            text_list(&Value::List(vec![Value::Int(1)])),
            Err("must be a list of text, not [1]".to_owned())
        );
    }
}
