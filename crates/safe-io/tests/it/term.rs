use proptest::prelude::*;
use safe_io::term::{sanitize, sanitize_line};

fn acts_on_a_terminal(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

proptest! {
    #[test]
    fn nothing_a_terminal_acts_on_survives(text in any::<String>()) {
        let clean = sanitize(&text);
        prop_assert!(!clean.chars().any(acts_on_a_terminal), "{clean:?}");
        let line = sanitize_line(&text);
        prop_assert!(!line.chars().any(|c| acts_on_a_terminal(c) || c == '\n' || c == '\t'));
        // Text without such characters is unchanged.
        if !text.chars().any(acts_on_a_terminal) {
            prop_assert_eq!(clean.as_ref(), text.as_str());
        }
    }
}
