//! Checks JSON documents against their documented schema: the Markdown tables in `docs/`
//! whose rows read `` | `path` | type | unit | meaning | ``. The docs are the contract of
//! `--format json`; tests hold every output to them, both ways (every documented field is
//! there with its type, every rendered field is documented), so doc and output cannot drift.
//!
//! Paths use `.` for nesting, `[]` for each element of an array and `{a,b}` for several
//! fields of one type. Types: `integer`, `number`, `string`, `boolean`, `object`, `array`,
//! `array of T`, `map of T` (T a scalar type; arrays and maps so typed are leaves), each
//! optionally followed by `or null`, or by `or absent` for a field left out of documents
//! that have nothing to put in it (and then everything under it is too).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The documented fields: path → type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    fields: BTreeMap<String, String>,
}

impl Schema {
    /// Reads the field tables of `doc`; with `section`, only those under the `## ` heading
    /// that contains it. An error when a field is documented twice or none is found.
    pub fn from_markdown(doc: &str, section: Option<&str>) -> Result<Schema, String> {
        let mut fields = BTreeMap::new();
        let mut inside = section.is_none();
        for line in doc.lines() {
            if let (Some(heading), Some(section)) = (line.strip_prefix("## "), section) {
                inside = heading.contains(section);
                continue;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            // "| `path` | type | unit | meaning |" splits into ["", path, type, unit, meaning, ""].
            if !inside || cells.len() < 6 || !cells[1].starts_with('`') {
                continue;
            }
            for path in expand(cells[1].trim_matches('`')) {
                if fields.insert(path.clone(), cells[2].to_string()).is_some() {
                    return Err(format!("{path} is documented twice"));
                }
            }
        }
        if fields.is_empty() {
            return Err(format!("no field table found (section {section:?})"));
        }
        Ok(Schema { fields })
    }

    /// Documented paths and their types.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields.iter().map(|(p, t)| (p.as_str(), t.as_str()))
    }

    /// Checks `value`: returns the documented paths that had a non-null value, or every
    /// problem found (missing, mistyped, undocumented null, undocumented field).
    pub fn check(&self, value: &Value) -> Result<BTreeSet<String>, Vec<String>> {
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for (path, ty) in &self.fields {
            let parts: Vec<&str> = path.split('.').collect();
            let mut found = Vec::new();
            if let Err(e) = self.values(value, &parts, "", &mut found) {
                problems.push(e);
                continue;
            }
            for v in found {
                match has_type(v, ty) {
                    Some(true) if !v.is_null() => {
                        seen.insert(path.clone());
                    }
                    Some(true) => {}
                    Some(false) => problems.push(format!("{path} should be {ty}, is {v}")),
                    None => problems.push(format!("{path}: unknown type '{ty}' in the doc")),
                }
            }
        }
        let mut rendered = Vec::new();
        self.leaves(value, String::new(), &mut rendered);
        for path in rendered {
            if !self.fields.contains_key(&path) {
                problems.push(format!("{path} is rendered but not documented"));
            }
        }
        if problems.is_empty() {
            Ok(seen)
        } else {
            Err(problems)
        }
    }

    fn nullable(&self, path: &str) -> bool {
        self.fields
            .get(path)
            .is_some_and(|t| t.ends_with("or null"))
    }

    /// Whether `path` is documented as left out of some documents (`or absent`).
    fn absent_allowed(&self, path: &str) -> bool {
        self.fields
            .get(path)
            .is_some_and(|t| t.ends_with(" or absent"))
    }

    /// A typed array or map is one leaf, not walked into.
    fn typed_leaf(&self, path: &str) -> bool {
        self.fields
            .get(path)
            .is_some_and(|t| t.starts_with("map of") || t.starts_with("array of"))
    }

    /// Every value at `parts` (`[]`: each element), skipping below a documented-nullable
    /// null; an error when a field is missing or null without being documented so.
    fn values<'a>(
        &self,
        v: &'a Value,
        parts: &[&str],
        so_far: &str,
        out: &mut Vec<&'a Value>,
    ) -> Result<(), String> {
        let Some((part, rest)) = parts.split_first() else {
            out.push(v);
            return Ok(());
        };
        if v.is_null() {
            return Ok(());
        }
        let (key, each) = match part.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (*part, false),
        };
        let mut path = if so_far.is_empty() {
            key.to_string()
        } else {
            format!("{so_far}.{key}")
        };
        let Some(child) = v.get(key) else {
            if self.absent_allowed(&path) {
                return Ok(());
            }
            return Err(format!("{path} is missing"));
        };
        let children: Vec<&Value> = if each {
            path.push_str("[]");
            let a = child
                .as_array()
                .ok_or_else(|| format!("{path} is not an array"))?;
            a.iter().collect()
        } else {
            vec![child]
        };
        for c in children {
            if c.is_null() && !self.nullable(&path) {
                return Err(format!("{path} is null but not documented as nullable"));
            }
            self.values(c, rest, &path, out)?;
        }
        Ok(())
    }

    /// Every leaf path of `v` (array elements as `[]`).
    fn leaves(&self, v: &Value, path: String, out: &mut Vec<String>) {
        let typed = self.typed_leaf(&path);
        match v {
            Value::Object(m) if !typed && !m.is_empty() => {
                for (k, child) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    self.leaves(child, p, out);
                }
            }
            Value::Array(a) if !typed && !a.is_empty() => {
                for child in a {
                    self.leaves(child, format!("{path}[]"), out);
                }
            }
            _ => out.push(path),
        }
    }
}

/// `a.{b,c}.d` → `a.b.d`, `a.c.d` (any number of brace groups).
fn expand(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .flat_map(|alt| {
                expand(&format!(
                    "{}{}{}",
                    &path[..open],
                    alt.trim(),
                    &path[close + 1..]
                ))
            })
            .collect(),
        _ => vec![path.to_string()],
    }
}

/// Whether `v` has type `ty`; `None` for a type this module does not know.
fn has_type(v: &Value, ty: &str) -> Option<bool> {
    if let Some(base) = ty.strip_suffix(" or absent") {
        return has_type(v, base);
    }
    if let Some(base) = ty.strip_suffix(" or null") {
        return if v.is_null() {
            Some(true)
        } else {
            has_type(v, base)
        };
    }
    if let Some(inner) = ty.strip_prefix("array of ") {
        let a = v.as_array()?;
        return a
            .iter()
            .map(|x| has_type(x, inner))
            .collect::<Option<Vec<_>>>()
            .map(|r| r.iter().all(|b| *b));
    }
    if let Some(inner) = ty.strip_prefix("map of ") {
        let m = v.as_object()?;
        return m
            .values()
            .map(|x| has_type(x, inner))
            .collect::<Option<Vec<_>>>()
            .map(|r| r.iter().all(|b| *b));
    }
    Some(match ty {
        "integer" => v.is_u64() || v.is_i64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DOC: &str = "# x\n## one\n| field | type | unit | meaning |\n|---|---|---|---|\n\
        | `a.{b,c}` | integer | — | two |\n| `d` | string or null | — | |\n\
        | `e[].f` | number | ms | each |\n| `m` | map of integer | — | codes |\n\
        ## two\n| `z` | boolean | — | |\n";

    #[test]
    fn brace_groups_expand() {
        assert_eq!(expand("a.{b, c}.d"), ["a.b.d", "a.c.d"]);
        assert_eq!(expand("{x,y}.{1,2}").len(), 4);
        assert_eq!(expand("plain"), ["plain"]);
    }

    #[test]
    fn reads_a_section_and_expands_braces() {
        let s = Schema::from_markdown(DOC, Some("one")).unwrap();
        let paths: Vec<&str> = s.fields().map(|(p, _)| p).collect();
        assert_eq!(paths, vec!["a.b", "a.c", "d", "e[].f", "m"]);
        assert_eq!(
            Schema::from_markdown(DOC, None).unwrap().fields().count(),
            6
        );
        assert!(Schema::from_markdown(DOC, Some("three")).is_err());
    }

    #[test]
    fn checks_both_ways() {
        let s = Schema::from_markdown(DOC, Some("one")).unwrap();
        let good =
            json!({"a": {"b": 1, "c": 2}, "d": null, "e": [{"f": 1.5}, {"f": 2}], "m": {"200": 3}});
        let seen = s.check(&good).unwrap();
        assert!(seen.contains("a.b") && !seen.contains("d"), "{seen:?}");
        let bad =
            json!({"a": {"b": "x"}, "d": 1, "e": [{"f": null}], "m": {"200": -1.5}, "extra": 1});
        let problems = s.check(&bad).unwrap_err();
        for want in [
            "a.b should be integer",
            "a.c is missing",
            "d should be string or null",
            "e[].f is null but not documented",
            "m should be map of integer",
            "extra is rendered but not documented",
        ] {
            assert!(
                problems.iter().any(|p| p.contains(want)),
                "{want}: {problems:?}"
            );
        }
    }

    #[test]
    fn a_field_documented_or_absent_may_be_left_out_with_everything_under_it() {
        let doc = "| `j` | array or absent | — | |\n| `j[].n` | integer | — | |\n| `k` | integer | — | |\n";
        let s = Schema::from_markdown(doc, None).unwrap();
        assert!(s.check(&json!({"k": 1})).is_ok());
        let seen = s.check(&json!({"k": 1, "j": [{"n": 2}]})).unwrap();
        assert!(seen.contains("j[].n"), "{seen:?}");
        let problems = s.check(&json!({"j": [{"n": "x"}]})).unwrap_err();
        assert!(
            problems.iter().any(|p| p.contains("k is missing")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("j[].n should be integer")),
            "{problems:?}"
        );
    }
}
