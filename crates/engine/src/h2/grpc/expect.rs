//! What a good reply holds besides being well formed: `--expect-json` (fields the reply
//! must hold with these values, a subset of it in protobuf's JSON mapping) and
//! `--expect-echo` (the reply is the request). A reply that does not is counted as
//! [`FailureKind::Body`](shootout_model::FailureKind::Body), HTTP's class for an answer
//! that is not the one expected.
//!
//! The expected fields are read once, at the start ([`Fields::new`]), as the method's
//! output type: the JSON's values become protobuf values, so a reply is compared value
//! with value (`"1"` and `1` are the same int64; an enum by name or number), and a field
//! the JSON leaves out is not checked. A named message field is matched the same way (its
//! own fields a subset); a list, a map or a well-known type's value is compared whole.
//!
//! A parser of a server's bytes: a reply is decoded only when a check needs it, only once
//! it is known to be well formed ([`super::wire::check`]) and within `--max-message`, and
//! dropped after the check; decoding allocates in proportion to the reply (a few tens of
//! bytes per byte at most), so the reply limit bounds it.

use prost_reflect::{DynamicMessage, FieldDescriptor, MessageDescriptor, ReflectMessage, Value};

/// The fields a reply must hold, each with its value or, for a message field the JSON
/// names as an object, the fields that message must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Fields(Vec<(FieldDescriptor, Want)>);

/// What one field must be.
#[derive(Debug, Clone, PartialEq)]
enum Want {
    /// This value.
    Value(Value),
    /// A message holding these fields.
    Fields(Fields),
}

impl Fields {
    /// The fields `json` names, read as a message of type `output`; the error says what
    /// does not fit the type (and lists its fields).
    pub fn new(output: &MessageDescriptor, json: &str) -> Result<Fields, String> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        if !value.is_object() {
            return Err(format!(
                "not a JSON object: write the fields of {} the reply must hold, e.g. {{\"{}\": …}}",
                output.full_name(),
                output
                    .fields()
                    .next()
                    .map_or("field".to_string(), |f| f.json_name().to_string())
            ));
        }
        let msg = DynamicMessage::deserialize(output.clone(), &value).map_err(|e| e.to_string())?;
        Ok(Fields::of(&msg, &value).unwrap_or_else(|| Fields::whole(&msg)))
    }

    /// The fields `json` (an object) names, their values taken from `msg` (its decoding);
    /// `None` when a name is not one of the message's fields (a well-known type's object,
    /// as `google.protobuf.Struct`, maps to fields of its own).
    fn of(msg: &DynamicMessage, json: &serde_json::Value) -> Option<Fields> {
        let desc = msg.descriptor();
        let mut fields = Vec::new();
        for (key, v) in json.as_object()? {
            let f = desc
                .get_field_by_json_name(key)
                .or_else(|| desc.get_field_by_name(key))?;
            let value = msg.get_field(&f);
            let nested = match (&*value, v.is_object() && !f.is_map()) {
                (Value::Message(m), true) => Fields::of(m, v),
                _ => None,
            };
            let want = match nested {
                Some(n) => Want::Fields(n),
                None => Want::Value(value.into_owned()),
            };
            fields.push((f, want));
        }
        Some(fields.into_iter().collect())
    }

    /// Every field of `msg`, compared whole.
    fn whole(msg: &DynamicMessage) -> Fields {
        msg.descriptor()
            .fields()
            .map(|f| {
                let v = msg.get_field(&f).into_owned();
                (f, Want::Value(v))
            })
            .collect()
    }

    /// Whether `reply` holds every field with its value.
    pub fn matched_by(&self, reply: &DynamicMessage) -> bool {
        self.0.iter().all(|(f, want)| {
            let got = reply.get_field(f);
            match want {
                Want::Value(v) => *got == *v,
                Want::Fields(inner) => got.as_message().is_some_and(|m| inner.matched_by(m)),
            }
        })
    }
}

impl FromIterator<(FieldDescriptor, Want)> for Fields {
    fn from_iter<I: IntoIterator<Item = (FieldDescriptor, Want)>>(it: I) -> Fields {
        Fields(it.into_iter().collect())
    }
}

/// What a well-formed reply message is checked against.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// `--expect-json`'s fields.
    pub json: Option<Fields>,
    /// `--expect-echo`: the reply's message is the request's.
    pub echo: bool,
}

impl Expect {
    /// Nothing to check.
    pub fn none(&self) -> bool {
        self.json.is_none() && !self.echo
    }

    /// Whether `reply` (a message of type `output`, well formed) is what was expected of
    /// the call that sent `sent` (the request's message, its prefix excluded).
    pub fn met(&self, output: &MessageDescriptor, reply: &[u8], sent: &[u8]) -> bool {
        if self.none() {
            return true;
        }
        let decoded = || DynamicMessage::decode(output.clone(), reply).ok();
        if self.echo && reply != sent {
            // The same message may be encoded another way (fields in another order, a
            // packed list unpacked): the two compared as the reply's type.
            let same = decoded()
                .zip(DynamicMessage::decode(output.clone(), sent).ok())
                .is_some_and(|(a, b)| a == b);
            if !same {
                return false;
            }
        }
        match &self.json {
            None => true,
            Some(fields) => decoded().is_some_and(|m| fields.matched_by(&m)),
        }
    }
}
