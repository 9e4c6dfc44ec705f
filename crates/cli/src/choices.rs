//! Flags whose value is one of a closed set (a [`Choice`]: the report formats, a request
//! list's order). The set's names become the flag's possible values — what clap checks,
//! and what `--help`, the man page and the completions list — and the set itself parses
//! the value, so a flag's choices are written once, beside the values they name.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use shootout_model::Choice;

/// The parser of a flag that takes one of `T`'s names.
pub(crate) fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().flat_map(|v| v.names().iter().copied())).try_map(
        |name: String| T::named(&name).ok_or_else(|| format!("'{name}' is not one of the choices")),
    )
}

#[cfg(test)]
mod tests {
    use crate::Cli;
    use clap::CommandFactory;
    use shootout_model::requests::Order;
    use shootout_model::Choice;
    use shootout_report::shootout::RunFormat;
    use shootout_report::Format;

    /// The names a flag of `command` offers, as `--help` and the completions list them.
    fn offered(command: &str, flag: &str) -> Vec<String> {
        let cli = Cli::command();
        let sub = cli.find_subcommand(command).expect("the subcommand exists");
        let arg = sub
            .get_arguments()
            .find(|a| a.get_long() == Some(flag))
            .expect("the flag exists");
        arg.get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect()
    }

    fn names<T: Choice>() -> Vec<String> {
        T::ALL
            .iter()
            .flat_map(|v| v.names().iter().map(|n| n.to_string()))
            .collect()
    }

    #[test]
    fn flags_offer_exactly_the_names_of_their_choices() {
        assert_eq!(offered("load", "format"), names::<Format>());
        assert_eq!(offered("merge", "format"), names::<Format>());
        assert_eq!(offered("load", "order"), names::<Order>());
        assert_eq!(offered("report", "format"), names::<RunFormat>());
        assert_eq!(offered("compare", "format"), names::<RunFormat>());
        assert_eq!(
            offered("report", "format"),
            ["text", "markdown", "md", "json", "csv"]
        );
    }

    /// The flag table (docs/flags.md) and the tour's merge section (docs/tour.md) list the
    /// choices as the enums name them.
    #[test]
    fn the_docs_list_the_choices_of_the_enums() {
        let flags = include_str!("../../../docs/flags.md");
        let tour = include_str!("../../../docs/tour.md");
        for listed in [
            format!("| `--format {}`, `--json` |", Format::list("\\|")),
            format!("| `--order {}`, `--seed N` |", Order::list("\\|")),
        ] {
            assert!(flags.contains(&listed), "docs/flags.md lacks {listed}");
        }
        let merge = format!("`--format {}`, `--json`, `--html FILE`", Format::list("|"));
        assert!(tour.contains(&merge), "docs/tour.md lacks {merge}");
    }
}
