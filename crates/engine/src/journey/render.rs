//! Renders a journey's templates into request bytes: one user's variables (its data row,
//! its captures, the values it drew last), its running `{seq}`, its random numbers. Values
//! are encoded for their place as they are written, and checked: CR, LF or NUL never
//! reach a header ([`Refused::Unsafe`]); in a request target they are percent-encoded.
//! Nothing is allocated once the user's buffers have grown to their largest request.

use super::rng::Rng;
use shootout_model::journey::template::{encode, Encoding};
use shootout_model::journey::{Piece, Source, Template};

/// One user's named values, by slot, and the values it drew last.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: Vec<Vec<u8>>,
    set: Vec<bool>,
    rand: u64,
    text: Vec<u8>,
}

/// Why a template could not be rendered: the step that needs it fails unsent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The variable of this slot holds CR, LF or NUL and would land in a header.
    Unsafe(usize),
    /// The variable of this slot is not set (the step that captures it was not chosen,
    /// or failed and the journey went on).
    Unset(usize),
}

/// What a render draws from: the user's numbers.
pub struct Draws<'a> {
    /// The user's generator.
    pub rng: &'a mut Rng,
    /// `{seq}`'s value for this request.
    pub seq: u64,
    /// `{user}`'s value.
    pub user: u64,
}

impl Vars {
    /// Variables for `slots` names, none set.
    pub fn new(slots: usize) -> Vars {
        Vars {
            values: vec![Vec::new(); slots],
            set: vec![false; slots],
            rand: 0,
            text: Vec::new(),
        }
    }

    /// Forgets every value but those of the slots marked in `keep` (a new journey),
    /// keeping the buffers.
    pub fn clear(&mut self, keep: &[bool]) {
        for (i, s) in self.set.iter_mut().enumerate() {
            *s &= keep.get(i).copied().unwrap_or(false);
        }
    }

    /// Sets slot `slot` to `value` (its buffer reused).
    pub fn put(&mut self, slot: usize, value: &[u8]) {
        let v = &mut self.values[slot];
        v.clear();
        v.extend_from_slice(value);
        self.set[slot] = true;
    }

    /// The value of slot `slot`, if set.
    pub fn get(&self, slot: usize) -> Option<&[u8]> {
        self.set
            .get(slot)
            .copied()
            .unwrap_or(false)
            .then(|| self.values[slot].as_slice())
    }

    /// Appends `t` rendered to `out`. On refusal `out` holds a partial render.
    pub fn render(
        &mut self,
        t: &Template,
        d: &mut Draws,
        out: &mut Vec<u8>,
    ) -> Result<(), Refused> {
        for p in &t.pieces {
            match p {
                Piece::Lit(s) => out.extend_from_slice(s.as_bytes()),
                Piece::Var(source, enc, slot) => self.value(source, *enc, *slot, d, out)?,
            }
        }
        Ok(())
    }

    fn value(
        &mut self,
        source: &Source,
        enc: Encoding,
        slot: usize,
        d: &mut Draws,
        out: &mut Vec<u8>,
    ) -> Result<(), Refused> {
        let mut digits = [0u8; 20];
        match source {
            Source::Named(_) => {
                if !self.set.get(slot).copied().unwrap_or(false) {
                    return Err(Refused::Unset(slot));
                }
                encode(&self.values[slot], enc, out).map_err(|()| Refused::Unsafe(slot))
            }
            Source::Seq => {
                out.extend_from_slice(decimal(d.seq, &mut digits));
                Ok(())
            }
            Source::User => {
                out.extend_from_slice(decimal(d.user, &mut digits));
                Ok(())
            }
            Source::Rand { lo, hi } => {
                self.rand = d.rng.range(*lo, *hi);
                out.extend_from_slice(decimal(self.rand, &mut digits));
                Ok(())
            }
            Source::RandLast => {
                out.extend_from_slice(decimal(self.rand, &mut digits));
                Ok(())
            }
            Source::RandText(n) => {
                const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
                self.text.clear();
                for _ in 0..*n {
                    let b = ALPHABET[d.rng.below(36) as usize];
                    self.text.push(b);
                }
                out.extend_from_slice(&self.text);
                Ok(())
            }
            Source::RandTextLast => {
                out.extend_from_slice(&self.text);
                Ok(())
            }
        }
    }
}

/// `v` in decimal, written into `buf`.
pub(super) fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str, enc: Encoding, slots: &[(&str, usize)]) -> Template {
        let mut t = Template::parse(text, enc, &|l| l.to_string()).unwrap();
        for p in &mut t.pieces {
            if let Piece::Var(Source::Named(n), _, slot) = p {
                *slot = slots.iter().find(|s| s.0 == n).unwrap().1;
            }
        }
        t
    }

    #[test]
    fn values_are_drawn_encoded_and_reused() {
        let mut vars = Vars::new(2);
        vars.put(0, b"a b/c?d#e");
        let mut rng = Rng::new(1, 2);
        let mut d = Draws {
            rng: &mut rng,
            seq: 7,
            user: 42,
        };
        let mut out = Vec::new();
        let t = template(
            "/x/{id}?s={seq}&u={user}&r={rand:10-10}&again={rand}",
            Encoding::Path,
            &[("id", 0)],
        );
        vars.render(&t, &mut d, &mut out).unwrap();
        assert_eq!(out, b"/x/a%20b/c?d%23e?s=7&u=42&r=10&again=10");
        out.clear();
        let t = template("{rand_text:16}|{rand_text}", Encoding::Raw, &[]);
        vars.render(&t, &mut d, &mut out).unwrap();
        assert_eq!(out.len(), 33);
        assert_eq!(out[..16], out[17..]);
        assert!(out[..16]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    }

    #[test]
    fn unsafe_and_unset_values_are_refused() {
        let mut vars = Vars::new(2);
        vars.put(0, b"ok\r\nX-Injected: 1");
        let mut rng = Rng::new(1, 2);
        let mut d = Draws {
            rng: &mut rng,
            seq: 0,
            user: 0,
        };
        let mut out = Vec::new();
        let header = template("Bearer {t}", Encoding::Header, &[("t", 0)]);
        assert_eq!(
            vars.render(&header, &mut d, &mut out),
            Err(Refused::Unsafe(0))
        );
        out.clear();
        let path = template("/{t}", Encoding::Path, &[("t", 0)]);
        vars.render(&path, &mut d, &mut out).unwrap();
        assert_eq!(out, b"/ok%0D%0AX-Injected:%201");
        let unset = template("/{u}", Encoding::Path, &[("u", 1)]);
        assert_eq!(
            vars.render(&unset, &mut d, &mut out),
            Err(Refused::Unset(1))
        );
        vars.put(0, b"kept");
        vars.put(1, b"v");
        vars.clear(&[true]);
        assert_eq!(vars.get(0), Some(&b"kept"[..]));
        assert_eq!(vars.get(1), None);
    }

    #[test]
    fn decimals() {
        let mut b = [0u8; 20];
        assert_eq!(decimal(0, &mut b), b"0");
        assert_eq!(decimal(u64::MAX, &mut b), b"18446744073709551615");
    }
}
