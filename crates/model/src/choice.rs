//! A closed set of values a user picks by name: a report format, the order of a request
//! list. A [`Choice`] lists every value and the names each answers to (its own first), and
//! parses by them; the command line offers exactly these names (the CLI turns a `Choice`
//! into a flag's choices, its help, man page and completions), and errors and documents
//! list them from here, so a value is named in one place.

/// A closed set of values picked by name.
pub trait Choice: Copy + Sized + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];

    /// The names this value answers to, its own first (`markdown`, then `md`).
    fn names(self) -> &'static [&'static str];

    /// The value's own name, as reports and documents spell it.
    fn name(self) -> &'static str {
        self.names().first().copied().unwrap_or_default()
    }

    /// The value named `s`, whatever its case and the blanks around it.
    fn named(s: &str) -> Option<Self> {
        let wanted = s.trim();
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.names().iter().any(|n| n.eq_ignore_ascii_case(wanted)))
    }

    /// Every value's own name, in order: `text, ab, wrk, json`.
    fn list(sep: &str) -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
        names.join(sep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Shape {
        Round,
        Square,
    }

    impl Choice for Shape {
        const ALL: &'static [Shape] = &[Shape::Round, Shape::Square];
        fn names(self) -> &'static [&'static str] {
            match self {
                Shape::Round => &["round", "o"],
                Shape::Square => &["square"],
            }
        }
    }

    #[test]
    fn a_choice_answers_to_each_of_its_names_in_any_case() {
        assert_eq!(Shape::named(" ROUND "), Some(Shape::Round));
        assert_eq!(Shape::named("o"), Some(Shape::Round));
        assert_eq!(Shape::named("square"), Some(Shape::Square));
        assert_eq!(Shape::named("triangle"), None);
        assert_eq!(Shape::Round.name(), "round");
        assert_eq!(Shape::list(", "), "round, square");
    }
}
